import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CrewFault } from '../../core/errors.js';

/**
 * Cluster mode's Lua scripts, one `.lua` file each in `./lua/` whose header names its KEYS and ARGV (as
 * BullMQ's `src/commands/` does). Each is read once, on first use, and sent with `EVAL` without its header.
 */
export const LUA_SCRIPTS = [
  'count-queue',
  'unlock-admission',
  'lapsed-jobs',
  'report-lost',
  'cap-read',
  'cap-swap',
  'slot-ask',
  'slot-taken',
  'slot-freed',
] as const;
export type LuaScript = (typeof LUA_SCRIPTS)[number];

/**
 * Where the files sit: beside this module (`src/cluster/redis/lua`, or `dist/cluster/redis/lua` where
 * `npm run build` copies them), or, for a bundle (`.test-bundle/`, whose chunks sit one folder below its
 * root), its copy `cluster/redis/lua` and then the repository's `src/cluster/redis/lua`.
 */
function candidates(): string[] {
  const here = dirname(fileURLToPath(import.meta.url));
  return [
    join(here, 'lua'),
    join(here, '..', 'cluster', 'redis', 'lua'),
    join(here, '..', '..', 'src', 'cluster', 'redis', 'lua'),
  ];
}

const cache = new Map<LuaScript, string>();

/** The script's body, read once. */
export function luaScript(name: LuaScript): string {
  const cached = cache.get(name);
  if (cached !== undefined) return cached;
  for (const dir of candidates()) {
    let text: string;
    try {
      text = readFileSync(join(dir, `${name}.lua`), 'utf8');
    } catch {
      continue; // try the next place
    }
    const body = withoutHeader(text);
    cache.set(name, body);
    return body;
  }
  throw new CrewFault(
    'install_incomplete',
    `the Lua script ${name}.lua is missing beside ${fileURLToPath(import.meta.url)}; run npm run build`,
    { script: name },
  );
}

/** Reads every script (at a cluster link's start, so a missing file fails there, not at a first 429). */
export function loadLuaScripts(): void {
  for (const name of LUA_SCRIPTS) luaScript(name);
}

/** A script's text without its leading `--[[ … ]]` header (the header is for readers, not for Redis). */
export function withoutHeader(text: string): string {
  const match = /^--\[\[[\s\S]*?\]\]\n/.exec(text);
  return (match ? text.slice(match[0].length) : text).trim();
}
