import fc from 'fast-check';
import type { Harness } from './scheduler-harness.js';

/** Random actions on the scheduler (what a gateway and its runners could do), for the property tests. */
export type Action =
  | { kind: 'spawn'; parent: number; keep: boolean; maxTurns: number; maxTokens: number }
  | { kind: 'toolCall'; pick: number }
  | { kind: 'tokens'; pick: number; tokens: number }
  | { kind: 'wave'; parent: number; size: number }
  | { kind: 'nested'; pick: number; size: number; maxTokens: number }
  | { kind: 'start'; pick: number }
  | { kind: 'end'; pick: number }
  | { kind: 'fail'; pick: number }
  | { kind: 'timeout' }
  | { kind: 'cancelQueued'; pick: number }
  | { kind: 'cancelRunning'; pick: number }
  | { kind: 'confirmStop'; pick: number }
  | { kind: 'steer'; pick: number }
  | { kind: 'continue'; pick: number }
  | { kind: 'release'; pick: number }
  | { kind: 'tick'; ms: number }
  | { kind: 'memory'; availableGb: number; expectedGb: number };

const pick = fc.nat(1000);
export const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({
    kind: fc.constant('spawn' as const),
    parent: fc.nat(1),
    keep: fc.boolean(),
    maxTurns: fc.integer({ min: 0, max: 3 }),
    maxTokens: fc.constantFrom(0, 0, 50, 200),
  }),
  fc.record({ kind: fc.constant('toolCall' as const), pick }),
  fc.record({ kind: fc.constant('tokens' as const), pick, tokens: fc.constantFrom(0, 10, 25, 50, 100) }),
  fc.record({ kind: fc.constant('wave' as const), parent: fc.nat(1), size: fc.integer({ min: 1, max: 6 }) }),
  fc.record({
    kind: fc.constant('nested' as const),
    pick,
    size: fc.integer({ min: 1, max: 3 }),
    maxTokens: fc.constantFrom(0, 0, 30, 500),
  }),
  fc.record({ kind: fc.constant('start' as const), pick }),
  fc.record({ kind: fc.constant('end' as const), pick }),
  fc.record({ kind: fc.constant('fail' as const), pick }),
  fc.record({ kind: fc.constant('timeout' as const) }),
  fc.record({ kind: fc.constant('cancelQueued' as const), pick }),
  fc.record({ kind: fc.constant('cancelRunning' as const), pick }),
  fc.record({ kind: fc.constant('confirmStop' as const), pick }),
  fc.record({ kind: fc.constant('steer' as const), pick }),
  fc.record({ kind: fc.constant('continue' as const), pick }),
  fc.record({ kind: fc.constant('release' as const), pick }),
  fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 3000 }) }),
  // Samples come often, so the reservation gate both holds runs back and lets several go at once.
  {
    arbitrary: fc.record({
      kind: fc.constant('memory' as const),
      availableGb: fc.constantFrom(0.5, 2, 3, 8),
      expectedGb: fc.constantFrom(0.5, 1, 2),
    }),
    weight: 3,
  },
);

/** Cluster mode's rule: top-level runs of `cluster:*` parents are copies started here, the others proxies. */
const isClusterParent = (parent: string) => parent.startsWith('cluster:');

export const limits = fc
  .record({
    cap: fc.integer({ min: 1, max: 4 }),
    staggerMs: fc.constantFrom(0, 0, 1000),
    maxQueued: fc.integer({ min: 0, max: 5 }),
    maxQueuedWaveMembers: fc.integer({ min: 0, max: 10 }),
    maxDepth: fc.integer({ min: 1, max: 3 }),
    maxChildren: fc.integer({ min: 0, max: 3 }),
    timeoutMs: fc.constantFrom(2000, 5000),
    cluster: fc.boolean(),
    // The reservation gate, held back by the `memory` actions' samples when set.
    bufferGb: fc.constantFrom(undefined, 0.5, 2),
  })
  .map(({ cluster, bufferGb, ...rest }) => ({
    ...rest,
    ...(cluster ? { startsHere: isClusterParent } : {}),
    ...(bufferGb !== undefined ? { reservationBufferGb: bufferGb } : {}),
  }));

function choose<T>(items: T[], n: number): T | undefined {
  return items.length === 0 ? undefined : items[n % items.length];
}

export function apply(h: Harness, a: Action): void {
  // The second parent is the cluster's: with `startsHere` its runs are copies, the first's proxies.
  const parents = ['mcp:a', 'cluster:b'];
  switch (a.kind) {
    case 'spawn':
      h.step({
        type: 'spawn',
        parent: parents[a.parent] as string,
        members: [{ id: h.id(), agent: 'sim', keep: a.keep, maxTurns: a.maxTurns, maxTokens: a.maxTokens }],
      });
      return;
    case 'tokens': {
      const run = choose(
        h.live((r) => h.launched.has(r.id)),
        a.pick,
      );
      if (run) h.tokens(run.id, a.tokens);
      return;
    }
    case 'toolCall': {
      const run = choose(
        h.live((r) => h.launched.has(r.id)),
        a.pick,
      );
      if (run) h.toolCall(run.id);
      return;
    }
    case 'wave':
      h.step({
        type: 'spawn',
        parent: parents[a.parent] as string,
        batchId: h.batch(),
        members: Array.from({ length: a.size }, () => ({ id: h.id(), agent: 'sim', keep: false })),
      });
      return;
    case 'nested': {
      const parent = choose(
        h.live((r) => r.status === 'running'),
        a.pick,
      );
      if (!parent) return;
      h.step({
        type: 'spawn',
        parent: `run:${parent.id}`,
        ...(a.size > 1 ? { batchId: h.batch() } : {}),
        members: Array.from({ length: a.size }, () => ({
          id: h.id(),
          agent: 'sim',
          keep: false,
          maxTokens: a.maxTokens,
        })),
      });
      return;
    }
    case 'start': {
      const run = choose(
        h.live((r) => r.status === 'starting' && h.launched.has(r.id)),
        a.pick,
      );
      if (run) h.step({ type: 'started', runId: run.id });
      return;
    }
    case 'end':
    case 'fail': {
      const run = choose(
        h.live((r) => h.launched.has(r.id) && !h.stopping.has(r.id)),
        a.pick,
      );
      if (run) h.step({ type: 'ended', runId: run.id, status: a.kind === 'end' ? 'completed' : 'failed' });
      return;
    }
    case 'timeout':
      h.now += h.limits.timeoutMs;
      h.step({ type: 'tick' });
      return;
    case 'cancelQueued': {
      const run = choose(
        h.live((r) => r.status === 'queued'),
        a.pick,
      );
      if (run) h.step({ type: 'cancel', runId: run.id });
      return;
    }
    case 'cancelRunning': {
      const run = choose(
        h.live((r) => r.status !== 'queued'),
        a.pick,
      );
      if (run) h.step({ type: 'cancel', runId: run.id });
      return;
    }
    case 'confirmStop': {
      const id = choose([...h.stopping], a.pick);
      if (id) h.step({ type: 'ended', runId: id, status: 'cancelled' });
      return;
    }
    case 'steer': {
      const run = choose(h.live(), a.pick);
      if (run) {
        const reply = h.step({ type: 'steer', runId: run.id, message: 'go', mode: 'interrupt' });
        if (run.status !== 'running' && reply.reply.ok)
          h.violations.push(`steer of a ${run.status} run accepted`);
      }
      return;
    }
    case 'continue': {
      const kept = choose(
        [...h.runs.values()].filter((r) => r.keep),
        a.pick,
      );
      if (!kept) return;
      const conversationId = kept.conversationId ?? kept.id;
      const stateBefore = h.scheduler.conversation(conversationId)?.state;
      const reply = h.step({ type: 'continue', parent: kept.parent, conversationId, id: h.id() });
      if (stateBefore === 'busy' && (reply.reply.ok || reply.reply.refusal.code !== 'conversation_busy')) {
        h.violations.push('continuing a busy conversation was not refused conversation_busy');
      }
      return;
    }
    case 'release': {
      const kept = choose(
        [...h.runs.values()].filter((r) => r.keep && r.conversationId === undefined),
        a.pick,
      );
      if (kept) h.step({ type: 'release', conversationId: kept.id, reason: 'requested' });
      return;
    }
    case 'tick':
      h.now += a.ms;
      h.step({ type: 'tick' });
      return;
    case 'memory':
      h.step({
        type: 'memory',
        sample: { availableGb: a.availableGb, currentGb: {}, expectedGb: { sim: a.expectedGb } },
      });
      return;
  }
}
