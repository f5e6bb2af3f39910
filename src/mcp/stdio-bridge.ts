import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  CallToolResultSchema,
  ListToolsRequestSchema,
  RequestSchema,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { DaemonUpstream } from './bridge-upstream.js';
import { SERVER_CAPABILITIES, SERVER_INFO, SERVER_INSTRUCTIONS } from './server-info.js';

/**
 * `tools/call` with its params taken as they came: the SDK's own `tools/call` check answers `arguments`
 * that are not an object with a JSON-RPC error a parent cannot act on, so the bridge forwards such a call
 * and the daemon refuses it typed and audits it, as it does every refusal (`tools-call.ts` on the daemon
 * side). Built from the SDK's schemas, so the bridge loads no schema library of its own before it answers.
 */
const LooseCallSchema = RequestSchema.extend({ method: CallToolRequestSchema.shape.method });

/** Longest a forwarded call may take: `spawn_wait` waits 50 s, plus margin. */
const CALL_TIMEOUT_MS = 65_000;

/**
 * `crew mcp`: a stdio MCP server that forwards tool calls to the local daemon over Streamable HTTP,
 * sending a parent key generated once per bridge process (so a daemon restart keeps the parent) and the
 * directory it was started in.
 *
 * It answers `initialize` (with the daemon's instructions) and `tools/list` itself, at once: a parent
 * that waits only briefly for its MCP servers (Codex, Claude Code) must not start without Crew's tools
 * while the daemon is reached or started (about a second). The daemon is reached in the background from
 * the start; a call that needs it waits for it. Nothing but protocol goes to stdout; diagnostics go to
 * stderr.
 */
export async function runStdioBridge(options: {
  crewHome: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
}): Promise<void> {
  const server = new Server(SERVER_INFO, {
    capabilities: SERVER_CAPABILITIES,
    instructions: SERVER_INSTRUCTIONS,
  });
  const upstream = new DaemonUpstream({
    ...options,
    parent: `mcp:${randomUUID()}`,
    onNotification: (n) => void server.notification(n).catch(() => undefined),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  // Loaded on the first tools/list, after initialize has been answered: the schemas cost a few ms.
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await import('./tool-list.js')).toolList(),
  }));
  const install = Protocol.prototype.setRequestHandler as unknown as (
    this: Server,
    schema: typeof LooseCallSchema,
    fn: (
      request: { params?: unknown },
      extra: { signal: AbortSignal; sendNotification: Server['notification'] },
    ) => Promise<CallToolResult>,
  ) => void;
  install.call(server, LooseCallSchema, (request, extra) => {
    const params = request.params;
    const progressToken = (params as { _meta?: { progressToken?: string | number } } | undefined)?._meta
      ?.progressToken;
    return upstream.use(
      (c) =>
        c.request({ method: 'tools/call', params } as CallToolRequest, CallToolResultSchema, {
          timeout: CALL_TIMEOUT_MS,
          resetTimeoutOnProgress: true,
          signal: extra.signal,
          ...(progressToken !== undefined
            ? {
                onprogress: (p) => {
                  void extra
                    .sendNotification({ method: 'notifications/progress', params: { ...p, progressToken } })
                    .catch(() => undefined);
                },
              }
            : {}),
        }) as Promise<CallToolResult>,
    );
  });
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    await upstream.use((c) => c.setLoggingLevel(request.params.level));
    return {};
  });

  const transport = new StdioServerTransport();
  let closing = false;
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.on('end', () => resolve());
  }).then(() => {
    closing = true;
  });
  await server.connect(transport);
  // Reached now, not at the first call; a failure here is retried by that call.
  upstream.connect().catch((error: Error) => {
    if (!closing) process.stderr.write(`crew mcp: ${error.message}\n`);
  });
  await closed;
  await upstream.close();
}
