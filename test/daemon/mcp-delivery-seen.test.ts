import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';
import { parseSse, RawMcp, type SseEvent } from './mcp-raw-http.js';

/** A GET notification stream read as it arrives. */
class OpenStream {
  text = '';
  private readonly controller = new AbortController();
  readonly status: number;
  private constructor(response: Response, controller: AbortController) {
    this.status = response.status;
    this.controller = controller;
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          this.text += decoder.decode(value, { stream: true });
        }
      } catch {
        // aborted
      }
    })();
  }

  static async open(mcp: RawMcp, lastEventId?: string): Promise<OpenStream> {
    const controller = new AbortController();
    const response = await fetch(mcp.url, {
      method: 'GET',
      headers: mcp.headers({
        accept: 'text/event-stream',
        ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
      }),
      signal: controller.signal,
    });
    return new OpenStream(response, controller);
  }

  /** Complete events so far (the last block may still be arriving). */
  events(): SseEvent[] {
    const whole = this.text.slice(0, this.text.lastIndexOf('\n\n') + 2);
    return parseSse(whole);
  }

  /** Run ids of the completion events on the stream so far. */
  runIds(): string[] {
    return this.events()
      .filter((e) => e.data !== '')
      .map((e) => JSON.parse(e.data) as { method?: string; params?: { data?: { run_ids?: string[] } } })
      .filter((m) => m.method === 'notifications/message')
      .flatMap((m) => m.params?.data?.run_ids ?? []);
  }

  drop(): void {
    this.controller.abort();
  }
}

async function until<T>(
  what: string,
  fn: () => T | undefined | Promise<T | undefined>,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Delivered means seen (issue 29): a client that asked for log messages but holds no notification stream
 * must still get every completion event from spawn_wait; a notification pushed into no stream is not a
 * delivery.
 */
describe('a completion is delivered only where the parent can see it', () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await startDaemonProcess({ config: { 'agent.max_subagents': 6 } });
  }, 60_000);
  afterAll(async () => {
    expect(await d.stop()).toBe(0);
    d.cleanup();
  });

  it('logging/setLevel and no GET stream: spawn_wait returns every one of 6 completions, each once', async () => {
    const mcp = new RawMcp(d);
    await mcp.initialize();
    await mcp.request('logging/setLevel', { level: 'info' });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const spawned = await mcp.call('spawn_run', { task: `#sim sleep=20ms trial ${i}` });
      ids.push((spawned.runs as { id: string }[])[0]!.id);
    }
    // Every run ends (and its event is pushed, today into no stream) before the parent asks.
    await until('every run to end', async () => {
      const list = await mcp.call('spawn_list', {});
      return list.running === 0 && list.queued === 0 ? true : undefined;
    });
    await new Promise((r) => setTimeout(r, 300));
    const seen: string[] = [];
    for (;;) {
      const waited = await mcp.call('spawn_wait', { timeout_secs: 1 });
      const events = waited.events as { run_ids: string[] }[];
      if (events.length === 0) break;
      for (const event of events) seen.push(...event.run_ids);
    }
    expect(seen.sort()).toEqual([...ids].sort());
    // Nothing comes twice.
    const again = await mcp.call('spawn_wait', { timeout_secs: 0 });
    expect(again.events).toEqual([]);
    for (const id of ids) {
      const status = await mcp.call('spawn_status', { agent_id: id });
      expect((status.run as { delivery: string }).delivery).toBe('delivered');
    }
  }, 60_000);

  it('a dropped notification stream resumed with Last-Event-ID misses nothing, and nothing comes twice', async () => {
    const mcp = new RawMcp(d);
    await mcp.initialize('resumer');
    const first = await OpenStream.open(mcp);
    expect(first.status).toBe(200);
    // The stream opens with a cursor and a retry interval, before any notification.
    const priming = await until('the priming event', () => first.events()[0]);
    expect(priming.id).toMatch(/\S/);
    expect(priming.retry).toBeGreaterThan(0);
    // A call's own stream (a POST answered as events) carries ids and retry too.
    const answered = await mcp.post({
      jsonrpc: '2.0',
      id: 900,
      method: 'logging/setLevel',
      params: { level: 'info' },
    });
    const callEvents = parseSse(answered.text);
    expect(callEvents.length).toBeGreaterThan(0);
    for (const event of callEvents) expect(event.id).toMatch(/\S/);
    expect(callEvents[0]!.retry).toBeGreaterThan(0);

    const spawnOne = async (label: string) =>
      ((await mcp.call('spawn_run', { task: `#sim sleep=20ms ${label}` })).runs as { id: string }[])[0]!.id;
    const before = await spawnOne('before the drop');
    await until('the first completion on the stream', () =>
      first.runIds().includes(before) ? true : undefined,
    );
    // Every event on the stream carries an id.
    for (const event of first.events()) expect(event.id).toMatch(/\S/);
    const lastSeen = first.events().at(-1)!.id!;
    first.drop();

    const missed: string[] = [];
    for (let i = 0; i < 5; i++) missed.push(await spawnOne(`while dropped ${i}`));
    await until('the runs spawned while the stream was down to end', async () => {
      const list = await mcp.call('spawn_list', {});
      return list.running === 0 && list.queued === 0 ? true : undefined;
    });
    const resumed = await OpenStream.open(mcp, lastSeen);
    expect(resumed.status).toBe(200);
    const got = await until('every missed completion on the resumed stream', () =>
      missed.every((id) => resumed.runIds().includes(id)) ? resumed.runIds() : undefined,
    );
    // Each once: the replay and a push to the new stream never both carry one event.
    expect([...got].sort()).toEqual([...missed].sort());
    expect(resumed.runIds()).not.toContain(before);
    const waited = await mcp.call('spawn_wait', { timeout_secs: 0 });
    expect(waited.events).toEqual([]);
    resumed.drop();
  }, 60_000);
});
