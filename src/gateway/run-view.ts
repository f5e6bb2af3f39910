import type { ErrorKind } from '../core/error-kind.js';
import { taskPreview } from '../core/redact.js';
import type { WorkspaceFacts } from '../core/workspace-facts.js';
import type { RunRecord } from '../store/store.js';

/** A run as every surface shows it (DESIGN §6, Shapes); the task only as a redacted preview. */
export interface RunView {
  id: string;
  status: string;
  /**
   * A queued run held back by its provider's cap or hold rather than by the host cap (in cluster mode: a
   * run still waiting in the cluster queue, `starting`, while the provider holds the cluster's starts).
   */
  waiting_for?: 'provider';
  /**
   * A running run the memory pause holds stopped (SIGSTOP or a frozen cgroup) until memory returns
   * (issue 28); absent otherwise. Its status stays `running`.
   */
  paused?: true;
  /** When the provider's hold on starts ends (ISO), while there is one. */
  hold_until?: string;
  agent: string;
  /** The parent key (`mcp:<session>`, `slack:U1`, …): what scripts match on. */
  parent: string;
  /**
   * The name the parent's client gave itself, when it had one (kept from admission): a person reads the
   * parent as `parentLabel(parent, parent_name)`, e.g. "claude-code (session bc5b9186)".
   */
  parent_name?: string;
  batch_id?: string;
  conversation?: string;
  depth: number;
  task_preview: string;
  created_at: string;
  started_at?: string;
  ended_at?: string;
  duration_secs?: number;
  stop?: string;
  error?: string;
  /** The typed cause of a failure: read from the agent's error, or `timeout` for a timed-out run. */
  error_kind?: ErrorKind;
  /**
   * The agent's last `usage_update` (tokens in use, context size, cost in USD when given) and what the
   * provider gateway counted for its model calls (input and output tokens, requests, 429 / 529 / 503s).
   */
  usage?: {
    tokens?: number;
    context_tokens?: number;
    cost_usd?: number;
    input_tokens?: number;
    output_tokens?: number;
    requests?: number;
    rate_limited?: number;
  };
  result_path?: string;
  result_chars?: number;
  /** Bytes of output lost to failed transcript writes (a full disk); a marker line in the transcript says where. */
  transcript_gap?: number;
  peak_mem_gb?: number;
  /** Cluster mode: the gateway that executes it; `spawn_status` reads its transcript through it. */
  host?: string;
  delivery: string;
  /** When a person acknowledged its completion event (dashboard, Slack). */
  acked_at?: string;
  /** Its isolated workspace (issue 31): branch, base, head, files changed, conflicts. */
  workspace?: WorkspaceFacts;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function toRunView(record: RunRecord): RunView {
  const run = record.run;
  const startedAt = run.startedAt;
  const endedAt = run.endedAt;
  return {
    id: run.id,
    status: run.status,
    agent: run.agent,
    parent: run.parent,
    ...(record.spec.parentName !== undefined ? { parent_name: record.spec.parentName } : {}),
    ...(run.batchId !== undefined ? { batch_id: run.batchId } : {}),
    ...(run.conversationId !== undefined || run.keep ? { conversation: run.conversationId ?? run.id } : {}),
    depth: run.depth,
    task_preview: record.spec.preview ?? taskPreview(record.spec.task),
    created_at: iso(run.createdAt),
    ...(startedAt !== undefined ? { started_at: iso(startedAt) } : {}),
    ...(endedAt !== undefined ? { ended_at: iso(endedAt) } : {}),
    ...(startedAt !== undefined && endedAt !== undefined
      ? { duration_secs: (endedAt - startedAt) / 1000 }
      : {}),
    ...(run.stop !== undefined ? { stop: run.stop } : {}),
    ...(run.error !== undefined ? { error: run.error } : {}),
    ...errorKindView(record),
    ...usageView(record),
    ...(record.resultPath !== undefined ? { result_path: record.resultPath } : {}),
    ...(record.resultChars !== undefined ? { result_chars: record.resultChars } : {}),
    ...(record.transcriptGapBytes !== undefined ? { transcript_gap: record.transcriptGapBytes } : {}),
    ...(record.peakMemGb !== undefined ? { peak_mem_gb: record.peakMemGb } : {}),
    ...(record.host !== undefined ? { host: record.host } : {}),
    delivery: record.delivery,
    ...(record.ackedAt !== undefined ? { acked_at: iso(record.ackedAt) } : {}),
    ...(record.workspace !== undefined ? { workspace: record.workspace } : {}),
  };
}

function errorKindView(record: RunRecord): { error_kind?: ErrorKind } {
  if (record.errorKind !== undefined && record.run.status !== 'completed')
    return { error_kind: record.errorKind };
  return record.run.status === 'timed_out' ? { error_kind: 'timeout' } : {};
}

function usageView(record: RunRecord): Pick<RunView, 'usage'> {
  const usage = {
    ...(record.usageTokens !== undefined && { tokens: record.usageTokens }),
    ...(record.usageContextTokens !== undefined && { context_tokens: record.usageContextTokens }),
    ...(record.usageCostUsd !== undefined && { cost_usd: record.usageCostUsd }),
    ...(record.providerUsage && {
      input_tokens: record.providerUsage.inputTokens,
      output_tokens: record.providerUsage.outputTokens,
      requests: record.providerUsage.requests,
      rate_limited: record.providerUsage.rateLimited,
    }),
  };
  return Object.keys(usage).length > 0 ? { usage } : {};
}
