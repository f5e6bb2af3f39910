import { z } from 'zod';
import { CrewError, refuse } from '../core/errors.js';
import { MAX_TOKENS_LIMIT, MAX_TURNS_LIMIT } from '../core/refusals.js';

/**
 * The arguments of a spawn as every front end receives them (MCP `spawn_run`, HTTP, CLI, library),
 * validated once here. Crew, not the MCP SDK, validates them, so a wrong argument is an
 * `invalid_argument` refusal naming its path.
 */
const effort = z.enum(['low', 'medium', 'high', 'xhigh', 'max']);
const name = z.string().min(1).max(128);
/** `max_turns`: 0..200 (DESIGN §3), advertised in the tools' JSON schemas as those bounds. */
const maxTurns = z.number().int().min(0).max(MAX_TURNS_LIMIT);
/** `max_tokens`: 0 (none) up to a billion; a wave's members each get it. */
const maxTokens = z.number().int().min(0).max(MAX_TOKENS_LIMIT);
/** `isolation`: `worktree` gives each run its own git worktree (issue 31); `none` is the default. */
const isolation = z.enum(['none', 'worktree']);

export const spawnArgsSchema = z
  .object({
    task: z.string().optional(),
    tasks: z.array(z.string()).optional(),
    agent: name.optional(),
    agents: z.array(name).optional(),
    include_memory: z.boolean().optional(),
    include_lessons: z.boolean().optional(),
    include_project: z.boolean().optional(),
    max_turns: maxTurns.optional(),
    max_tokens: maxTokens.optional(),
    model: z.string().min(1).max(256).optional(),
    reasoning_effort: effort.optional(),
    keep: z.boolean().optional(),
    cwd: z.string().min(1).max(4096).optional(),
    command_id: z.string().min(1).max(256).optional(),
    isolation: isolation.optional(),
    isolations: z.array(isolation).optional(),
    base: z.string().min(1).max(256).optional(),
    sandbox: z.boolean().optional(),
  })
  .strict();

export type SpawnArgs = z.output<typeof spawnArgsSchema>;

export const continueArgsSchema = z
  .object({
    conversation: z.string().min(1).max(256),
    task: z.string(),
    agent: name.optional(),
    max_turns: maxTurns.optional(),
    max_tokens: maxTokens.optional(),
    model: z.string().min(1).max(256).optional(),
    command_id: z.string().min(1).max(256).optional(),
  })
  .strict();

export type ContinueArgs = z.output<typeof continueArgsSchema>;

/** A string argument's length bounds, as its zod schema above says them. */
const STRING_BOUNDS: ReadonlyMap<string, readonly [number, number]> = new Map([
  ['task', [0, Number.POSITIVE_INFINITY]],
  ['agent', [1, 128]],
  ['model', [1, 256]],
  ['cwd', [1, 4096]],
  ['command_id', [1, 256]],
  ['base', [1, 256]],
]);
const BOOLEAN_ARGS: ReadonlySet<string> = new Set([
  'include_memory',
  'include_lessons',
  'include_project',
  'keep',
  'sandbox',
]);
const INTEGER_MAX: ReadonlyMap<string, number> = new Map([
  ['max_turns', MAX_TURNS_LIMIT],
  ['max_tokens', MAX_TOKENS_LIMIT],
]);
const EFFORTS: ReadonlySet<unknown> = new Set(effort.options);

/**
 * The spawn arguments the schema plainly accepts, checked without zod: a plain object whose every key is
 * known and every value of its type and in its bounds (a string array for `tasks`, names for `agents`).
 * Anything else (an unknown key, a value out of bounds, `undefined`, a class instance) answers
 * `undefined`, and zod decides and words the refusal. Admission is the hot path, and zod's generic walk
 * costs more than the check; a property test holds the two to the same answers.
 */
export function plainSpawnArgs(raw: unknown): SpawnArgs | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const proto = Object.getPrototypeOf(raw);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(raw)) {
    const value = (raw as Record<string, unknown>)[key];
    const bounds = STRING_BOUNDS.get(key);
    const max = INTEGER_MAX.get(key);
    if (bounds !== undefined) {
      if (typeof value !== 'string' || value.length < bounds[0] || value.length > bounds[1]) return undefined;
    } else if (BOOLEAN_ARGS.has(key)) {
      if (typeof value !== 'boolean') return undefined;
    } else if (max !== undefined) {
      if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > max) return undefined;
    } else if (key === 'reasoning_effort') {
      if (!EFFORTS.has(value)) return undefined;
    } else if (key === 'tasks' || key === 'agents') {
      const list = plainStrings(
        value,
        key === 'agents' ? 1 : 0,
        key === 'agents' ? 128 : Number.POSITIVE_INFINITY,
      );
      if (list === undefined) return undefined;
      out[key] = list;
      continue;
    } else {
      return undefined;
    }
    out[key] = value;
  }
  return out as SpawnArgs;
}

/** A copy of an array of strings whose lengths are within bounds; `undefined` for anything else. */
function plainStrings(value: unknown, min: number, max: number): string[] | undefined {
  if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype) return undefined;
  const out: string[] = new Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (typeof item !== 'string' || item.length < min || item.length > max) return undefined;
    out[i] = item;
  }
  return out;
}

/** Parses with a zod schema; the first problem becomes an `invalid_argument` refusal with its path. */
export function parseArgs<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  if ((schema as z.ZodType) === spawnArgsSchema) {
    const plain = plainSpawnArgs(raw ?? {});
    if (plain !== undefined) return plain as z.output<S>;
  }
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue ? formatPath(issue.path) : '';
  const all = parsed.error.issues
    .map((i) => `${formatPath(i.path) || '(arguments)'}: ${i.message}${givenOf(i, raw)}`)
    .join('; ');
  throw new CrewError(
    refuse('invalid_argument', `invalid arguments: ${all}; fix the argument and call again`, {
      path: path || '(arguments)',
      ...(issue ? boundOf(issue, raw) : {}),
    }),
  );
}

/** A number out of its bounds: the bound as `limit` and the number given as `current`. */
function boundOf(issue: z.core.$ZodIssue, raw: unknown): { limit?: number; current?: number } {
  if (issue.code !== 'too_big' && issue.code !== 'too_small') return {};
  const given = valueAt(raw, issue.path);
  const bound = Number(issue.code === 'too_big' ? issue.maximum : issue.minimum);
  return typeof given === 'number' && Number.isFinite(bound) ? { limit: bound, current: given } : {};
}

/** `, got …` for a wrong type, so the message says what was given. */
function givenOf(issue: z.core.$ZodIssue, raw: unknown): string {
  if (issue.code !== 'invalid_type') return '';
  const given = valueAt(raw, issue.path);
  if (given === undefined) return '';
  const shown = JSON.stringify(given) ?? String(given);
  return ` (got ${shown.length > 40 ? `${shown.slice(0, 40)}…` : shown})`;
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let value = raw;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}
