import { realClock } from '../clock/real-clock.js';
import type { AgentDef } from '../core/agent-def.js';
import type { Clock } from '../core/clock.js';
import type { CrewConfig } from '../core/config-schema.js';
import type { Runner } from '../runners/runner.js';
import { MemoryStore } from '../store/memory-store.js';
import { MemoryTranscripts } from '../transcripts/memory-transcripts.js';
import { Gateway, type GatewayDeps } from './gateway.js';

/** The SEL of a gateway given none: library use without a home directory. */
const discardSel = { write: () => undefined, close: async () => undefined };

/** What `createGateway` needs beyond the config; everything but a runner has an in-memory default. */
export type CreateGatewayDeps = Partial<Omit<GatewayDeps, 'runnerFor' | 'agents' | 'cap'>> & {
  /** One runner for every agent, or a chooser. */
  runner?: Runner;
  runnerFor?: (agent: AgentDef) => Runner;
  agents?: ReadonlyMap<string, AgentDef>;
  /** The cap; default: `agent.max_subagents` when pinned, else 3 (the fallback). */
  cap?: number;
  clock?: Clock;
};

/**
 * The one composition root (STYLE 7): wires a gateway from the config and its collaborators, recovers
 * what a previous process left in the store, and returns it started. Tests pass fakes here; nothing is
 * mocked by module.
 */
export function createGateway(config: CrewConfig, deps: CreateGatewayDeps): Gateway {
  const runner = deps.runner;
  const runnerFor = deps.runnerFor ?? (runner ? () => runner : undefined);
  // A library caller's mistake at construction, before any request: no user of a running Crew sees it.
  if (!runnerFor) throw new Error('createGateway needs a runner or runnerFor');
  const pinned = config['agent.max_subagents'];
  const { runner: _one, runnerFor: _chooser, ...given } = deps;
  // Every dependency given is passed on as it is (a list spelled out here once dropped `isPaused`); the
  // defaults fill only what was not given.
  const gateway = new Gateway(config, {
    ...given,
    runnerFor,
    clock: deps.clock ?? realClock,
    store: deps.store ?? new MemoryStore(),
    transcripts: deps.transcripts ?? new MemoryTranscripts(),
    sel: deps.sel ?? discardSel,
    agents: deps.agents ?? new Map(),
    cap: deps.cap ?? Math.max(pinned, 3),
    defaultCwd: deps.defaultCwd ?? process.cwd(),
  });
  gateway.start();
  return gateway;
}
