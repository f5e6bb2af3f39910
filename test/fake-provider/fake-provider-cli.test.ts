import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { bundledCommand } from '../helpers/test-bundle.js';

function fakeProvider(...args: string[]) {
  const [node, ...argv] = bundledCommand('fake-provider/main', ...args);
  // A provider that serves instead would never exit: the timeout turns that into a failure.
  return spawnSync(node as string, argv, { encoding: 'utf8', timeout: 15_000 });
}

describe('crew-fake-provider as a command', () => {
  it.each([['--help'], ['-h']])('%s prints usage and exits 0 without serving', (flag) => {
    const r = fakeProvider(flag);
    expect(r.error).toBeUndefined();
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: crew-fake-provider \[--port N\] \[--reply TEXT\]/);
    expect(r.stdout).not.toMatch(/listening/);
  });

  it.each([
    [['--port', 'abc'], /--port: expected a port number 0\.\.65535, got "abc"/],
    [['--frobnicate'], /unknown option --frobnicate/],
    [['--reply'], /--reply needs a value/],
  ])('%j is a usage error (exit 2) with the usage', (args, message) => {
    const r = fakeProvider(...args);
    expect(r.error).toBeUndefined();
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/usage: crew-fake-provider/);
  });
});
