import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { runCrew } from './run-crew.js';

describe('the CLI end to end against a real daemon', () => {
  let d: DaemonProcess;
  let env: NodeJS.ProcessEnv;
  let work: string;
  beforeAll(async () => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'crew-daemon-')));
    work = join(home, 'work');
    mkdirSync(join(work, 'sub'), { recursive: true });
    d = await startDaemonProcess({
      home,
      config: { 'agent.subagent_cwd_allowed_roots': [work], 'agent.subagent_max_depth': 2 },
    });
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
  }, 90_000);

  // Apart from the one above: each runs five or more CLI processes, and one costs 2-5 s while the
  // integration tier loads this 2-core machine (measured in a soak; 0.65 s alone), so together they
  // took 71-90 s of one 90 s budget.
  it('a spawn without --wait reaches events.log; cancel, a second cancel, an empty task and an unknown command exit as documented', async () => {
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

  it('spawn --wait exits 1 when the run failed, 0 when it completed', async () => {
    const failed = await runCrew(['spawn', '--wait', '#sim fail=crash exit=3'], env);
    expect(failed.code, failed.err).toBe(1);
    expect(failed.err).toMatch(/1 of 1 runs did not complete: \S+ failed/);
    const json = await runCrew(['spawn', '--wait', '--json', '#sim fail=error'], env);
    expect(json.code).toBe(1);
  }, 60_000);

  it('--max-turns abc is a usage error that says what was given; a relative --cwd resolves against the caller', async () => {
    const bad = await runCrew(['spawn', '--max-turns', 'abc', 'x'], env);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--max-turns takes an integer from 0 to 200, got "abc"/);
    const relative = await runCrew(['spawn', '--wait', '--cwd', 'sub', '#sim info'], env, 60_000, work);
    expect(relative.code, relative.err).toBe(0);
    expect(relative.out).toContain(join(work, 'sub'));
  }, 60_000);

  it('list shows top-level and nested running apart, against the cap', async () => {
    const parent = await runCrew(
      // Long enough to outlast two CLI starts on a loaded machine (seconds each); cancelled at the end.
      ['spawn', '--json', '#sim spawn="#sim sleep=120s n1" spawn="#sim sleep=120s n2" wait'],
      env,
    );
    const id = JSON.parse(parent.out).runs[0].id as string;
    const listed = await pollFor('two nested runs running', async () => {
      const list = await runCrew(['list', '--json'], env);
      const body = JSON.parse(list.out);
      return body.running_nested === 2 ? body : undefined;
    });
    expect(listed).toMatchObject({ running_top_level: 1, running_nested: 2, running: 3 });
    const human = await runCrew(['list'], env);
    expect(human.out).toMatch(/^running 1 \(\+2 nested\) at cap \d+ · queued 0/);
    await runCrew(['cancel', id], env);
  }, 90_000);

  it('the daemon keeps CREW_HOME 0700 and crew.db, -wal and -shm 0600; config set says when it applies', async () => {
    expect(statSync(d.home).mode & 0o777).toBe(0o700);
    for (const file of ['crew.db', 'crew.db-wal', 'crew.db-shm']) {
      expect(statSync(join(d.home, file)).mode & 0o777, file).toBe(0o600);
    }
    const set = await runCrew(['config', 'set', 'agent.subagent_max_queued', '16'], env);
    expect(set.code).toBe(0);
    expect(set.err).toMatch(
      new RegExp(`running daemon \\(pid ${d.proc.pid}.*applies this at its next start`),
    );
  }, 30_000);

  it('a corrupted crew.db or a config.json that is a directory: the daemon names the file and the remedy', async () => {
    const broken = mkdtempSync(join(tmpdir(), 'crew-broken-'));
    try {
      writeFileSync(join(broken, 'crew.db'), 'this is not a database, it is text '.repeat(200));
      const db = await runCrew(['serve', '--port', '0'], { CREW_HOME: broken }, 30_000);
      expect(db.code).toBe(1);
      expect(db.err).toContain(join(broken, 'crew.db'));
      expect(db.err).toMatch(/file is not a database.*move it aside.*Crew starts with an empty store/);
      rmSync(join(broken, 'crew.db'));
      mkdirSync(join(broken, 'config.json'));
      const config = await runCrew(['serve', '--port', '0'], { CREW_HOME: broken }, 30_000);
      expect(config.code).toBe(1);
      expect(config.err).toMatch(/config\.json cannot be read \(EISDIR\).*move it aside.*defaults/);
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  }, 60_000);

  it('a CREW_HOME that exists with a wider mode is made 0700, and the daemon says so', async () => {
    const open = mkdtempSync(join(tmpdir(), 'crew-open-'));
    chmodSync(open, 0o755);
    const daemon = await startDaemonProcess({ home: open });
    try {
      expect(statSync(open).mode & 0o777).toBe(0o700);
      expect(daemon.stderr()).toMatch(/made .* private \(mode 0755 → 0700\)/);
    } finally {
      await daemon.stop();
      daemon.cleanup();
    }
  }, 30_000);

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
