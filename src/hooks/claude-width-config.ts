import { readFileSync, statSync } from 'node:fs';
import type { WidthScope } from './claude-width-ledger.js';
import { crewConfigPath } from './crew-home.js';

/**
 * The three keys the hook reads from `$CREW_HOME/config.json`, validated one by one with the config
 * schema's `parseKeyValue`. Nothing else of Crew's config is loaded or computed.
 *
 * Importing the schema costs about as much as starting Node (it pulls in zod), so the hook keeps the
 * resolved values in the ledger's database keyed by the exact raw text of these keys, and imports
 * the schema only when that text changes (someone edited config.json).
 */
export const HOOK_CONFIG_KEYS = [
  'hooks.claude.max_in_flight',
  'hooks.claude.scope',
  'agent.subagent_timeout_secs',
] as const;

export interface ClaudeWidthConfig {
  /** `hooks.claude.max_in_flight`. @default 5 */
  maxInFlight: number;
  /** `hooks.claude.scope`. @default 'session' */
  scope: WidthScope;
  /** `agent.subagent_timeout_secs`, the reservation TTL. @default 1800 */
  ttlSecs: number;
}

export interface ResolvedHookConfig {
  config: ClaudeWidthConfig;
  /** Problems found (a bad value falls back to its default); repeated on every run until fixed. */
  warnings: string[];
}

/** Where the cached resolution lives; the ledger implements it. */
export interface HookConfigCache {
  cachedConfig(raw: string): string | undefined;
  storeConfig(raw: string, resolved: string): void;
}

/**
 * The raw JSON text of just the hook's keys in config.json (`{}` when the file is missing). An
 * unreadable file is a warning, not an error: the defaults still cap the width.
 */
export function readHookConfigRaw(crewHome: string): { raw: string; warnings: string[] } {
  let text: string;
  try {
    text = readFileSync(crewConfigPath(crewHome), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { raw: '{}', warnings: [] };
    return { raw: '{}', warnings: [`cannot read config.json (${(error as Error).message}); using defaults`] };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return {
      raw: '{}',
      warnings: [`config.json is not valid JSON (${(error as Error).message}); using defaults`],
    };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { raw: '{}', warnings: ['config.json is not a JSON object; using defaults'] };
  }
  const picked: Record<string, unknown> = {};
  for (const key of HOOK_CONFIG_KEYS) {
    if (Object.hasOwn(parsed, key)) picked[key] = (parsed as Record<string, unknown>)[key];
  }
  return { raw: JSON.stringify(picked), warnings: [] };
}

/** Validates the raw keys with the config schema; a bad value warns and keeps the default. */
export async function resolveHookConfig(raw: string): Promise<ResolvedHookConfig> {
  const { CONFIG_KEYS, parseKeyValue } = await import('../core/config-schema.js');
  const picked = JSON.parse(raw) as Record<string, unknown>;
  const warnings: string[] = [];
  // parseKeyValue returns the key's schema output, so the cast restates what it validated.
  const validKey = <T>(key: (typeof HOOK_CONFIG_KEYS)[number], fallback: T): T => {
    if (!Object.hasOwn(picked, key)) return fallback;
    const parsed = parseKeyValue(key, picked[key]);
    if (parsed.ok) return parsed.value as T;
    for (const problem of parsed.problems) {
      warnings.push(
        `config.json ${problem.key}: expected ${problem.expected}, got ${problem.got}; using ${JSON.stringify(fallback)}`,
      );
    }
    return fallback;
  };
  return {
    config: {
      maxInFlight: validKey('hooks.claude.max_in_flight', CONFIG_KEYS['hooks.claude.max_in_flight'].default),
      scope: validKey('hooks.claude.scope', CONFIG_KEYS['hooks.claude.scope'].default),
      ttlSecs: validKey('agent.subagent_timeout_secs', CONFIG_KEYS['agent.subagent_timeout_secs'].default),
    },
    warnings,
  };
}

/**
 * Identifies the installed schema module, so a cached resolution (which holds its defaults) is not
 * reused after Crew is upgraded. One stat, no import.
 */
function schemaFingerprint(): string {
  for (const name of ['../core/config-schema.js', '../core/config-schema.ts']) {
    try {
      return String(statSync(new URL(name, import.meta.url)).mtimeMs);
    } catch {
      // try the next form: compiled JS, or TypeScript run from source
    }
  }
  return 'unknown';
}

/** Reads the keys and resolves them, through `cache` when one is given. */
export async function loadHookConfig(crewHome: string, cache?: HookConfigCache): Promise<ResolvedHookConfig> {
  const { raw, warnings: readWarnings } = readHookConfigRaw(crewHome);
  const cacheKey = `${schemaFingerprint()} ${raw}`;
  const cached = cache?.cachedConfig(cacheKey);
  const fromCache = cached === undefined ? undefined : decodeCached(cached);
  const resolved = fromCache ?? (await resolveHookConfig(raw));
  if (fromCache === undefined) cache?.storeConfig(cacheKey, JSON.stringify(resolved));
  return { config: resolved.config, warnings: [...readWarnings, ...resolved.warnings] };
}

/** A cache row someone else wrote or an older version left is re-resolved rather than trusted. */
function decodeCached(text: string): ResolvedHookConfig | undefined {
  try {
    const value = JSON.parse(text) as Partial<ResolvedHookConfig>;
    const config = value.config;
    if (
      config !== undefined &&
      Number.isInteger(config.maxInFlight) &&
      config.maxInFlight >= 1 &&
      (config.scope === 'session' || config.scope === 'host') &&
      typeof config.ttlSecs === 'number' &&
      config.ttlSecs > 0 &&
      Array.isArray(value.warnings) &&
      value.warnings.every((w) => typeof w === 'string')
    ) {
      return { config, warnings: value.warnings };
    }
  } catch {
    // fall through to a fresh resolution
  }
  return undefined;
}
