import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as acp from '@agentclientprotocol/sdk';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type CompletionMember, formatCompletion, formatDigest } from '../../src/core/completion-text.js';

/**
 * A small stand-in for Crew's HTTP MCP endpoint, for the simulator's parent tests: `spawn_run` admits
 * runs `r1, r2, …` (a wave gets `b1, …`) or refuses, each run ends after a delay, and `spawn_wait` hands
 * out the pending events with Crew's own event text (one digest per wave). One parent: the bearer token.
 * Stateless Streamable HTTP: a fresh MCP server per request, closed with the request.
 */

export interface FakeCrewOptions {
  /** A refusal for one `spawn_run` call's tasks, or undefined to admit them. */
  refuse?: (tasks: readonly string[]) => { code: string; message: string } | undefined;
  /** How long a run takes; undefined = it never ends. @default 50 ms for every task */
  durationMs?: (task: string) => number | undefined;
  /** How a run ends. @default 'failed' for a task holding `fail=`, else 'completed' */
  statusOf?: (task: string) => string;
}

export interface ToolCall {
  name: string;
  args: Record<string, unknown>;
}

export interface FakeCrew {
  /** What `session/new` passes the simulator: Crew's HTTP MCP server with the bearer token. */
  mcpServer: acp.McpServer;
  /** Every `tools/call`, in order. */
  calls: ToolCall[];
  /** Requests turned away for a missing or wrong bearer token. */
  unauthorized: number;
  /** `spawn_wait` calls still waiting. */
  waiting(): number;
  /** The event text Crew would send for run `id` that ended with `status`. */
  eventText(id: string, status: string): string;
  /** The digest text Crew would send for wave `batchId` whose members ended as `ends` says. */
  digestText(batchId: string, ends: ReadonlyArray<readonly [id: string, status: string]>): string;
  /** Stops the server, its timers and waiters; drops every connection. */
  close(): Promise<void>;
}

const KEEP = { keep: 'tail', keepChars: 2000 } as const;

interface Event {
  id: string;
  kind: 'completion' | 'digest';
  run_ids: string[];
  batch_id?: string;
  text: string;
}

function member(id: string, status: string): CompletionMember {
  return {
    id,
    agent: 'sim',
    status,
    durationSecs: 0.1,
    output: 'sim: done\n',
    resultPath: `/tmp/crew-fake/${id}/result.txt`,
  };
}

export async function startFakeCrew(options: FakeCrewOptions = {}): Promise<FakeCrew> {
  const token = `fake-${Math.random().toString(36).slice(2)}`;
  const durationMs = options.durationMs ?? (() => 50);
  const statusOf = options.statusOf ?? ((task: string) => (task.includes('fail=') ? 'failed' : 'completed'));
  const calls: ToolCall[] = [];
  const events: Event[] = [];
  const waiters = new Set<() => void>();
  const timers = new Set<NodeJS.Timeout>();
  const open = new Set<{ close(): Promise<void> }>();
  let runCount = 0;
  let batchCount = 0;
  let eventCount = 0;
  let unauthorized = 0;

  const push = (event: Omit<Event, 'id'>) => {
    eventCount += 1;
    events.push({ id: `e${eventCount}`, ...event });
    for (const wake of [...waiters]) wake();
  };
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };

  /** Admits `tasks`; a wave's digest comes when its last member ends. */
  const admit = (tasks: readonly string[], wave: boolean) => {
    const batchId = wave ? `b${++batchCount}` : undefined;
    const runs = tasks.map((task) => ({ id: `r${++runCount}`, task }));
    const ended: CompletionMember[] = [];
    for (const run of runs) {
      const ms = durationMs(run.task);
      if (ms === undefined) continue;
      later(ms, () => {
        const done = member(run.id, statusOf(run.task));
        if (!batchId) {
          push({ kind: 'completion', run_ids: [run.id], text: formatCompletion(done, KEEP) });
          return;
        }
        ended.push(done);
        if (ended.length < runs.length) return;
        const members = runs.map((r) => ended.find((m) => m.id === r.id) as CompletionMember);
        push({
          kind: 'digest',
          run_ids: runs.map((r) => r.id),
          batch_id: batchId,
          text: formatDigest(batchId, members, KEEP),
        });
      });
    }
    return {
      ok: true,
      ...(batchId ? { batch_id: batchId } : {}),
      runs: runs.map((r) => ({ id: r.id, status: 'running' })),
    };
  };

  const waitForEvents = (timeoutMs: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      if (events.length > 0 || signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        timers.delete(timer);
        waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      timers.add(timer);
      waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });

  const result = (body: Record<string, unknown>): CallToolResult => ({
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body,
    ...(body.ok === false ? { isError: true } : {}),
  });

  const mcpServer = (): Server => {
    const server = new Server({ name: 'crew', version: '0.0.0-fake' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: ['spawn_run', 'spawn_wait'].map((name) => ({ name, inputSchema: { type: 'object' as const } })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const args = request.params.arguments ?? {};
      calls.push({ name: request.params.name, args });
      if (request.params.name === 'spawn_run') {
        const tasks = Array.isArray(args.tasks) ? args.tasks.map(String) : [String(args.task)];
        const refusal = options.refuse?.(tasks);
        return result(refusal ? { ok: false, refusal } : admit(tasks, Array.isArray(args.tasks)));
      }
      if (request.params.name === 'spawn_wait') {
        await waitForEvents(Number(args.timeout_secs ?? 30) * 1000, extra.signal);
        const delivered = events.splice(0);
        return result({ ok: true, events: delivered, running: 0, queued: 0 });
      }
      return result({ ok: false, refusal: { code: 'invalid_argument', message: 'unknown tool' } });
    });
    return server;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      unauthorized += 1;
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const server = mcpServer();
    // No `sessionIdGenerator`: stateless, one transport per request.
    const transport = new StreamableHTTPServerTransport({});
    const pair = {
      async close() {
        await transport.close();
        await server.close();
      },
    };
    open.add(pair);
    // Closing the server aborts its running handlers: a `spawn_wait` whose client went away stops.
    res.on('close', () => {
      open.delete(pair);
      void pair.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;

  return {
    mcpServer: {
      type: 'http',
      name: 'crew',
      url,
      headers: [{ name: 'Authorization', value: `Bearer ${token}` }],
    },
    calls,
    get unauthorized() {
      return unauthorized;
    },
    waiting: () => waiters.size,
    eventText: (id, status) => formatCompletion(member(id, status), KEEP),
    digestText: (batchId, ends) =>
      formatDigest(
        batchId,
        ends.map(([id, status]) => member(id, status)),
        KEEP,
      ),
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const wake of [...waiters]) wake();
      await Promise.all([...open].map((pair) => pair.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        http.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}
