import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { errorCodeOf } from '../../src/core/errors.js';
import { Workspaces } from '../../src/workspace/workspaces.js';
import { fakeAgent } from '../helpers/fake-gateway.js';

describe('a sandboxed run on a gateway without a sandbox', () => {
  it('fails its start with a sandbox_unavailable refusal that says how to run it instead', async () => {
    const workspaces = new Workspaces({
      root: '/nonexistent/crew-worktrees',
      clock: new FakeClock(0),
      gitTimeoutMs: 1000,
      unmergedKeepMs: 1000,
      maxBranches: 10,
      conflictCheckMax: 10,
    });
    const plan = { worktree: false, sandbox: true, keep: false };
    const failed = await workspaces.prepare('r1', plan, '/tmp', fakeAgent('a')).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(errorCodeOf(failed)).toBe('sandbox_unavailable');
    expect((failed as Error).message).toMatch(/without sandbox: true/);
  });
});
