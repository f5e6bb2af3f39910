import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { isSecretKey, parseKeyValue } from '../../src/core/config-schema.js';

let home: string;
const saved = process.env.CREW_HOME;

async function crew(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['node', 'crew', ...args], { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const BOT = 'xoxb-1111-2222-abcdefSECRETbot';
const SIGNING = '8f742231b10e8888abcd99yyyzzz85a5';
const APP = 'xapp-1-A111-222-SECRETapp';

describe('slack.* keys: validated, secrets never printed', () => {
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'crew-home-'));
    process.env.CREW_HOME = home;
  });
  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
    if (saved === undefined) delete process.env.CREW_HOME;
    else process.env.CREW_HOME = saved;
  });

  it('set stores the secret; set, get, list and list --json never print it', async () => {
    const printed: string[] = [];
    for (const [key, value] of [
      ['slack.bot_token', BOT],
      ['slack.signing_secret', SIGNING],
      ['slack.app_token', APP],
    ] as const) {
      const set = await crew('config', 'set', key, value);
      expect(set.code).toBe(0);
      printed.push(set.out, set.err);
      const get = await crew('config', 'get', key);
      expect(get.code).toBe(0);
      expect(get.out).toMatch(/set, hidden/);
      printed.push(get.out, get.err);
    }
    const stored = JSON.parse(readFileSync(join(home, 'config.json'), 'utf8'));
    expect(stored['slack.bot_token']).toBe(BOT);
    const list = await crew('config', 'list');
    const json = await crew('config', 'list', '--json');
    printed.push(list.out, json.out);
    expect(list.out).toMatch(/slack\.bot_token\s+"\(set, hidden\)"/);
    expect(JSON.parse(json.out)['slack.signing_secret']).toBe('(set, hidden)');
    for (const text of printed) {
      expect(text).not.toContain('SECRET');
      expect(text).not.toContain('8f742231');
    }
  });

  it('an unset secret shows as empty; a bad token is refused without echoing it', async () => {
    expect((await crew('config', 'get', 'slack.bot_token')).out).toBe('""');
    const bad = await crew('config', 'set', 'slack.bot_token', 'xoxp-user-SECRET');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/slack.bot_token: expected .*xoxb-/);
    expect(bad.err).not.toContain('SECRET');
  });

  it('allowed_users takes Slack user ids only; api_url a URL; reannounce_secs a number', () => {
    expect(parseKeyValue('slack.allowed_users', ['U012AB3CD', 'W0ABC']).ok).toBe(true);
    expect(parseKeyValue('slack.allowed_users', ['alice']).ok).toBe(false);
    expect(parseKeyValue('slack.api_url', 'http://127.0.0.1:9/api/').ok).toBe(true);
    expect(parseKeyValue('slack.api_url', 'not a url').ok).toBe(false);
    expect(parseKeyValue('slack.reannounce_secs', -1).ok).toBe(false);
    expect(isSecretKey('slack.bot_token')).toBe(true);
    expect(isSecretKey('slack.allowed_users')).toBe(false);
  });
});
