import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type FakeProvider, startFakeProvider } from '../../src/fake-provider/fake-provider.js';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

/**
 * The rig of the real-agent tests: a pinned CLI from the cache (`scripts/ensure-agent-cli.mjs`), the
 * scripted provider, a sandbox HOME holding the CLI's settings (so the developer's own are never read),
 * and a real `crew serve` whose config names the CLI as agent `NAME` with its `env` (provider URL and a
 * dummy key: in the child's environment only). Runs go through the daemon's HTTP API, as any client's.
 */

export type CliName = 'claude' | 'codex' | 'gemini' | 'opencode';

const ENSURE_SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'ensure-agent-cli.mjs');
export const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** Installs (once, into the cache) and returns the CLI's bins. */
export async function ensureCli(name: CliName): Promise<{ acp: string; cli: string }> {
  const { stdout } = await promisify(execFile)(process.execPath, [ENSURE_SCRIPT, name], {
    timeout: INSTALL_TIMEOUT_MS,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { acp: string; cli: string };
}

export interface Rig {
  name: CliName;
  provider: FakeProvider;
  daemon: DaemonProcess;
  root: string;
  home: string;
  /** The runs' working directory (an allowed root). */
  cwd: string;
  /** A value only this rig's agent processes carry in their environment, to find them in /proc. */
  mark: string;
  /**
   * Stops the daemon (SIGTERM, or `signal`) and starts it again on the same home and config; `whileStopped`
   * runs in between.
   */
  restart(signal?: NodeJS.Signals, whileStopped?: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/** The agent's argv, env and the files its HOME needs, per CLI. */
export function agentSetup(
  name: CliName,
  bins: { acp: string; cli: string },
  provider: FakeProvider,
  home: string,
  viaGateway = false,
): { command: string[]; env: Record<string, string> } {
  switch (name) {
    case 'claude':
      // Trap 1: as root claude-agent-acp refuses to start without IS_SANDBOX=1. Trap 2: its default
      // permission mode would not route tool calls through session/request_permission; "default" does.
      mkdirSync(join(home, '.claude'), { recursive: true });
      writeFileSync(
        join(home, '.claude', 'settings.json'),
        JSON.stringify({ permissions: { defaultMode: 'default' } }),
      );
      return {
        command: [process.execPath, bins.acp],
        env: {
          ANTHROPIC_BASE_URL: provider.url,
          ANTHROPIC_API_KEY: 'crew-test-dummy-key',
          IS_SANDBOX: '1',
          CLAUDE_CODE_MAX_RETRIES: '1',
          // MCP tools are offered directly, not behind ToolSearch, so a script can call them at once.
          ENABLE_TOOL_SEARCH: 'false',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_AUTOUPDATER: '1',
        },
      };
    case 'codex': {
      // "untrusted" asks before any command that changes something (through session/request_permission);
      // full access because the container has no sandbox for Codex to use; no retries on a 429.
      const codexHome = join(home, '.codex');
      mkdirSync(codexHome, { recursive: true });
      if (viaGateway) {
        // Through Crew's provider gateway: the built-in OpenAI provider, its base URL given by the
        // preset's `--config=openai_base_url=…` (Crew fills in the run's gateway URL), its key from env.
        writeFileSync(
          join(codexHome, 'config.toml'),
          [
            'model = "fake-model"',
            'approval_policy = "untrusted"',
            'sandbox_mode = "danger-full-access"',
            '',
          ].join('\n'),
        );
        // The built-in provider wants a login: what `codex login --with-api-key` writes.
        writeFileSync(
          join(codexHome, 'auth.json'),
          JSON.stringify({ auth_mode: 'apikey', OPENAI_API_KEY: 'crew-test-dummy-key' }),
        );
        return {
          command: [bins.acp, '--config=openai_base_url="{provider_base_url}"'],
          env: { OPENAI_API_KEY: 'crew-test-dummy-key', CODEX_HOME: codexHome },
        };
      }
      writeFileSync(
        join(codexHome, 'config.toml'),
        [
          'model = "fake-model"',
          'model_provider = "fake"',
          'approval_policy = "untrusted"',
          'sandbox_mode = "danger-full-access"',
          '[model_providers.fake]',
          'name = "fake"',
          `base_url = "${provider.url}/v1"`,
          'env_key = "FAKE_PROVIDER_KEY"',
          'wire_api = "responses"',
          'request_max_retries = 0',
          'stream_max_retries = 0',
          '',
        ].join('\n'),
      );
      return {
        command: [bins.acp],
        env: { FAKE_PROVIDER_KEY: 'crew-test-dummy-key', CODEX_HOME: codexHome },
      };
    }
    case 'gemini':
      // Trap: Gemini CLI enables MCP servers only with an auth type selected and the folder trusted.
      mkdirSync(join(home, '.gemini'), { recursive: true });
      writeFileSync(
        join(home, '.gemini', 'settings.json'),
        JSON.stringify({
          general: { maxAttempts: 1, enableAutoUpdate: false, enableAutoUpdateNotification: false },
          model: { name: 'gemini-2.5-flash' },
          security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
          privacy: { usageStatisticsEnabled: false },
          telemetry: { enabled: false },
        }),
      );
      return {
        command: [process.execPath, bins.acp, '--acp'],
        env: { GEMINI_API_KEY: 'crew-test-dummy-key', GOOGLE_GEMINI_BASE_URL: provider.url },
      };
    case 'opencode':
      mkdirSync(join(home, '.config', 'opencode'), { recursive: true });
      writeFileSync(
        join(home, '.config', 'opencode', 'opencode.json'),
        JSON.stringify({
          $schema: 'https://opencode.ai/config.json',
          model: 'fake/fake-model',
          autoupdate: false,
          share: 'disabled',
          permission: { bash: 'ask', edit: 'ask' },
          provider: {
            fake: {
              npm: '@ai-sdk/openai-compatible',
              name: 'fake',
              options: { baseURL: `${provider.url}/v1`, apiKey: 'crew-test-dummy-key' },
              models: { 'fake-model': { name: 'fake-model' } },
            },
          },
        }),
      );
      seedOpencodePluginInstall(join(home, '.config', 'opencode'));
      return {
        command: [bins.acp, 'acp'],
        // No models.dev list: the config names the only model, and the tests reach only loopback.
        env: { OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_MODELS_FETCH: '1' },
      };
  }
}

/**
 * opencode 1.18, at each start, installs `@opencode-ai/plugin` (its plugin API) into every config directory
 * from the registry, with npm's installer inside its own process, unless the directory has a node_modules
 * and a package-lock naming every dependency of its package.json. No plugin is configured here, so nothing
 * loads the package: the seed (an empty node_modules and a lock that names it) keeps the agent off the
 * registry (where it is unreachable, the install failed and was tried again at every start).
 */
function seedOpencodePluginInstall(configDir: string): void {
  const dependencies = { '@opencode-ai/plugin': '1.18.33' };
  mkdirSync(join(configDir, 'node_modules'), { recursive: true });
  writeFileSync(join(configDir, 'package.json'), JSON.stringify({ dependencies }));
  writeFileSync(
    join(configDir, 'package-lock.json'),
    JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies } } }),
  );
}

export async function startRig(
  name: CliName,
  bins: { acp: string; cli: string },
  config: Record<string, unknown> = {},
  options: { viaGateway?: 'anthropic' | 'openai' | 'gemini' } = {},
): Promise<Rig> {
  const provider = await startFakeProvider();
  const root = mkdtempSync(join(tmpdir(), `crew-real-${name}-`));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  const crewHome = join(root, 'crew');
  for (const dir of [home, cwd, crewHome, join(root, 'tmp')]) mkdirSync(dir, { recursive: true });
  const mark = `crew-rig-${process.pid}-${Date.now()}`;
  const setup = agentSetup(name, bins, provider, home, options.viaGateway !== undefined);
  const daemonOptions = {
    home: crewHome,
    config: {
      'agent.subagent_cwd_allowed_roots': [root],
      'agent.subagent_timeout_secs': 150,
      // A cold CLI start (opencode's first run in a fresh home) under the slow tier's load took over 30 s.
      'agent.acp_request_timeout_secs': 120,
      'agent.subagent_max_depth': 2,
      'host.kill_grace_secs': 2,
      [`agents.${name}`]: {
        command: setup.command,
        env: { ...setup.env, CREW_TEST_AGENT_MARK: mark },
        // Through Crew's provider gateway: the daemon points the agent's base URL at itself.
        ...(options.viaGateway ? { provider: options.viaGateway } : {}),
      },
      ...(options.viaGateway ? { [`providers.${options.viaGateway}.upstream`]: provider.url } : {}),
      ...config,
    },
    env: {
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local', 'share'),
      XDG_CACHE_HOME: join(home, '.cache'),
      TMPDIR: join(root, 'tmp'),
      NO_COLOR: '1',
    },
  };
  const rig: Rig = {
    name,
    provider,
    daemon: await startDaemonProcess(daemonOptions),
    root,
    home,
    cwd,
    mark,
    async restart(signal, whileStopped) {
      await rig.daemon.stop(signal);
      await whileStopped?.();
      rig.daemon = await startDaemonProcess(daemonOptions);
    },
    async close() {
      await rig.daemon.stop();
      // Only after a failed case (a passing one leaves none): never leave an agent process behind.
      for (const pid of markedProcesses(mark)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      await provider.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
  return rig;
}

export interface RunBody {
  id: string;
  status: string;
  parent: string;
  error?: string;
  error_kind?: string;
  usage?: { tokens?: number };
  duration_secs?: number;
}

/** Spawns `task` on the rig's agent in its cwd; resolves with the run id. */
export async function spawnRun(rig: Rig, task: string): Promise<string> {
  const spawned = await api(rig.daemon, 'POST', '/api/spawn', {
    parent: 'cli:real-agents',
    args: { task, agent: rig.name, cwd: rig.cwd },
  });
  const runs = spawned.body.runs as { id: string }[] | undefined;
  if (!runs?.[0]) throw new Error(`spawn refused: ${JSON.stringify(spawned.body)}`);
  return runs[0].id;
}

export async function runStatus(rig: Rig, id: string): Promise<{ run: RunBody; text: string }> {
  const { body } = await api(rig.daemon, 'GET', `/api/runs/${id}`);
  return { run: body.run as RunBody, text: String(body.text ?? '') };
}

const TERMINAL = new Set(['completed', 'failed', 'timed_out', 'cancelled', 'lost']);

/** Waits for the run to end; resolves with its shape and transcript. */
export function waitEnded(rig: Rig, id: string, timeoutMs = 150_000) {
  return pollFor(
    `run ${id} to end`,
    async () => {
      const status = await runStatus(rig, id);
      return TERMINAL.has(status.run.status) ? status : undefined;
    },
    timeoutMs,
  );
}

/** Live pids whose environment carries the rig's mark: its agent processes and anything they started. */
export function markedProcesses(mark: string): number[] {
  const needle = `CREW_TEST_AGENT_MARK=${mark}\0`;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(needle)) {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (!/\) Z /.test(stat)) pids.push(Number(entry));
      }
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}
