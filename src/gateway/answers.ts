import { isCrewError, type Refusal } from '../core/errors.js';
import type { RunId } from '../core/types.js';
import type { RunView } from './run-view.js';

/** What the gateway's API answers (DESIGN §6, Shapes): the same objects on MCP, HTTP and the CLI. */

export type SpawnResult =
  | { ok: true; batch_id?: string; runs: { id: RunId; status: string; position?: number }[] }
  | { ok: false; refusal: Refusal };

export type Answer = { ok: true } | { ok: false; refusal: Refusal };

export interface ListResult {
  ok: true;
  runs: RunView[];
  cap: number;
  running: number;
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
  queued: number;
  permitsHeld: number;
  /** Live runs of any status, nested ones included. */
  live: number;
}

/** A thrown refusal as the answer value; anything else is a bug and keeps flying. */
export function refusalOf(error: unknown): { ok: false; refusal: Refusal } {
  if (isCrewError(error)) return { ok: false, refusal: error.refusal };
  throw error;
}
