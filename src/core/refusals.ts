import { type Refusal, refuse } from './errors.js';
import type { MemoryReading } from './scheduler-types.js';
import type { RunId, RunStatus } from './types.js';

/**
 * Every admission refusal as a named constructor (DESIGN §3, §6), so the checks read as the design's
 * numbered list and each message says what happened and what to do next in one place.
 */

const QUEUE_RETRY_SECS = 5;
const MEMORY_RETRY_SECS = 30;
const SHUTDOWN_RETRY_SECS = 10;

// ── 1. validation ────────────────────────────────────────────────────────────────────────────────

export function bothTaskAndTasks(): Refusal {
  return refuse('invalid_argument', 'pass either task or tasks, not both', { path: 'tasks' });
}

export function noTasks(wave: boolean): Refusal {
  return refuse(
    'empty_task',
    wave ? 'tasks is empty; pass at least one task' : 'task is empty; say what the sub-agent should do',
    { path: wave ? 'tasks' : 'task' },
  );
}

export function emptyTask(index: number | undefined): Refusal {
  return refuse(
    'empty_task',
    `task${index !== undefined ? ` ${index}` : ''} is empty or whitespace; say what the sub-agent should do`,
    { path: index !== undefined ? `tasks[${index}]` : 'task' },
  );
}

export function emptySteer(): Refusal {
  return refuse('empty_task', 'the steering message is empty; say what the run should change', {
    path: 'message',
  });
}

export function taskTooLong(index: number | undefined, length: number, maxChars: number): Refusal {
  return refuse(
    'invalid_argument',
    `task${index !== undefined ? ` ${index}` : ''} has ${length} characters, more than agent.task_max_chars (${maxChars}); shorten it or put the material in a file and name the file`,
    { path: index !== undefined ? `tasks[${index}]` : 'task', limit: maxChars, current: length },
  );
}

export const MAX_TURNS_LIMIT = 200;

export function maxTurnsOutOfRange(given: number): Refusal {
  return refuse('invalid_argument', `max_turns must be between 0 and ${MAX_TURNS_LIMIT}, got ${given}`, {
    path: 'max_turns',
    limit: MAX_TURNS_LIMIT,
    current: given,
  });
}

/** The largest token budget a spawn, an agent or the config may set (a billion tokens). */
export const MAX_TOKENS_LIMIT = 1_000_000_000;

export function maxTokensOutOfRange(given: number): Refusal {
  return refuse(
    'invalid_argument',
    `max_tokens must be a whole number from 0 (no budget) to ${MAX_TOKENS_LIMIT}, got ${given}`,
    { path: 'max_tokens', limit: MAX_TOKENS_LIMIT, current: given },
  );
}

export function agentsMismatch(agents: number, tasks: number): Refusal {
  return refuse(
    'invalid_argument',
    `agents has ${agents} entries for ${tasks} tasks; give one agent per task, or use agent for all`,
    { path: 'agents' },
  );
}

export function unknownAgent(agent: string, known: Iterable<string>, path: string): Refusal {
  return refuse('unknown_agent', `unknown agent "${agent}"; known agents: ${[...known].sort().join(', ')}`, {
    path,
  });
}

export function cwdNotAbsolute(cwd: string): Refusal {
  return refuse('cwd_not_allowed', `cwd must be an absolute path, got "${cwd}"`, { path: 'cwd' });
}

export function noCwdRoots(): Refusal {
  return refuse(
    'cwd_not_allowed',
    'no cwd roots are allowed (agent.subagent_cwd_allowed_roots is empty); omit cwd to use your own directory, or ask the operator to allow a root',
    { path: 'cwd' },
  );
}

export function cwdMissing(cwd: string): Refusal {
  return refuse('cwd_not_allowed', `cwd ${cwd} does not exist`, { path: 'cwd' });
}

export function cwdNotDirectory(cwd: string, real: string): Refusal {
  return refuse(
    'cwd_not_allowed',
    `cwd ${cwd}${real === cwd ? '' : ` (${real})`} is not a directory; name the directory the run should work in`,
    { path: 'cwd' },
  );
}

/** A run- or chat-scoped token named a parent directory: only the operator (and `crew mcp`) may. */
export function parentCwdNotAllowed(field: string): Refusal {
  return refuse(
    'cwd_not_allowed',
    `a run- or chat-scoped token cannot name a parent directory (${field}); its runs start in its own directory, or pass cwd in the arguments (under agent.subagent_cwd_allowed_roots)`,
    { path: field },
  );
}

/** The operator named a parent directory that is not an absolute path to a directory. */
export function parentCwdInvalid(field: string, cwd: string): Refusal {
  return refuse(
    'cwd_not_allowed',
    `the parent directory ${JSON.stringify(cwd)} (${field}) is not an absolute path to a directory; send the absolute path of an existing directory`,
    { path: field },
  );
}

export function cwdOutsideRoots(cwd: string, real: string, roots: readonly string[]): Refusal {
  return refuse(
    'cwd_not_allowed',
    `cwd ${cwd} resolves to ${real}, outside the allowed roots (${roots.join(', ')}); choose a directory under one of them`,
    { path: 'cwd' },
  );
}

export function batchTooLarge(size: number, batchMax: number): Refusal {
  return refuse(
    'batch_too_large',
    `a wave of ${size} tasks is more than agent.subagent_batch_max (${batchMax}); split it into waves of at most ${batchMax}`,
    { path: 'tasks', limit: batchMax, current: size },
  );
}

// ── 3. depth ─────────────────────────────────────────────────────────────────────────────────────

export function parentNotRunning(parentId: RunId): Refusal {
  return refuse(
    'not_running',
    `parent run ${parentId} is not running, so it cannot spawn; nothing was admitted`,
  );
}

export function depthExceeded(depth: number, maxDepth: number): Refusal {
  return refuse(
    'depth_exceeded',
    maxDepth === 1
      ? 'sub-agents cannot spawn sub-agents here (agent.subagent_max_depth is 1); do the work yourself or return it to your parent'
      : `nesting depth ${depth} exceeds agent.subagent_max_depth ${maxDepth}; do the work in this run instead`,
    { limit: maxDepth, current: depth },
  );
}

// ── 4. memory gate ───────────────────────────────────────────────────────────────────────────────

export function memoryCritical(memory: MemoryReading): Refusal {
  return refuse(
    'memory_critical',
    `host memory is critical (${memory.availableGb?.toFixed(2) ?? 'unknown'} GiB available, below ${memory.minGb} GiB); retry when running sub-agents finish`,
    {
      // A limit always comes with where the caller stands; an unknown reading names neither.
      ...(memory.availableGb !== undefined
        ? { limit: memory.minGb, current: roundGb(memory.availableGb) }
        : {}),
      retry_after_secs: MEMORY_RETRY_SECS,
    },
  );
}

function roundGb(gb: number): number {
  return Math.round(gb * 100) / 100;
}

// ── 5. nested width ──────────────────────────────────────────────────────────────────────────────

export function childrenLimit(parentId: RunId, live: number, maxChildren: number): Refusal {
  return refuse(
    'children_limit',
    `run ${parentId} has ${live} live children and may have at most ${maxChildren}; wait for one to end (spawn_wait) before spawning more`,
    { limit: maxChildren, current: live },
  );
}

// ── 7. queue bounds ──────────────────────────────────────────────────────────────────────────────

export function queueFull(queued: number, maxQueued: number): Refusal {
  return refuse(
    'queue_full',
    `spawn queue is full (${queued} of ${maxQueued}); retry when a run ends, or pass all tasks of a fan-out in one call as a wave`,
    { limit: maxQueued, current: queued, retry_after_secs: QUEUE_RETRY_SECS },
  );
}

export function waveQueueFull(size: number, wouldQueue: number, queued: number, max: number): Refusal {
  return refuse(
    'queue_full',
    `a wave of ${size} would queue ${wouldQueue} members, past the bound of ${max} queued wave members (${queued} queued now); the whole wave was refused — retry later or send a smaller wave`,
    { limit: max, current: queued, retry_after_secs: QUEUE_RETRY_SECS },
  );
}

// ── runs and conversations after admission ───────────────────────────────────────────────────────

/** A run that is not live: `not_running` when the store knows it ended, else `not_found`. */
export function notLive(runId: RunId, ended: RunStatus | undefined): Refusal {
  return ended !== undefined
    ? refuse('not_running', `run ${runId} already ended (${ended}); read its result with spawn_status`)
    : refuse('not_found', `run ${runId} is not live`);
}

export function notSteerable(runId: RunId, state: string): Refusal {
  return refuse('not_running', `run ${runId} is ${state}; steer it once it is running, or cancel it`);
}

export function notVisible(runId: RunId): Refusal {
  return refuse('not_found', `no run ${runId} among yours; list yours with spawn_list`);
}

export function noConversation(id: string): Refusal {
  return refuse('not_found', `no conversation ${id}; start one with spawn_run keep=true`);
}

export function conversationReleased(id: string, reason: string | undefined): Refusal {
  return refuse(
    'conversation_released',
    `conversation ${id} was released (${reason ?? 'released'}); start a new one with spawn_run keep=true`,
  );
}

export function conversationBusy(id: string, runId: RunId): Refusal {
  return refuse(
    'conversation_busy',
    `conversation ${id} is still working on run ${runId}; wait for its completion event, or steer it with spawn_steer`,
  );
}

export function releaseBusy(id: string, runId: RunId): Refusal {
  return refuse(
    'conversation_busy',
    `conversation ${id} is working on run ${runId}; release it after its completion event, or cancel that run`,
  );
}

export function alreadyReleased(id: string): Refusal {
  return refuse('conversation_released', `conversation ${id} was already released`);
}

export function nothingToAck(runId: RunId, status: RunStatus): Refusal {
  return refuse(
    'not_running',
    `run ${runId} has no completion event yet (it is ${status}); ack it once it has ended`,
  );
}

export function transcriptPruned(runId: RunId, status: RunStatus): Refusal {
  return refuse(
    'pruned',
    `run ${runId}'s transcript was pruned after agent.subagent_result_ttl_secs; its status is ${status}`,
  );
}

export function storageUnavailable(reason: string): Refusal {
  return refuse(
    'storage_unavailable',
    `the run store refuses writes (${reason}), so nothing new is admitted; free disk space under CREW_HOME and retry — what was admitted goes on`,
    { retry_after_secs: 10 },
  );
}

export function clusterUnavailable(reason: string): Refusal {
  return refuse(
    'cluster_unavailable',
    `the cluster's Redis does not answer (${reason}), so nothing new is admitted; retry in a few seconds, or check that Redis at cluster.redis_url is up — runs already admitted go on and their results are kept`,
    { retry_after_secs: 5 },
  );
}

export function notHere(runId: RunId, host: string, reason: string): Refusal {
  return refuse(
    'not_here',
    `run ${runId}'s transcript lives on gateway ${host}, which executes it, and ${reason}; ask gateway ${host} (crew status ${runId} on its host), or retry once it is back — the run's status and its completion event are kept here`,
    { retry_after_secs: 5 },
  );
}

export function shuttingDown(): Refusal {
  return refuse(
    'not_running',
    'the gateway is shutting down and admits nothing new; retry against the next one',
    {
      retry_after_secs: SHUTDOWN_RETRY_SECS,
    },
  );
}
