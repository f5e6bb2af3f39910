/**
 * The JSON Claude Code writes on a command hook's stdin, narrowed to the events the width ledger acts
 * on. Validation is by hand, not zod: the hook runs once per `Agent` call and must start fast.
 *
 * Fields used (Claude Code hooks reference): every event has `session_id` and `hook_event_name`; tool
 * events add `tool_name`, `tool_input`, `tool_use_id`, and `tool_response` on `PostToolUse`; a call made
 * inside a sub-agent carries that sub-agent's `agent_id`; `SubagentStop` carries `agent_id`; `Stop` and
 * `SubagentStop` carry `background_tasks` (Claude Code 2.1.145 and later), absent on older versions.
 */

/** `Agent` is the tool's current name; `Task` the name it had before, still sent by older versions. */
export const SUBAGENT_TOOL_NAMES: readonly string[] = ['Task', 'Agent'];

/** Foreground or background `Agent` call about to run: the moment a width reservation is taken. */
export interface PreToolUseEvent {
  kind: 'pre_tool_use';
  sessionId: string;
  toolUseId: string;
  /** The sub-agent making the call, when the call comes from inside one. */
  callerAgentId?: string;
  subagentType?: string;
  description?: string;
  /** `tool_input.run_in_background`; informational, since PostToolUse's response is what counts. */
  isBackgroundRequested: boolean;
}

/** `Agent` call returned: a foreground sub-agent has ended, or a background one has launched. */
export interface PostToolUseEvent {
  kind: 'post_tool_use';
  sessionId: string;
  toolUseId: string;
  /** Set when `tool_response` says the sub-agent was launched in the background. */
  launchedAgentId?: string;
  isBackgroundLaunch: boolean;
}

/** `Agent` call failed or was interrupted: nothing is running for it any more. */
export interface PostToolUseFailureEvent {
  kind: 'post_tool_use_failure';
  sessionId: string;
  toolUseId: string;
}

export interface SubagentStopEvent {
  kind: 'subagent_stop';
  sessionId: string;
  agentId: string;
  /** Ids of background tasks still running; `undefined` when the payload has no such list. */
  runningTaskIds?: ReadonlySet<string>;
}

export interface StopEvent {
  kind: 'stop';
  sessionId: string;
  /** Set when the stopping thread is a sub-agent rather than the main one. */
  agentId?: string;
  runningTaskIds?: ReadonlySet<string>;
}

/** A well-formed payload the ledger has nothing to do with (another tool, another event). */
export interface IgnoredEvent {
  kind: 'ignored';
  why: string;
}

export type ClaudeHookEvent =
  | PreToolUseEvent
  | PostToolUseEvent
  | PostToolUseFailureEvent
  | SubagentStopEvent
  | StopEvent
  | IgnoredEvent;

export type ParsePayloadResult =
  | { ok: true; event: ClaudeHookEvent; warnings: string[] }
  | { ok: false; problem: string };

/** Statuses a `background_tasks` entry can carry that mean it is no longer running. */
const ENDED_TASK_STATUSES = new Set(['completed', 'failed', 'killed', 'cancelled', 'stopped']);

/** `tool_response.status` values that mean the sub-agent runs on after the tool call returned. */
const LAUNCHED_STATUSES = new Set(['async_launched', 'remote_launched']);

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** Parses stdin text; every failure is a `problem` string, never a throw. */
export function parseClaudeHookPayload(text: string): ParsePayloadResult {
  if (text.trim().length === 0) return { ok: false, problem: 'empty stdin (expected a JSON object)' };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `stdin is not valid JSON (${(error as Error).message})` };
  }
  if (!isObject(raw)) return { ok: false, problem: 'stdin JSON is not an object' };
  const eventName = nonEmptyString(raw.hook_event_name);
  if (eventName === undefined) return { ok: false, problem: 'payload has no hook_event_name' };
  const sessionId = nonEmptyString(raw.session_id);
  if (sessionId === undefined) return { ok: false, problem: `${eventName} payload has no session_id` };

  switch (eventName) {
    case 'PreToolUse':
    case 'PostToolUse':
    case 'PostToolUseFailure':
      return parseToolEvent(eventName, sessionId, raw);
    case 'SubagentStop':
    case 'Stop':
      return parseStopEvent(eventName, sessionId, raw);
    default:
      return { ok: true, event: { kind: 'ignored', why: `event ${eventName}` }, warnings: [] };
  }
}

function parseToolEvent(
  eventName: 'PreToolUse' | 'PostToolUse' | 'PostToolUseFailure',
  sessionId: string,
  raw: Json,
): ParsePayloadResult {
  const toolName = nonEmptyString(raw.tool_name);
  if (toolName === undefined) return { ok: false, problem: `${eventName} payload has no tool_name` };
  if (!SUBAGENT_TOOL_NAMES.includes(toolName)) {
    return { ok: true, event: { kind: 'ignored', why: `tool ${toolName}` }, warnings: [] };
  }
  const toolUseId = nonEmptyString(raw.tool_use_id);
  if (toolUseId === undefined) return { ok: false, problem: `${eventName} payload has no tool_use_id` };
  const input = isObject(raw.tool_input) ? raw.tool_input : {};

  if (eventName === 'PreToolUse') {
    const event: PreToolUseEvent = {
      kind: 'pre_tool_use',
      sessionId,
      toolUseId,
      isBackgroundRequested: input.run_in_background === true,
    };
    const callerAgentId = nonEmptyString(raw.agent_id);
    if (callerAgentId !== undefined) event.callerAgentId = callerAgentId;
    const subagentType = nonEmptyString(input.subagent_type);
    if (subagentType !== undefined) event.subagentType = subagentType;
    const description = nonEmptyString(input.description);
    if (description !== undefined) event.description = description;
    return { ok: true, event, warnings: [] };
  }
  if (eventName === 'PostToolUseFailure') {
    return { ok: true, event: { kind: 'post_tool_use_failure', sessionId, toolUseId }, warnings: [] };
  }
  return parsePostToolUse(sessionId, toolUseId, input, raw.tool_response);
}

/**
 * A background launch is recognised by the response (`status: "async_launched"` or `isAsync: true`),
 * not by `tool_input.run_in_background`: Claude Code may background a sub-agent on its own.
 */
function parsePostToolUse(
  sessionId: string,
  toolUseId: string,
  input: Json,
  response: unknown,
): ParsePayloadResult {
  const status = isObject(response) ? response.status : undefined;
  const isBackgroundLaunch =
    isObject(response) &&
    ((typeof status === 'string' && LAUNCHED_STATUSES.has(status)) || response.isAsync === true);
  const event: PostToolUseEvent = { kind: 'post_tool_use', sessionId, toolUseId, isBackgroundLaunch };
  const warnings: string[] = [];
  if (isBackgroundLaunch) {
    const agentId = isObject(response) ? nonEmptyString(response.agentId) : undefined;
    if (agentId === undefined) {
      warnings.push(
        `background launch ${toolUseId} has no tool_response.agentId; it stays counted until Stop or its TTL`,
      );
    } else {
      event.launchedAgentId = agentId;
    }
  } else if (input.run_in_background === true) {
    warnings.push(`${toolUseId} asked for run_in_background but the response is not a launch; releasing`);
  }
  return { ok: true, event, warnings };
}

function parseStopEvent(
  eventName: 'SubagentStop' | 'Stop',
  sessionId: string,
  raw: Json,
): ParsePayloadResult {
  const warnings: string[] = [];
  const runningTaskIds = parseRunningTaskIds(raw.background_tasks, warnings);
  const agentId = nonEmptyString(raw.agent_id);
  if (eventName === 'SubagentStop') {
    if (agentId === undefined) return { ok: false, problem: 'SubagentStop payload has no agent_id' };
    const event: SubagentStopEvent = { kind: 'subagent_stop', sessionId, agentId };
    if (runningTaskIds !== undefined) event.runningTaskIds = runningTaskIds;
    return { ok: true, event, warnings };
  }
  const event: StopEvent = { kind: 'stop', sessionId };
  if (agentId !== undefined) event.agentId = agentId;
  if (runningTaskIds !== undefined) event.runningTaskIds = runningTaskIds;
  return { ok: true, event, warnings };
}

/**
 * An absent list is not an empty one: older Claude Code sends none, and reading that as "nothing
 * runs" would release every background sub-agent at the first Stop.
 */
function parseRunningTaskIds(value: unknown, warnings: string[]): ReadonlySet<string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    warnings.push('background_tasks is not a list; skipping reconciliation');
    return undefined;
  }
  const ids = new Set<string>();
  for (const task of value) {
    const id = isObject(task) ? nonEmptyString(task.id) : undefined;
    // One unreadable entry could be the agent we would otherwise release, so trust none of them.
    if (id === undefined || !isObject(task)) {
      warnings.push('a background_tasks entry has no id; skipping reconciliation');
      return undefined;
    }
    const status = task.status;
    if (typeof status === 'string' && ENDED_TASK_STATUSES.has(status)) continue;
    ids.add(id);
  }
  return ids;
}
