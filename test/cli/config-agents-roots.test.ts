import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { loadConfig } from '../../src/config/config-file.js';
import { CrewError } from '../../src/core/errors.js';

/**
 * Issue 28, also: `crew config get agents.X` (and set's echo, and list) hides the agent's `env` values; a
 * relative `agent.subagent_cwd_allowed_roots` entry is refused by `config set` and by the loader.
 */

let home: string;
const saved = process.env.CREW_HOME;

async function crew(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['node', 'crew', ...args], { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'crew-home-'));
  process.env.CREW_HOME = home;
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
  if (saved === undefined) delete process.env.CREW_HOME;
  else process.env.CREW_HOME = saved;
});

const AGENT = {
  runner: 'command',
  command: ['my-agent', '{task}'],
  env: { API_KEY: 'sk-live-SECRET-123', DB_URL: 'postgres://u:SECRETpw@db/x' },
};

describe('an agent env in crew config', () => {
  it('set, get, list and list --json show the env names but never the values', async () => {
    const set = await crew('config', 'set', 'agents.worker', JSON.stringify(AGENT));
    expect(set.code).toBe(0);
    const get = await crew('config', 'get', 'agents.worker');
    expect(get.code).toBe(0);
    expect(JSON.parse(get.out).env).toEqual({ API_KEY: '(set, hidden)', DB_URL: '(set, hidden)' });
    expect(JSON.parse(get.out).command).toEqual(['my-agent', '{task}']);
    const list = await crew('config', 'list');
    const json = await crew('config', 'list', '--json');
    for (const text of [set.out, set.err, get.out, get.err, list.out, json.out])
      expect(text).not.toContain('SECRET');
    // Stored as given: the agent still gets them.
    expect(JSON.parse(readFileSync(join(home, 'config.json'), 'utf8'))['agents.worker'].env.API_KEY).toBe(
      'sk-live-SECRET-123',
    );
  });

  it('get agents.constructor / agents.__proto__ / agents.toString: no such agent, not an Object member', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const get = await crew('config', 'get', `agents.${name}`);
      expect(get.code).toBe(2);
      expect(get.err).toContain(`no agent ${name} in config`);
    }
  });
});

describe('agent.subagent_cwd_allowed_roots must be absolute', () => {
  it.each([['["relative/dir"]'], ['["/ok", "./here"]'], ['["~/projects"]'], ['[".."]']])(
    'config set %s is refused, and nothing is stored',
    async (value) => {
      const set = await crew('config', 'set', 'agent.subagent_cwd_allowed_roots', value);
      expect(set.code).toBe(1);
      expect(set.err).toMatch(/agent\.subagent_cwd_allowed_roots.*absolute path/);
      expect(() => readFileSync(join(home, 'config.json'), 'utf8')).toThrow();
    },
  );

  it('absolute roots are taken', async () => {
    const set = await crew('config', 'set', 'agent.subagent_cwd_allowed_roots', '["/srv/work", "/tmp"]');
    expect(set.code).toBe(0);
  });

  it('the loader refuses a config.json with a relative root, typed (invalid_argument) and naming the key', () => {
    writeFileSync(
      join(home, 'config.json'),
      JSON.stringify({ 'agent.subagent_cwd_allowed_roots': ['work'] }),
    );
    let error: unknown;
    try {
      loadConfig(home);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CrewError);
    expect((error as CrewError).code).toBe('invalid_argument');
    expect((error as CrewError).message).toMatch(/agent\.subagent_cwd_allowed_roots.*absolute path/);
  });
});
