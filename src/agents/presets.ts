import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/**
 * Built-in presets for the agent CLIs Crew knows (`crew agents` lists them, `crew agents check` can
 * check them): how each starts over ACP, the key variable it needs, the one line that enables it, and the
 * traps a first run meets. A preset is not an agent until it is enabled (config `agents.NAME`), so a
 * spawn never starts a CLI nobody chose.
 */

export interface Preset {
  name: string;
  /** The ACP argv; the first word is looked up on PATH. */
  command: string[];
  /** What the CLI is and where it comes from. */
  description: string;
  /** The agent's `env`: its key variable taken from the daemon's environment. */
  env?: Record<string, string>;
  /** Traps a first run meets, said by `crew agents check` when it fails. */
  notes: string[];
  /**
   * The provider its calls go to through Crew's provider gateway: the CLIs read their base URL from the
   * environment (Claude Code `ANTHROPIC_BASE_URL`, Gemini CLI `GOOGLE_GEMINI_BASE_URL`) or, for Codex,
   * from `{provider_base_url}` in the command.
   */
  provider?: 'anthropic' | 'openai' | 'gemini';
}

/** `${NAME}`: the agent's variable takes the daemon's variable NAME. */
const fromDaemon = (name: string): string => `\${${name}}`;

export const PRESETS: readonly Preset[] = [
  {
    name: 'claude',
    command: ['claude-agent-acp'],
    description: 'Claude Code over ACP (npm @agentclientprotocol/claude-agent-acp)',
    env: { ANTHROPIC_API_KEY: fromDaemon('ANTHROPIC_API_KEY') },
    provider: 'anthropic',
    notes: [
      'as root it refuses to start unless IS_SANDBOX=1 is in its env',
      'its default "auto" permission mode prepends a warning and can block MCP calls: a settings file with permissions.defaultMode "default" (~/.claude/settings.json or the project\'s .claude/settings.json) routes tool calls through session/request_permission, which Crew answers per agent.permission_policy',
    ],
  },
  {
    name: 'codex',
    // Codex reads no base-URL variable: the gateway's URL goes in as a config override (dropped when
    // the gateway is off, so ~/.codex/config.toml decides).
    command: ['codex-acp', '--config=openai_base_url="{provider_base_url}"'],
    description: 'Codex over ACP (npm @zed-industries/codex-acp with @openai/codex)',
    env: { OPENAI_API_KEY: fromDaemon('OPENAI_API_KEY') },
    provider: 'openai',
    notes: [
      'a model provider other than OpenAI is configured in ~/.codex/config.toml (model_providers)',
      'codex-acp does not read OPENAI_API_KEY by itself: log in once with `codex login --with-api-key` (it writes $CODEX_HOME/auth.json)',
      'through the provider gateway only the built-in OpenAI provider is redirected (openai_base_url); a custom model_providers entry keeps its own base_url',
    ],
  },
  {
    name: 'gemini',
    command: ['gemini', '--acp'],
    description: 'Gemini CLI over ACP (npm @google/gemini-cli)',
    env: { GEMINI_API_KEY: fromDaemon('GEMINI_API_KEY') },
    provider: 'gemini',
    notes: [
      "it enables MCP servers (Crew's tools) only with security.auth.selectedType set in ~/.gemini/settings.json and the working folder trusted (security.folderTrust off, or the folder in ~/.gemini/trustedFolders.json)",
      'set general.maxAttempts low in ~/.gemini/settings.json or a rate-limited run retries for minutes',
    ],
  },
  {
    name: 'opencode',
    command: ['opencode', 'acp'],
    description: 'opencode over ACP (npm opencode-ai)',
    notes: ['its providers and models come from opencode.json (~/.config/opencode/ or the project)'],
  },
  {
    name: 'kiro',
    command: ['kiro-cli', 'acp'],
    description: 'Kiro CLI over ACP',
    notes: ['log in once with kiro-cli login'],
  },
  {
    name: 'goose',
    command: ['goose', 'acp'],
    description: 'Goose over ACP',
    notes: ['configure a provider once with goose configure'],
  },
];

export function findPreset(name: string): Preset | undefined {
  return PRESETS.find((preset) => preset.name === name);
}

/** The one line that enables a preset as agent `name`. */
export function enableLine(preset: Preset): string {
  const def = {
    command: preset.command.join(' '),
    ...(preset.env && { env: preset.env }),
    ...(preset.provider && { provider: preset.provider }),
  };
  return `crew config set agents.${preset.name} '${JSON.stringify(def)}'`;
}

/** The absolute path `file` resolves to on PATH (or itself when it has a slash), if executable. */
export function whichBin(file: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = file.includes('/')
    ? [file]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter((dir) => dir !== '' && isAbsolute(dir))
        .map((dir) => join(dir, file));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

export interface PresetStatus {
  name: string;
  command: string[];
  description: string;
  /** Where the CLI was found on PATH; absent when not installed. */
  path?: string;
  installed: boolean;
  /** An agent of this name is already defined (config, a file): the preset is shown as enabled. */
  enabled: boolean;
  enable: string;
}

export function presetStatuses(
  definedNames: ReadonlySet<string>,
  env: NodeJS.ProcessEnv = process.env,
): PresetStatus[] {
  return PRESETS.map((preset) => {
    const path = whichBin(preset.command[0] ?? '', env);
    return {
      name: preset.name,
      command: preset.command,
      description: preset.description,
      ...(path !== undefined && { path }),
      installed: path !== undefined,
      enabled: definedNames.has(preset.name),
      enable: enableLine(preset),
    };
  });
}
