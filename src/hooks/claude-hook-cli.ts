import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../core/clock.js';
import { handleClaudeHookEvent } from './claude-hook-handle.js';
import { parseClaudeHookPayload } from './claude-hook-payload.js';
import type { ClaudeInFlightList } from './claude-in-flight-format.js';
import type { InstallOutcome } from './claude-settings-install.js';
import { loadHookConfig } from './claude-width-config.js';
import type { ClaudeWidthLedger } from './claude-width-ledger.js';
import { crewDbPath, resolveCrewHome } from './crew-home.js';

/**
 * `crew hook …`: the Claude Code hook (`crew hook claude`, a short-lived process per event that
 * needs no daemon), its installer (`crew hook install claude`) and `crew list --claude`.
 *
 * The import graph stays small on purpose: Claude Code waits for this process before every `Agent`
 * call. At start it loads node built-ins and the hook's own small modules; the SQLite driver once
 * the event concerns the ledger; the config schema (zod) only when config.json changed; the
 * installer and the lister only when asked for.
 *
 * Failure rule: the hook never blocks a person's work by accident. A broken or unreadable payload,
 * an unreadable config or an unusable database is allowed with a warning on stderr and exit 0; the
 * only "no" is a well-formed PreToolUse counted at the cap.
 */

export {
  type ClaudeInFlightAgent,
  type ClaudeInFlightList,
  type ClaudeInFlightSession,
  formatClaudeInFlight,
} from './claude-in-flight-format.js';

/**
 * `crew list --claude`: the Claude Code sub-agents in flight under `crewHome`, per session, at
 * `nowMs`. Reads only. Print it with {@link formatClaudeInFlight}, or as JSON for `--json`.
 */
export async function listClaudeInFlight(crewHome: string, nowMs = Date.now()): Promise<ClaudeInFlightList> {
  const lister = await import('./claude-in-flight-list.js');
  return lister.listClaudeInFlight(crewHome, nowMs);
}

export interface HookCliIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export interface HookCliDeps {
  /** Time source for reservations and expiry. @default wall time */
  clock?: Pick<Clock, 'now'>;
}

export const HOOK_USAGE = `usage:
  crew hook claude                         read a Claude Code hook event (JSON) on stdin and answer it
  crew hook install claude [--project | --user] [--uninstall] [--command <cmd>]
      --project    .claude/settings.json under the current directory (default)
      --user       ~/.claude/settings.json (or $CLAUDE_CONFIG_DIR/settings.json)
      --uninstall  remove Crew's entries only
      --command    the hook command to write (default "crew hook claude"; crew must be on PATH)
`;

/** Runs `crew hook <args…>`; returns the exit code (0 ok, 1 failed, 2 usage). */
export async function hookCli(args: string[], io: HookCliIo, deps: HookCliDeps = {}): Promise<number> {
  const [verb, target, ...rest] = args;
  if (verb === 'claude' && target === undefined) return runClaudeHook(io, deps.clock ?? { now: Date.now });
  if (verb === 'install' && target === 'claude') return await runInstall(rest, io);
  if (verb === '--help' || verb === '-h' || verb === 'help') {
    io.stdout.write(HOOK_USAGE);
    return 0;
  }
  io.stderr.write(`crew hook: unknown arguments: ${args.join(' ') || '(none)'}\n${HOOK_USAGE}`);
  return 2;
}

function warn(io: HookCliIo, message: string): void {
  io.stderr.write(`crew hook: warning: ${message}\n`);
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  // A terminal on stdin means nobody piped an event; waiting would hang the person, not Claude Code.
  if ((stream as { isTTY?: boolean }).isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

async function runClaudeHook(io: HookCliIo, clock: Pick<Clock, 'now'>): Promise<number> {
  let text: string;
  try {
    text = await readAll(io.stdin);
  } catch (error) {
    warn(io, `cannot read stdin (${(error as Error).message}); allowing`);
    return 0;
  }
  const parsed = parseClaudeHookPayload(text);
  if (!parsed.ok) {
    warn(io, `${parsed.problem}; allowing without counting`);
    return 0;
  }
  for (const message of parsed.warnings) warn(io, message);
  // Other tools and events never touch the database, so a broad matcher costs only a parse.
  if (parsed.event.kind === 'ignored') return 0;

  const crewHome = resolveCrewHome(io.env);
  let ledger: ClaudeWidthLedger | undefined;
  try {
    const { ClaudeWidthLedger } = await import('./claude-width-ledger.js');
    ledger = ClaudeWidthLedger.open(crewDbPath(crewHome));
    const { config, warnings } = await loadHookConfig(crewHome, ledger);
    for (const message of warnings) warn(io, message);
    const outcome = handleClaudeHookEvent(parsed.event, ledger, config, clock.now());
    if (outcome.stdout !== undefined) io.stdout.write(`${outcome.stdout}\n`);
  } catch (error) {
    warn(io, `width ledger unavailable (${(error as Error).message}); allowing without counting`);
  } finally {
    ledger?.close();
  }
  return 0;
}

interface InstallArgs {
  scope: 'project' | 'user';
  uninstall: boolean;
  command?: string;
}

function parseInstallArgs(flags: string[]): InstallArgs | string {
  const parsed: InstallArgs = { scope: 'project', uninstall: false };
  let scopes = 0;
  for (let i = 0; i < flags.length; i++) {
    const flag = flags[i] as string;
    if (flag === '--project' || flag === '--user') {
      parsed.scope = flag === '--user' ? 'user' : 'project';
      scopes++;
    } else if (flag === '--uninstall') {
      parsed.uninstall = true;
    } else if (flag === '--command' || flag.startsWith('--command=')) {
      const value = flag === '--command' ? flags[++i] : flag.slice('--command='.length);
      if (value === undefined || value.trim() === '') return '--command needs a value';
      parsed.command = value;
    } else {
      return `unknown flag ${flag}`;
    }
  }
  if (scopes > 1) return 'give one of --project or --user';
  return parsed;
}

function settingsPathFor(scope: 'project' | 'user', io: HookCliIo): string {
  if (scope === 'project') return join(io.cwd, '.claude', 'settings.json');
  const configDir = io.env.CLAUDE_CONFIG_DIR?.trim();
  if (configDir) return join(configDir, 'settings.json');
  return join(io.env.HOME?.trim() || homedir(), '.claude', 'settings.json');
}

function describeOutcome(outcome: InstallOutcome, command: string): string {
  switch (outcome.action) {
    case 'installed':
      return (
        `installed Crew's sub-agent width hooks ("${command}") in ${outcome.settingsPath}\n` +
        `  the cap is hooks.claude.max_in_flight (crew config set hooks.claude.max_in_flight N);\n` +
        `  "${command.split(/\s+/)[0]}" must be on the PATH Claude Code runs hooks with\n`
      );
    case 'already_installed':
      return `Crew's hooks are already in ${outcome.settingsPath}; nothing changed\n`;
    case 'uninstalled':
      return `removed Crew's hooks from ${outcome.settingsPath}; other hooks and settings kept\n`;
    case 'not_installed':
      return `no Crew hooks in ${outcome.settingsPath}; nothing changed\n`;
    default: {
      const unknown: never = outcome.action;
      return unknown;
    }
  }
}

async function runInstall(flags: string[], io: HookCliIo): Promise<number> {
  const args = parseInstallArgs(flags);
  if (typeof args === 'string') {
    io.stderr.write(`crew hook install claude: ${args}\n${HOOK_USAGE}`);
    return 2;
  }
  const { CREW_HOOK_COMMAND, installClaudeHooks, isSettingsInvalid } = await import(
    './claude-settings-install.js'
  );
  const command = args.command ?? CREW_HOOK_COMMAND;
  try {
    const outcome = installClaudeHooks({
      settingsPath: settingsPathFor(args.scope, io),
      command,
      uninstall: args.uninstall,
    });
    io.stdout.write(describeOutcome(outcome, command));
    return 0;
  } catch (error) {
    const message = isSettingsInvalid(error) ? error.message : `failed: ${(error as Error).message}`;
    io.stderr.write(`crew hook install claude: ${message}\n`);
    return 1;
  }
}
