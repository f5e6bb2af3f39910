import { isCrewError } from '../core/errors.js';
import type { ParentKey } from '../core/types.js';
import type { Gateway, Scope } from '../gateway/gateway.js';
import { callTool, toolResult } from '../mcp/call-tool.js';
import {
  ALL_VERSIONS,
  declaresExtension,
  ERROR,
  type HeaderOf,
  isModernError,
  MODERN_VERSION,
  type ModernError,
  type ModernRequest,
  readModernRequest,
  TASKS_EXTENSION,
} from '../mcp/modern-protocol.js';
import { SERVER_INFO, SERVER_INSTRUCTIONS } from '../mcp/server-info.js';
import { toolList } from '../mcp/tool-list.js';
import { admitSubAgents, type ToolContext } from '../mcp/tools.js';
import { readToolCall } from '../mcp/tools-call.js';
import type { WaveTasks } from '../mcp/wave-tasks.js';

/**
 * The stateless MCP 2026-07-28 side of `/mcp` (one POST, one JSON answer, no session): `server/discover`,
 * `tools/list`, `tools/call`, and the tasks extension's `tasks/get`, `tasks/cancel`, `tasks/update` for
 * `spawn_sub_agents`. The parent is not a session here: it is the token's (a run or chat token), else the
 * `X-Crew-Parent` header's, else `mcp:stateless` (`app.ts` resolves it before this runs).
 */

export interface ModernCaller {
  parent: ParentKey;
  cwd?: string;
  /** What `spawn_status` may read (an operator reads any run by id). */
  reads?: Scope;
}

export interface ModernRouteDeps {
  gateway: Gateway;
  tasks: WaveTasks;
  resources: () => object;
}

/** Caching hint on `tools/list` and `server/discover`: Crew's tool set is fixed for the daemon's life. */
const LIST_TTL_MS = 3_600_000;

const SERVED = 'server/discover, tools/list, tools/call, tasks/get, tasks/cancel, tasks/update';

/** Where the supported methods are listed for a client that called one Crew does not serve here. */
function notServed(method: string): string {
  if (method === 'initialize' || method === 'ping' || method === 'logging/setLevel') {
    return `${method} is not part of ${MODERN_VERSION} (no sessions); send it without _meta and MCP-Protocol-Version ${MODERN_VERSION} to use a session-based version, or call ${SERVED}`;
  }
  return `method ${method} is not served by Crew in ${MODERN_VERSION}; it serves ${SERVED}`;
}

export async function answerModern(
  body: unknown,
  header: HeaderOf,
  caller: ModernCaller,
  deps: ModernRouteDeps,
  signal: AbortSignal,
): Promise<Response> {
  const read = readModernRequest(body, header);
  if ('notification' in read) return new Response(null, { status: 202 });
  if (isModernError(read)) return errorResponse(read);
  try {
    const result = await dispatch(read, caller, deps, signal);
    if (isModernError(result)) return errorResponse(result);
    return json(200, { jsonrpc: '2.0', id: read.id, result });
  } catch (error) {
    const message = isCrewError(error) ? error.refusal.message : String(error);
    return errorResponse({
      status: 500,
      id: read.id,
      code: ERROR.internal,
      message: `internal error: ${message}`,
    });
  }
}

async function dispatch(
  request: ModernRequest,
  caller: ModernCaller,
  deps: ModernRouteDeps,
  signal: AbortSignal,
): Promise<Record<string, unknown> | ModernError> {
  const context = (): ToolContext => ({
    gateway: deps.gateway,
    parent: caller.parent,
    ...(caller.reads ? { reads: caller.reads } : {}),
    ...(caller.cwd ? { cwd: caller.cwd } : {}),
    resources: deps.resources,
  });
  switch (request.method) {
    case 'server/discover':
      return {
        resultType: 'complete',
        supportedVersions: [MODERN_VERSION],
        capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
        instructions: `${SERVER_INSTRUCTIONS} With the ${TASKS_EXTENSION} extension, spawn_sub_agents answers with a task: poll tasks/get until it is completed. Versions spoken: ${ALL_VERSIONS.join(', ')} (all but ${MODERN_VERSION} after initialize, in a session).`,
        _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
        ttlMs: LIST_TTL_MS,
        cacheScope: 'private',
      };
    case 'tools/list':
      return { resultType: 'complete', tools: toolList(), ttlMs: LIST_TTL_MS, cacheScope: 'private' };
    case 'tools/call':
      if (request.params.name === 'spawn_sub_agents' && declaresExtension(request, TASKS_EXTENSION)) {
        return startWaveTask(request, context, deps);
      }
      return { resultType: 'complete', ...(await callTool(request.params, context, { signal })) };
    case 'tasks/get':
    case 'tasks/cancel':
    case 'tasks/update':
      return answerTask(request, caller.parent, deps.tasks);
    default:
      return { status: 404, id: request.id, code: ERROR.methodNotFound, message: notServed(request.method) };
  }
}

/** `spawn_sub_agents` for a client that declared tasks: the wave is admitted, its task returned at once. */
async function startWaveTask(
  request: ModernRequest,
  context: () => ToolContext,
  deps: ModernRouteDeps,
): Promise<Record<string, unknown>> {
  const ctx = context();
  let spawned: Awaited<ReturnType<typeof admitSubAgents>>;
  try {
    spawned = await admitSubAgents(readToolCall(request.params).arguments, ctx);
  } catch (error) {
    if (!isCrewError(error)) throw error;
    ctx.gateway.audit(error.refusal, { source: ctx.parent, tool_name: 'spawn_sub_agents' });
    spawned = { ok: false, refusal: error.refusal };
  }
  if (!spawned.ok || spawned.batch_id === undefined) {
    return { resultType: 'complete', ...toolResult(spawned.ok ? { ...spawned } : spawned) };
  }
  const task = deps.tasks.create(
    ctx.parent,
    spawned.batch_id,
    spawned.runs.map((r) => r.id),
  );
  return { resultType: 'task', ...task };
}

async function answerTask(
  request: ModernRequest,
  parent: ParentKey,
  tasks: WaveTasks,
): Promise<Record<string, unknown> | ModernError> {
  if (!declaresExtension(request, TASKS_EXTENSION)) {
    return {
      status: 400,
      id: request.id,
      code: ERROR.missingCapability,
      message: `${request.method} needs the ${TASKS_EXTENSION} extension: declare it in params._meta["io.modelcontextprotocol/clientCapabilities"].extensions`,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    };
  }
  const { taskId } = request.params;
  if (typeof taskId !== 'string' || taskId === '' || taskId.length > 200) {
    return {
      status: 400,
      id: request.id,
      code: ERROR.invalidParams,
      message: `${request.method} needs params.taskId, the taskId spawn_sub_agents answered with`,
    };
  }
  const unknown: ModernError = {
    status: 400,
    id: request.id,
    code: ERROR.invalidParams,
    message: `unknown task ${taskId}: no task of this parent has that id (an ended task is kept for its ttlMs); spawn_wait returns the wave's completion events, spawn_list lists your runs`,
  };
  if (request.method === 'tasks/cancel') {
    return tasks.cancel(taskId, parent) ? { resultType: 'complete' } : unknown;
  }
  const found = await tasks.get(taskId, parent);
  if (!found) return unknown;
  // Crew never asks a task's client for input, so an update has nothing to answer: acknowledged.
  if (request.method === 'tasks/update') return { resultType: 'complete' };
  return { resultType: 'complete', ...found.task, ...(found.result ? { result: found.result } : {}) };
}

function errorResponse(error: ModernError): Response {
  return json(error.status, {
    jsonrpc: '2.0',
    id: error.id,
    error: { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) },
  });
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}
