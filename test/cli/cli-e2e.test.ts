import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crewCommand, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

function crew(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<{ code: number | null; out: string; err: string }> {
  const [node, argv] = crewCommand(args);
  return new Promise((resolve, reject) => {
    const proc = spawn(node, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    proc.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`crew ${args.join(' ')} timed out: ${err}`));
    }, timeoutMs);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

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
    const waited = await crew(['spawn', '--wait', '#sim chunks=2 hello from the cli'], env);
    expect(waited.code, waited.err).toBe(0);
    expect(waited.out).toMatch(/\[Subagent completion event\] id=\S+ agent=sim status=completed/);
    const list = await crew(['list', '--json'], env);
    expect(list.code).toBe(0);
    const runs = JSON.parse(list.out).runs as { id: string; status: string }[];
    expect(runs[0]?.status).toBe('completed');
    const status = await crew(['status', runs[0]!.id, '--limit', '1'], env);
    expect(status.code).toBe(0);
    expect(status.out).toMatch(/\[lines 1-1 of 2/);
    const logged = await crew(['spawn', '#sim echo into the log'], env);
    expect(logged.code).toBe(0);
    await pollFor('the event in events.log', () =>
      existsSync(join(d.home, 'events.log')) &&
      readFileSync(join(d.home, 'events.log'), 'utf8').includes('into the log')
        ? true
        : undefined,
    );
    const hang = await crew(['spawn', '--json', '#sim hang'], env);
    const id = JSON.parse(hang.out).runs[0].id as string;
    expect((await crew(['cancel', id], env)).code).toBe(0);
    const again = await crew(['cancel', id], env);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/refused \((not_running|not_found)\)/);
    const empty = await crew(['spawn', ' '], env);
    expect(empty.code).toBe(1);
    expect(empty.err).toMatch(/empty_task/);
    expect((await crew(['frobnicate'], env)).code).toBe(2);
  }, 90_000);

  it('exits 3 when no daemon answers; resources and agents work without one', async () => {
    const home = mkdtempSync(join(tmpdir(), 'crew-nodaemon-'));
    try {
      const noDaemon = { CREW_HOME: home, CREW_URL: 'http://127.0.0.1:9' };
      const list = await crew(['list'], noDaemon);
      expect(list.code).toBe(3);
      expect(list.err).toMatch(/no Crew daemon answers/);
      const resources = await crew(['resources', '--json'], noDaemon);
      expect(resources.code).toBe(0);
      expect(JSON.parse(resources.out)).toMatchObject({
        cap_source: expect.stringMatching(/auto|pinned|fallback/),
      });
      const agents = await crew(['agents'], noDaemon);
      expect(agents.code).toBe(0);
      expect(agents.out).toMatch(/sim/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 60_000);

  it('a second daemon on the same CREW_HOME refuses to start, naming the first', async () => {
    const second = await crew(['serve', '--port', '0'], { CREW_HOME: d.home });
    expect(second.code).toBe(1);
    expect(second.err).toMatch(
      new RegExp(`another Crew gateway is running on this CREW_HOME \\(pid ${d.proc.pid}`),
    );
  }, 30_000);
});

describe('crew demo', () => {
  it('runs to completion on its own temporary CREW_HOME and exits 0', async () => {
    const started = Date.now();
    const demo = await crew(['demo'], {}, 120_000);
    expect(demo.code, demo.err).toBe(0);
    expect(demo.out).toMatch(/cap \d+ \((auto|pinned|fallback)\): mem_term/);
    expect(demo.out).toMatch(/refused — queue_full/);
    expect(demo.out).toMatch(/refused depth_exceeded/);
    expect(demo.out).toMatch(/\[Subagent completion digest\] batch=\S+ members=12/);
    expect(Date.now() - started).toBeLessThan(120_000);
  }, 130_000);
});
