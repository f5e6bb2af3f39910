import type { RunSpec } from '../core/types.js';
import type { SpawnArgs } from '../gateway/spawn-args.js';

/**
 * The spawn arguments that start an ended run again as a new run (issue 32's re-run): its task, agent,
 * limits, model, context scope, isolation and sandbox. A `cwd` the spawn named goes back as the `cwd`
 * argument (checked against the allowed roots again); the parent's own directory goes as the request's
 * `cwd`. A worktree run starts from the current HEAD, not the old base: a re-run is of the task now.
 */
export function rerunArgsOf(spec: RunSpec): { args: SpawnArgs; cwd?: string } {
  const args: SpawnArgs = { task: spec.task, agent: spec.agent };
  if (spec.cwd !== undefined && spec.cwdConfined) args.cwd = spec.cwd;
  if (spec.maxTurns !== undefined) args.max_turns = spec.maxTurns;
  if (spec.maxTokens !== undefined) args.max_tokens = spec.maxTokens;
  if (spec.model !== undefined) args.model = spec.model;
  if (spec.reasoningEffort !== undefined) args.reasoning_effort = spec.reasoningEffort;
  if (spec.includeMemory !== undefined) args.include_memory = spec.includeMemory;
  if (spec.includeLessons !== undefined) args.include_lessons = spec.includeLessons;
  if (spec.includeProject !== undefined) args.include_project = spec.includeProject;
  if (spec.isolation !== undefined) args.isolation = spec.isolation;
  if (spec.sandbox !== undefined) args.sandbox = spec.sandbox;
  if (spec.keep !== undefined) args.keep = spec.keep;
  return spec.cwd !== undefined && !spec.cwdConfined ? { args, cwd: spec.cwd } : { args };
}
