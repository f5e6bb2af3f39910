import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { RefusalCode } from '../core/errors.js';

/** HTTP status per refusal code, used only at this edge. */
export const STATUS: Record<RefusalCode, ContentfulStatusCode> = {
  empty_task: 400,
  invalid_argument: 400,
  unknown_agent: 400,
  cwd_not_allowed: 400,
  batch_too_large: 400,
  depth_exceeded: 403,
  children_limit: 429,
  memory_critical: 503,
  queue_full: 429,
  not_found: 404,
  not_running: 409,
  conversation_busy: 409,
  conversation_released: 410,
  pruned: 410,
  unauthorized: 401,
  storage_unavailable: 503,
  cluster_unavailable: 503,
  not_here: 503,
  sandbox_unavailable: 503,
  merge_conflict: 409,
  merge_target_moved: 409,
  merge_target_checked_out: 409,
};
