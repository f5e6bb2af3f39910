import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { runCrew } from './run-crew.js';

describe('the CLI end to end against a real daemon', () => {
  let d: DaemonProcess;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    d = await startDaemonProcess();
    env = { CREW_HOME: d.home, CREW_URL: d.url };
  }, 30_000);
  afterAll(async () => {
    await d.stop();
    d.cleanup();
  });

  it('spawn --wait prints the completion event; list, status, cancel and their exit codes', async () => {
    const waited = await runCrew(['spawn', '--wait', '#sim chunks=2 hello from the cli'], env);
    expect(waited.code, waited.err).toBe(0);
    expect(waited.out).toMatch(/\[Subagent completion event\] id=\S+ agent=sim status=completed/);
    const list = await runCrew(['list', '--json'], env);
    expect(list.code).toBe(0);
    const runs = JSON.parse(list.out).runs as { id: string; status: string }[];
    expect(runs[0]?.status).toBe('completed');
    const status = await runCrew(['status', runs[0]!.id, '--limit', '1'], env);
    expect(status.code).toBe(0);
    expect(status.out).toMatch(/\[lines 1-1 of 2/);
    const logged = await runCrew(['spawn', '#sim echo into the log'], env);
    expect(logged.code).toBe(0);
    await pollFor('the event in events.log', () =>
      existsSync(join(d.home, 'events.log')) &&
      readFileSync(join(d.home, 'events.log'), 'utf8').includes('into the log')
        ? true
        : undefined,
    );
    const hang = await runCrew(['spawn', '--json', '#sim hang'], env);
    const id = JSON.parse(hang.out).runs[0].id as string;
    expect((await runCrew(['cancel', id], env)).code).toBe(0);
    const again = await runCrew(['cancel', id], env);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/refused \((not_running|not_found)\)/);
    const empty = await runCrew(['spawn', ' '], env);
    expect(empty.code).toBe(1);
    expect(empty.err).toMatch(/empty_task/);
    expect((await runCrew(['frobnicate'], env)).code).toBe(2);
  }, 90_000);

  it('spawn --wait --json prints exactly one JSON document on stdout: the runs and their events', async () => {
    const waited = await runCrew(['spawn', '--wait', '--json', '#sim chunks=2 json only'], env);
    expect(waited.code, waited.err).toBe(0);
    const body = JSON.parse(waited.out) as {
      ok: boolean;
      runs: { id: string }[];
      events: { run_ids: string[]; text: string }[];
    };
    expect(body.ok).toBe(true);
    expect(body.events.flatMap((e) => e.run_ids)).toEqual(body.runs.map((r) => r.id));
    expect(body.events[0]?.text).toMatch(/status=completed/);
  }, 60_000);

  it('exits 3 when no daemon answers; resources and agents work without one', async () => {
    const home = mkdtempSync(join(tmpdir(), 'crew-nodaemon-'));
    try {
      const noDaemon = { CREW_HOME: home, CREW_URL: 'http://127.0.0.1:9' };
      const list = await runCrew(['list'], noDaemon);
      expect(list.code).toBe(3);
      expect(list.err).toMatch(/no Crew daemon answers/);
      const resources = await runCrew(['resources', '--json'], noDaemon);
      expect(resources.code).toBe(0);
      expect(JSON.parse(resources.out)).toMatchObject({
        cap_source: expect.stringMatching(/auto|pinned|fallback/),
      });
      const agents = await runCrew(['agents'], noDaemon);
      expect(agents.code).toBe(0);
      expect(agents.out).toMatch(/sim/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 60_000);

  it('a second daemon on the same CREW_HOME refuses to start, naming the first', async () => {
    const second = await runCrew(['serve', '--port', '0'], { CREW_HOME: d.home });
    expect(second.code).toBe(1);
    expect(second.err).toMatch(
      new RegExp(`another Crew gateway is running on this CREW_HOME \\(pid ${d.proc.pid}`),
    );
  }, 30_000);
});
