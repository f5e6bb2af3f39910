import type { Move, MoveKind } from './move.js';
import { outcome } from './reply.js';
import type { World } from './world.js';

/** The runner confirms a launched run is up. */
export const startRuns: MoveKind = (world) =>
  [...world.launched]
    .filter((id) => world.records.get(id)?.status === 'starting')
    .map(
      (id): Move => ({
        label: `started ${id}`,
        progress: true,
        apply: (w) => {
          w.now += 1;
          const result = w.step({ type: 'started', runId: id });
          if (!result.reply.ok) w.fail(`started ${id} answered ${outcome(result.reply)}`);
          if (w.records.get(id)?.status !== 'running') w.fail(`${id} is not running after it started`);
        },
      }),
    );

/** The runner reports a run's own end, completed or failed, for each run it executes unasked. */
export const endRuns: MoveKind = (world) =>
  [...world.launched]
    .filter((id) => !world.stopping.has(id))
    .flatMap((id) =>
      (['completed', 'failed'] as const).map(
        (status): Move => ({
          label: `ended ${id} ${status}`,
          progress: true,
          apply: (w) => reportEnd(w, id, status, status),
        }),
      ),
    );

/** How a confirmed stop ends: the first stop asked decides (DESIGN §3, the turn budget completes). */
const STOPPED_AS = {
  cancel: 'cancelled',
  timeout: 'timed_out',
  turn_limit: 'completed',
  token_budget: 'completed',
} as const;

/**
 * A launched run's tool call, for runs with a budget: at the budget the same step must stop it for
 * `turn_limit` (unless another stop was asked first), and never before.
 */
export const toolCalls: MoveKind = (world) =>
  [...world.launched]
    .filter((id) => !world.stopping.has(id) && (world.records.get(id)?.maxTurns ?? 0) > 0)
    .map(
      (id): Move => ({
        label: `tool_call ${id}`,
        progress: true,
        apply: (w) => {
          w.now += 1;
          const calls = (w.toolCalls.get(id) ?? 0) + 1;
          w.toolCalls.set(id, calls);
          const result = w.step({ type: 'tool_call', runId: id });
          if (!result.reply.ok) w.fail(`tool_call ${id} answered ${outcome(result.reply)}`);
          const budget = w.records.get(id)?.maxTurns ?? 0;
          const stop = w.stopping.get(id);
          if (calls >= budget && stop !== 'turn_limit')
            w.fail(`${id} made ${calls} tool calls on a budget of ${budget} and was not stopped for it`);
          if (calls < budget && stop !== undefined) w.fail(`${id} was stopped under its budget`);
        },
      }),
    );

/** The runner confirms a stop the scheduler asked for; the stop's reason decides the status. */
export const confirmStops: MoveKind = (world) =>
  [...world.stopping].map(
    ([id, reason]): Move => ({
      label: `ended ${id} cancelled (confirms the ${reason})`,
      progress: true,
      apply: (w) => reportEnd(w, id, 'cancelled', STOPPED_AS[reason]),
    }),
  );

/**
 * Time passes to the next wake: the nearest deadline of a launched run (from its record: launch time
 * plus the timeout), or the scheduler's own next wake (the stagger's next start). Later wakes are
 * reached by ticking again, so one tick move covers every timeout. Every run whose deadline passed
 * must then be stopping for the timeout (or have ended).
 */
export const tickToWake: MoveKind = (world) => {
  const waiting = world.launched.size > 0 || world.live().some((r) => r.status === 'starting');
  if (!waiting) return [];
  return [
    {
      label: 'tick at the next wake',
      progress: true,
      apply: (w) => {
        const deadlines = dueRuns(w);
        const wake = Math.min(...deadlines.values(), w.scheduler.nextWakeAt() ?? Number.POSITIVE_INFINITY);
        w.now = Math.max(w.now + 1, Number.isFinite(wake) ? wake : 0);
        w.step({ type: 'tick' });
        for (const [id, at] of deadlines) {
          // Stopped for its own timeout, or already by an earlier stop (an ancestor's timeout cascades
          // as a cancel that reaches it first): the first stop asked decides.
          if (at <= w.now && w.isLive(id) && !w.stopping.has(id))
            w.fail(`${id}'s deadline passed at the tick, and it was not stopped for it`);
        }
      },
    },
  ];
};

/**
 * Deadlines of the launched runs no stop was asked for, from their records: the timeout counts from
 * the start (the agent ready), and bounds a start that never comes from the launch.
 */
function dueRuns(world: World): Map<string, number> {
  const due = new Map<string, number>();
  for (const id of world.launched) {
    const run = world.records.get(id);
    const startedAt = run && 'startedAt' in run ? run.startedAt : undefined;
    const launchedAt = run && 'launchedAt' in run ? run.launchedAt : undefined;
    const from = startedAt ?? launchedAt;
    if (from !== undefined && !world.stopping.has(id)) due.set(id, from + world.limits.timeoutMs);
  }
  return due;
}

function reportEnd(
  world: World,
  id: string,
  reported: 'completed' | 'failed' | 'cancelled',
  expected: 'completed' | 'failed' | 'cancelled' | 'timed_out',
): void {
  world.now += 1;
  const result = world.step({ type: 'ended', runId: id, status: reported });
  if (!result.reply.ok) world.fail(`ended ${id} ${reported} answered ${outcome(result.reply)}`);
  const status = world.records.get(id)?.status;
  if (status !== expected) world.fail(`${id} reported ${reported} ended ${status}, expected ${expected}`);
}
