import type * as acp from '@agentclientprotocol/sdk';
import type { RunnerEvent } from './runner.js';

/** The `ended` event of the Runner port. */
export type EndedEvent = Extract<RunnerEvent, { type: 'ended' }>;

/**
 * How an ACP stop reason ends a run (DESIGN §6, Runners): `end_turn` → completed; `max_tokens` and
 * `max_turn_requests` → completed with the reason noted; `refusal` → failed; `cancelled` → cancelled.
 * Pure.
 */
export function endedFor(stopReason: acp.StopReason): EndedEvent {
  switch (stopReason) {
    case 'end_turn':
      return { type: 'ended', status: 'completed' };
    case 'max_tokens':
    case 'max_turn_requests':
      return { type: 'ended', status: 'completed', stop: stopReason };
    case 'refusal':
      return { type: 'ended', status: 'failed', stop: 'refusal', error: 'the agent refused the prompt' };
    case 'cancelled':
      return { type: 'ended', status: 'cancelled', stop: 'cancelled' };
    default:
      return unknownStopReason(stopReason);
  }
}

/** A stop reason newer than this SDK: fail rather than guess. */
function unknownStopReason(stopReason: never): EndedEvent {
  return {
    type: 'ended',
    status: 'failed',
    error: `the agent stopped with an unknown reason: ${String(stopReason)}`,
  };
}

/** Whether a turn that ended this way may be followed by a queued follow-up prompt. */
export function allowsFollowUp(stopReason: acp.StopReason): boolean {
  return stopReason === 'end_turn' || stopReason === 'max_tokens' || stopReason === 'max_turn_requests';
}
