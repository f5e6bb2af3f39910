import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARENT_HEADER } from '../../src/http/app.js';
import {
  api,
  crewCommand,
  type DaemonProcess,
  pollFor,
  startDaemonProcess,
} from '../helpers/daemon-process.js';
import { call, httpClient } from './mcp-http-client.js';

/** Issue 12 §6: MCP sessions a client never closes are bounded in number and expire when idle. */

type SessionStats = { open: number; expired: number; evicted: number };
const statsOf = async (d: DaemonProcess) =>
  (await api(d, 'GET', '/api/health')).body.mcp_sessions as SessionStats;

describe('a real crew serve with mcp.max_sessions 20: abandoned SDK sessions stay bounded', () => {
  let d: DaemonProcess;
  const clients: Client[] = [];
  beforeAll(async () => {
    d = await startDaemonProcess({ config: { 'mcp.max_sessions': 20 } });
  }, 30_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    expect(await d.stop()).toBe(0);
    d.cleanup();
  });

  it('60 sessions opened and never closed: 20 stay, the 40 least recently used are closed', async () => {
    for (let i = 0; i < 60; i++) clients.push(await httpClient(d));
    expect(await statsOf(d)).toEqual({ open: 20, expired: 0, evicted: 40 });
    // The newest answer; the oldest was closed and is told to initialize again.
    expect((await call(clients[59]!, 'spawn_list', {})).ok).toBe(true);
    await expect(call(clients[0]!, 'spawn_list', {})).rejects.toThrow(/unknown MCP session|404/);
    // Using one keeps it: ten more sessions evict others, not the one just used.
    expect((await call(clients[40]!, 'spawn_list', {})).ok).toBe(true);
    for (let i = 0; i < 10; i++) clients.push(await httpClient(d));
    expect((await call(clients[40]!, 'spawn_list', {})).ok).toBe(true);
    expect((await statsOf(d)).open).toBe(20);
  }, 60_000);
});

describe('a real crew serve with mcp.max_sessions 2: a call answered late keeps its session in use until its answer ends', () => {
  let d: DaemonProcess;
  const clients: Client[] = [];
  beforeAll(async () => {
    d = await startDaemonProcess({ config: { 'mcp.max_sessions': 2 } });
  }, 30_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    expect(await d.stop()).toBe(0);
    d.cleanup();
  });

  it('is kept while spawn_wait waits, and is an ordinary least recently used session once answered', async () => {
    const waiter = await httpClient(d);
    clients.push(waiter);
    const waiting = call(waiter, 'spawn_wait', { timeout_secs: 6 });
    // The call has reached the daemon (its session is in use) well before the 6 s wait ends.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const second = await httpClient(d);
    const third = await httpClient(d); // past the bound: the second goes, the waiter is in use
    clients.push(second, third);
    await expect(call(second, 'spawn_list', {})).rejects.toThrow(/unknown MCP session|404/);
    expect((await waiting).ok).toBe(true);
    // Answered: no longer in use. Used less recently than the third, it is the one a new session evicts.
    expect((await call(third, 'spawn_list', {})).ok).toBe(true);
    clients.push(await httpClient(d));
    await expect(call(waiter, 'spawn_list', {})).rejects.toThrow(/unknown MCP session|404/);
    expect((await call(third, 'spawn_list', {})).ok).toBe(true);
  }, 60_000);
});

describe('a real crew serve with mcp.session_idle_secs 1: an expired parent reconnects and gets its events', () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await startDaemonProcess({ config: { 'mcp.session_idle_secs': 1 } });
  }, 30_000);
  afterAll(async () => {
    expect(await d.stop()).toBe(0);
    d.cleanup();
  });

  it('the run ends while its parent session expires; a new session of the same parent gets the event once', async () => {
    const parent = { [PARENT_HEADER]: 'mcp:idle-parent' };
    const first = await httpClient(d, parent);
    const spawned = await call(first, 'spawn_run', { task: '#sim sleep=1500ms done' });
    const id = (spawned.runs as { id: string }[])[0]!.id;
    await pollFor('the session to expire', async () => ((await statsOf(d)).expired >= 1 ? true : undefined));
    await expect(call(first, 'spawn_list', {})).rejects.toThrow(/unknown MCP session|404/);
    await first.close().catch(() => undefined);

    const again = await httpClient(d, parent);
    const events = (await call(again, 'spawn_wait', { timeout_secs: 30 })).events as { run_ids: string[] }[];
    expect(events.flatMap((e) => e.run_ids)).toEqual([id]);
    expect((await call(again, 'spawn_wait', { timeout_secs: 0 })).events).toEqual([]);
    await again.close();
  }, 60_000);

  it('through crew mcp: the bridge finds its session expired, initializes again and gets the event', async () => {
    const [node, args] = crewCommand(['mcp']);
    const client = new Client({ name: 'bridge-test', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: node,
        args,
        env: { ...(process.env as Record<string, string>), CREW_HOME: d.home, CREW_URL: d.url },
        stderr: 'pipe',
      }),
    );
    try {
      const before = (await statsOf(d)).expired;
      const spawned = await call(client, 'spawn_run', { task: '#sim sleep=1500ms via the bridge' });
      const id = (spawned.runs as { id: string }[])[0]!.id;
      await pollFor('the bridge session to expire', async () =>
        (await statsOf(d)).expired > before ? true : undefined,
      );
      const events = (await call(client, 'spawn_wait', { timeout_secs: 30 })).events as {
        run_ids: string[];
      }[];
      expect(events.flatMap((e) => e.run_ids)).toEqual([id]);
    } finally {
      await client.close();
    }
  }, 60_000);
});
