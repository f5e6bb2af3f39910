import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentDef } from '../core/agent-def.js';
import { applyAgentEnv } from '../core/agent-env.js';
import type { Clock } from '../core/clock.js';
import { fillArgv } from '../runners/acp-argv.js';
import { AcpRuntime, errorKindOf } from '../runners/acp-runtime.js';
import { findPreset, whichBin } from './presets.js';

/**
 * `crew agents check [NAME]`: starts an agent, runs `initialize` and `session/new` in a scratch
 * directory, and says how that went (ok, auth_required with the methods offered, not installed, or the
 * failure), within a timeout. No prompt is sent, so nothing reaches the model or costs anything. A
 * failure's message adds the known traps of the preset the command matches.
 */

export type CheckOutcome = 'ok' | 'auth_required' | 'not_installed' | 'failed' | 'skipped';

export interface CheckResult {
  name: string;
  outcome: CheckOutcome;
  /** What happened, in one sentence, with what to do next when it failed. */
  message: string;
  /** `initialize`'s authMethods, when the agent wants a login. */
  authMethods?: string[];
  /** Variables the agent's env names with `${NAME}` that the environment does not set. */
  missingEnv?: string[];
  ms: number;
}

export interface CheckOptions {
  clock: Clock;
  env: NodeJS.ProcessEnv;
  /** For the whole check (each request, and the start). @default 30000 */
  timeoutMs?: number;
  /** Where `session/new` opens its session. @default a fresh temp directory, removed afterwards */
  cwd?: string;
}

export async function checkAgent(agent: AgentDef, options: CheckOptions): Promise<CheckResult> {
  const started = Date.now();
  const done = (outcome: CheckOutcome, message: string, extra: Partial<CheckResult> = {}): CheckResult => ({
    name: agent.name,
    outcome,
    message,
    ...extra,
    ms: Date.now() - started,
  });
  if (agent.runner !== 'acp') {
    return done('skipped', `a ${agent.runner} agent speaks no ACP to check; spawn a run to try it`);
  }
  const { env, missing } = applyAgentEnv(options.env, agent.env);
  const missingEnv = missing.length > 0 ? { missingEnv: missing } : {};
  const argv = fillArgv(agent.command, { model: agent.model });
  const bin = argv[0] ?? '';
  if (whichBin(bin, env) === undefined) {
    return done(
      'not_installed',
      `"${bin}" is not on PATH (nor an executable path)${installHint(agent)}`,
      missingEnv,
    );
  }
  const scratch = options.cwd === undefined ? mkdtempSync(join(tmpdir(), 'crew-check-')) : undefined;
  const cwd = options.cwd ?? scratch ?? tmpdir();
  let runtime: AcpRuntime | undefined;
  try {
    runtime = new AcpRuntime({
      argv,
      cwd,
      env,
      clock: options.clock,
      requestTimeoutMs: options.timeoutMs ?? 30_000,
      killGraceMs: 2000,
      label: `agent "${agent.name}"`,
    });
    const live = runtime;
    const sink = { onUpdate: () => {}, onPermission: () => ({ outcome: { outcome: 'cancelled' as const } }) };
    try {
      await live.initialize();
      await live.newSession({ cwd, mcpServers: [] }, sink);
    } catch (error) {
      const reason = await live.reasonFor(error);
      const methods = live.offeredAuthMethods;
      if (errorKindOf(error) === 'auth_required') {
        return done('auth_required', reason, { authMethods: [...methods], ...missingEnv });
      }
      return done('failed', `${reason}${trapHint(agent)}`, missingEnv);
    }
    return done('ok', 'initialize and session/new answered', missingEnv);
  } catch (error) {
    return done(
      'failed',
      `${error instanceof Error ? error.message : String(error)}${trapHint(agent)}`,
      missingEnv,
    );
  } finally {
    await runtime?.terminate();
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  }
}

/** The preset whose command this agent runs (`claude-agent-acp`, `gemini --acp`, …), if any. */
function presetOf(agent: AgentDef) {
  const base = (agent.command[0] ?? '').split('/').at(-1) ?? '';
  const known = findPreset(agent.name);
  if (known && known.command[0] === base) return known;
  return ['claude', 'codex', 'gemini', 'opencode', 'kiro', 'goose']
    .map((name) => findPreset(name))
    .find(
      (preset) =>
        preset?.command[0] === base || agent.command.some((arg) => arg.endsWith(`${preset?.command[0]}`)),
    );
}

function installHint(agent: AgentDef): string {
  const preset = presetOf(agent);
  return preset ? `; install it (${preset.description})` : '';
}

function trapHint(agent: AgentDef): string {
  const preset = presetOf(agent);
  return preset && preset.notes.length > 0 ? `. Known traps: ${preset.notes.join('; ')}` : '';
}
