import type { AgentDef } from '../core/agent-def.js';
import { CrewFault } from '../core/errors.js';
import type { AcpRuntime } from './acp-runtime.js';

/**
 * Shared runtimes (DESIGN §6, Runners): one pooled process per agent, keyed by its name and command, started
 * (and initialized) on first use and kept until it dies or the pool is cleared. A runtime that died or
 * is being terminated is replaced by a fresh one on the next request.
 */
export class SharedRuntimePool {
  private readonly entries = new Map<string, { runtime: AcpRuntime; ready: Promise<AcpRuntime> }>();

  /** @param spawn starts a runtime's process (throws when it cannot be started). */
  constructor(private readonly spawn: (agent: AgentDef, cwd: string) => AcpRuntime) {}

  /**
   * The agent's live runtime, or a new one started in `cwd`. Rejects with the reason when the new one
   * fails to initialize (its process is gone by then); every run waiting for it gets that reason.
   */
  get(agent: AgentDef, cwd: string): Promise<AcpRuntime> {
    const key = `${agent.name}\u0000${JSON.stringify(agent.command)}`;
    const existing = this.entries.get(key);
    if (existing && !existing.runtime.isDown) return existing.ready;
    const runtime = this.spawn(agent, cwd);
    const ready = runtime.initialize().then(
      () => runtime,
      async (error: unknown) => {
        const reason = await runtime.reasonFor(error);
        await runtime.terminate();
        throw new CrewFault('runtime_died', `could not start the shared runtime: ${reason}`);
      },
    );
    const entry = { runtime, ready };
    this.entries.set(key, entry);
    const forget = () => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    };
    void runtime.died.then(forget);
    ready.catch(forget);
    return ready;
  }

  /** Forgets every runtime (the runner terminates the processes). */
  clear(): void {
    this.entries.clear();
  }
}
