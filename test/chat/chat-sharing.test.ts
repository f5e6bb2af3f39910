import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { infoOf, rssBytes, simCommand } from '../helpers/sim.js';
import { spawnedIds, startTestDaemon, summaryOf, type TestDaemon } from './chat-harness.js';

interface RunRow {
  id: string;
  status: string;
  peak_mem_gb?: number;
}

const GIB = 1024 ** 3;

describe("a hosted chat: eligible children run as sessions in the parent's own process", () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon({
      'host.sample_interval_secs': 0.1,
      // Another command (a flag the simulator accepts): same program, but not the parent's command.
      'agents.other': { command: simCommand('--no-close') },
    });
  });
  afterAll(async () => {
    await d.stop();
  });

  const runOf = async (id: string) => {
    const status = await d.api('GET', `/api/runs/${id}`);
    return { run: status.body.run as RunRow, text: String(status.body.text ?? '') };
  };
  const ended = async (id: string) => {
    let last: RunRow | undefined;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      last = (await runOf(id)).run;
      if (!['queued', 'starting', 'running'].includes(last.status)) return runOf(id);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`run ${id} did not end: ${JSON.stringify(last)}`);
  };

  it("runs an eligible child in the parent's process (same pid, per #sim info)", async () => {
    const chat = await d.chat();
    await chat.say('#sim info spawn="#sim info" spawn="#sim info" yield');
    const text = await chat.untilText(/^summary: /m);
    const parentPid = infoOf(chat.textOf(1)).pid;
    expect(parentPid).toBe(chat.view.pid);
    const ids = spawnedIds(text);
    expect([...summaryOf(text).values()]).toEqual(['completed', 'completed']);
    for (const id of ids) {
      const { text: transcript } = await ended(id);
      const info = infoOf(transcript);
      expect(info.pid).toBe(parentPid);
      // Its own session, with its own run-scoped MCP token.
      expect(info.sessionId).not.toBe(infoOf(chat.textOf(1)).sessionId);
    }
  });

  it('gives a child with a model, keep, reasoning_effort or another command a dedicated process', async () => {
    const chat = await d.chat();
    const parent = `chat:${chat.view.id}`;
    const variants = [
      { task: '#sim info', model: 'sim-large' },
      { task: '#sim info', keep: true },
      { task: '#sim info', reasoning_effort: 'high' },
      { task: '#sim info', agent: 'other' },
      { task: '#sim info' },
    ];
    const ids = variants.map((args) => {
      const spawned = d.daemon.gateway.spawn(parent, args);
      if (!spawned.ok) throw new Error(JSON.stringify(spawned.refusal));
      return spawned.runs[0]!.id;
    });
    const pids = [];
    for (const id of ids) {
      const { run, text } = await ended(id);
      expect(run.status).toBe('completed');
      pids.push(infoOf(text).pid);
    }
    const eligible = pids.pop();
    expect(eligible).toBe(chat.view.pid);
    for (const pid of pids) expect(pid).not.toBe(chat.view.pid);
    expect(new Set(pids).size).toBe(pids.length);
    // Their events reach the chat too.
    await chat.until(
      () =>
        chat.events
          .filter((e) => e.type === 'injected')
          .flatMap((e) => (e.type === 'injected' ? e.events.flatMap((ev) => ev.run_ids) : [])).length === 5,
      'all five events injected',
    );
    await d.api('POST', `/api/conversations/${ids[1]}/release`);
  });

  it("charges a shared child the parent runtime's usage divided by its live sessions (chat + child)", async () => {
    const chat = await d.chat();
    const pid = chat.view.pid!;
    await chat.say('#sim spawn="#sim sleep=1500ms mem=128mb" yield');
    await chat.untilText(/^spawned /m);
    const [id] = spawnedIds(chat.text());
    let peakRss = 0;
    const deadline = Date.now() + 20_000;
    for (;;) {
      peakRss = Math.max(peakRss, rssBytes(pid));
      const { run } = await runOf(id!);
      if (run.status === 'completed') break;
      if (Date.now() > deadline) throw new Error('the child did not end');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const { run } = await ended(id!);
    expect(run.peak_mem_gb).toBeDefined();
    const share = (run.peak_mem_gb as number) * GIB;
    expect(peakRss).toBeGreaterThan(128 * 1024 ** 2);
    expect(share / peakRss).toBeGreaterThan(0.35);
    expect(share / peakRss).toBeLessThan(0.65);
  });
});
