import { z } from 'zod';
import { MAX_TOKENS_LIMIT } from './refusals.js';

/**
 * A named agent: the fields of an agent file's front matter (DESIGN §6, Files) or of a config
 * `agents.NAME` entry. `command` is an argv; a string is split on whitespace, never given to a shell.
 */
export const agentDefSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, . _ -')
      .optional(),
    description: z.string().max(2000).optional(),
    runner: z.enum(['acp', 'command']).default('acp'),
    command: z
      .union([z.string().min(1), z.array(z.string()).min(1)])
      .transform((c) => (typeof c === 'string' ? c.trim().split(/\s+/) : c)),
    model: z.string().min(1).optional(),
    max_turns: z.number().int().min(0).max(200).optional(),
    /** Token budget of each run of this agent (issue 17), counted at the provider gateway; 0 = none. */
    max_tokens: z.number().int().min(0).max(MAX_TOKENS_LIMIT).optional(),
    shared: z.boolean().default(false),
    skills: z.array(z.string().min(1)).default([]),
    /**
     * Environment variables for the agent's process only (never its argv, never a listing: `crew agents`
     * shows the keys). A value `${NAME}` (anywhere in it) takes the daemon's environment variable NAME.
     */
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), z.string())
      .optional(),
    /**
     * The model provider the agent calls (issue 17): its requests go through Crew's provider gateway
     * (the base URL in its environment points there), and its starts count against that provider's cap.
     */
    provider: z.enum(['anthropic', 'openai', 'gemini']).optional(),
    /** Its runs work in their own git worktree unless a spawn says `isolation: "none"` (issue 31). */
    isolation: z.enum(['none', 'worktree']).optional(),
    /** Its runs run under bubblewrap unless a spawn says `sandbox: false` (issue 31). */
    sandbox: z.boolean().optional(),
    /** The system prompt (an agent file's body). */
    prompt: z.string().optional(),
  })
  .strict();

export type AgentDef = z.output<typeof agentDefSchema> & { name: string };
