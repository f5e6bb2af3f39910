import { isCrewError, type Refusal } from '../core/errors.js';
import type { SchedulerReply } from '../core/scheduler-types.js';
import type { RunId } from '../core/types.js';
import type { RunView } from './run-view.js';

/** What the gateway's API answers (DESIGN §6, Shapes): the same objects on MCP, HTTP and the CLI. */

export type SpawnResult =
  | {
      ok: true;
      batch_id?: string;
      runs: { id: RunId; status: string; position?: number }[];
      /** What the chosen agent cannot honour (a model or reasoning effort it has no way to take). */
      warnings?: string[];
    }
  | { ok: false; refusal: Refusal };

export type Answer = { ok: true } | { ok: false; refusal: Refusal };

export interface ListResult {
  ok: true;
  runs: RunView[];
  cap: number;
  /** Runs starting or running, nested ones included. */
  running: number;
  /** Of `running`, the top-level runs: each holds one of the `cap` permits. */
  running_top_level: number;
  /** Of `running`, the nested runs: they run under their top-level ancestor's permit. */
  running_nested: number;
  /**
   * Permits held by top-level runs that ended while their nested runs go on: each still counts against
   * the cap until its last descendant ends (issue 30: the header says so).
   */
  permits_held_by_ended_parents: number;
  queued: number;
}

export type StatusResult =
  | { ok: true; run: RunView; text?: string; from_line?: number; to_line?: number; total_lines?: number }
  | { ok: false; refusal: Refusal };

/** `ack`: the completion event that names the run is acknowledged (once; a repeat answers the first). */
export type AckResult = { ok: true; event_id: string; acked_at: string } | { ok: false; refusal: Refusal };

export interface StatusOptions {
  offset?: number;
  limit?: number;
  grep?: string;
}

/** Admission counts for status views (cheap: kept by the scheduler on every transition). */
export interface GatewayCounts {
  cap: number;
  running: number;
  starting: number;
  /** Top-level runs starting or running. */
  topLevel: number;
  /**
   * Cluster mode: top-level runs admitted here that the cluster executes (starting or running here as
   * proxies), left out of `running`, `starting` and `topLevel`; 0 on one host.
   */
  proxies: number;
  queued: number;
  /** Queued single (non-wave) spawns, the ones `agent.subagent_max_queued` bounds; the rest are wave members. */
  queuedSingles: number;
  permitsHeld: number;
  /** Live runs of any status, nested ones included. */
  live: number;
}

/** A scheduler reply as an API answer: ok, or its refusal. */
export function answerOf(reply: SchedulerReply): Answer {
  return reply.ok ? { ok: true } : { ok: false, refusal: reply.refusal };
}

/** A thrown refusal as the answer value; anything else is a bug and keeps flying. */
export function refusalOf(error: unknown): { ok: false; refusal: Refusal } {
  if (isCrewError(error)) return { ok: false, refusal: error.refusal };
  throw error;
}

/**
 * "running 3 (+6 nested) at cap 3": top-level runs against the cap, nested runs (which take no permit)
 * apart, so a count above the cap reads as what it is; and the permits ended parents still hold for their
 * running children, so a full cap with fewer top-level runs reads as what it is too.
 */
export function runningLine(counts: Readonly<Record<string, unknown>>): string {
  const topLevel = Number(counts.running_top_level ?? counts.running ?? 0);
  const nested = Number(counts.running_nested ?? 0);
  const held = Number(counts.permits_held_by_ended_parents ?? 0);
  const heldNote =
    held === 1
      ? ', 1 permit held by an ended parent for its running children'
      : held > 1
        ? `, ${held} permits held by ended parents for their running children`
        : '';
  return `running ${topLevel}${nested > 0 ? ` (+${nested} nested)` : ''} at cap ${String(counts.cap)}${heldNote}`;
}
