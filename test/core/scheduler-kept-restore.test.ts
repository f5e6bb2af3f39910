import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/core/scheduler.js';
import type {
  Conversation,
  KeptSession,
  SchedulerCommand,
  SchedulerLimits,
} from '../../src/core/scheduler-types.js';

const limits: SchedulerLimits = {
  cap: 2,
  staggerMs: 0,
  maxQueued: 5,
  maxQueuedWaveMembers: 10,
  maxDepth: 2,
  maxChildren: 3,
  timeoutMs: 60_000,
};

const LOADABLE: KeptSession = { id: 'sess-1', cwd: '/w/p', loadable: true };

/**
 * The first process: a kept run starts (its runner reporting `session`) and ends as `ending`; the
 * conversations it persisted are what the store hands the next process.
 */
function firstProcess(session: KeptSession | undefined, ending: 'completed' | 'running') {
  const scheduler = new Scheduler(limits);
  const stored = new Map<string, Conversation>();
  const step = (event: Parameters<Scheduler['step']>[0], now: number) => {
    const result = scheduler.step(event, now);
    for (const c of result.commands as SchedulerCommand[]) {
      if (c.type === 'persist_conversation') stored.set(c.conversation.id, c.conversation);
    }
    return result;
  };
  step({ type: 'spawn', parent: 'mcp:p', members: [{ id: 'k', agent: 'opencode', keep: true }] }, 1_000);
  step({ type: 'started', runId: 'k', ...(session ? { session } : {}) }, 2_000);
  if (ending === 'completed') step({ type: 'ended', runId: 'k', status: 'completed' }, 5_000);
  return [...stored.values()];
}

function restart(conversations: Conversation[], now: number) {
  const scheduler = new Scheduler(limits);
  const result = scheduler.step(
    { type: 'restore', queued: [], executing: [], waves: [], nextSeq: 10, conversations },
    now,
  );
  const persisted = (result.commands as SchedulerCommand[]).flatMap((c) =>
    c.type === 'persist_conversation' ? [c.conversation] : [],
  );
  return { scheduler, persisted };
}

describe('kept conversations across a restart (issue 29)', () => {
  it('the session a kept run started in is recorded on its conversation, and stays when the turn ends idle', () => {
    const [conversation] = firstProcess(LOADABLE, 'completed');
    expect(conversation).toMatchObject({ id: 'k', state: 'idle', session: LOADABLE, lastUsedAt: 5_000 });
  });

  it('an idle conversation whose agent can load sessions is restored idle, continuable, its TTL still counted from its last turn', () => {
    const { scheduler, persisted } = restart(firstProcess(LOADABLE, 'completed'), 90_000);
    expect(persisted).toEqual([]);
    expect(scheduler.conversation('k')).toMatchObject({
      state: 'idle',
      session: LOADABLE,
      lastUsedAt: 5_000,
    });
    expect(scheduler.idleConversations().map((c) => c.id)).toEqual(['k']);
    const reply = scheduler.step(
      { type: 'continue', parent: 'mcp:p', conversationId: 'k', id: 'k2' },
      91_000,
    );
    expect(reply.reply).toMatchObject({ ok: true, runs: [{ id: 'k2', status: 'starting' }] });
    expect(reply.commands).toContainEqual({ type: 'launch', runId: 'k2' });
    expect(scheduler.conversation('k')).toMatchObject({ state: 'busy', latestRunId: 'k2' });
  });

  it('an agent that cannot load sessions: the conversation is released and the refusal says why', () => {
    const { scheduler, persisted } = restart(
      firstProcess({ ...LOADABLE, loadable: false }, 'completed'),
      90_000,
    );
    expect(persisted).toMatchObject([{ id: 'k', state: 'released', lastUsedAt: 90_000 }]);
    expect(scheduler.conversation('k')).toBeUndefined();
    const reply = scheduler.step(
      {
        type: 'continue',
        parent: 'mcp:p',
        conversationId: 'k',
        id: 'k2',
        stored: persisted[0] as Conversation,
      },
      91_000,
    );
    expect(reply.reply).toMatchObject({ ok: false, refusal: { code: 'conversation_released' } });
    const message = reply.reply.ok ? '' : reply.reply.refusal.message;
    expect(message).toMatch(/restarted/);
    expect(message).toMatch(
      /agent "opencode" cannot reload sessions \(it does not advertise ACP loadSession\)/,
    );
  });

  it('a runner that reports no session (command, fake) keeps the old behaviour: released at restart', () => {
    const { persisted } = restart(firstProcess(undefined, 'completed'), 90_000);
    expect(persisted).toMatchObject([
      { id: 'k', state: 'released', releasedReason: 'the gateway restarted and its session ended' },
    ]);
  });

  it('a conversation whose turn was running when the gateway died is released, even if loadable', () => {
    const { persisted } = restart(firstProcess(LOADABLE, 'running'), 90_000);
    expect(persisted).toMatchObject([{ id: 'k', state: 'released' }]);
    expect(persisted[0]?.releasedReason).toMatch(/restarted while its turn ran/);
  });

  it('a started event of a run that is not kept records nothing', () => {
    const scheduler = new Scheduler(limits);
    scheduler.step({ type: 'spawn', parent: 'mcp:p', members: [{ id: 'a', agent: 'x', keep: false }] }, 0);
    const result = scheduler.step({ type: 'started', runId: 'a', session: LOADABLE }, 1);
    expect((result.commands as SchedulerCommand[]).some((c) => c.type === 'persist_conversation')).toBe(
      false,
    );
  });
});
