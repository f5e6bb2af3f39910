import { describe, expect, it } from 'vitest';
import { errorCodeOf } from '../../src/core/errors.js';
import { readBridgeArgs } from '../../src/mcp/bridge-args.js';
import { bridgeParentName } from '../../src/mcp/bridge-parent.js';

describe('crew mcp arguments (what survives a client that strips the environment)', () => {
  it('reads --parent and --home, in either form; CREW_PARENT when no --parent', () => {
    expect(readBridgeArgs([], {})).toEqual({});
    expect(readBridgeArgs(['--parent', 'me', '--home', '/h'], {})).toEqual({ parent: 'me', home: '/h' });
    expect(readBridgeArgs(['--parent=me', '--home=/h'], {})).toEqual({ parent: 'me', home: '/h' });
    expect(readBridgeArgs([], { CREW_PARENT: 'from-env' })).toEqual({ parent: 'from-env' });
    expect(readBridgeArgs(['--parent', 'flag'], { CREW_PARENT: 'from-env' })).toEqual({ parent: 'flag' });
  });

  it('refuses an unknown argument, a missing value and a malformed parent, with the usage', () => {
    for (const argv of [
      ['--nope'],
      ['--parent'],
      ['--home', ''],
      ['--parent', 'two words'],
      ['--parent', 'x'.repeat(201)],
    ]) {
      expect(() => readBridgeArgs(argv, {}), argv.join(' ')).toThrow(/usage: crew mcp/);
      // A usage fault: the CLI's one exit-code table maps it to 2.
      let code: unknown;
      try {
        readBridgeArgs(argv, {});
      } catch (error) {
        code = errorCodeOf(error);
      }
      expect(code, argv.join(' ')).toBe('usage');
    }
    expect(() => readBridgeArgs([], { CREW_PARENT: 'bad;value' })).toThrow(/letters, digits/);
  });
});

describe('the default parent name: the client and the project', () => {
  it('is the same for the same client in the same directory, and differs otherwise', () => {
    const a = bridgeParentName({ explicit: undefined, clientName: 'claude-code', cwd: '/home/me/proj' });
    expect(a).toMatch(/^claude-code@proj-[0-9a-f]{8}$/);
    expect(bridgeParentName({ explicit: undefined, clientName: 'claude-code', cwd: '/home/me/proj' })).toBe(
      a,
    );
    expect(bridgeParentName({ explicit: undefined, clientName: 'codex', cwd: '/home/me/proj' })).not.toBe(a);
    // Two projects of one name elsewhere are two parents.
    expect(bridgeParentName({ explicit: undefined, clientName: 'claude-code', cwd: '/tmp/proj' })).not.toBe(
      a,
    );
    expect(bridgeParentName({ explicit: 'named', clientName: 'claude-code', cwd: '/x' })).toBe('named');
  });

  it('keeps to the header shape whatever the client calls itself or the directory is called', () => {
    for (const [clientName, cwd] of [
      ['Claude Code (beta) ✨', '/home/me/my project/ünïcode'],
      ['', '/'],
      [undefined, '/a;b'],
      ['x'.repeat(500), `/${'y'.repeat(500)}`],
    ] as const) {
      const name = bridgeParentName({ explicit: undefined, clientName, cwd });
      expect(name).toMatch(/^[A-Za-z0-9._:@/-]{1,200}$/);
      expect(readBridgeArgs(['--parent', name], {}).parent).toBe(name);
    }
  });
});
