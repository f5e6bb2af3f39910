import { z } from 'zod';
import { CrewError, refuse } from '../core/errors.js';

/**
 * The arguments of a spawn as every front end receives them (MCP `spawn_run`, HTTP, CLI, library),
 * validated once here. Crew, not the MCP SDK, validates them, so a wrong argument is an
 * `invalid_argument` refusal naming its path.
 */
const effort = z.enum(['low', 'medium', 'high', 'xhigh', 'max']);
const name = z.string().min(1).max(128);

export const spawnArgsSchema = z
  .object({
    task: z.string().optional(),
    tasks: z.array(z.string()).optional(),
    agent: name.optional(),
    agents: z.array(name).optional(),
    include_memory: z.boolean().optional(),
    include_lessons: z.boolean().optional(),
    include_project: z.boolean().optional(),
    max_turns: z.number().int().optional(),
    model: z.string().min(1).max(256).optional(),
    reasoning_effort: effort.optional(),
    keep: z.boolean().optional(),
    cwd: z.string().min(1).max(4096).optional(),
    command_id: z.string().min(1).max(256).optional(),
  })
  .strict();

export type SpawnArgs = z.output<typeof spawnArgsSchema>;

export const continueArgsSchema = z
  .object({
    conversation: z.string().min(1).max(256),
    task: z.string(),
    agent: name.optional(),
    max_turns: z.number().int().optional(),
    model: z.string().min(1).max(256).optional(),
    command_id: z.string().min(1).max(256).optional(),
  })
  .strict();

export type ContinueArgs = z.output<typeof continueArgsSchema>;

/** Parses with a zod schema; the first problem becomes an `invalid_argument` refusal with its path. */
export function parseArgs<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue ? formatPath(issue.path) : '';
  const all = parsed.error.issues
    .map((i) => `${formatPath(i.path) || '(arguments)'}: ${i.message}`)
    .join('; ');
  throw new CrewError(
    refuse('invalid_argument', `invalid arguments: ${all}; fix the argument and call again`, {
      path: path || '(arguments)',
    }),
  );
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}
