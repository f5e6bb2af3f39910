import type * as acp from '@agentclientprotocol/sdk';

/**
 * How Crew answers an agent's `session/request_permission` (DESIGN §4, `agent.permission_policy`): pick
 * the option the agent offered for the policy, preferring the one-time kind. Pure.
 */

export type PermissionPolicy = 'allow' | 'reject';

const PREFERRED_KINDS: Record<PermissionPolicy, acp.PermissionOptionKind[]> = {
  allow: ['allow_once', 'allow_always'],
  reject: ['reject_once', 'reject_always'],
};

/**
 * The answer under `policy`. When the agent offered no option of the policy's kind, the answer is
 * `cancelled`: never an option of the other kind, which would allow what the policy rejects (or the
 * reverse).
 */
export function answerPermission(
  options: readonly acp.PermissionOption[],
  policy: PermissionPolicy,
): acp.RequestPermissionResponse {
  for (const kind of PREFERRED_KINDS[policy]) {
    const option = options.find((o) => o.kind === kind);
    if (option) return { outcome: { outcome: 'selected', optionId: option.optionId } };
  }
  return { outcome: { outcome: 'cancelled' } };
}
