import type { AgentDef } from '../core/agent-def.js';
import type { TranscriptStore } from '../transcripts/transcript-store.js';
import type { Workspaces } from '../workspace/workspaces.js';
import type { Runner } from './runner.js';
import { WorkspaceRunner } from './workspace-runner.js';

/**
 * How a gateway plugs workspaces in without knowing them: its runners are wrapped (one wrapper per
 * runner), and its transcript store tells the workspaces when a run's transcript is pruned (its TTL
 * passed, or its history was deleted), which is when its branch may go.
 */
export function withWorkspaceRunners(
  runnerFor: (agent: AgentDef) => Runner,
  workspaces: Workspaces,
): (agent: AgentDef) => Runner {
  const wrapped = new WeakMap<Runner, Runner>();
  return (agent) => {
    const inner = runnerFor(agent);
    let runner = wrapped.get(inner);
    if (!runner) {
      runner = new WorkspaceRunner(inner, workspaces);
      wrapped.set(inner, runner);
    }
    return runner;
  };
}

export function withPruneHook(
  transcripts: TranscriptStore,
  workspaces: Workspaces,
  log: (line: string) => void,
): TranscriptStore {
  const prune = async (id: string): Promise<void> => {
    await transcripts.prune(id);
    await workspaces
      .transcriptPruned(id)
      .catch((error: unknown) => log(`crew: retiring run ${id}'s branch failed: ${String(error)}`));
  };
  return new Proxy(transcripts, {
    get(target, property) {
      if (property === 'prune') return prune;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
