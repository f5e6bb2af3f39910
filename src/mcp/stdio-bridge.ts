import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  type CallToolRequest,
  type CallToolResult,
  CallToolResultSchema,
  ListToolsRequestSchema,
  LoggingMessageNotificationSchema,
  SetLevelRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { isDaemonUp } from '../cli/daemon-client.js';
import { daemonUrl, readToken } from '../daemon/daemon-address.js';
import { CWD_HEADER, PARENT_HEADER } from '../http/app.js';
import { entryCommand } from '../self-command.js';
import { SERVER_INFO } from './mcp-server.js';
import { setToolsCallHandler } from './tools-call.js';

/** Longest a forwarded call may take: `spawn_wait` waits 50 s, plus margin. */
const CALL_TIMEOUT_MS = 65_000;
const DAEMON_START_TIMEOUT_MS = 15_000;

/**
 * `crew mcp`: a stdio MCP server that forwards every request to the local daemon over Streamable
 * HTTP, sending a parent key generated once per bridge process (so a daemon restart keeps the parent)
 * and the directory it was started in. Starts a daemon in the background when none answers. Nothing
 * but protocol goes to stdout; diagnostics go to stderr.
 */
export async function runStdioBridge(options: {
  crewHome: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
}): Promise<void> {
  const parent = `mcp:${randomUUID()}`;
  const url = daemonUrl(options.crewHome, options.env);
  await ensureDaemon(url, options);
  const token = readToken(options.crewHome, options.env);
  let client = await connectUpstream(url, token, parent, options.cwd);

  const server = new Server(SERVER_INFO, { capabilities: { tools: {}, logging: {} } });
  /** Reconnects once when the daemon restarted (its sessions are gone). */
  const withUpstream = async <T>(fn: (c: Client) => Promise<T>): Promise<T> => {
    try {
      return await fn(client);
    } catch (error) {
      if (!(await isDaemonUp(url, token))) await ensureDaemon(url, options);
      await client.close().catch(() => undefined);
      client = await connectUpstream(url, readToken(options.crewHome, options.env), parent, options.cwd);
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => server.notification(n));
      if (error instanceof Error && /timed out/i.test(error.message)) throw error;
      return fn(client);
    }
  };
  server.setRequestHandler(ListToolsRequestSchema, () => withUpstream((c) => c.listTools()));
  // The call goes on as it came, a malformed one too: the daemon refuses it typed and audits it, as it
  // does every refusal.
  setToolsCallHandler(server, (params, extra) => {
    const progressToken = (params as { _meta?: { progressToken?: string | number } } | undefined)?._meta
      ?.progressToken;
    return withUpstream(
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
    await withUpstream((c) => c.setLoggingLevel(request.params.level));
    return {};
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => server.notification(n));

  const transport = new StdioServerTransport();
  await server.connect(transport);
  await new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.on('end', () => resolve());
  });
  await client.close().catch(() => undefined);
}

async function connectUpstream(
  url: string,
  token: string | undefined,
  parent: string,
  cwd: string,
): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: {
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        [PARENT_HEADER]: parent,
        [CWD_HEADER]: cwd,
      },
    },
  });
  const client = new Client({ name: 'crew-mcp-bridge', version: SERVER_INFO.version });
  await client.connect(transport);
  return client;
}

/** Starts `crew serve` detached when no daemon answers, and waits until it does. */
async function ensureDaemon(
  url: string,
  options: { crewHome: string; env: NodeJS.ProcessEnv },
): Promise<void> {
  if (await isDaemonUp(url, readToken(options.crewHome, options.env))) return;
  const port = new URL(url).port || '7878';
  const [node, ...args] = entryCommand('cli/main').command as [string, ...string[]];
  const child = spawn(node, [...args, 'serve', '--port', port], {
    detached: true,
    stdio: 'ignore',
    env: options.env,
  });
  child.unref();
  process.stderr.write(`crew mcp: started a daemon (pid ${child.pid}) at ${url}\n`);
  const deadline = Date.now() + DAEMON_START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (await isDaemonUp(url, readToken(options.crewHome, options.env))) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the Crew daemon did not answer at ${url} within ${DAEMON_START_TIMEOUT_MS / 1000}s`);
}
