import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';
import { call, httpClient } from './mcp-http-client.js';

/** Apart from daemon-mcp.test.ts so that its longest cases run beside the others, not after them. */

describe('a real crew serve: a 100-task wave through MCP', () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await startDaemonProcess({ config: { 'agent.max_subagents': 4 } });
  }, 30_000);
  afterAll(async () => {
    expect(await d.stop()).toBe(0);
    d.cleanup();
  });

  it('lists the tools and runs a 100-task wave to one digest via spawn_run + spawn_wait', async () => {
    const client = await httpClient(d);
    expect((await client.listTools()).tools).toHaveLength(11);
    const tasks = Array.from(
      { length: 100 },
      (_, i) => `#sim sleep=${10 + (i % 5) * 10}ms bytes=64 task ${i}`,
    );
    const spawned = await call(client, 'spawn_run', { tasks });
    expect(spawned.ok).toBe(true);
    expect((spawned.runs as unknown[]).length).toBe(100);
    const events: { kind: string; batch_id?: string; text: string }[] = [];
    for (let i = 0; i < 20 && !events.some((e) => e.batch_id === spawned.batch_id); i++) {
      const waited = await call(client, 'spawn_wait', { timeout_secs: 30 });
      events.push(...(waited.events as typeof events));
    }
    const digest = events.find((e) => e.batch_id === spawned.batch_id);
    expect(digest?.kind).toBe('digest');
    expect(digest?.text).toMatch(/members=100 completed=100/);
    expect(events.filter((e) => e.batch_id === spawned.batch_id)).toHaveLength(1);
    await client.close();
  }, 120_000);
});
