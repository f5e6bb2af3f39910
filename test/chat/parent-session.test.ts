import { describe, expect, it } from 'vitest';
import { type ParentRuntimes, ParentSession } from '../../src/chat/parent-session.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import { errorCodeOf } from '../../src/core/errors.js';
import type { AcpRuntime } from '../../src/runners/acp-runtime.js';

/**
 * The notice that a restarted parent starts afresh comes once the new session is open, not while it is
 * still opening: a reader who sees it finds the chat in its new session (a soak caught the chat's view
 * without a session id right after the notice).
 */

const SIM = { name: 'sim', runner: 'acp', command: ['sim'] } as unknown as AgentDef;

/** A runtime whose `session/load` fails and whose `session/new` waits until `open()` is called. */
function slowRuntimes(options: { loadSession: boolean }) {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const runtimes: ParentRuntimes = {
    openHosted: async () =>
      ({
        pid: 7,
        isDown: false,
        supportsHttpMcp: true,
        supportsLoadSession: options.loadSession,
        loadSession: async () => {
          throw new Error('Resource not found');
        },
        newSession: async () => {
          await opened;
          return { sessionId: 'new-session' };
        },
        onDeath: () => () => undefined,
        reasonFor: async (error: unknown) => String(error),
      }) as unknown as AcpRuntime,
    closeHosted: async () => undefined,
  };
  return { runtimes, open };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

describe('a parent session restored after a restart', () => {
  it.each([
    [true, /could not reload the conversation \(Resource not found\); it starts afresh/],
    [false, /in a new session: it cannot reload sessions/],
  ])(
    'with loadSession %s, says it starts afresh only once the new session is open',
    async (loadSession, said) => {
      const { runtimes, open } = slowRuntimes({ loadSession });
      const notices: string[] = [];
      const session = new ParentSession({
        key: 'chat:x',
        label: 'parent of chat x',
        agent: SIM,
        cwd: '/',
        mcpServers: [],
        runtimes,
        sink: {
          onUpdate: () => undefined,
          onPermission: () => ({ outcome: { outcome: 'cancelled' } }),
        },
        notice: (text) => notices.push(text),
        sessionId: 'old-session',
      });
      const ensured = session.ensure();
      await settle();
      expect(notices).toEqual([]);
      open();
      const current = await ensured;
      expect(current.sessionId).toBe('new-session');
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatch(said);
    },
  );
});

describe('a parent session that cannot open', () => {
  it('rejects with a runtime_died fault that carries the reason (a coded error the chat edge can map)', async () => {
    const runtimes: ParentRuntimes = {
      openHosted: async () =>
        ({
          pid: 7,
          isDown: false,
          supportsHttpMcp: true,
          supportsLoadSession: false,
          newSession: async () => {
            throw new Error('Authentication required');
          },
          onDeath: () => () => undefined,
          reasonFor: async (error: unknown) => `the parent agent refused: ${String(error)}`,
        }) as unknown as AcpRuntime,
      closeHosted: async () => undefined,
    };
    const session = new ParentSession({
      key: 'chat:y',
      label: 'parent of chat y',
      agent: SIM,
      cwd: '/',
      mcpServers: [],
      runtimes,
      sink: { onUpdate: () => undefined, onPermission: () => ({ outcome: { outcome: 'cancelled' } }) },
      notice: () => undefined,
    });
    const failure = await session.ensure().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(errorCodeOf(failure)).toBe('runtime_died');
    expect((failure as Error).message).toBe('the parent agent refused: Error: Authentication required');
  });
});
