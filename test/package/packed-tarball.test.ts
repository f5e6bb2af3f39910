import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} timed out:\n${err}`));
    }, options.timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

/**
 * The published shape (issue 32 §3): `npm pack` (its `prepare` builds dist/ when stale, as on publish),
 * installed globally into a scratch prefix, then `crew --version` and `crew demo` from that prefix. No
 * registry is reachable here, so the tarball's dependencies come from the repository's own node_modules
 * (linked into the unpacked package, which npm then installs with --offline); everything else, files
 * list, bin links and their modes, dist/ layout, is what a user gets.
 */
describe('the packed tarball, installed into a scratch prefix', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'crew-pack-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('holds dist/, LICENSE and README (no sources, no tests), installs, and runs crew demo', async () => {
    const packed = await run('npm', ['pack', '--json', '--pack-destination', scratch], {
      cwd: ROOT,
      timeoutMs: 240_000,
    });
    expect(packed.code, packed.err).toBe(0);
    const [manifest] = JSON.parse(packed.out) as { filename: string; files: { path: string }[] }[];
    const files = (manifest?.files ?? []).map((f) => f.path);
    expect(files).toEqual(
      expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/cli/main.js']),
    );
    expect(files).toEqual(expect.arrayContaining(['dist/sim/main.js', 'dist/fake-provider/main.js']));
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);

    const unpacked = join(scratch, 'unpacked');
    mkdirSync(unpacked);
    const untar = await run('tar', ['xzf', join(scratch, manifest?.filename ?? ''), '-C', unpacked], {
      cwd: scratch,
      timeoutMs: 60_000,
    });
    expect(untar.code, untar.err).toBe(0);
    symlinkSync(join(ROOT, 'node_modules'), join(unpacked, 'package', 'node_modules'));
    const prefix = join(scratch, 'prefix');
    const installed = await run(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        '--offline',
        '--no-audit',
        '--no-fund',
        join(unpacked, 'package'),
      ],
      { cwd: scratch, timeoutMs: 120_000 },
    );
    expect(installed.code, installed.err).toBe(0);

    const crew = join(prefix, 'bin', 'crew');
    const version = await run(crew, ['--version'], { cwd: scratch, timeoutMs: 30_000 });
    expect(version).toMatchObject({ code: 0, out: `${pkg.version}\n` });
    const demo = await run(crew, ['demo'], { cwd: scratch, timeoutMs: 180_000 });
    expect(demo.code, demo.err).toBe(0);
    expect(demo.out).toMatch(/\[Subagent completion digest\] batch=\S+ members=12/);
    expect(demo.out).toMatch(/completion events delivered for \d+ runs/);
    const sim = await run(join(prefix, 'bin', 'crew-sim-agent'), ['--once', '#sim echo packed'], {
      cwd: scratch,
      timeoutMs: 30_000,
    });
    expect(sim.code, sim.err).toBe(0);
    expect(sim.out).toContain('packed');
  }, 600_000);
});
