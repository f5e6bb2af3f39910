import type { WorkspaceFacts } from '../core/workspace-facts.js';
import type { Workspaces } from '../workspace/workspaces.js';
import type { RunHandle, Runner, RunnerEvent, RunRequest, StopReason } from './runner.js';

/**
 * A runner that gives each run asking for one its workspace before the real runner starts it: the
 * worktree and sandbox are made when the run starts (a queued run has none, so cancelling it leaves
 * nothing), the agent starts inside them, and its end waits until the work is committed and summarised.
 * The facts ride on the `started` and `ended` events, which the supervisor records on the run.
 * A run without a workspace plan goes straight to the real runner.
 */
export class WorkspaceRunner implements Runner {
  constructor(
    private readonly inner: Runner,
    private readonly workspaces: Workspaces,
  ) {}

  start(request: RunRequest, onEvent: (event: RunnerEvent) => void): RunHandle {
    const plan = request.workspace;
    if (!plan) return this.inner.start(request, onEvent);
    let inner: RunHandle | undefined;
    let stopped: StopReason | undefined;
    const handle: RunHandle = {
      stop: (reason) => {
        if (inner) inner.stop(reason);
        else stopped ??= reason;
      },
      steer: (message, mode) =>
        inner
          ? inner.steer(message, mode)
          : Promise.reject(new Error('the run is still preparing its workspace')),
    };
    void (async () => {
      let prepared: Awaited<ReturnType<Workspaces['prepare']>>;
      try {
        prepared = await this.workspaces.prepare(request.runId, plan, request.cwd, request.agent);
      } catch (error) {
        onEvent({
          type: 'ended',
          status: 'failed',
          error: `could not prepare its workspace: ${errorText(error)}`,
        });
        return;
      }
      const facts = prepared.facts;
      const end = async (event: Extract<RunnerEvent, { type: 'ended' }>) => {
        await prepared.closeSandbox?.().catch(() => undefined);
        const done: WorkspaceFacts | undefined = facts
          ? await this.workspaces.finish(request.runId, plan, facts)
          : undefined;
        onEvent(done ? { ...event, workspace: done } : event);
      };
      if (stopped !== undefined) {
        await end({ type: 'ended', status: 'cancelled', stop: 'cancelled' });
        return;
      }
      const started: RunRequest = { ...request, cwd: prepared.cwd, agent: prepared.agent };
      // A sandboxed run is its own process: a shared runtime would run it outside the sandbox.
      if (plan.sandbox) {
        started.shared = false;
        delete started.runtimeKey;
      }
      let ended = false;
      try {
        inner = this.inner.start(started, (event) => {
          if (event.type === 'ended') {
            if (ended) return;
            ended = true;
            void end(event);
          } else if (event.type === 'started' && facts) {
            onEvent({ ...event, workspace: facts });
          } else {
            onEvent(event);
          }
        });
      } catch (error) {
        ended = true;
        await end({ type: 'ended', status: 'failed', error: `could not start: ${errorText(error)}` });
      }
    })();
    return handle;
  }

  async release(conversationId: string): Promise<void> {
    try {
      await this.inner.release(conversationId);
    } finally {
      await this.workspaces.released(conversationId);
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
