import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';

const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as {
  version: string;
};

let home: string;
const saved = process.env.CREW_HOME;

async function crew(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['node', 'crew', ...args], { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe("a new user's first commands (issue 32 §3)", () => {
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'crew-first-hour-'));
    process.env.CREW_HOME = home;
  });
  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
    if (saved === undefined) delete process.env.CREW_HOME;
    else process.env.CREW_HOME = saved;
  });

  it('--version and -V print the package version and exit 0', async () => {
    for (const flag of ['--version', '-V']) {
      const r = await crew(flag);
      expect(r, flag).toMatchObject({ code: 0, out: pkg.version });
    }
  });

  it.each([
    [['--port', 'abc'], /--port: expected a port number 0\.\.65535, got "abc"/],
    [['--port', '70000'], /--port: expected a port number 0\.\.65535, got "70000"/],
    [['--port', '-1'], /--port: expected a port number 0\.\.65535, got "-1"/],
    [['--port', '1.5'], /--port: expected a port number 0\.\.65535, got "1\.5"/],
    [['--host', 'not a host!'], /--host: expected an IP address or a host name, got "not a host!"/],
    [['--host', ''], /--host: expected an IP address or a host name, got ""/],
  ])('serve %j is a usage error (exit 2) before any file is created', async (args, message) => {
    const r = await crew('serve', ...args);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).not.toMatch(/unexpected failure/);
    expect(existsSync(join(home, 'crew.db'))).toBe(false);
    expect(existsSync(join(home, 'token'))).toBe(false);
  });

  it('config set agent.default_agent refuses an unknown agent (exit 1) and lists the known ones', async () => {
    const r = await crew('config', 'set', 'agent.default_agent', 'nope');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/unknown agent "nope"; known agents: .*\bsim\b/);
    expect(existsSync(join(home, 'config.json'))).toBe(false);
    const known = await crew('config', 'set', 'agent.default_agent', 'sim');
    expect(known.code, known.err).toBe(0);
    expect(JSON.parse(readFileSync(join(home, 'config.json'), 'utf8'))).toEqual({
      'agent.default_agent': 'sim',
    });
  });

  it('config set chat.parent_agent refuses an unknown agent too', async () => {
    const r = await crew('config', 'set', 'chat.parent_agent', 'nobody-here');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/unknown agent "nobody-here"; known agents: /);
  });
});
