import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { CrewError, isCrewError, refuse } from '../core/errors.js';
import type { DeliveredEvent } from '../gateway/relay.js';
import { SERVER_CAPABILITIES, SERVER_INFO, SERVER_INSTRUCTIONS } from './server-info.js';
import { toolList } from './tool-list.js';
import { TOOLS, type ToolBody, type ToolContext, type ToolExtra } from './tools.js';

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

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    const progressToken = request.params._meta?.progressToken;
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
          refuse(
            'invalid_argument',
            `unknown tool ${request.params.name}; call tools/list for the tools Crew has`,
            {
              path: 'name',
            },
          ),
        );
      }
      text = tool.text;
      body = await (tool.run as (a: unknown, c: ToolContext, e: ToolExtra) => Promise<ToolBody> | ToolBody)(
        request.params.arguments ?? {},
        context(),
        toolExtra,
      );
    } catch (error) {
      if (!isCrewError(error)) throw error;
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

  server.setRequestHandler(SetLevelRequestSchema, async () => {
    options.onLoggingEnabled?.(async (event) => {
      await server.sendLoggingMessage({ level: 'info', logger: 'crew', data: event });
    });
    return {};
  });

  return server;
}
