import type { z } from 'zod';
import type { Refusal } from '../core/errors.js';
import type { ParentKey } from '../core/types.js';
import { runningLine } from '../gateway/answers.js';
import type { Gateway, Scope } from '../gateway/gateway.js';
import type { DeliveredEvent } from '../gateway/relay.js';
import type { RunView } from '../gateway/run-view.js';
import { parseArgs } from '../gateway/spawn-args.js';
import { mergeArgsSchema } from '../workspace/merge-args.js';
import {
  continueArgsSchema,
  idArgsSchema,
  noArgsSchema,
  releaseArgsSchema,
  spawnArgsSchema,
  statusArgsSchema,
  steerArgsSchema,
  subAgentsArgsSchema,
  WAIT_MAX_SECS,
  waitArgsSchema,
} from './tool-schemas.js';

/** Who is calling, as the front end resolved it for this MCP session. */
export interface ToolContext {
  gateway: Gateway;
  parent: ParentKey;
  /**
   * What `spawn_status` may read, when wider than the parent's own subtree: an operator session reads
   * any run by id (reading delivers nothing). @default the parent's subtree
   */
  reads?: Scope;
  /** The parent's working directory (what `crew mcp` reported), used when a spawn gives no `cwd`. */
  cwd?: string;
  resources: () => object;
}

export interface ToolExtra {
  signal?: AbortSignal;
  /** Present when the client sent a progress token. */
  progress?: (progress: number, total: number | undefined, message: string) => void;
}

export type ToolBody = { ok: boolean; refusal?: Refusal } & Record<string, unknown>;

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  schema: z.ZodType;
  readOnly: boolean;
  /** Plain text for the model beside the structured result (defaults to the JSON). */
  text?: (body: ToolBody) => string;
  run: (args: never, ctx: ToolContext, extra: ToolExtra) => Promise<ToolBody> | ToolBody;
}

const REFUSALS_HELP =
  'Refusals come back as isError results with refusal.code: queue_full (retry when a run ends, or send all tasks as one wave), memory_critical (the host is short of memory; retry later), depth_exceeded / children_limit (do the work yourself), invalid_argument (fix refusal.path), empty_task, unknown_agent, cwd_not_allowed.';

const scopeOf = (ctx: ToolContext): Scope => ({ kind: 'parent', parent: ctx.parent });

function eventsText(events: DeliveredEvent[]): string {
  return events.length === 0 ? 'no completion events yet' : events.map((e) => e.text).join('\n\n');
}

/** How often a waiting tool reports progress (when the client sent a progress token). */
const PROGRESS_INTERVAL_MS = 5000;

/** Waits for this parent's events, at most `timeoutMs`, reporting progress while it waits. */
async function waitWithProgress(
  ctx: ToolContext,
  timeoutMs: number,
  extra: ToolExtra,
): Promise<DeliveredEvent[]> {
  if (!extra.progress) return ctx.gateway.waitForEvents(ctx.parent, timeoutMs);
  const gateway = ctx.gateway;
  const started = gateway.now();
  const stop = gateway.every(PROGRESS_INTERVAL_MS, () => {
    const counts = gateway.list(scopeOf(ctx), 1);
    extra.progress?.(
      gateway.now() - started,
      timeoutMs,
      `waiting: ${counts.running} running, ${counts.queued} queued`,
    );
  });
  try {
    return await ctx.gateway.waitForEvents(ctx.parent, timeoutMs);
  } finally {
    stop();
  }
}

/**
 * Admits `spawn_sub_agents`' wave without waiting for it: the tool waits for its digest in the call, the
 * 2026-07-28 tasks extension hands back a task that `tasks/get` polls (`wave-tasks.ts`).
 */
export function admitSubAgents(raw: unknown, ctx: ToolContext): ReturnType<Gateway['admit']> {
  const args = parseArgs(subAgentsArgsSchema, raw);
  return ctx.gateway.admit(
    ctx.parent,
    {
      tasks: args.agents.map((a) => a.prompt),
      ...(args.agents.some((a) => a.agent_or_mode)
        ? { agents: args.agents.map((a) => a.agent_or_mode ?? ctx.gateway.config['agent.default_agent']) }
        : {}),
      ...(args.cwd !== undefined ? { cwd: args.cwd } : {}),
      ...(args.include_memory !== undefined ? { include_memory: args.include_memory } : {}),
      ...(args.include_lessons !== undefined ? { include_lessons: args.include_lessons } : {}),
      ...(args.include_project !== undefined ? { include_project: args.include_project } : {}),
      ...(args.agents.some((a) => a.isolation !== undefined)
        ? { isolations: args.agents.map((a) => a.isolation ?? args.isolation ?? 'none') }
        : args.isolation !== undefined
          ? { isolation: args.isolation }
          : {}),
      ...(args.base !== undefined ? { base: args.base } : {}),
      ...(args.sandbox !== undefined ? { sandbox: args.sandbox } : {}),
    },
    ctx.cwd,
  );
}

export const TOOLS: ToolDef[] = [
  {
    name: 'spawn_run',
    title: 'Spawn sub-agents',
    description: [
      'Start sub-agent runs and return at once with their ids; each run ends with one completion event (read them with spawn_wait).',
      'For a fan-out pass EVERY task in one call as tasks=[...] (a wave): beyond the concurrency cap the rest queue and start by themselves, and the whole wave comes back as one digest. Never split a wave to avoid the queue.',
      'task: one task (a single spawn). agent / agents[]: which named agent runs it (see resource_status / spawn_list). keep=true keeps the conversation for spawn_continue. command_id makes a retry safe: the same command_id never admits twice.',
      'isolation="worktree" (or isolations[] per task) runs each task in its own git worktree on branch crew/<id> from base (default: your current HEAD); results say what changed and the digest which members conflict; merge with spawn_merge. sandbox=true runs under bubblewrap (writes only to its worktree, network only to the provider gateway).',
      REFUSALS_HELP,
    ].join(' '),
    schema: spawnArgsSchema,
    readOnly: false,
    run: (args: unknown, ctx) => ctx.gateway.admit(ctx.parent, args, ctx.cwd),
  },
  {
    name: 'spawn_sub_agents',
    title: 'Run sub-agents and wait for their results',
    description: [
      'Run several sub-agents as one wave and block until all have ended (or the wait bound passes); returns their collected, truncated results.',
      'agents: [{agent_or_mode, prompt, isolation?}]. isolation="worktree" gives each its own git worktree and branch (base: the commit to start from, default your HEAD); sandbox=true runs them under bubblewrap. Use spawn_run + spawn_wait instead when the work may take longer than a minute.',
      REFUSALS_HELP,
    ].join(' '),
    schema: subAgentsArgsSchema,
    readOnly: false,
    run: async (raw: unknown, ctx, extra) => {
      const spawned = await admitSubAgents(raw, ctx);
      if (!spawned.ok) return spawned;
      const gateway = ctx.gateway;
      const deadline = gateway.now() + WAIT_MAX_SECS * 1000;
      const events: DeliveredEvent[] = [];
      while (!events.some((e) => e.batch_id === spawned.batch_id) && gateway.now() < deadline) {
        if (extra.signal?.aborted) break;
        events.push(...(await waitWithProgress(ctx, Math.max(0, deadline - gateway.now()), extra)));
      }
      const digest = events.find((e) => e.batch_id === spawned.batch_id);
      // The runs as they are now (ended, once the digest came), not as they were admitted.
      const now = new Map(
        gateway
          .views(
            spawned.runs.map((r) => r.id),
            scopeOf(ctx),
          )
          .map((v) => [v.id, v.status]),
      );
      return {
        ok: true,
        batch_id: spawned.batch_id,
        runs: spawned.runs.map((r) => ({ id: r.id, status: now.get(r.id) ?? r.status })),
        done: digest !== undefined,
        events,
        ...(digest
          ? {}
          : { note: 'not all runs ended within the wait bound; call spawn_wait for the digest' }),
      };
    },
    text: (body) =>
      body.ok
        ? eventsText((body.events as DeliveredEvent[]) ?? []) + (body.note ? `\n${body.note}` : '')
        : '',
  },
  {
    name: 'spawn_continue',
    title: 'Continue a kept conversation',
    description:
      'Send a new task to a conversation started with spawn_run keep=true, once its previous run has ended (conversation_busy otherwise; conversation_released after spawn_release or expiry). Admitted like any run; returns at once.',
    schema: continueArgsSchema,
    readOnly: false,
    run: (args: unknown, ctx) => ctx.gateway.admitContinue(ctx.parent, args),
  },
  {
    name: 'spawn_steer',
    title: 'Steer a running sub-agent',
    description:
      'Send guidance to one of your running sub-agents. mode=interrupt stops its current turn and prompts it with the message; follow_up queues the message for when the turn ends. Takes no concurrency slot. not_running if it has not started or has ended.',
    schema: steerArgsSchema,
    readOnly: false,
    run: (raw: unknown, ctx) => {
      const args = parseArgs(steerArgsSchema, raw);
      return ctx.gateway.steer(args.agent_id, args.message, args.mode, scopeOf(ctx));
    },
  },
  {
    name: 'spawn_release',
    title: 'Release a kept conversation',
    description:
      'End a kept conversation (its session closes). Idle kept conversations are also released after a TTL.',
    schema: releaseArgsSchema,
    readOnly: false,
    run: (raw: unknown, ctx) =>
      ctx.gateway.release(parseArgs(releaseArgsSchema, raw).conversation, scopeOf(ctx)),
  },
  {
    name: 'spawn_list',
    title: 'List your sub-agent runs',
    description:
      'Your runs and their descendants, newest first, with status, the cap, and how many run and queue now.',
    schema: noArgsSchema,
    readOnly: true,
    run: (raw: unknown, ctx) => {
      parseArgs(noArgsSchema, raw);
      return ctx.gateway.list(scopeOf(ctx)) as unknown as ToolBody;
    },
    // One line per run for the model; the full objects are in structuredContent.
    text: (body) => {
      const runs = (body.runs as RunView[] | undefined) ?? [];
      const lines = runs.map(
        (r) =>
          `${r.id} ${r.status} agent=${r.agent}${r.duration_secs !== undefined ? ` ${r.duration_secs.toFixed(1)}s` : ''}${r.batch_id ? ` wave=${r.batch_id}` : ''} ${r.task_preview.slice(0, 80)}`,
      );
      return [`${runningLine(body)} · queued ${body.queued} · ${runs.length} runs`, ...lines].join('\n');
    },
  },
  {
    name: 'spawn_status',
    title: 'Read a run and its transcript',
    description:
      'One run and its transcript. With offset/limit you get those lines, headed "[lines X-Y of N | more available — call again with offset=Y]" while more remain; grep keeps matching lines. Without them, the whole transcript up to a bound, then pages. Re-reads a completion event you missed.',
    schema: statusArgsSchema,
    readOnly: true,
    run: async (raw: unknown, ctx) => {
      const args = parseArgs(statusArgsSchema, raw);
      return ctx.gateway.status(args.agent_id, ctx.reads ?? scopeOf(ctx), {
        ...(args.offset !== undefined ? { offset: args.offset } : {}),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        ...(args.grep !== undefined ? { grep: args.grep } : {}),
      });
    },
    text: (body) => (body.ok ? String(body.text ?? '') : ''),
  },
  {
    name: 'resource_status',
    title: 'Host resources and the cap',
    description:
      'Available memory, CPUs, load, memory posture (ok / low / critical), the concurrent-run cap and where it came from (auto / pinned / fallback), learned per-run costs, and how many run and queue.',
    schema: noArgsSchema,
    readOnly: true,
    run: (raw: unknown, ctx) => {
      parseArgs(noArgsSchema, raw);
      return { ok: true, ...ctx.resources() };
    },
  },
  {
    name: 'spawn_cancel',
    title: 'Cancel a run',
    description:
      'Cancel one of your runs (queued: removed at once; running: stopped) and its descendants. Its completion event still comes, with status cancelled.',
    schema: idArgsSchema,
    readOnly: false,
    run: (raw: unknown, ctx) => ctx.gateway.cancel(parseArgs(idArgsSchema, raw).agent_id, scopeOf(ctx)),
  },
  {
    name: 'spawn_merge',
    title: "Merge sub-agents' worktree branches",
    description:
      'Merge the branch of one run spawned with isolation="worktree" (agent_id), or every member of a wave whose changes do not conflict (batch_id, in spawn order), into target. No checkout is touched: the merge is computed in git and the target branch moved once. Refusals: merge_conflict (names the files; merge that branch yourself), merge_target_checked_out (target is checked out somewhere: merge into another branch, then git merge --ff-only it there), merge_target_moved (target was rewritten or moved meanwhile).',
    schema: mergeArgsSchema,
    readOnly: false,
    run: (args: unknown, ctx) => ctx.gateway.merge(args, scopeOf(ctx)) as Promise<ToolBody>,
  },
  {
    name: 'spawn_wait',
    title: 'Wait for completion events',
    description: `Return your next undelivered completion events (a wave comes as one digest), waiting up to timeout_secs (at most ${WAIT_MAX_SECS}) for the first. Returning them delivers them; call again until every run you spawned has reported. A missed answer can be re-read with spawn_status.`,
    schema: waitArgsSchema,
    readOnly: false,
    run: async (raw: unknown, ctx, extra) => {
      const args = parseArgs(waitArgsSchema, raw);
      const events = await waitWithProgress(ctx, args.timeout_secs * 1000, extra);
      const counts = ctx.gateway.list(scopeOf(ctx), 1);
      return { ok: true, events, running: counts.running, queued: counts.queued };
    },
    text: (body) => eventsText((body.events as DeliveredEvent[]) ?? []),
  },
];
