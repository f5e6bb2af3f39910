import { statSync } from 'node:fs';
import { CONFIG_KEYS, type ConfigKey, type CrewConfig, parseKeyValue } from '../core/config-schema.js';
import { configPath, readConfigFile } from './config-file.js';

/**
 * Keys a running daemon reads from `$CREW_HOME/config.json` when it needs them, so `crew config set`
 * (or the dashboard's `PUT /api/config`) applies at once. Every other key is read at start.
 */
export const LIVE_KEYS: ReadonlySet<string> = new Set<ConfigKey>(['slack.allowed_users']);

/**
 * A reader of one key's current value: the file is stat'ed per call and re-read only when its mtime or
 * size changed. A value that no longer validates (or a file that no longer parses) keeps the last good
 * value, so a half-edited file never locks everyone out; `fallback` is the value the daemon started with.
 */
export function liveConfigValue<K extends ConfigKey>(
  crewHome: string,
  key: K,
  fallback: CrewConfig[K],
): () => CrewConfig[K] {
  const path = configPath(crewHome);
  let seen = '';
  let value = fallback;
  return () => {
    let version: string;
    try {
      const info = statSync(path);
      version = `${info.mtimeMs}:${info.size}`;
    } catch {
      version = 'absent';
    }
    if (version === seen) return value;
    seen = version;
    try {
      const raw = readConfigFile(crewHome);
      // Unset (or no file): the default, as a restart would give.
      const checked = parseKeyValue(key, Object.hasOwn(raw, key) ? raw[key] : CONFIG_KEYS[key].default);
      if (checked.ok) value = checked.value as CrewConfig[K];
    } catch {
      // Unreadable or not JSON right now: keep the last good value.
    }
    return value;
  };
}
