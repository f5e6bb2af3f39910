import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type CallToolResult,
  ListToolsRequestSchema,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { CrewError, isCrewError, type Refusal, refuse } from '../core/errors.js';
import type { DeliveredEvent } from '../gateway/relay.js';
import { withTraceparent } from '../tracing/trace-scope.js';
import { LoggingSink } from './logging-sink.js';
import { SERVER_CAPABILITIES, SERVER_INFO, SERVER_INSTRUCTIONS } from './server-info.js';
import { toolList } from './tool-list.js';
import { TOOLS, type ToolBody, type ToolContext, type ToolExtra } from './tools.js';
import { readToolCall, setToolsCallHandler, type ToolCall } from './tools-call.js';

export { SERVER_INFO } from './server-info.js';

/**
 * One MCP server for one session (stdio or one Streamable HTTP session). Tools are declared with JSON
 * schemas, but Crew validates arguments itself so a wrong one is an `invalid_argument` refusal with its
 * path. Every result carries `structuredContent` (one object schema: `ok` + optional `refusal`) and a
 * text copy; refusals are `isError` results.
 *
 * `onLoggingEnabled` is called when the client asks for log messages (`logging/setLevel`): only then
 * does Crew push completion events to it as logging notifications.
 */
export function createMcpServer(
  context: () => ToolContext,
  options: { onLoggingEnabled?: (push: (event: DeliveredEvent) => Promise<void>) => void } = {},
): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: SERVER_CAPABILITIES,
    instructions: SERVER_INSTRUCTIONS,
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList() }));

  /** A refusal Crew's MCP edge made itself (a malformed call, a wrong argument): one SEL line. */
  const auditRefusal = (refusal: Refusal, toolName: string): void => {
    const ctx = context();
    ctx.gateway.audit(refusal, { source: ctx.parent, tool_name: toolName });
  };
  const refusalResult = (refusal: Refusal): CallToolResult => ({
    content: [{ type: 'text', text: `refused (${refusal.code}): ${refusal.message}` }],
    structuredContent: { ok: false, refusal },
    isError: true,
  });

  setToolsCallHandler(server, async (params, extra): Promise<CallToolResult> => {
    let request: ToolCall;
    try {
      request = readToolCall(params);
    } catch (error) {
      if (!isCrewError(error)) throw error;
      auditRefusal(error.refusal, 'tools/call');
      return refusalResult(error.refusal);
    }
    const tool = TOOLS.find((t) => t.name === request.name);
    const progressToken = request.progressToken;
    const toolExtra: ToolExtra = {
      signal: extra.signal,
      ...(progressToken !== undefined
        ? {
            progress: (progress: number, total: number | undefined, message: string) => {
              void extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken, progress, ...(total !== undefined ? { total } : {}), message },
                })
                .catch(() => undefined);
            },
          }
        : {}),
    };
    let body: ToolBody;
    let text: ((b: ToolBody) => string) | undefined;
    try {
      if (!tool) {
        throw new CrewError(
          refuse('invalid_argument', `unknown tool ${request.name}; call tools/list for the tools Crew has`, {
            path: 'name',
          }),
        );
      }
      text = tool.text;
      const run = tool.run as (a: unknown, c: ToolContext, e: ToolExtra) => Promise<ToolBody> | ToolBody;
      // The runs this call admits start under the caller's trace (src/tracing).
      body = await withTraceparent(request.traceparent, () => run(request.arguments, context(), toolExtra));
    } catch (error) {
      if (!isCrewError(error)) throw error;
      // Thrown refusals are this edge's own (argument checks); the gateway answers its refusals as values.
      auditRefusal(error.refusal, request.name);
      body = { ok: false, refusal: error.refusal };
    }
    const isError = body.ok === false;
    const shown = isError
      ? `refused (${body.refusal?.code}): ${body.refusal?.message}`
      : text
        ? text(body)
        : JSON.stringify(body, null, 2);
    return {
      content: [{ type: 'text', text: shown }],
      structuredContent: body,
      ...(isError ? { isError: true } : {}),
    };
  });

  // One per session, so a retried event is shown once however often logging is enabled again.
  const logging = new LoggingSink(async (event) => {
    await server.sendLoggingMessage({ level: 'info', logger: 'crew', data: event });
  });
  server.setRequestHandler(SetLevelRequestSchema, async () => {
    options.onLoggingEnabled?.((event) => logging.deliver(event));
    return {};
  });

  return server;
}
