#!/usr/bin/env node
/**
 * Makes sure a pinned copy of a real agent CLI is installed in a cache directory outside the repository,
 * and prints the absolute paths of its bins as JSON on stdout (npm's own output goes to stderr). The tests
 * in `test/agents-real/` and `bench/agents-real.bench.ts` run it before driving the CLI through Crew.
 *
 * Pinned versions (exact, so a registry release never changes what the tests run), all run on Node 20:
 * - `claude`: `@agentclientprotocol/claude-agent-acp@0.101.0` and `@anthropic-ai/claude-code@2.1.332`. Both
 *   declare `engines.node >= 22` and npm warns (EBADENGINE) on Node 20, yet both complete turns on Node 20;
 *   the adapter runs Claude Code through `@anthropic-ai/claude-agent-sdk`'s native binary.
 * - `codex`: `@zed-industries/codex-acp@0.16.0` and `@openai/codex@0.171.0` (native binaries from platform
 *   packages; the JS shims only pick and exec them).
 * - `gemini`: `@google/gemini-cli@0.61.0`.
 * - `opencode`: `opencode-ai@1.18.33` (a native binary from a platform package).
 *
 * - Cache: `$CREW_TEST_CACHE/<name>`, default `~/.cache/crew-test/<name>` (`$XDG_CACHE_HOME` honoured).
 * - Idempotent: a finished install leaves a marker naming the pinned specs; later calls only check it.
 * - Parallel callers (vitest workers, two checkouts) take a lock directory next to the install, so npm
 *   runs once per CLI; the others wait. A lock whose owner died (or older than the install timeout) is
 *   taken over.
 * - Needs only the npm registry: plain `npm install --prefix <cache> --ignore-scripts`. No package here
 *   needs its install script to run over ACP: Gemini's are optional terminal/keychain helpers, opencode's
 *   postinstall only links the platform binary, which `binPath` finds itself.
 *
 * Usage: `node scripts/ensure-agent-cli.mjs NAME` → prints `{"acp": "...", "cli": "..."}`; exit 1 with the
 * reason on failure. As a module: `await ensureAgentCli(name)` → the same object.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What to install per CLI: the npm specs, and where each bin lives inside the install (`acp`: the ACP
 * agent Crew drives; `cli`: the CLI's own one-shot command, for benchmarks and the parent test).
 */
export const AGENT_CLIS = {
  claude: {
    specs: ['@agentclientprotocol/claude-agent-acp@0.101.0', '@anthropic-ai/claude-code@2.1.332'],
    bins: {
      acp: ['node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js'],
      // The native binary from the platform package: with --ignore-scripts the package's own bin is a
      // placeholder that only says the postinstall did not run.
      cli: [`node_modules/@anthropic-ai/claude-code-${platformSuffix()}/claude`],
    },
  },
  codex: {
    specs: ['@zed-industries/codex-acp@0.16.0', '@openai/codex@0.171.0'],
    bins: {
      acp: [
        `node_modules/@zed-industries/codex-acp-${platformSuffix()}/bin/codex-acp`,
        'node_modules/.bin/codex-acp',
      ],
      cli: ['node_modules/.bin/codex'],
    },
  },
  gemini: {
    specs: ['@google/gemini-cli@0.61.0'],
    bins: { acp: ['node_modules/.bin/gemini'], cli: ['node_modules/.bin/gemini'] },
  },
  opencode: {
    specs: ['opencode-ai@1.18.33'],
    bins: {
      acp: [`node_modules/opencode-${opencodePlatform()}/bin/opencode`],
      cli: [`node_modules/opencode-${opencodePlatform()}/bin/opencode`],
    },
  },
};

const INSTALL_TIMEOUT_MS = 15 * 60_000;
const LOCK_POLL_MS = 500;

function platformSuffix() {
  const os = process.platform === 'win32' ? 'win32' : process.platform;
  return `${os}-${process.arch}`;
}

function opencodePlatform() {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  return `${os}-${process.arch}`;
}

/** The cache root every CLI is installed under. */
export function cacheRoot(env = process.env) {
  return resolve(env.CREW_TEST_CACHE || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'crew-test'));
}

/** The cache directory one CLI is installed into. */
export function agentCacheDir(name, env = process.env) {
  return join(cacheRoot(env), name);
}

function definition(name) {
  const def = AGENT_CLIS[name];
  if (!def)
    throw new Error(`Expected an agent CLI name (${Object.keys(AGENT_CLIS).join(', ')}), got "${name}"`);
  return def;
}

/** The bins when a finished install of the pinned specs is there, else undefined. */
function installedBins(name, dir) {
  const def = definition(name);
  try {
    const marker = readFileSync(join(dir, '.crew-installed'), 'utf8').trim();
    if (marker !== def.specs.join(' ')) return undefined;
    const bins = {};
    for (const [role, candidates] of Object.entries(def.bins)) {
      const found = candidates.map((rel) => join(dir, rel)).find((path) => existsSync(path));
      if (!found) return undefined;
      bins[role] = found;
    }
    return bins;
  } catch {
    return undefined; // Not installed yet, or half installed: install (again).
  }
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

function install(name, dir) {
  const def = definition(name);
  const { file, args } = npmCommand();
  const started = Date.now();
  process.stderr.write(`ensure-agent-cli: installing ${def.specs.join(' ')} into ${dir}\n`);
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
      '--engine-strict=false',
      ...def.specs,
    ],
    { stdio: ['ignore', process.stderr, process.stderr], env: npmEnv(), timeout: INSTALL_TIMEOUT_MS },
  );
  if (result.error) throw new Error(`npm install for ${name} could not run: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(
      `npm install for ${name} exited with ${result.status ?? result.signal}; see its output above`,
    );
  }
  writeFileSync(join(dir, '.crew-installed'), `${def.specs.join(' ')}\n`);
  process.stderr.write(
    `ensure-agent-cli: installed ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
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

/** Installs agent CLI `name` unless a finished install is there; resolves with its bins' paths. */
export async function ensureAgentCli(name, dir = agentCacheDir(name)) {
  const ready = installedBins(name, dir);
  if (ready) return ready;
  mkdirSync(dir, { recursive: true });
  const lock = `${dir}.lock`;
  const deadline = Date.now() + 2 * INSTALL_TIMEOUT_MS;
  for (;;) {
    try {
      mkdirSync(lock); // Atomic: exactly one caller creates it.
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const done = installedBins(name, dir);
      if (done) return done;
      if (isLockStale(lock)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`gave up waiting for the install lock ${lock}`);
      else await sleep(LOCK_POLL_MS);
      continue;
    }
    try {
      writeFileSync(join(lock, 'owner.json'), JSON.stringify({ pid: process.pid, since: Date.now() }));
      // Another caller may have finished between our first look and taking the lock.
      if (!installedBins(name, dir)) install(name, dir);
      const bins = installedBins(name, dir);
      if (!bins) throw new Error(`the install in ${dir} lacks the expected bins of ${name}`);
      return bins;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const name = process.argv[2] ?? '';
    process.stdout.write(`${JSON.stringify(await ensureAgentCli(name))}\n`);
  } catch (error) {
    process.stderr.write(`ensure-agent-cli: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
