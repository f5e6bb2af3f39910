import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  LUA_SCRIPTS,
  type LuaScript,
  luaScript,
  withoutHeader,
} from '../../src/cluster/redis/lua-scripts.js';
import { errorCodeOf } from '../../src/core/errors.js';

const LUA_DIR = join(import.meta.dirname, '..', '..', 'src', 'cluster', 'redis', 'lua');

/** Cluster mode's Lua scripts are files (issue 30), each with a header naming its KEYS and ARGV. */
describe('the cluster Lua scripts', () => {
  it('are one .lua file each, every file a listed script', () => {
    const files = readdirSync(LUA_DIR)
      .filter((name) => name.endsWith('.lua'))
      .map((name) => name.slice(0, -'.lua'.length));
    expect(files.sort()).toEqual([...LUA_SCRIPTS].sort());
  });

  it('each opens with a header naming every KEYS[n] and ARGV[n] its body reads', () => {
    for (const name of LUA_SCRIPTS) {
      const text = readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8');
      const header = /^--\[\[([\s\S]*?)\]\]\n/.exec(text)?.[1];
      expect(header, `${name}.lua has no --[[ … ]] header`).toBeDefined();
      expect(header).toMatch(/Input:/);
      expect(header).toMatch(/Output:/);
      const body = withoutHeader(text);
      for (const [used] of body.matchAll(/\b(?:KEYS|ARGV)\[\d+\]/g)) {
        expect(header, `${name}.lua reads ${used} without naming it in its header`).toContain(used);
      }
    }
  });

  it('are sent without their header, and the body is what Redis runs', () => {
    const body = luaScript('unlock-admission');
    expect(body.startsWith('--')).toBe(false);
    expect(body).toContain("redis.call('GET', KEYS[1]) == ARGV[1]");
    expect(withoutHeader('--[[\n  KEYS[1] x\n]]\nreturn 1\n')).toBe('return 1');
    expect(withoutHeader('return 2')).toBe('return 2');
  });
});

describe('a Lua script missing from the install', () => {
  it('is an install_incomplete fault naming the file and what to run', () => {
    let failure: unknown;
    try {
      luaScript('no-such-script' as LuaScript);
    } catch (error) {
      failure = error;
    }
    expect(errorCodeOf(failure)).toBe('install_incomplete');
    expect((failure as Error).message).toMatch(/no-such-script\.lua is missing.*npm run build/);
  });
});
