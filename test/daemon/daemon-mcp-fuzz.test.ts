import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSAL_CODES } from '../../src/core/errors.js';
import { TOOLS } from '../../src/mcp/tools.js';
import { api, type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';
import { numRuns } from '../helpers/fc-runs.js';
import { httpClient } from './mcp-http-client.js';

/**
 * Apart from daemon-mcp.test.ts so that its longest cases run beside the others, not after them.
 * Every tool gets ≥ 500 random calls against a real `crew serve`, a fifth of them with arguments that
 * are not an object (an array, a string, a number, null, a boolean); every answer must be typed: a
 * result whose structuredContent has a boolean `ok`, and a known refusal code when it is false. A
 * JSON-RPC error or a result without that shape counts as untyped.
 */

const CASES_PER_TOOL = Math.max(500, numRuns(500));

const codes = new Set<string>(REFUSAL_CODES);

/** One raw tools/call, so arguments of any JSON type go over the wire as they are. */
async function rawCall(client: Client, name: string, args: unknown) {
  try {
    const result = await client.request(
      { method: 'tools/call', params: { name, arguments: args as Record<string, unknown> } },
      CallToolResultSchema,
      { timeout: 60_000 },
    );
    const body = result.structuredContent as { ok?: unknown; refusal?: { code?: unknown } } | undefined;
    const typed =
      body !== undefined &&
      typeof body.ok === 'boolean' &&
      (body.ok || codes.has(String(body.refusal?.code)));
    return { typed, body, error: undefined };
  } catch (error) {
    return { typed: false, body: undefined, error: String(error) };
  }
}

describe('a real crew serve: MCP fuzzed', () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await startDaemonProcess({ config: { 'agent.max_subagents': 4 } });
  }, 30_000);
  afterAll(async () => {
    expect(await d.stop()).toBe(0);
    d.cleanup();
  });

  it(`fuzz: ${CASES_PER_TOOL} random calls per tool (a fifth with non-object arguments); every answer typed; it stays up and loses nothing admitted`, async () => {
    const client = await httpClient(d, { 'x-crew-parent': 'mcp:fuzz' });
    const admitted = new Set<string>();
    const perTool: Record<string, { cases: number; nonObject: number; untyped: number }> = {};
    const untypedSamples: string[] = [];
    const value = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string({ maxLength: 10 }), { maxLength: 20 }),
      fc.array(fc.dictionary(fc.constantFrom('prompt', 'agent_or_mode', 'x'), fc.string({ maxLength: 12 })), {
        maxLength: 3,
      }),
      fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
    );
    const nonObject = fc.oneof(
      fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 5 }),
      fc.string({ maxLength: 20 }),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constant(null),
      fc.boolean(),
    );
    // The tools are fuzzed at once, each its own sequence of calls: the daemon answers concurrent calls
    // (as it does for a parent and its sub-agents), and ten streams keep both processes busy on 2 cores.
    const fuzzTool = async (tool: (typeof TOOLS)[number]) => {
      const keys = Object.keys((tool.schema as unknown as { shape?: Record<string, unknown> }).shape ?? {});
      const objects = fc.sample(fc.dictionary(fc.constantFrom(...keys, 'bogus'), value, { maxKeys: 4 }), {
        numRuns: CASES_PER_TOOL,
        seed: 7,
      });
      const others = fc.sample(nonObject, { numRuns: CASES_PER_TOOL, seed: 11 });
      const stats = { cases: 0, nonObject: 0, untyped: 0 };
      perTool[tool.name] = stats;
      for (let i = 0; i < CASES_PER_TOOL; i++) {
        let args: unknown = objects[i];
        if (i % 5 === 0) {
          args = others[i];
          stats.nonObject++;
        } else {
          let obj = args as Record<string, unknown>;
          if (tool.name === 'spawn_run' && i % 2 === 0)
            obj = { ...obj, task: '#sim echo fuzz', tasks: undefined };
          if (tool.name === 'spawn_run' && i % 4 === 1) obj = { task: `#sim echo fuzz ${i}` };
          if (tool.name === 'spawn_wait') obj = { ...obj, timeout_secs: 0 };
          // spawn_sub_agents blocks until its wave ends: its admitted calls run the quickest task there is.
          if (tool.name === 'spawn_sub_agents' && Array.isArray(obj.agents))
            obj = {
              ...obj,
              agents: (obj.agents as unknown[]).map((a) => ({ ...(a as object), prompt: '#sim echo' })),
            };
          args = obj;
        }
        const sent = JSON.parse(JSON.stringify(args) ?? 'null');
        const answer = await rawCall(client, tool.name, sent);
        stats.cases++;
        if (!answer.typed) {
          stats.untyped++;
          if (untypedSamples.length < 5)
            untypedSamples.push(
              `${tool.name} ${JSON.stringify(sent)} → ${answer.error ?? JSON.stringify(answer.body)}`,
            );
        }
        const runs = (answer.body as { ok?: boolean; runs?: { id: string }[] } | undefined)?.runs;
        if (answer.body?.ok && Array.isArray(runs) && tool.name !== 'spawn_list') {
          for (const run of runs) admitted.add(run.id);
        }
      }
    };
    await Promise.all(TOOLS.map(fuzzTool));
    console.log(`fuzz per tool: ${JSON.stringify(perTool)}`);
    expect(untypedSamples).toEqual([]);
    for (const stats of Object.values(perTool)) {
      expect(stats.cases).toBeGreaterThanOrEqual(500);
      expect(stats.nonObject).toBeGreaterThanOrEqual(100);
      expect(stats.untyped).toBe(0);
    }
    // The rest were refused, most of them queue_full once 4 run and 32 wait.
    expect(admitted.size).toBeGreaterThan(30);
    for (let i = 0; i < 60; i++) {
      const list = await api(d, 'GET', '/api/runs?limit=100000');
      const runs = new Map((list.body.runs as { id: string; status: string }[]).map((r) => [r.id, r.status]));
      if (
        [...admitted].every((id) =>
          ['completed', 'failed', 'cancelled', 'timed_out'].includes(runs.get(id) ?? ''),
        )
      )
        break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const final = await api(d, 'GET', '/api/runs?limit=100000');
    const statuses = new Map(
      (final.body.runs as { id: string; status: string }[]).map((r) => [r.id, r.status]),
    );
    for (const id of admitted)
      expect(['completed', 'failed', 'cancelled', 'timed_out']).toContain(statuses.get(id));
    expect((await api(d, 'GET', '/api/health')).status).toBe(200);
    await client.close();
  }, 600_000);
});
