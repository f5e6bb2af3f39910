import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeProvider } from '../../src/fake-provider/fake-provider.js';
import { directiveScript, type ModelRequest } from '../../src/fake-provider/script.js';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { bundledCommand } from '../helpers/test-bundle.js';
import { ensureCli, INSTALL_TIMEOUT_MS } from './real-agent-rig.js';

/**
 * A real parent: `claude -p` (Claude Code 2.1.332) with Crew added the documented way,
 * `claude mcp add crew -- crew mcp`, in a temp HOME, on the scripted provider. The two cases share that
 * set-up (one provider, one `crew serve`, one `claude mcp add`) and run in turn, each counting only the
 * runs it started.
 *
 * 1. The script makes it call `spawn_sub_agents` with two simulator tasks; the digest Crew returns must
 *    reach the model as the tool result, and `claude -p` must end with the script's closing text.
 * 2. Issue 29, "Done when": a real parent CLI restarted mid-wave gets the wave's digest after it comes back.
 *    `claude -p` starts a wave in the background with `spawn_run tasks=[...]`; while its members run, the
 *    whole process group (Claude Code and its `crew mcp` bridge) is SIGKILLed. The members finish with no
 *    parent connected. A new `claude -p` in the same project calls `spawn_wait`: its model receives the
 *    digest in the tool result, once, and the wave's runs are delivered.
 */

const run = promisify(execFile);
let claudeBin = '';
let provider: FakeProvider;
let daemon: DaemonProcess;
let root = '';
let work = '';
let env: NodeJS.ProcessEnv = {};

const calledSpawnRun = (request: ModelRequest) => request.calledTools.some((t) => t.endsWith('spawn_run'));

/**
 * The `#fake` directives of the prompt, except that once the wave is started the model never answers: the
 * first parent of case 2 is in a turn when it is killed, as a person's session would be.
 */
function script(request: ModelRequest) {
  if (calledSpawnRun(request) && request.userTexts.some((t) => t.includes('START-WAVE')))
    return { kind: 'hang' as const };
  return directiveScript('noted')(request);
}

beforeAll(async () => {
  claudeBin = (await ensureCli('claude')).cli;
  provider = await startFakeProvider();
  provider.setScript(script);
  root = mkdtempSync(join(tmpdir(), 'crew-claude-parent-'));
  const home = join(root, 'home');
  const bin = join(root, 'bin');
  work = join(root, 'work');
  for (const dir of [home, bin, work, join(root, 'crew')]) mkdirSync(dir, { recursive: true });
  // `crew` on the PATH Claude Code uses, as after `npm link`: the bundled CLI.
  const [node, main] = bundledCommand('cli/main');
  writeFileSync(join(bin, 'crew'), `#!/bin/sh\nexec "${node}" "${main}" "$@"\n`);
  chmodSync(join(bin, 'crew'), 0o755);
  daemon = await startDaemonProcess({ home: join(root, 'crew') });
  env = {
    ...process.env,
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    CREW_HOME: daemon.home,
    CREW_URL: daemon.url,
    ANTHROPIC_BASE_URL: provider.url,
    ANTHROPIC_API_KEY: 'crew-test-dummy-key',
    IS_SANDBOX: '1',
    ENABLE_TOOL_SEARCH: 'false',
    CLAUDE_CODE_MAX_RETRIES: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    NO_COLOR: '1',
  };
  const added = await run(claudeBin, ['mcp', 'add', 'crew', '--', 'crew', 'mcp'], {
    env,
    cwd: work,
    timeout: 60_000,
  });
  expect(added.stdout + added.stderr).toMatch(/crew/);
}, INSTALL_TIMEOUT_MS + 60_000);

afterAll(async () => {
  await daemon?.stop();
  await provider?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('claude -p as a real parent of Crew', () => {
  it('calls spawn_sub_agents through `crew mcp` and gets the digest back', async () => {
    const args = JSON.stringify({
      agents: [
        { agent_or_mode: 'sim', prompt: '#sim echo first child reporting' },
        { agent_or_mode: 'sim', prompt: '#sim echo second child reporting' },
      ],
    });
    const { stdout } = await run(
      claudeBin,
      [
        '-p',
        `#fake tool=spawn_sub_agents args='${args}' then="parent saw the digest"`,
        '--allowedTools',
        'mcp__crew__spawn_sub_agents',
      ],
      { env, cwd: work, timeout: 150_000, maxBuffer: 16 * 1024 * 1024 },
    );
    expect(stdout).toContain('parent saw the digest');
    const calls = provider.requests.filter((r) => r.reply === 'tool').map((r) => r.detail);
    expect(calls).toContain('mcp__crew__spawn_sub_agents');
    // The request after the call carries Crew's answer as the tool result: both children, completed.
    const after = provider.requests.filter((r) =>
      r.request?.calledTools.includes('mcp__crew__spawn_sub_agents'),
    );
    expect(after.length).toBeGreaterThan(0);
    const results = toolResultTexts(after.at(-1)?.body);
    const digest = results.find((text) => text.includes('first child reporting'));
    expect(digest, results.join('\n---\n').slice(0, 3000)).toBeDefined();
    expect(digest).toContain('second child reporting');
    expect(digest).toMatch(/status=completed/);
  }, 200_000);
});

type RunView = { id: string; status: string; parent: string; delivery?: string; batch_id?: string };

describe('claude -p as a real parent, restarted mid-wave (issue 29)', () => {
  it('the parent killed with its bridge while the wave runs gets the digest once after it comes back', async () => {
    // The runs of the case before (same daemon) are not the wave's.
    const earlier = new Set(
      ((await api(daemon, 'GET', '/api/runs')).body.runs as RunView[]).map((r) => r.id),
    );
    const waveRuns = async () =>
      ((await api(daemon, 'GET', '/api/runs')).body.runs as RunView[]).filter((r) => !earlier.has(r.id));
    const tasks = [
      '#sim sleep=12s echo first member reporting',
      '#sim sleep=12s echo second member reporting',
    ];
    const startArgs = JSON.stringify({ tasks, agent: 'sim' });
    // The first parent: its own process group, so the kill takes Claude Code and its `crew mcp` together.
    const first = spawn(
      claudeBin,
      [
        '-p',
        `START-WAVE\n#fake tool=spawn_run args='${startArgs}' then="started"`,
        '--allowedTools',
        'mcp__crew__spawn_run',
      ],
      { env, cwd: work, detached: true, stdio: 'ignore' },
    );
    const firstExit = new Promise((resolve) => first.once('exit', resolve));
    try {
      // The wave was admitted and its answer reached the model (the next request holds it, and hangs).
      await pollFor(
        'the first parent to start the wave',
        () =>
          provider.requests.find(
            (r) => r.request !== undefined && calledSpawnRun(r.request) && r.reply === 'hang',
          ),
        150_000,
      );
      const members = await waveRuns();
      expect(members).toHaveLength(2);
      expect(members.every((m) => ['starting', 'running'].includes(m.status))).toBe(true);
      process.kill(-(first.pid as number), 'SIGKILL');
      await firstExit;
    } finally {
      try {
        process.kill(-(first.pid as number), 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
    // The wave ends with nobody connected: its digest waits for the parent.
    const ended = await pollFor(
      'the wave to end, its digest pending',
      async () => {
        const runs = await waveRuns();
        return runs.length === 2 && runs.every((r) => r.status === 'completed') ? runs : undefined;
      },
      120_000,
    );
    for (const r of ended) {
      expect((await api(daemon, 'GET', `/api/runs/${r.id}`)).body.run).toMatchObject({ delivery: 'pending' });
    }

    // The parent comes back in the same project and asks for what it is owed.
    const t0 = Date.now();
    const { stdout } = await run(
      claudeBin,
      [
        '-p',
        `#fake tool=spawn_wait args='{"timeout_secs":20}' then="parent saw the digest"`,
        '--allowedTools',
        'mcp__crew__spawn_wait',
      ],
      { env, cwd: work, timeout: 150_000, maxBuffer: 16 * 1024 * 1024 },
    );
    const secondMs = Date.now() - t0;
    expect(stdout).toContain('parent saw the digest');
    const after = provider.requests.filter((r) => r.request?.calledTools.includes('mcp__crew__spawn_wait'));
    expect(after.length).toBeGreaterThan(0);
    const results = toolResultTexts(after.at(-1)?.body);
    const digests = results.filter((text) => text.includes('first member reporting'));
    expect(digests, results.join('\n---\n').slice(0, 3000)).toHaveLength(1);
    expect(digests[0]).toContain('second member reporting');
    expect(digests[0]).toMatch(/status=completed/);
    for (const r of ended) {
      expect((await api(daemon, 'GET', `/api/runs/${r.id}`)).body.run).toMatchObject({
        delivery: 'delivered',
      });
    }
    // Delivered once: nothing is left for the parent.
    const parent = ended[0]!.parent;
    const left = await api(daemon, 'GET', `/api/events?parent=${encodeURIComponent(parent)}&timeout_secs=1`);
    expect(left.body.events).toEqual([]);
    console.log(
      `claude-parent-restart: parent key ${parent}; second claude -p to the digest ${secondMs} ms; digest ${digests[0]!.length} chars`,
    );
  }, 400_000);
});

/** The text of every tool_result block in an Anthropic Messages request body. */
function toolResultTexts(body: unknown): string[] {
  const texts: string[] = [];
  const messages = (body as { messages?: { content?: unknown }[] } | undefined)?.messages ?? [];
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content as { type?: string; content?: unknown }[]) {
      if (block.type !== 'tool_result') continue;
      const content = block.content;
      if (typeof content === 'string') texts.push(content);
      else if (Array.isArray(content)) {
        texts.push((content as { text?: string }[]).map((part) => part.text ?? '').join('\n'));
      }
    }
  }
  return texts;
}
