import type { ClaudeHookEvent } from './claude-hook-payload.js';
import type { ClaudeWidthConfig } from './claude-width-config.js';
import type { ClaudeWidthLedger, WidthScope } from './claude-width-ledger.js';

/**
 * What each Claude Code event does to the width ledger:
 *
 * | event | effect |
 * |---|---|
 * | PreToolUse (Task/Agent) | reserve a place, or deny when the scope is at the cap |
 * | PostToolUse, foreground | release by `tool_use_id` (the sub-agent has returned) |
 * | PostToolUse, background launch | map `tool_use_id` → `tool_response.agentId` |
 * | PostToolUseFailure | release by `tool_use_id` (failed or interrupted) |
 * | SubagentStop | release the agent and its own unmapped calls; reconcile `background_tasks` |
 * | Stop (main thread) | release the main thread's unmapped calls; reconcile `background_tasks` |
 *
 * Every write also drops reservations past their TTL.
 */

/**
 * A background agent mapped this recently is not released by reconciliation: the list it is checked
 * against may have been taken before the launch was recorded (hooks run as separate processes).
 * @default 5000
 */
export const RECONCILE_GRACE_MS = 5000;

/** The typed "no" behind a denial; its message is what Claude reads. */
export interface WidthRefusal {
  code: 'claude_width_cap';
  message: string;
  limit: number;
  current: number;
  scope: WidthScope;
}

export interface HookOutcome {
  /** The JSON line for stdout, when Claude Code must be told something (only a denial). */
  stdout?: string;
  refusal?: WidthRefusal;
}

/** `cap 5/5 sub-agents in flight in this session; wait for one to finish before spawning more`. */
export function widthRefusal(current: number, limit: number, scope: WidthScope): WidthRefusal {
  const where = scope === 'host' ? 'on this host' : 'in this session';
  return {
    code: 'claude_width_cap',
    message: `cap ${current}/${limit} sub-agents in flight ${where}; wait for one to finish before spawning more`,
    limit,
    current,
    scope,
  };
}

/** The PreToolUse answer that blocks the call; printed with exit code 0. */
export function denyOutput(reason: string): string {
  return JSON.stringify({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: reason,
    },
  });
}

/** Applies one event to the ledger at `nowMs`. Allowing is silence: no output, exit 0. */
export function handleClaudeHookEvent(
  event: ClaudeHookEvent,
  ledger: ClaudeWidthLedger,
  config: ClaudeWidthConfig,
  nowMs: number,
): HookOutcome {
  const ttlMs = config.ttlSecs * 1000;
  switch (event.kind) {
    case 'pre_tool_use': {
      const result = ledger.reserve(
        {
          toolUseId: event.toolUseId,
          sessionId: event.sessionId,
          ...(event.callerAgentId !== undefined && { callerAgentId: event.callerAgentId }),
          ...(event.subagentType !== undefined && { subagentType: event.subagentType }),
          ...(event.description !== undefined && { description: event.description }),
        },
        { maxInFlight: config.maxInFlight, scope: config.scope, ttlMs },
        nowMs,
      );
      if (result.admitted) return {};
      const refusal = widthRefusal(result.inFlight, result.limit, result.scope);
      return { stdout: denyOutput(refusal.message), refusal };
    }
    case 'post_tool_use':
      if (event.launchedAgentId !== undefined) {
        ledger.markBackground(
          { toolUseId: event.toolUseId, sessionId: event.sessionId, agentId: event.launchedAgentId },
          { ttlMs },
          nowMs,
        );
      } else if (!event.isBackgroundLaunch) {
        ledger.releaseToolUse(event.toolUseId, nowMs);
      }
      return {};
    case 'post_tool_use_failure':
      ledger.releaseToolUse(event.toolUseId, nowMs);
      return {};
    case 'subagent_stop':
      ledger.releaseAgent(event.sessionId, event.agentId, nowMs);
      if (event.runningTaskIds !== undefined) {
        ledger.reconcile(event.sessionId, event.runningTaskIds, nowMs, RECONCILE_GRACE_MS);
      }
      return {};
    case 'stop':
      if (event.agentId !== undefined) ledger.releaseAgent(event.sessionId, event.agentId, nowMs);
      else ledger.releaseMainThreadForeground(event.sessionId, nowMs);
      if (event.runningTaskIds !== undefined) {
        ledger.reconcile(event.sessionId, event.runningTaskIds, nowMs, RECONCILE_GRACE_MS);
      }
      return {};
    case 'ignored':
      return {};
    default: {
      const unhandled: never = event;
      return unhandled;
    }
  }
}
