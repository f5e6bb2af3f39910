import type { StepResult } from '../../../src/core/scheduler-types.js';

/**
 * The one place the explorer reads a reply beyond `ok`: the reply's shape is about to become a tagged
 * union, and this reads the refusal code through whatever field still carries `{refusal: {code}}`.
 */
export function refusalCode(reply: StepResult['reply']): string | undefined {
  if (reply.ok) return undefined;
  const refusal = (reply as { refusal?: { code?: unknown } }).refusal;
  return typeof refusal?.code === 'string' ? refusal.code : 'refused';
}

/** `ok` or the refusal code, for messages and expectations. */
export function outcome(reply: StepResult['reply']): string {
  return refusalCode(reply) ?? 'ok';
}
