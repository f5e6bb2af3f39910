import { z } from 'zod';
import { continueArgsSchema, spawnArgsSchema } from '../gateway/spawn-args.js';
import { PAGE_MAX_LIMIT } from '../transcripts/paging.js';

/**
 * The argument schemas of Crew's MCP tools (DESIGN §6, MCP tools). Crew validates with these itself, so
 * a wrong argument is an `invalid_argument` refusal naming its path; the SDK only sees JSON schemas.
 */
const include = {
  include_memory: z.boolean().optional(),
  include_lessons: z.boolean().optional(),
  include_project: z.boolean().optional(),
};

export const subAgentsArgsSchema = z
  .object({
    agents: z
      .array(
        z
          .object({
            agent_or_mode: z.string().min(1).max(128).optional(),
            prompt: z.string(),
            isolation: z.enum(['none', 'worktree']).optional(),
          })
          .strict(),
      )
      .min(1),
    cwd: z.string().min(1).max(4096).optional(),
    isolation: z.enum(['none', 'worktree']).optional(),
    base: z.string().min(1).max(256).optional(),
    sandbox: z.boolean().optional(),
    ...include,
  })
  .strict();

export const steerArgsSchema = z
  .object({
    agent_id: z.string().min(1).max(256),
    message: z.string(),
    mode: z.enum(['interrupt', 'follow_up']).default('interrupt'),
  })
  .strict();

export const idArgsSchema = z.object({ agent_id: z.string().min(1).max(256) }).strict();
export const releaseArgsSchema = z.object({ conversation: z.string().min(1).max(256) }).strict();
export const noArgsSchema = z.object({}).strict();

/** Line offsets past this are refused: a transcript is cut at `agent.transcript_max_bytes` long before. */
export const OFFSET_MAX = 1_000_000_000;

export const statusArgsSchema = z
  .object({
    agent_id: z.string().min(1).max(256),
    offset: z.number().int().min(0).max(OFFSET_MAX).optional(),
    limit: z.number().int().min(1).max(PAGE_MAX_LIMIT).optional(),
    grep: z.string().max(1000).optional(),
  })
  .strict();

/** `spawn_wait` waits at most 50 s: the SDK client's default request timeout is 60 s. */
export const WAIT_MAX_SECS = 50;
export const waitArgsSchema = z
  .object({ timeout_secs: z.number().min(0).max(WAIT_MAX_SECS).default(30) })
  .strict();

export { continueArgsSchema, spawnArgsSchema };

/** One object schema for every tool's result: `ok`, an optional `refusal`, and the tool's fields. */
export const resultJsonSchema = {
  type: 'object',
  properties: {
    ok: { type: 'boolean' },
    refusal: {
      type: 'object',
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        limit: { type: 'number' },
        current: { type: 'number' },
        retry_after_secs: { type: 'number' },
        path: { type: 'string' },
      },
      required: ['code', 'message'],
    },
  },
  required: ['ok'],
  additionalProperties: true,
} as const;

export function inputJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}
