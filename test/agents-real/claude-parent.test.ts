import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeProvider } from '../../src/fake-provider/fake-provider.js';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';
import { bundledCommand } from '../helpers/test-bundle.js';
import { ensureCli, INSTALL_TIMEOUT_MS } from './real-agent-rig.js';

/**
 * A real parent: `claude -p` (Claude Code 2.1.332) with Crew added the documented way,
 * `claude mcp add crew -- crew mcp`, in a temp HOME, on the scripted provider. The script makes it call
 * `spawn_sub_agents` with two simulator tasks; the digest Crew returns must reach the model as the tool
 * result, and `claude -p` must end with the script's closing text.
 */

const run = promisify(execFile);
let claudeBin = '';
let provider: FakeProvider;
let daemon: DaemonProcess;
let root = '';
let env: NodeJS.ProcessEnv = {};

beforeAll(async () => {
  claudeBin = (await ensureCli('claude')).cli;
  provider = await startFakeProvider();
  root = mkdtempSync(join(tmpdir(), 'crew-claude-parent-'));
  const home = join(root, 'home');
  const bin = join(root, 'bin');
  for (const dir of [home, bin, join(root, 'work'), join(root, 'crew')]) mkdirSync(dir, { recursive: true });
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
    cwd: join(root, 'work'),
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
      { env, cwd: join(root, 'work'), timeout: 150_000, maxBuffer: 16 * 1024 * 1024 },
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
