import { isErrorKind } from '../core/error-kind.js';
import type { Conversation } from '../core/scheduler-types.js';
import type { DeliveryStatus, Run, RunSpec } from '../core/types.js';
import type { WorkspaceFacts } from '../core/workspace-facts.js';
import type { OutboxEvent, OutboxState, RunRecord } from './store.js';

/**
 * Rows of the SQLite store as they come out of `SELECT`, and their records. A record's optional fields
 * are present exactly when their column is not NULL, so a record read back equals the one the memory
 * store keeps for the same writes.
 */

/** A `runs` row with its spec (`runs.spec`, else its `specs` row). */
export interface RunRow {
  record: string;
  spec: string;
  delivery: DeliveryStatus;
  epoch: number | null;
  pid: number | null;
  start_time: number | null;
  result_path: string | null;
  result_chars: number | null;
  peak_mem_gb: number | null;
  pruned_at: number | null;
  delivered_at: number | null;
  acked_at: number | null;
  error_kind: string | null;
  usage_tokens: number | null;
  usage_context: number | null;
  usage_cost_usd: number | null;
  usage_input_tokens: number | null;
  usage_output_tokens: number | null;
  usage_requests: number | null;
  usage_rate_limited: number | null;
  host: string | null;
  transcript_gap: number | null;
  workspace: string | null;
}

export function toRunRecord(row: RunRow): RunRecord {
  const record: RunRecord = {
    run: JSON.parse(row.record) as Run,
    spec: JSON.parse(row.spec) as RunSpec,
    delivery: row.delivery,
  };
  if (row.epoch !== null) record.epoch = row.epoch;
  if (row.pid !== null) record.pid = row.pid;
  if (row.start_time !== null) record.startTime = row.start_time;
  if (row.result_path !== null) record.resultPath = row.result_path;
  if (row.result_chars !== null) record.resultChars = row.result_chars;
  if (row.peak_mem_gb !== null) record.peakMemGb = row.peak_mem_gb;
  if (row.pruned_at !== null) record.prunedAt = row.pruned_at;
  if (row.delivered_at !== null) record.deliveredAt = row.delivered_at;
  if (row.acked_at !== null) record.ackedAt = row.acked_at;
  if (row.error_kind !== null && isErrorKind(row.error_kind)) record.errorKind = row.error_kind;
  if (row.usage_tokens !== null) record.usageTokens = row.usage_tokens;
  if (row.usage_context !== null) record.usageContextTokens = row.usage_context;
  if (row.usage_cost_usd !== null) record.usageCostUsd = row.usage_cost_usd;
  if (row.host !== null) record.host = row.host;
  if (row.transcript_gap !== null) record.transcriptGapBytes = row.transcript_gap;
  if (row.workspace !== null) record.workspace = JSON.parse(row.workspace) as WorkspaceFacts;
  if (row.usage_requests !== null) {
    record.providerUsage = {
      inputTokens: row.usage_input_tokens ?? 0,
      outputTokens: row.usage_output_tokens ?? 0,
      requests: row.usage_requests,
      rateLimited: row.usage_rate_limited ?? 0,
    };
  }
  return record;
}

export interface OutboxRow {
  id: string;
  parent: string;
  kind: OutboxEvent['kind'];
  run_ids: string;
  batch_id: string | null;
  created_at: number;
  state: OutboxState;
  attempts: number;
  settled_at: number | null;
  acked_at: number | null;
}

export function toOutboxEvent(row: OutboxRow): OutboxEvent {
  const event: OutboxEvent = {
    id: row.id,
    parent: row.parent,
    kind: row.kind,
    runIds: JSON.parse(row.run_ids) as string[],
    createdAt: row.created_at,
    state: row.state,
    attempts: row.attempts,
  };
  if (row.batch_id !== null) event.batchId = row.batch_id;
  if (row.settled_at !== null) event.settledAt = row.settled_at;
  if (row.acked_at !== null) event.ackedAt = row.acked_at;
  return event;
}

/** A member of a wave that still has a live member (see `RESTART_SQL.openWaveMembers`). */
export interface WaveMemberRow {
  id: string;
  parent: string;
  batch_id: string;
  live: 0 | 1;
}

export function toConversation(json: string): Conversation {
  return JSON.parse(json) as Conversation;
}

/** Recorded launched: the runner was asked to start it. Launches take the writer's epoch. */
export function isLaunched(run: Run): boolean {
  return run.status !== 'queued' && run.launchedAt !== undefined;
}
