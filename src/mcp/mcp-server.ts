import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type CallToolResult,
  ListToolsRequestSchema,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { DeliveredEvent } from '../gateway/relay.js';
import { callTool } from './call-tool.js';
import { LoggingSink } from './logging-sink.js';
import { SERVER_CAPABILITIES, SERVER_INFO, SERVER_INSTRUCTIONS } from './server-info.js';
import { toolList } from './tool-list.js';
import type { ToolContext } from './tools.js';
import { setToolsCallHandler } from './tools-call.js';

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

  setToolsCallHandler(
    server,
    (params, extra): Promise<CallToolResult> =>
      callTool(params, context, {
        signal: extra.signal,
        progress: (progressToken) => (progress, total, message) => {
          void extra
            .sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress, ...(total !== undefined ? { total } : {}), message },
            })
            .catch(() => undefined);
        },
      }),
  );

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
