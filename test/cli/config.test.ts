import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';

let home: string;
const saved = process.env.CREW_HOME;

async function crew(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['node', 'crew', ...args], { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('crew config', () => {
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'crew-home-'));
    process.env.CREW_HOME = home;
  });
  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
    if (saved === undefined) delete process.env.CREW_HOME;
    else process.env.CREW_HOME = saved;
  });

  it('get prints the effective default; set writes through the schema; unset restores the default', async () => {
    expect(await crew('config', 'get', 'agent.subagent_max_queued')).toMatchObject({ code: 0, out: '32' });
    expect((await crew('config', 'set', 'agent.subagent_max_queued', '8')).code).toBe(0);
    expect(JSON.parse(readFileSync(join(home, 'config.json'), 'utf8'))).toEqual({
      'agent.subagent_max_queued': 8,
    });
    expect(statSync(join(home, 'config.json')).mode & 0o777).toBe(0o600);
    expect((await crew('config', 'get', 'agent.subagent_max_queued')).out).toBe('8');
    expect((await crew('config', 'unset', 'agent.subagent_max_queued')).code).toBe(0);
    expect((await crew('config', 'get', 'agent.subagent_max_queued')).out).toBe('32');
  });

  it('set of a clamped value says it was raised, and stores the raised value', async () => {
    const r = await crew('config', 'set', 'agent.max_subagents', '2');
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/raised to 3/);
    expect((await crew('config', 'get', 'agent.max_subagents')).out).toBe('3');
    // Audited where it happens: one config_bounds_clamped line in the SEL.
    const lines = readFileSync(join(home, 'security_events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      expect.objectContaining({
        outcome: 'config_bounds_clamped',
        source: 'cli',
        metadata: expect.objectContaining({ key: 'agent.max_subagents', from: 2, to: 3 }),
      }),
    ]);
    // And says when it applies: no daemon runs here.
    expect(r.err).toMatch(/no daemon is running; the next crew serve .* applies this when it starts/);
  });

  it('refuses bad values (exit 1) and unknown keys (exit 2), writing nothing', async () => {
    const bad = await crew('config', 'set', 'agent.completion_keep', 'middle');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/agent.completion_keep: expected .*head/);
    const unknown = await crew('config', 'set', 'agent.max_subagnts', '4');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/did you mean agent.max_subagents/);
    expect(() => readFileSync(join(home, 'config.json'))).toThrow();
  });

  it('takes JSON values: arrays, booleans; strings as they are', async () => {
    expect((await crew('config', 'set', 'agent.subagent_cwd_allowed_roots', '["/srv","/home"]')).code).toBe(
      0,
    );
    expect((await crew('config', 'set', 'agent.session_sharing', 'false')).code).toBe(0);
    expect((await crew('config', 'set', 'agent.completion_keep', 'tail')).code).toBe(0);
    const list = await crew('config', 'list', '--json');
    const parsed = JSON.parse(list.out);
    expect(parsed['agent.subagent_cwd_allowed_roots']).toEqual(['/srv', '/home']);
    expect(parsed['agent.session_sharing']).toBe(false);
    expect(parsed['agent.completion_keep']).toBe('tail');
  });

  it('a malformed config.json is reported with its path, not overwritten', async () => {
    writeFileSync(join(home, 'config.json'), '{"agent.max_subagents": ');
    const r = await crew('config', 'get', 'agent.max_subagents');
    expect(r.code).toBe(1);
    expect(r.err).toContain(join(home, 'config.json'));
    expect(readFileSync(join(home, 'config.json'), 'utf8')).toBe('{"agent.max_subagents": ');
  });
});
