import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import type { AgentDef } from '../core/agent-def.js';
import type { CrewConfig } from '../core/config-schema.js';
import { CrewError } from '../core/errors.js';
import { taskPreview } from '../core/redact.js';
import * as refusals from '../core/refusals.js';
import type { RunSpec } from '../core/types.js';
import { applyWorkspace, type WorkspaceAdmission } from '../workspace/admission.js';
import type { SpawnArgs } from './spawn-args.js';

/** A spawn after admission step 1: one spec per task, in order. */
export interface ValidatedSpawn {
  specs: RunSpec[];
  wave: boolean;
  commandId?: string;
  /** What the chosen agents cannot honour (a model or effort they have no way to take); never refused. */
  warnings: string[];
}

/**
 * Admission step 1 (DESIGN §3): empty task, task length, `max_turns`, unknown agent, `cwd` confinement,
 * batch size — in that order, each a typed refusal that says what to do next.
 */
export function validateSpawn(
  args: SpawnArgs,
  config: CrewConfig,
  agentsAt: (cwd: string) => ReadonlyMap<string, AgentDef>,
  defaultCwd: string,
  workspaces?: WorkspaceAdmission,
): ValidatedSpawn {
  const wave = args.tasks !== undefined;
  if (wave && args.task !== undefined) throw new CrewError(refusals.bothTaskAndTasks());
  const tasks = wave ? (args.tasks ?? []) : args.task === undefined ? [] : [args.task];
  const indexOf = (i: number) => (wave ? i : undefined);
  if (tasks.length === 0) throw new CrewError(refusals.noTasks(wave));
  tasks.forEach((task, i) => {
    if (task.trim() === '') throw new CrewError(refusals.emptyTask(indexOf(i)));
  });
  const maxChars = config['agent.task_max_chars'];
  tasks.forEach((task, i) => {
    if (task.length > maxChars) throw new CrewError(refusals.taskTooLong(indexOf(i), task.length, maxChars));
  });
  if (args.max_turns !== undefined && (args.max_turns < 0 || args.max_turns > refusals.MAX_TURNS_LIMIT)) {
    throw new CrewError(refusals.maxTurnsOutOfRange(args.max_turns));
  }
  if (
    args.max_tokens !== undefined &&
    (!Number.isInteger(args.max_tokens) || args.max_tokens < 0 || args.max_tokens > refusals.MAX_TOKENS_LIMIT)
  ) {
    throw new CrewError(refusals.maxTokensOutOfRange(args.max_tokens));
  }
  if (args.agents !== undefined && args.agents.length !== tasks.length) {
    throw new CrewError(refusals.agentsMismatch(args.agents.length, tasks.length));
  }
  // The run's directory chooses which project agents exist, so it is resolved first; a refused `cwd`
  // is still reported after an unknown agent (judged by the default directory's agents), in order.
  let cwd = defaultCwd;
  let cwdRefusal: unknown;
  try {
    if (args.cwd !== undefined) cwd = confineCwd(args.cwd, config['agent.subagent_cwd_allowed_roots']);
  } catch (error) {
    cwdRefusal = error;
  }
  const knownAgents = agentsAt(cwdRefusal === undefined ? cwd : defaultCwd);
  const agentFor = (i: number) => args.agents?.[i] ?? args.agent ?? config['agent.default_agent'];
  tasks.forEach((_, i) => {
    const agent = agentFor(i);
    if (!knownAgents.has(agent)) {
      throw new CrewError(
        refusals.unknownAgent(agent, knownAgents.keys(), args.agents ? `agents[${i}]` : 'agent'),
      );
    }
  });
  if (cwdRefusal !== undefined) throw cwdRefusal;
  const batchMax = config['agent.subagent_batch_max'];
  if (tasks.length > batchMax) throw new CrewError(refusals.batchTooLarge(tasks.length, batchMax));
  // Optional fields assigned, not spread: admission is the hot path, and each spread is an object.
  const specs = tasks.map((task, i): RunSpec => {
    const spec: RunSpec = { task, preview: taskPreview(task), agent: agentFor(i), cwd };
    if (args.cwd !== undefined) spec.cwdConfined = true;
    if (args.max_turns !== undefined) spec.maxTurns = args.max_turns;
    if (args.max_tokens !== undefined) spec.maxTokens = args.max_tokens;
    if (args.model !== undefined) spec.model = args.model;
    if (args.reasoning_effort !== undefined) spec.reasoningEffort = args.reasoning_effort;
    if (args.keep !== undefined) spec.keep = args.keep;
    if (args.include_memory !== undefined) spec.includeMemory = args.include_memory;
    if (args.include_lessons !== undefined) spec.includeLessons = args.include_lessons;
    if (args.include_project !== undefined) spec.includeProject = args.include_project;
    return spec;
  });
  if (
    args.isolation !== undefined ||
    args.isolations !== undefined ||
    args.base !== undefined ||
    args.sandbox !== undefined ||
    hasWorkspaceDefaults(specs, knownAgents, config)
  )
    applyWorkspace(args, specs, knownAgents, config, workspaces);
  const warnings =
    args.model === undefined && args.reasoning_effort === undefined
      ? []
      : unhonoured(args, [...new Set(tasks.map((_, i) => agentFor(i)))], knownAgents);
  return { specs, wave, warnings, ...(args.command_id !== undefined ? { commandId: args.command_id } : {}) };
}

/**
 * Warnings for a `model` / `reasoning_effort` that an agent has no way to take, so it is never dropped in
 * silence: a command agent takes them only through `{model}` / `{effort}` in its argv; the built-in
 * simulator takes them only when started with `--config-options`. Other ACP agents may take them through
 * `session/set_config_option`, which only the started session tells.
 */
function unhonoured(
  args: Pick<SpawnArgs, 'model' | 'reasoning_effort'>,
  names: readonly string[],
  agents: ReadonlyMap<string, AgentDef>,
): string[] {
  const warnings: string[] = [];
  const fields = [
    ['model', args.model, '{model}'],
    ['reasoning_effort', args.reasoning_effort, '{effort}'],
  ] as const;
  for (const [field, value, placeholder] of fields) {
    if (value === undefined) continue;
    for (const name of names) {
      const agent = agents.get(name);
      if (!agent || agent.command.some((arg) => arg.includes(placeholder))) continue;
      if (agent.runner === 'command') {
        warnings.push(
          `agent ${name} cannot honour ${field} "${value}": its command has no ${placeholder}; the run goes on without it`,
        );
      } else if (isBuiltinSim(agent) && !agent.command.includes('--config-options')) {
        warnings.push(
          `agent ${name} (the simulator) cannot honour ${field} "${value}"; the run goes on without it`,
        );
      }
    }
  }
  return warnings;
}

/** Whether an agent or the config asks for a workspace by default (else admission skips that step). */
function hasWorkspaceDefaults(
  specs: readonly RunSpec[],
  agents: ReadonlyMap<string, AgentDef>,
  config: CrewConfig,
): boolean {
  if (config['workspace.sandbox_default']) return true;
  return specs.some((spec) => {
    const agent = agents.get(spec.agent);
    return agent?.isolation === 'worktree' || agent?.sandbox === true;
  });
}

function isBuiltinSim(agent: AgentDef): boolean {
  return (agent as AgentDef & { source?: string }).source === 'builtin' && agent.name === 'sim';
}

/**
 * A `cwd` argument must be absolute and, after resolving symlinks, lie under one of the allowed roots
 * (also resolved), so neither `../` nor a link can lead out.
 */
export function confineCwd(cwd: string, allowedRoots: readonly string[]): string {
  if (!isAbsolute(cwd)) throw new CrewError(refusals.cwdNotAbsolute(cwd));
  if (allowedRoots.length === 0) throw new CrewError(refusals.noCwdRoots());
  let real: string;
  try {
    real = realpathSync(cwd);
  } catch {
    throw new CrewError(refusals.cwdMissing(cwd));
  }
  for (const root of allowedRoots) {
    let realRoot: string;
    try {
      realRoot = realpathSync(root);
    } catch {
      continue;
    }
    const rel = relative(realRoot, real);
    if (rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))) {
      if (!isDirectory(real)) throw new CrewError(refusals.cwdNotDirectory(cwd, real));
      return real;
    }
  }
  throw new CrewError(refusals.cwdOutsideRoots(cwd, real, allowedRoots));
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
