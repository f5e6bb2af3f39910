import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { isAlive } from '../../src/runners/process-group.js';
import { type SpawnedProcess, Spawner } from '../../src/runners/spawner.js';
import {
  buildNativeSpawner,
  KEPT_BUILDS,
  nativeSpawnerPath,
  usableNativeSpawner,
} from '../../src/runners/spawner-native.js';

/**
 * The native helper (issue 32 §4): built once per machine from its C source, spoken to in frames. What
 * the Node helper's tests (spawner.test.ts, run for both) do not reach: frames split across reads, exits
 * by signal, hostile argv, the build's cache and its fallbacks.
 */

const scratch = mkdtempSync(join(tmpdir(), 'crew-native-spawner-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const spawners: Spawner[] = [];
afterEach(async () => {
  for (const spawner of spawners.splice(0)) await spawner.close();
});

async function nativeSpawner(): Promise<Spawner> {
  const spawner = new Spawner({ helper: 'native' });
  spawners.push(spawner);
  expect(await spawner.prepare()).toBe(true);
  return spawner;
}

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

async function collect(proc: SpawnedProcess): Promise<{ out: Buffer; err: Buffer }> {
  const read = async (stream: NodeJS.ReadableStream) => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const [out, err] = await Promise.all([read(proc.stdout), read(proc.stderr)]);
  return { out, err };
}

describe('the native spawner', () => {
  it('streams output larger than one read and one frame, on both pipes, in order', async () => {
    const spawner = await nativeSpawner();
    const script = 'i=0; while [ $i -lt 20000 ]; do echo "line $i"; i=$((i+1)); done; echo done >&2';
    const proc = spawner.spawn(['sh', '-c', script], { cwd: scratch, env });
    const [{ out, err }, exit] = await Promise.all([collect(proc), proc.exited]);
    expect(exit).toEqual({ code: 0, signal: null });
    const lines = out.toString().trimEnd().split('\n');
    expect(lines).toHaveLength(20000);
    expect(lines[0]).toBe('line 0');
    expect(lines[19999]).toBe('line 19999');
    expect(out.length).toBeGreaterThan(200_000);
    expect(err.toString()).toBe('done\n');
    expect(spawner.helperKind).toBe('native');
  });

  it('reports an exit by signal by its name, and stdin is /dev/null', async () => {
    const spawner = await nativeSpawner();
    const killed = spawner.spawn(['sh', '-c', 'kill -TERM $$'], { cwd: scratch, env });
    expect(await killed.exited).toEqual({ code: null, signal: 'SIGTERM' });
    const cat = spawner.spawn(['cat'], { cwd: scratch, env });
    const [{ out }, exit] = await Promise.all([collect(cat), cat.exited]);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(out.length).toBe(0);
  });

  it('gives the process exactly the environment it was handed, its own session, and its argv as sent', async () => {
    const spawner = await nativeSpawner();
    const proc = spawner.spawn(
      [
        'sh',
        '-c',
        'env | sort; ps -o sid= -p $$; echo "pid $$"; printf "[%s]" "$@"',
        'x',
        'a b',
        '',
        '$HOME',
      ],
      {
        cwd: scratch,
        env: { ...env, CREW_ONLY: 'one' },
      },
    );
    const [{ out }, started] = await Promise.all([collect(proc), proc.started]);
    const text = out.toString();
    const vars = text.split('\n').filter((line) => /^[A-Z_]+=/.test(line));
    // sh adds PWD, SHLVL and _ itself; nothing else came from the daemon.
    expect(vars.filter((line) => !/^(PWD|SHLVL|_)=/.test(line))).toEqual([
      `CREW_ONLY=one`,
      `PATH=${env.PATH}`,
    ]);
    expect(text).toContain(`pid ${started.pid}`);
    // Its own session: the session id is its own pid (setsid).
    expect(text).toMatch(new RegExp(`^\\s*${started.pid}$`, 'm'));
    expect(text).toContain('[a b][][$HOME]');
    expect(started.startTime).toBeGreaterThan(0);
  });

  it('refuses, in words, what no process can be given or started', async () => {
    const spawner = await nativeSpawner();
    const nul = spawner.spawn(['echo', 'a\0b'], { cwd: scratch, env });
    await expect(nul.started).rejects.toThrow(/an argument contains a NUL byte/);
    const nulEnv = spawner.spawn(['true'], { cwd: scratch, env: { ...env, BAD: 'x\0y' } });
    await expect(nulEnv.started).rejects.toThrow(/the environment contains a NUL byte/);
    const missing = spawner.spawn(['no-such-binary-native'], { cwd: scratch, env });
    await expect(missing.started).rejects.toThrow(/not found on PATH or not executable/);
    const noDir = spawner.spawn(['true'], { cwd: join(scratch, 'gone'), env });
    await expect(noDir.started).rejects.toThrow(/the working directory .*gone does not exist/);
    const notExec = spawner.spawn(['/etc/hostname'], { cwd: scratch, env });
    await expect(notExec.started).rejects.toThrow(/not found on PATH or not executable/);
    expect(await notExec.exited).toEqual({ code: null, signal: null });
    // An argument longer than the kernel takes (128 KiB): its reason, not "not found".
    const long = spawner.spawn(['echo', 'x'.repeat(200_000)], { cwd: scratch, env });
    await expect(long.started).rejects.toThrow(/cannot start "echo": Argument list too long/);
    // The helper is still there and serving after each refusal.
    const ok = spawner.spawn(['true'], { cwd: scratch, env });
    expect(await ok.exited).toEqual({ code: 0, signal: null });
  });

  it('a helper killed under its runs ends each of them, and the next spawn starts a new helper', async () => {
    const spawner = await nativeSpawner();
    const held = spawner.spawn(['sleep', '30'], { cwd: scratch, env });
    const { pid } = await held.started;
    const first = spawner.pid as number;
    process.kill(first, 'SIGKILL');
    expect(await held.exited).toEqual({ code: null, signal: null });
    // Its run is not the helper's to end: it is still there (its cell would end it), so end it here.
    expect(isAlive(pid)).toBe(true);
    process.kill(-pid, 'SIGKILL');
    const next = spawner.spawn(['true'], { cwd: scratch, env });
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expect(spawner.pid).not.toBe(first);
  });
});

describe('building the native spawner', () => {
  it('is built once per path, to a private name then renamed, and a second build reuses it', async () => {
    const dir = join(scratch, 'cache-once');
    const path = nativeSpawnerPath(dir);
    const [a, b] = await Promise.all([buildNativeSpawner(path), buildNativeSpawner(path)]);
    expect([a, b]).toEqual([true, true]);
    expect(readdirSync(dir)).toEqual([path.slice(dir.length + 1)]);
    expect(await buildNativeSpawner(path)).toBe(true);
  });

  it('keeps the newest builds of other versions to a bound, and leaves files that are not builds', async () => {
    const dir = join(scratch, 'cache-bound');
    mkdirSync(dir, { recursive: true });
    const older = Array.from({ length: 6 }, (_, i) => join(dir, `crew-spawner-${String(i).repeat(16)}`));
    older.forEach((file, i) => {
      writeFileSync(file, 'an older build');
      utimesSync(file, 1_000 + i, 1_000 + i);
    });
    writeFileSync(join(dir, 'notes.txt'), 'not a build');
    const path = nativeSpawnerPath(dir);
    expect(await buildNativeSpawner(path)).toBe(true);
    // This build and the three newest others (KEPT_BUILDS = 4 in all).
    expect(KEPT_BUILDS).toBe(4);
    expect(readdirSync(dir).sort()).toEqual(
      [path, ...older.slice(3), join(dir, 'notes.txt')].map((file) => file.slice(dir.length + 1)).sort(),
    );
  });

  it('a binary others may write, or in a directory they may write, is not used', () => {
    const dir = join(scratch, 'cache-writable');
    const path = nativeSpawnerPath(dir);
    return buildNativeSpawner(path).then((built) => {
      expect(built).toBe(true);
      const copy = join(dir, 'copy');
      copyFileSync(path, copy);
      chmodSync(copy, 0o777);
      expect(usableNativeSpawner(copy)).toBe(false);
      chmodSync(copy, 0o755);
      expect(usableNativeSpawner(copy)).toBe(true);
      // Nor one in a directory others may write (another file could be put in its place).
      chmodSync(dir, 0o777);
      expect(usableNativeSpawner(copy)).toBe(false);
      chmodSync(dir, 0o700);
      expect(usableNativeSpawner(copy)).toBe(true);
    });
  });

  it('without a working compiler nothing is built and runs start from the Node helper', async () => {
    const dir = join(scratch, 'cache-no-cc');
    const saved = process.env.CC;
    process.env.CC = '/bin/false';
    try {
      const spawner = new Spawner({ cacheDir: dir });
      spawners.push(spawner);
      expect(await spawner.prepare()).toBe(false);
      expect(readdirSync(dir)).toEqual([]);
      expect(spawner.status()).toEqual({ helper: 'node', reason: '/bin/false failed (exit 1)' });
      // No compiler at all: said so.
      process.env.CC = join(dir, 'no-such-cc');
      expect(await spawner.prepare()).toBe(false);
      expect(spawner.status()).toEqual({
        helper: 'node',
        reason: `no C compiler (${join(dir, 'no-such-cc')} could not be started)`,
      });
      const proc = spawner.spawn(['true'], { cwd: scratch, env });
      expect(await proc.exited).toEqual({ code: 0, signal: null });
      expect(spawner.helperKind).toBe('node');
    } finally {
      if (saved === undefined) delete process.env.CC;
      else process.env.CC = saved;
    }
  });

  it('a Node helper holding no run gives way to the native one once it is built', async () => {
    const dir = join(scratch, 'cache-switch');
    const spawner = new Spawner({ cacheDir: dir });
    spawners.push(spawner);
    const before = spawner.spawn(['true'], { cwd: scratch, env });
    expect(await before.exited).toEqual({ code: 0, signal: null });
    expect(spawner.helperKind).toBe('node');
    expect(spawner.status()).toEqual({ helper: 'node', reason: 'the C helper has not been built yet' });
    const nodePid = spawner.pid as number;
    const building = spawner.prepare();
    expect(spawner.status()).toEqual({ helper: 'node', reason: 'the C helper is being built' });
    expect(await building).toBe(true);
    expect(spawner.status().helper).toBe('native');
    const after = spawner.spawn(['true'], { cwd: scratch, env });
    expect(await after.exited).toEqual({ code: 0, signal: null });
    expect(spawner.helperKind).toBe('native');
    await expect.poll(() => isAlive(nodePid)).toBe(false);
  });
});
