import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import { AcpRunner } from '../../src/runners/acp-runner.js';
import type { RunnerEvent } from '../../src/runners/runner.js';
import { isAlive } from '../helpers/sim.js';
import { ensureCli, INSTALL_TIMEOUT_MS } from './real-agent-rig.js';

/**
 * A real agent CLI nobody here wrote: Gemini CLI 0.61 (`gemini --acp`), installed from the npm registry
 * by `scripts/ensure-agent-cli.mjs` into a cache outside the repository, driven by Crew's real AcpRunner.
 *
 * What `gemini --acp` does here (explored by hand with a bare ACP client; the machine reaches only the
 * npm registry, so the model's host does not even resolve):
 * - `initialize` answers in ~2 s (start-up of a ~100 MB bundle that relaunches itself as a child node
 *   with a bigger heap, in its process group; ~350 MB RSS together): protocol version 1, four `authMethods` (oauth-personal, gemini-api-key, vertex-ai,
 *   gateway), `loadSession`, and MCP over http and sse.
 * - With `GEMINI_API_KEY` set (a dummy), `session/new` succeeds (~50 ms) with modes and a model list and
 *   an `available_commands_update`; the `session/prompt` then fails with JSON-RPC error 500
 *   "exception TypeError: fetch failed sending request". Gemini retries the model call 10 times with
 *   exponential backoff (and its auto-model router 4 times more) first, ~283 s in all, so the test's
 *   user settings cap `general.maxAttempts` at 1 and name a model (no router): then the prompt fails
 *   ~100 ms after it is sent. (With network, Google would reject the dummy key instead: also a failed
 *   prompt.)
 * - With no key, no `GOOGLE_*`/`GEMINI_*` variable and an empty HOME, `initialize` still succeeds and
 *   `session/new` answers JSON-RPC error -32000 (ACP's auth_required) "Gemini API key is missing or not
 *   configured.", which Crew turns into "agent "gemini" requires authentication (…)".
 * - On SIGTERM to its process group it exits at once (code 0), child included.
 *
 * Both cases run with HOME, XDG dirs and TMPDIR in a fresh temp directory (Gemini writes `~/.gemini` and
 * error reports under the temp dir), so the developer's own settings and credentials are never read or
 * touched.
 */

/** How long a run may take from start to `ended` (observed here: ~2.5 s). */
const RUN_BOUND_MS = 90_000;

let geminiBin = '';

beforeAll(async () => {
  geminiBin = (await ensureCli('gemini')).acp;
  expect(geminiBin).toMatch(/gemini(\.cmd)?$/);
}, INSTALL_TIMEOUT_MS + 10_000);

/** A temp directory holding the agent's HOME, TMPDIR and working directory; removed after each test. */
const sandboxes: string[] = [];
afterEach(() => {
  for (const dir of sandboxes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Sandbox {
  home: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** The caller's environment without anything that could hand Gemini credentials or settings. */
function sandbox(extraEnv: (home: string) => NodeJS.ProcessEnv = () => ({})): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'crew-gemini-'));
  sandboxes.push(root);
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  const tmp = join(root, 'tmp');
  for (const dir of [home, cwd, tmp]) mkdirSync(dir);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(GOOGLE_|GEMINI_|CLOUD_SHELL$|XDG_)/.test(key)) continue;
    env[key] = value;
  }
  Object.assign(env, {
    HOME: home,
    USERPROFILE: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    TMPDIR: tmp,
    NO_COLOR: '1',
    ...extraEnv(home),
  });
  return { home, cwd, env };
}

function geminiAgent(): AgentDef {
  return {
    name: 'gemini',
    runner: 'acp',
    command: [process.execPath, geminiBin, '--acp'],
    shared: false,
    skills: [],
  };
}

/** Runs one prompt through a fresh AcpRunner; resolves with every event and the time to `ended`. */
async function runOnce(box: Sandbox, prompt: string): Promise<{ events: RunnerEvent[]; ms: number }> {
  const runner = new AcpRunner({
    clock: realClock,
    killGraceMs: 2000,
    requestTimeoutMs: 45_000,
    env: box.env,
  });
  const events: RunnerEvent[] = [];
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no ended within ${RUN_BOUND_MS} ms; events: ${JSON.stringify(events)}`)),
        RUN_BOUND_MS,
      );
      runner.start(
        {
          runId: `gemini-${Date.now()}`,
          agent: geminiAgent(),
          prompt,
          cwd: box.cwd,
          mcpServers: [],
          keep: false,
          shared: false,
        },
        (event) => {
          events.push(event);
          if (event.type === 'ended') resolve();
        },
      );
    });
    return { events, ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
    await runner.close();
  }
}

/**
 * Pids of live processes whose environment names `home` as HOME: the agent, the child it relaunches
 * itself as, and anything either left behind, even outside its process group.
 */
function processesWithHome(home: string): number[] {
  const needle = `\0HOME=${home}\0`;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = `\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}`;
      if (environ.includes(needle) && isAlive(Number(entry))) pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

describe('Gemini CLI over ACP (real binary from the npm registry)', () => {
  it('gets through initialize and session/new with a dummy key, then fails at the model call', async () => {
    const box = sandbox(() => ({ GEMINI_API_KEY: 'crew-test-dummy-key' }));
    mkdirSync(join(box.home, '.gemini'));
    writeFileSync(
      join(box.home, '.gemini', 'settings.json'),
      JSON.stringify({
        general: { maxAttempts: 1, enableAutoUpdate: false, enableAutoUpdateNotification: false },
        model: { name: 'gemini-2.5-flash' },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
      }),
    );

    const { events, ms } = await runOnce(box, 'Reply with the single word: ready.');

    // `started` comes only after initialize and session/new succeeded and the prompt was sent.
    const started = events.find((e) => e.type === 'started');
    expect(started).toMatchObject({ type: 'started', shared: false, pid: expect.any(Number) });
    const ended = events.at(-1);
    expect(ended).toMatchObject({ type: 'ended', status: 'failed' });
    const error = ended?.type === 'ended' ? (ended.error ?? '') : '';
    // Offline: "session/prompt failed: exception TypeError: fetch failed sending request (code 500)".
    expect(error).toMatch(/^session\/prompt failed: .*(fetch failed|API key)/);
    expect(events.filter((e) => e.type === 'ended')).toHaveLength(1);
    expect(ms).toBeLessThan(RUN_BOUND_MS);
    // `ended` comes after the process group is gone; nothing with this HOME may remain.
    if (started?.type === 'started' && started.pid !== undefined) expect(isAlive(started.pid)).toBe(false);
    expect(processesWithHome(box.home)).toEqual([]);
  }, 120_000);

  it('fails with the authentication reason when no key or credentials exist', async () => {
    const box = sandbox();
    expect(readdirSync(box.home)).toEqual([]);
    expect(Object.keys(box.env).filter((k) => /^(GOOGLE_|GEMINI_)/.test(k))).toEqual([]);

    const { events, ms } = await runOnce(box, 'Reply with the single word: ready.');

    // initialize succeeds; session/new answers -32000 "Gemini API key is missing or not configured.",
    // so the run never starts: its one event is `ended`.
    expect(events).toHaveLength(1);
    const [ended] = events;
    expect(ended).toMatchObject({ type: 'ended', status: 'failed' });
    const error = ended?.type === 'ended' ? (ended.error ?? '') : '';
    expect(error).toMatch(/agent "gemini" requires authentication/);
    expect(error).toMatch(/API key is missing/);
    expect(ms).toBeLessThan(RUN_BOUND_MS);
    expect(processesWithHome(box.home)).toEqual([]);
  }, 120_000);
});
