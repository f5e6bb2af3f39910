import type * as acp from '@agentclientprotocol/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';

/**
 * The simulator's line back to Crew: an MCP client on the HTTP MCP server named `crew` that `session/new`
 * gave, with its headers (the run- or chat-scoped bearer token). Only the two tools a parent needs, their
 * results validated once here. A refusal is an answer (`ok: false`), not an error; anything else that
 * goes wrong (unreachable, a protocol error, a result of the wrong shape) rejects with a message that
 * says what failed.
 */

/** The name Crew gives its MCP server in `session/new`. */
export const CREW_MCP_SERVER_NAME = 'crew';

const refusalSchema = z.object({ code: z.string(), message: z.string() });
const refusedSchema = z.object({ ok: z.literal(false), refusal: refusalSchema });

const spawnSchema = z.union([
  z.object({
    ok: z.literal(true),
    batch_id: z.string().optional(),
    runs: z.array(z.object({ id: z.string(), status: z.string() })),
  }),
  refusedSchema,
]);

const waitSchema = z.union([
  z.object({
    ok: z.literal(true),
    events: z.array(
      z.object({
        id: z.string(),
        kind: z.string(),
        run_ids: z.array(z.string()),
        batch_id: z.string().optional(),
        text: z.string(),
      }),
    ),
  }),
  refusedSchema,
]);

export type SpawnAnswer = z.infer<typeof spawnSchema>;
export type WaitAnswer = z.infer<typeof waitSchema>;

/** Crew's tools as the simulator calls them; `close` ends the MCP session and its HTTP connection. */
export interface CrewTools {
  spawnRun(args: { task: string } | { tasks: string[] }, signal: AbortSignal): Promise<SpawnAnswer>;
  spawnWait(timeoutSecs: number, signal: AbortSignal): Promise<WaitAnswer>;
  close(): Promise<void>;
}

/** How long `close` gives the server to end the MCP session before the connection is dropped anyway. */
const TERMINATE_TIMEOUT_MS = 1000;

/** Connects to the `crew` HTTP MCP server among `servers`. */
export async function connectCrew(
  servers: readonly acp.McpServer[],
  signal: AbortSignal,
): Promise<CrewTools> {
  const server = servers.find((s) => 'type' in s && s.type === 'http' && s.name === CREW_MCP_SERVER_NAME);
  // The simulator's own failures (a test agent, not Crew) end up in its run's transcript and error.
  if (!server || !('url' in server)) {
    throw new Error(
      `#sim spawn needs Crew's MCP server, and session/new gave no HTTP MCP server named "${CREW_MCP_SERVER_NAME}"`,
    );
  }
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])) },
  });
  const client = new Client({ name: 'crew-sim-agent', version: '0.1.0' });
  try {
    await client.connect(transport, { signal });
  } catch (error) {
    await transport.close();
    throw new Error(`cannot connect to Crew's MCP server at ${server.url}: ${messageOf(error)}`);
  }

  const call = async <T>(name: string, args: object, schema: z.ZodType<T>, signal: AbortSignal) => {
    const result = await client.callTool({ name, arguments: { ...args } }, undefined, { signal });
    const parsed = schema.safeParse(result.structuredContent);
    if (parsed.success) return parsed.data;
    const text = Array.isArray(result.content)
      ? result.content
          .map((c: { type: string; text?: string }) => (c.type === 'text' ? c.text : ''))
          .join(' ')
      : '';
    throw new Error(`${name} answered ${result.isError ? 'an error' : 'an unexpected result'}: ${text}`);
  };

  return {
    spawnRun: (args, signal) => call('spawn_run', args, spawnSchema, signal),
    spawnWait: (timeoutSecs, signal) => call('spawn_wait', { timeout_secs: timeoutSecs }, waitSchema, signal),
    async close() {
      // A polite DELETE first, so the server can drop the MCP session; then the connection goes either way.
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, TERMINATE_TIMEOUT_MS);
      });
      await Promise.race([transport.terminateSession().catch(() => undefined), bound]);
      clearTimeout(timer);
      await client.close();
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
