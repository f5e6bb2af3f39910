#!/usr/bin/env node
/**
 * Makes sure a copy of Gemini CLI (`@google/gemini-cli@0.61`) is installed in a cache directory outside
 * the repository, and prints the path of its `gemini` bin on stdout (npm's own output goes to stderr).
 * The test in `test/agents-real/` runs it before driving `gemini --acp` with Crew's ACP runner.
 *
 * - Cache: `$CREW_TEST_CACHE/gemini`, default `~/.cache/crew-test/gemini` (`$XDG_CACHE_HOME` honoured).
 * - Idempotent: a finished install leaves a marker naming the version; later calls only check it.
 * - Parallel callers (vitest workers, two checkouts) take a lock directory next to the install, so npm
 *   runs once; the others wait for it. A lock whose owner died (or that is older than the install
 *   timeout) is taken over.
 * - Needs only the npm registry: plain `npm install --prefix <cache>`. `--ignore-scripts` because the
 *   only packages with install scripts are Gemini CLI's optional terminal and keychain helpers
 *   (node-pty, keytar), which `--acp` does not use and whose scripts would fetch prebuilt binaries from
 *   elsewhere or compile with node-gyp.
 *
 * Usage: `node scripts/ensure-gemini.mjs` → prints the bin path; exit 1 with the reason on failure.
 * As a module: `await ensureGemini()` → the bin path.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const GEMINI_SPEC = '@google/gemini-cli@0.61';
const VERSION_PATTERN = /^0\.61\./;
const INSTALL_TIMEOUT_MS = 10 * 60_000;
const LOCK_POLL_MS = 500;

/** The cache directory the CLI is installed into. */
export function geminiCacheDir(env = process.env) {
  const root = env.CREW_TEST_CACHE || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'crew-test');
  return resolve(root, 'gemini');
}

/** The installed bin's path when a finished install of the right version is there, else undefined. */
function installedBin(dir) {
  const bin = join(dir, 'node_modules', '.bin', process.platform === 'win32' ? 'gemini.cmd' : 'gemini');
  try {
    const marker = readFileSync(join(dir, '.crew-installed'), 'utf8').trim();
    const pkg = JSON.parse(
      readFileSync(join(dir, 'node_modules', '@google', 'gemini-cli', 'package.json'), 'utf8'),
    );
    if (marker === pkg.version && VERSION_PATTERN.test(pkg.version) && existsSync(bin)) return bin;
  } catch {
    // Not installed yet, or half installed: install (again).
  }
  return undefined;
}

/** How to run npm without a shell: the npm next to this node when there is one, else `npm` on PATH. */
function npmCommand() {
  const candidates = [
    process.env.npm_execpath,
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
    join(dirname(process.execPath), 'node_modules', 'npm', 'bin', 'npm-cli.js'),
  ];
  const cli = candidates.find((path) => path?.endsWith('npm-cli.js') && existsSync(path));
  if (cli) return { file: process.execPath, args: [cli] };
  return { file: process.platform === 'win32' ? 'npm.cmd' : 'npm', args: [] };
}

/** The environment for npm: the caller's, less the settings an enclosing `npm test` exports about itself. */
function npmEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^npm_(config_(prefix|local_prefix|global_prefix)|package_|lifecycle_)/i.test(key)) delete env[key];
  }
  return env;
}

function install(dir) {
  const { file, args } = npmCommand();
  const started = Date.now();
  process.stderr.write(`ensure-gemini: installing ${GEMINI_SPEC} into ${dir}\n`);
  const result = spawnSync(
    file,
    [
      ...args,
      'install',
      '--prefix',
      dir,
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--loglevel=error',
      GEMINI_SPEC,
    ],
    { stdio: ['ignore', process.stderr, process.stderr], env: npmEnv(), timeout: INSTALL_TIMEOUT_MS },
  );
  if (result.error) throw new Error(`npm install ${GEMINI_SPEC} could not run: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(
      `npm install ${GEMINI_SPEC} exited with ${result.status ?? result.signal}; see its output above`,
    );
  }
  const pkg = JSON.parse(
    readFileSync(join(dir, 'node_modules', '@google', 'gemini-cli', 'package.json'), 'utf8'),
  );
  if (!VERSION_PATTERN.test(pkg.version))
    throw new Error(`npm installed gemini-cli ${pkg.version}, not 0.61.x`);
  writeFileSync(join(dir, '.crew-installed'), `${pkg.version}\n`);
  process.stderr.write(
    `ensure-gemini: installed ${pkg.version} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
}

function isProcessAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Whether the lock's owner is gone: its pid is dead, or the lock outlived any install. */
function isLockStale(lock) {
  try {
    const owner = JSON.parse(readFileSync(join(lock, 'owner.json'), 'utf8'));
    return !isProcessAlive(owner.pid) || Date.now() - owner.since > INSTALL_TIMEOUT_MS;
  } catch {
    // The owner file is written just after the directory; give a fresh lock a moment to get it.
    try {
      return Date.now() - statSync(lock).mtimeMs > 30_000;
    } catch {
      return false; // The lock went away meanwhile: just try again.
    }
  }
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** Installs Gemini CLI unless a finished install is there; resolves with its bin path. */
export async function ensureGemini(dir = geminiCacheDir()) {
  const ready = installedBin(dir);
  if (ready) return ready;
  mkdirSync(dir, { recursive: true });
  const lock = `${dir}.lock`;
  const deadline = Date.now() + 2 * INSTALL_TIMEOUT_MS;
  for (;;) {
    try {
      mkdirSync(lock); // Atomic: exactly one caller creates it.
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const done = installedBin(dir);
      if (done) return done;
      if (isLockStale(lock)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`gave up waiting for the install lock ${lock}`);
      else await sleep(LOCK_POLL_MS);
      continue;
    }
    try {
      writeFileSync(join(lock, 'owner.json'), JSON.stringify({ pid: process.pid, since: Date.now() }));
      // Another caller may have finished between our first look and taking the lock.
      if (!installedBin(dir)) install(dir);
      const bin = installedBin(dir);
      if (!bin) throw new Error(`the install in ${dir} has no gemini bin`);
      return bin;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${await ensureGemini()}\n`);
  } catch (error) {
    process.stderr.write(`ensure-gemini: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
