import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CREW_HOOK_COMMAND,
  isCrewHookCommand,
  mergeCrewHooks,
  removeCrewHooks,
  SUBAGENT_TOOL_MATCHER,
} from '../../src/hooks/claude-settings-install.js';
import { fixtureText, runHookInProcess, type TempDir, tempDir } from './hook-harness.js';

let project: TempDir;
let settingsPath: string;

beforeEach(() => {
  project = tempDir('crew-install-');
  settingsPath = join(project.dir, '.claude', 'settings.json');
});

afterEach(() => {
  project.cleanup();
});

function install(...flags: string[]) {
  return runHookInProcess(['install', 'claude', ...flags], '', {
    env: { HOME: join(project.dir, 'home') },
    cwd: project.dir,
  });
}

function readSettings(path = settingsPath): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

function writeExisting(text: string): void {
  mkdirSync(join(project.dir, '.claude'), { recursive: true });
  writeFileSync(settingsPath, text);
}

const crewHook = { type: 'command', command: CREW_HOOK_COMMAND, timeout: 30 };
const toolGroup = { matcher: SUBAGENT_TOOL_MATCHER, hooks: [crewHook] };
const plainGroup = { hooks: [crewHook] };

describe('crew hook install claude', () => {
  it('creates .claude/settings.json in the project with every hook the ledger needs', async () => {
    const run = await install();
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/installed .*\.claude\/settings\.json/);
    expect(run.stdout).toMatch(/"crew" must be on the PATH/);
    expect(readSettings()).toEqual({
      hooks: {
        PreToolUse: [toolGroup],
        PostToolUse: [toolGroup],
        PostToolUseFailure: [toolGroup],
        SubagentStop: [plainGroup],
        Stop: [plainGroup],
      },
    });
  });

  it('merges into an existing file, keeping other settings and hooks in place', async () => {
    const original = JSON.parse(fixtureText('settings-with-other-hooks')) as {
      hooks: Record<string, unknown[]>;
    };
    writeExisting(fixtureText('settings-with-other-hooks'));
    expect((await install('--project')).code).toBe(0);
    const merged = readSettings() as { hooks: Record<string, unknown[]> } & Record<string, unknown>;
    expect(Object.keys(merged)).toEqual(['permissions', 'hooks', 'model']);
    expect(merged.permissions).toEqual((original as unknown as Record<string, unknown>).permissions);
    expect(merged.hooks.PreToolUse).toEqual([...(original.hooks.PreToolUse ?? []), toolGroup]);
    expect(merged.hooks.PostToolUse).toEqual([...(original.hooks.PostToolUse ?? []), toolGroup]);
    expect(merged.hooks.Stop).toEqual([...(original.hooks.Stop ?? []), plainGroup]);
    expect(merged.hooks.SubagentStop).toEqual([plainGroup]);
  });

  it('running it twice changes nothing the second time', async () => {
    writeExisting(fixtureText('settings-with-other-hooks'));
    await install();
    const first = readFileSync(settingsPath, 'utf8');
    const firstMtime = statSync(settingsPath).mtimeMs;
    const again = await install();
    expect(again.stdout).toMatch(/already in .*nothing changed/);
    expect(readFileSync(settingsPath, 'utf8')).toBe(first);
    expect(statSync(settingsPath).mtimeMs).toBe(firstMtime);
  });

  it('uninstall removes only Crew entries and restores the original settings', async () => {
    writeExisting(fixtureText('settings-with-other-hooks'));
    await install();
    const run = await install('--uninstall');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/removed Crew's hooks/);
    expect(readSettings()).toEqual(JSON.parse(fixtureText('settings-with-other-hooks')));
    expect((await install('--uninstall')).stdout).toMatch(/no Crew hooks .*nothing changed/);
  });

  it('uninstall with no settings file creates none', async () => {
    expect((await install('--uninstall')).code).toBe(0);
    expect(existsSync(settingsPath)).toBe(false);
  });

  it('a hook group shared with a user hook keeps the user hook on uninstall', () => {
    const settings = {
      hooks: {
        Stop: [{ hooks: [{ type: 'command', command: 'say done' }, crewHook] }],
      },
    };
    expect(removeCrewHooks(settings)).toEqual({
      hooks: { Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }] },
    });
  });

  it('replaces an outdated Crew entry instead of adding a second one', () => {
    const outdated = {
      hooks: {
        PreToolUse: [{ matcher: 'Task', hooks: [{ type: 'command', command: '/opt/bin/crew hook claude' }] }],
      },
    };
    const merged = mergeCrewHooks(outdated) as { hooks: Record<string, unknown[]> };
    expect(merged.hooks.PreToolUse).toEqual([toolGroup]);
  });

  it('--user writes ~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json', async () => {
    const userRun = await install('--user');
    expect(userRun.code).toBe(0);
    expect(readSettings(join(project.dir, 'home', '.claude', 'settings.json'))).toHaveProperty('hooks.Stop');
    const configDir = join(project.dir, 'claude-config');
    const run = await runHookInProcess(['install', 'claude', '--user'], '', {
      env: { HOME: join(project.dir, 'home'), CLAUDE_CONFIG_DIR: configDir },
      cwd: project.dir,
    });
    expect(run.code).toBe(0);
    expect(readSettings(join(configDir, 'settings.json'))).toHaveProperty('hooks.PreToolUse');
    expect(existsSync(settingsPath)).toBe(false);
  });

  it('--command writes an absolute command, and uninstall with it removes it', async () => {
    const command = '/usr/local/bin/node /opt/crew/dist/cli/main.js hook claude';
    await install('--command', command);
    expect(readSettings()).toHaveProperty(['hooks', 'PreToolUse', 0, 'hooks', 0, 'command'], command);
    await install('--uninstall', `--command=${command}`);
    expect(readSettings()).toEqual({});
  });

  it('a malformed settings file is not overwritten, and the error says so (exit 1)', async () => {
    const broken = '{ "hooks": { "PreToolUse": [ }';
    writeExisting(broken);
    const run = await install();
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/settings\.json is not valid JSON .*Nothing was written/);
    expect(readFileSync(settingsPath, 'utf8')).toBe(broken);
  });

  it.each([
    ['a JSON array', '[]', /is not a JSON object/],
    ['hooks not an object', '{"hooks": []}', /"hooks" is not an object/],
    ['an event not a list', '{"hooks": {"Stop": {"command": "x"}}}', /"hooks\.Stop" is not a list/],
  ])('%s is refused without writing', async (_name, text, message) => {
    writeExisting(text);
    const run = await install();
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(readFileSync(settingsPath, 'utf8')).toBe(text);
  });

  it.each([['--project', '--user'], ['--bogus'], ['--command']])('%j is a usage error', async (...flags) => {
    const run = await install(...flags);
    expect(run.code).toBe(2);
    expect(existsSync(settingsPath)).toBe(false);
  });
});

describe('isCrewHookCommand', () => {
  it.each([
    'crew hook claude',
    '/usr/local/bin/crew hook claude',
    'npx crew hook claude',
    '"C:\\Program Files\\crew\\crew.cmd" hook claude',
    'node /x/dist/hooks/claude-hook-bin.js claude',
  ])('recognises %s', (command) => {
    expect(isCrewHookCommand(command)).toBe(true);
  });

  it.each(['./scripts/crew-hook-claude.sh', 'screw hook claude', 'crew hook claudette', 'crew list', 42])(
    'does not claim %s',
    (command) => {
      expect(isCrewHookCommand(command)).toBe(false);
    },
  );
});
