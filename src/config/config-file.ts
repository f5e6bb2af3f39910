import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type ClampEvent, type ConfigProblem, type CrewConfig, parseConfig } from '../core/config-schema.js';
import { CrewError, CrewFault, refuse } from '../core/errors.js';

/** `$CREW_HOME/config.json`: the flat object of the keys a user set. */
export function configPath(crewHome: string): string {
  return join(crewHome, 'config.json');
}

/** The keys a user set; a missing file is `{}`. Malformed JSON is an error naming the file. */
export function readConfigFile(crewHome: string): Record<string, unknown> {
  const path = configPath(crewHome);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    throw new CrewFault(
      'settings_invalid',
      `${path} cannot be read (${code ?? (error as Error).message}); it must be a JSON file: move it aside (mv ${path} ${path}.broken) and Crew starts with the defaults`,
      { path },
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new CrewError(
      refuse(
        'invalid_argument',
        `${path} is not valid JSON (${(error as Error).message}); fix or remove it`,
        {
          path,
        },
      ),
    );
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new CrewError(
      refuse('invalid_argument', `${path} must hold a JSON object of key: value`, { path }),
    );
  }
  return raw as Record<string, unknown>;
}

/** Writes atomically (temp file + rename), so a crash never leaves half a config. */
export function writeConfigFile(crewHome: string, raw: Record<string, unknown>): void {
  const path = configPath(crewHome);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(raw, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

export type LoadedConfig = { config: CrewConfig; clamped: ClampEvent[] };

/** Reads and validates the config; every problem is listed (key, expected, got) in one error. */
export function loadConfig(crewHome: string): LoadedConfig {
  const parsed = parseConfig(readConfigFile(crewHome));
  if (!parsed.ok)
    throw new CrewError(
      refuse('invalid_argument', formatProblems(parsed.problems), { path: configPath(crewHome) }),
    );
  return { config: parsed.config, clamped: parsed.clamped };
}

export function formatProblems(problems: ConfigProblem[]): string {
  return `invalid configuration:\n${problems.map((p) => `  ${p.key}: expected ${p.expected}, got ${p.got}`).join('\n')}`;
}
