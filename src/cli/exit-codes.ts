import { CrewFault, type ErrorCode } from '../core/errors.js';

/** The CLI's exit codes (DESIGN §6): 0 ok, 1 refused or failed, 2 usage, 3 no daemon answers. */
export const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Every refusal and local fault code → the exit code the CLI ends with; the one table, like HTTP's. */
export const EXIT_BY_CODE: Readonly<Record<ErrorCode, ExitCode>> = {
  empty_task: EXIT.failed,
  invalid_argument: EXIT.failed,
  unknown_agent: EXIT.failed,
  cwd_not_allowed: EXIT.failed,
  batch_too_large: EXIT.failed,
  depth_exceeded: EXIT.failed,
  children_limit: EXIT.failed,
  memory_critical: EXIT.failed,
  queue_full: EXIT.failed,
  not_found: EXIT.failed,
  not_running: EXIT.failed,
  conversation_busy: EXIT.failed,
  conversation_released: EXIT.failed,
  pruned: EXIT.failed,
  unauthorized: EXIT.failed,
  storage_unavailable: EXIT.failed,
  cluster_unavailable: EXIT.failed,
  not_here: EXIT.failed,
  sandbox_unavailable: EXIT.failed,
  merge_conflict: EXIT.failed,
  merge_target_moved: EXIT.failed,
  merge_target_checked_out: EXIT.failed,
  gateway_locked: EXIT.failed,
  daemon_unreachable: EXIT.unreachable,
  settings_invalid: EXIT.failed,
  runtime_died: EXIT.failed,
  agent_unstartable: EXIT.failed,
  store_unusable: EXIT.failed,
  usage: EXIT.usage,
  command_failed: EXIT.failed,
  install_incomplete: EXIT.failed,
};

/** A command that already said why it failed: the CLI exits 1 without printing it again. */
export function alreadyReported(): CrewFault {
  return new CrewFault('command_failed', '', { reported: true });
}
