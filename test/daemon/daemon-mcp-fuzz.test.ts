import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSAL_CODES } from '../../src/core/errors.js';
import { TOOLS } from '../../src/mcp/tools.js';
import { api, type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';
import { numRuns } from '../helpers/fc-runs.js';
import { call, httpClient } from './mcp-http-client.js';

/** Apart from daemon-mcp.test.ts so that its longest cases run beside the others, not after them. */

describe('a real crew serve: MCP fuzzed', () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await startDaemonProcess({ config: { 'agent.max_subagents': 4 } });
  }, 30_000);
  afterAll(async () => {
    expect(await d.stop()).toBe(0);
    d.cleanup();
  });

  it(`fuzz: ${numRuns(200)} random argument objects per tool against the daemon; it stays up and loses nothing admitted`, async () => {
    const client = await httpClient(d, { 'x-crew-parent': 'mcp:fuzz' });
    const codes = new Set<string>(REFUSAL_CODES);
    const admitted = new Set<string>();
    const value = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string({ maxLength: 10 }), { maxLength: 20 }),
      fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
    );
    for (const tool of TOOLS) {
      const keys = Object.keys((tool.schema as unknown as { shape?: Record<string, unknown> }).shape ?? {});
      const samples = fc.sample(fc.dictionary(fc.constantFrom(...keys, 'bogus'), value, { maxKeys: 4 }), {
        numRuns: numRuns(200),
        seed: 7,
      });
      for (const [i, raw] of samples.entries()) {
        let args = raw as Record<string, unknown>;
        if (tool.name === 'spawn_run' && i % 2 === 0)
          args = { ...args, task: '#sim echo fuzz', tasks: undefined };
        if (tool.name === 'spawn_run' && i % 4 === 0) args = { task: `#sim echo fuzz ${i}` };
        if (tool.name === 'spawn_wait' || tool.name === 'spawn_sub_agents')
          args = { ...args, timeout_secs: 0 };
        if (tool.name === 'spawn_sub_agents') continue; // blocking; covered in-process
        const body = await call(client, tool.name, JSON.parse(JSON.stringify(args)));
        expect(typeof body.ok).toBe('boolean');
        if (!body.ok) expect(codes.has(body.refusal?.code ?? '')).toBe(true);
        if (body.ok && Array.isArray(body.runs) && tool.name !== 'spawn_list') {
          for (const run of body.runs as { id: string }[]) admitted.add(run.id);
        }
      }
    }
    // The rest were refused, most of them queue_full once 4 run and 32 wait; fewer samples, fewer admitted.
    expect(admitted.size).toBeGreaterThan(Math.min(30, numRuns(30)));
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
  }, 180_000);
});
