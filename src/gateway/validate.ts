import { realpathSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import type { CrewConfig } from '../core/config-schema.js';
import { CrewError, refuse } from '../core/errors.js';
import { taskPreview } from '../core/redact.js';
import type { RunSpec } from '../core/types.js';
import type { SpawnArgs } from './spawn-args.js';

/** A spawn after admission step 1: one spec per task, in order. */
export interface ValidatedSpawn {
  specs: RunSpec[];
  wave: boolean;
  commandId?: string;
}

/**
 * Admission step 1 (DESIGN §3): empty task, task length, `max_turns`, unknown agent, `cwd` confinement,
 * batch size — in that order, each a typed refusal that says what to do next.
 */
export function validateSpawn(
  args: SpawnArgs,
  config: CrewConfig,
  knownAgents: ReadonlySet<string>,
  defaultCwd: string,
): ValidatedSpawn {
  const wave = args.tasks !== undefined;
  if (wave && args.task !== undefined) {
    throw new CrewError(refuse('invalid_argument', 'pass either task or tasks, not both', { path: 'tasks' }));
  }
  const tasks = wave ? (args.tasks ?? []) : args.task === undefined ? [] : [args.task];
  if (tasks.length === 0) {
    throw new CrewError(
      refuse(
        'empty_task',
        wave ? 'tasks is empty; pass at least one task' : 'task is empty; say what the sub-agent should do',
        {
          path: wave ? 'tasks' : 'task',
        },
      ),
    );
  }
  tasks.forEach((task, i) => {
    if (task.trim() === '') {
      throw new CrewError(
        refuse(
          'empty_task',
          `task${wave ? ` ${i}` : ''} is empty or whitespace; say what the sub-agent should do`,
          {
            path: wave ? `tasks[${i}]` : 'task',
          },
        ),
      );
    }
  });
  const maxChars = config['agent.task_max_chars'];
  tasks.forEach((task, i) => {
    if (task.length > maxChars) {
      throw new CrewError(
        refuse(
          'invalid_argument',
          `task${wave ? ` ${i}` : ''} has ${task.length} characters, more than agent.task_max_chars (${maxChars}); shorten it or put the material in a file and name the file`,
          { path: wave ? `tasks[${i}]` : 'task', limit: maxChars, current: task.length },
        ),
      );
    }
  });
  if (args.max_turns !== undefined && (args.max_turns < 0 || args.max_turns > 200)) {
    throw new CrewError(
      refuse('invalid_argument', `max_turns must be between 0 and 200, got ${args.max_turns}`, {
        path: 'max_turns',
        limit: 200,
        current: args.max_turns,
      }),
    );
  }
  if (args.agents !== undefined && args.agents.length !== tasks.length) {
    throw new CrewError(
      refuse(
        'invalid_argument',
        `agents has ${args.agents.length} entries for ${tasks.length} tasks; give one agent per task, or use agent for all`,
        { path: 'agents' },
      ),
    );
  }
  const agentFor = (i: number) => args.agents?.[i] ?? args.agent ?? config['agent.default_agent'];
  tasks.forEach((_, i) => {
    const agent = agentFor(i);
    if (!knownAgents.has(agent)) {
      throw new CrewError(
        refuse(
          'unknown_agent',
          `unknown agent "${agent}"; known agents: ${[...knownAgents].sort().join(', ')}`,
          {
            path: args.agents ? `agents[${i}]` : 'agent',
          },
        ),
      );
    }
  });
  const cwd =
    args.cwd === undefined ? defaultCwd : confineCwd(args.cwd, config['agent.subagent_cwd_allowed_roots']);
  const batchMax = config['agent.subagent_batch_max'];
  if (tasks.length > batchMax) {
    throw new CrewError(
      refuse(
        'batch_too_large',
        `a wave of ${tasks.length} tasks is more than agent.subagent_batch_max (${batchMax}); split it into waves of at most ${batchMax}`,
        { path: 'tasks', limit: batchMax, current: tasks.length },
      ),
    );
  }
  const specs = tasks.map(
    (task, i): RunSpec => ({
      task,
      preview: taskPreview(task),
      agent: agentFor(i),
      cwd,
      ...(args.max_turns !== undefined ? { maxTurns: args.max_turns } : {}),
      ...(args.model !== undefined ? { model: args.model } : {}),
      ...(args.reasoning_effort !== undefined ? { reasoningEffort: args.reasoning_effort } : {}),
      ...(args.keep !== undefined ? { keep: args.keep } : {}),
      ...(args.include_memory !== undefined ? { includeMemory: args.include_memory } : {}),
      ...(args.include_lessons !== undefined ? { includeLessons: args.include_lessons } : {}),
      ...(args.include_project !== undefined ? { includeProject: args.include_project } : {}),
    }),
  );
  return { specs, wave, ...(args.command_id !== undefined ? { commandId: args.command_id } : {}) };
}

/**
 * A `cwd` argument must be absolute and, after resolving symlinks, lie under one of the allowed roots
 * (also resolved), so neither `../` nor a link can lead out.
 */
export function confineCwd(cwd: string, allowedRoots: readonly string[]): string {
  if (!isAbsolute(cwd)) {
    throw new CrewError(
      refuse('cwd_not_allowed', `cwd must be an absolute path, got "${cwd}"`, { path: 'cwd' }),
    );
  }
  if (allowedRoots.length === 0) {
    throw new CrewError(
      refuse(
        'cwd_not_allowed',
        'no cwd roots are allowed (agent.subagent_cwd_allowed_roots is empty); omit cwd to use your own directory, or ask the operator to allow a root',
        { path: 'cwd' },
      ),
    );
  }
  let real: string;
  try {
    real = realpathSync(cwd);
  } catch {
    throw new CrewError(refuse('cwd_not_allowed', `cwd ${cwd} does not exist`, { path: 'cwd' }));
  }
  for (const root of allowedRoots) {
    let realRoot: string;
    try {
      realRoot = realpathSync(root);
    } catch {
      continue;
    }
    const rel = relative(realRoot, real);
    if (rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))) return real;
  }
  throw new CrewError(
    refuse(
      'cwd_not_allowed',
      `cwd ${cwd} resolves to ${real}, outside the allowed roots (${allowedRoots.join(', ')}); choose a directory under one of them`,
      { path: 'cwd' },
    ),
  );
}
