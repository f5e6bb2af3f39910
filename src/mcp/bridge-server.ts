import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  CallToolResultSchema,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  RequestSchema,
  SetLevelRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { bridgeParentName } from './bridge-parent.js';
import { DaemonUpstream } from './bridge-upstream.js';
import { DaemonUnavailable } from './daemon-start.js';
import { SERVER_CAPABILITIES, SERVER_INFO, SERVER_INSTRUCTIONS } from './server-info.js';
import type { StdioFront } from './stdio-front.js';
import { TOOL_LIST_JSON } from './tool-list-json.js';

/**
 * `tools/call` with its params taken as they came: the SDK's own `tools/call` check answers `arguments`
 * that are not an object with a JSON-RPC error a parent cannot act on, so the bridge forwards such a call
 * and the daemon refuses it typed and audits it, as it does every refusal (`tools-call.ts` on the daemon
 * side).
 */
const LooseCallSchema = RequestSchema.extend({ method: CallToolRequestSchema.shape.method });

/** Longest a forwarded call may take: `spawn_wait` waits 50 s, plus margin. */
const CALL_TIMEOUT_MS = 65_000;

export interface BridgeOptions {
  crewHome: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** `--parent NAME` / `CREW_PARENT`; default: the client's name and the project (`bridge-parent.ts`). */
  parent?: string;
}

/** How long the bridge waits for the client's `initialized` before it names the parent without the client's name. */
const CLIENT_NAME_WAIT_MS = 5000;

/**
 * The MCP SDK's side of the transport: lines from the front, parsed and checked as the SDK's stdio
 * transport parses them (a bad line is reported and skipped), and answers written through the front.
 */
class FrontTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(private readonly front: StdioFront) {}

  async start(): Promise<void> {
    this.front.attach({
      line: (line) => {
        let message: JSONRPCMessage;
        try {
          message = deserializeMessage(line);
        } catch (error) {
          this.onerror?.(error as Error);
          return;
        }
        this.onmessage?.(message);
      },
      error: (error) => this.onerror?.(error),
      close: () => this.onclose?.(),
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.front.send(message as { id?: string | number; method?: string });
  }

  async close(): Promise<void> {
    this.front.close();
  }
}

/**
 * The rest of `crew mcp`, loaded once the front is up: an MCP server over the front's lines that
 * answers `tools/list` itself (the daemon's own list) and forwards tool calls and
 * `logging/setLevel` to the local daemon over Streamable HTTP, sending a parent name that outlives the
 * bridge (`bridge-parent.ts`: the client and the project, so a restarted parent finds its runs, and a
 * daemon restart keeps it too) and the directory it was started in. The
 * daemon is reached (or started) in the background from now on; a call that needs it waits for it.
 * Returns what closes it.
 */
export async function serveBridge(front: StdioFront, options: BridgeOptions): Promise<() => Promise<void>> {
  const server = new Server(SERVER_INFO, {
    capabilities: SERVER_CAPABILITIES,
    instructions: SERVER_INSTRUCTIONS,
  });
  // The parent is named once the client said who it is (`initialize`), and stays so for the bridge's life.
  let markInitialized: () => void = () => undefined;
  const initialized = new Promise<void>((resolve) => {
    markInitialized = resolve;
  });
  server.oninitialized = () => markInitialized();
  let parent: Promise<string> | undefined;
  const parentName = (): Promise<string> => {
    parent ??= (async () => {
      if (options.parent === undefined) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          initialized,
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, CLIENT_NAME_WAIT_MS);
          }),
        ]);
        clearTimeout(timer);
      }
      return bridgeParentName({
        explicit: options.parent,
        clientName: server.getClientVersion()?.name,
        cwd: options.cwd,
      });
    })();
    return parent;
  };
  const upstream = new DaemonUpstream({
    crewHome: options.crewHome,
    env: options.env,
    cwd: options.cwd,
    parent: parentName,
    onNotification: (n) => void server.notification(n).catch(() => undefined),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  // The daemon's own list, written out (`tool-list-json.ts`): the bridge never loads the tool schemas.
  const tools = JSON.parse(TOOL_LIST_JSON) as Tool[];
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
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
    return upstream
      .use(
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
      )
      .catch((error: unknown) => {
        // The parent's model reads tool results, not the bridge's stderr: say why, at once.
        if (!(error instanceof DaemonUnavailable)) throw error;
        return daemonUnavailableResult(error.message);
      });
  });
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    await upstream.setLoggingLevel(request.params.level);
    return {};
  });

  let closing = false;
  await server.connect(new FrontTransport(front));
  // Reached now, not at the first call; a failure here is retried by that call.
  upstream.connect().catch((error: Error) => {
    if (!closing) process.stderr.write(`crew mcp: ${error.message}\n`);
  });
  return async () => {
    closing = true;
    await upstream.close();
  };
}

/**
 * A tool result that says no daemon could be reached, and why: `daemon_unavailable`, a refusal only the
 * bridge gives (the daemon never does, so it is not among the gateway's codes).
 */
function daemonUnavailableResult(message: string): CallToolResult {
  const refusal = { code: 'daemon_unavailable', message };
  return {
    content: [{ type: 'text', text: `refused (daemon_unavailable): ${message}` }],
    structuredContent: { ok: false, refusal },
    isError: true,
  };
}
