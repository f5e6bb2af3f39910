import type { AgentDef } from '../core/agent-def.js';
import type { KeptSession } from '../core/scheduler-types.js';
import type { ParentKey, Run, RunId, RunSpec } from '../core/types.js';
import type { McpServerRef, RunRequest } from '../runners/runner.js';
import { planOf } from '../workspace/workspace-plan.js';

export interface RunRequestDeps {
  /** `agent.session_sharing`. */
  sessionSharing: boolean;
  defaultCwd: string;
  /** The full prompt: context groups and the agent's system prompt before the task. */
  buildPrompt?: (spec: RunSpec, agent: AgentDef) => string;
  /** Crew's MCP endpoint for a run (with a run-scoped token), so its own spawns nest under it. */
  mcpServersFor?: (runId: RunId, cwd: string) => McpServerRef[];
  /** The runtime an eligible run of this parent should share (a hosted chat's own process). */
  runtimeKeyFor?: (parent: ParentKey, agent: AgentDef) => string | undefined;
  /** A kept conversation's recorded agent session, reopened by a runner that no longer holds it (issue 29). */
  keptSessionOf?: (conversationId: string) => KeptSession | undefined;
}

/**
 * What the runner is asked to start for a launched run (DESIGN §6, Runners). A run is eligible for a
 * shared runtime when sharing is on and it sets none of model, reasoning effort or keep.
 */
export function buildRunRequest(run: Run, spec: RunSpec, agent: AgentDef, deps: RunRequestDeps): RunRequest {
  const model = spec.model ?? agent.model;
  const eligible =
    deps.sessionSharing &&
    spec.model === undefined &&
    spec.reasoningEffort === undefined &&
    spec.keep !== true;
  const runtimeKey = eligible ? deps.runtimeKeyFor?.(run.parent, agent) : undefined;
  // Built by assignment, not from spreads of optional parts: one request per launch, on the hot path.
  const request: RunRequest = {
    runId: run.id,
    agent,
    prompt: deps.buildPrompt ? deps.buildPrompt(spec, agent) : spec.task,
    cwd: spec.cwd ?? deps.defaultCwd,
    // A command agent has no MCP client to hand servers to (its runner passes argv and env only): no
    // run-scoped token is minted for it, one per run that nothing would use (issue 32 §4).
    mcpServers:
      agent.runner === 'command' ? [] : (deps.mcpServersFor?.(run.id, spec.cwd ?? deps.defaultCwd) ?? []),
    keep: spec.keep === true,
    shared: eligible && agent.shared,
  };
  if (runtimeKey !== undefined) request.runtimeKey = runtimeKey;
  if (model !== undefined) request.model = model;
  if (spec.reasoningEffort !== undefined) request.reasoningEffort = spec.reasoningEffort;
  if (run.conversationId !== undefined) {
    request.continueFrom = run.conversationId;
    const kept = deps.keptSessionOf?.(run.conversationId);
    if (kept !== undefined) request.resumeSession = kept;
  }
  const workspace = planOf(spec, run.batchId, run.conversationId);
  if (workspace !== undefined) request.workspace = workspace;
  return request;
}
