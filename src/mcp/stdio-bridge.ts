import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { DaemonUpstream } from './bridge-upstream.js';
import { SERVER_CAPABILITIES, SERVER_INFO, SERVER_INSTRUCTIONS } from './server-info.js';

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
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const progressToken = request.params._meta?.progressToken;
    return upstream.use((c) =>
      c.callTool({ name: request.params.name, arguments: request.params.arguments ?? {} }, undefined, {
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
      }),
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
