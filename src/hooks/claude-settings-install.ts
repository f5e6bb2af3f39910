import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CrewFault, isCrewFault } from '../core/errors.js';

/**
 * `crew hook install claude`: merges Crew's width-cap hook entries into a Claude Code settings file
 * (`.claude/settings.json` or `~/.claude/settings.json`) and takes them out again, touching nothing
 * else. Crew's entries are recognised by their command (`crew hook claude`, or the command given at
 * install). Installing twice writes nothing the second time.
 */

/** The command written into settings; `crew` must be on the PATH Claude Code runs hooks with. */
export const CREW_HOOK_COMMAND = 'crew hook claude';

/** Claude Code's sub-agent tool: `Agent`, named `Task` before. */
export const SUBAGENT_TOOL_MATCHER = '^(Task|Agent)$';

/**
 * Seconds Claude Code waits for one hook run. Far above the hook's real time; it bounds a hook stuck
 * on a locked database, after which Claude Code goes on without it. @default 30
 */
export const HOOK_TIMEOUT_SECS = 30;

/** Events the ledger needs, and whether each is filtered to the sub-agent tool. */
const CREW_EVENTS: ReadonlyArray<{ event: string; isToolEvent: boolean }> = [
  { event: 'PreToolUse', isToolEvent: true },
  { event: 'PostToolUse', isToolEvent: true },
  { event: 'PostToolUseFailure', isToolEvent: true },
  { event: 'SubagentStop', isToolEvent: false },
  { event: 'Stop', isToolEvent: false },
];

export type InstallAction = 'installed' | 'already_installed' | 'uninstalled' | 'not_installed';

export interface InstallOutcome {
  action: InstallAction;
  settingsPath: string;
  /** Whether the file was written. */
  changed: boolean;
}

export interface InstallOptions {
  settingsPath: string;
  /** @default {@link CREW_HOOK_COMMAND} */
  command?: string;
  /** Remove Crew's entries instead of adding them. @default false */
  uninstall?: boolean;
}

/** A settings file Crew will not touch, with what to do about it. Nothing was written. */
function settingsInvalid(message: string): CrewFault {
  return new CrewFault('settings_invalid', message);
}

export function isSettingsInvalid(error: unknown): error is CrewFault {
  return isCrewFault(error) && error.code === 'settings_invalid';
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const CREW_COMMAND = /(?:^|[\s/\\"'])crew(?:\.cmd|\.exe|\.js)?["']?\s+hook\s+claude(?=$|[\s"'])/;
const CREW_BIN_COMMAND = /claude-hook-bin\.[cm]?[jt]s["']?\s+claude(?=$|[\s"'])/;

/** Whether a hook command is one of Crew's: `… crew hook claude`, the bin entry, or `custom`. */
export function isCrewHookCommand(command: unknown, custom?: string): boolean {
  if (typeof command !== 'string') return false;
  return command === custom || CREW_COMMAND.test(command) || CREW_BIN_COMMAND.test(command);
}

function crewHook(command: string): Json {
  return { type: 'command', command, timeout: HOOK_TIMEOUT_SECS };
}

function crewGroup(command: string, isToolEvent: boolean): Json {
  return isToolEvent
    ? { matcher: SUBAGENT_TOOL_MATCHER, hooks: [crewHook(command)] }
    : { hooks: [crewHook(command)] };
}

function isCrewEntry(hook: unknown, custom: string): boolean {
  return isObject(hook) && isCrewHookCommand(hook.command, custom);
}

/** Removes Crew's hooks from one event's groups; groups left empty by that go too. */
function withoutCrewHooks(groups: unknown[], custom: string): unknown[] {
  const kept: unknown[] = [];
  for (const group of groups) {
    // A group Crew cannot read is not Crew's: keep it exactly as it is.
    if (!isObject(group) || !Array.isArray(group.hooks)) {
      kept.push(group);
      continue;
    }
    const hooks = group.hooks.filter((hook) => !isCrewEntry(hook, custom));
    if (hooks.length === group.hooks.length) kept.push(group);
    else if (hooks.length > 0) kept.push({ ...group, hooks });
  }
  return kept;
}

function countCrewHooks(groups: unknown[], custom: string): number {
  let count = 0;
  for (const group of groups) {
    if (isObject(group) && Array.isArray(group.hooks)) {
      count += group.hooks.filter((hook) => isCrewEntry(hook, custom)).length;
    }
  }
  return count;
}

/** Whether `groups` holds exactly one Crew hook, and it is the wanted one in a group of its own. */
function hasExactCrewGroup(groups: unknown[], wanted: Json, custom: string): boolean {
  if (countCrewHooks(groups, custom) !== 1) return false;
  const expected = JSON.stringify(wanted);
  return groups.some((group) => JSON.stringify(group) === expected);
}

function hooksOf(settings: Json, where: string): Json {
  if (settings.hooks === undefined) return {};
  if (!isObject(settings.hooks)) {
    throw settingsInvalid(`${where}: "hooks" is not an object; fix it by hand, then run again`);
  }
  for (const { event } of CREW_EVENTS) {
    const groups = settings.hooks[event];
    if (groups !== undefined && !Array.isArray(groups)) {
      throw settingsInvalid(`${where}: "hooks.${event}" is not a list; fix it by hand, then run again`);
    }
  }
  return settings.hooks;
}

/** Settings with Crew's entries present once each; other keys and hooks kept in place. Pure. */
export function mergeCrewHooks(settings: Json, command = CREW_HOOK_COMMAND, where = 'settings'): Json {
  const hooks = { ...hooksOf(settings, where) };
  for (const { event, isToolEvent } of CREW_EVENTS) {
    const groups = (hooks[event] as unknown[] | undefined) ?? [];
    const wanted = crewGroup(command, isToolEvent);
    if (hasExactCrewGroup(groups, wanted, command)) continue;
    hooks[event] = [...withoutCrewHooks(groups, command), wanted];
  }
  return { ...settings, hooks };
}

/** Settings without Crew's entries; events and `hooks` emptied by that are removed. Pure. */
export function removeCrewHooks(settings: Json, command = CREW_HOOK_COMMAND, where = 'settings'): Json {
  if (settings.hooks === undefined) return settings;
  const hooks = { ...hooksOf(settings, where) };
  let removedAny = false;
  for (const { event } of CREW_EVENTS) {
    const groups = hooks[event] as unknown[] | undefined;
    if (groups === undefined || countCrewHooks(groups, command) === 0) continue;
    removedAny = true;
    const kept = withoutCrewHooks(groups, command);
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
  }
  if (!removedAny) return settings;
  if (Object.keys(hooks).length > 0) return { ...settings, hooks };
  const { hooks: _removed, ...rest } = settings;
  return rest;
}

/** Reads the settings file; `undefined` when it does not exist. Malformed → a `settings_invalid` fault. */
function readSettings(path: string): Json | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw settingsInvalid(`cannot read ${path} (${(error as Error).message}); nothing was written`);
  }
  if (text.trim().length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw settingsInvalid(
      `${path} is not valid JSON (${(error as Error).message}); fix or move it, then run again. Nothing was written`,
    );
  }
  if (!isObject(parsed)) {
    throw settingsInvalid(
      `${path} is not a JSON object; fix or move it, then run again. Nothing was written`,
    );
  }
  return parsed;
}

/** Replaces the file in one step, so Claude Code never reads half a settings file. */
function writeSettings(path: string, settings: Json): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.crew-${process.pid}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify(settings, null, 2)}\n`);
    renameSync(temp, path);
  } finally {
    rmSync(temp, { force: true });
  }
}

/** Installs (or with `uninstall`, removes) Crew's hook entries in one settings file. */
export function installClaudeHooks(options: InstallOptions): InstallOutcome {
  const { settingsPath } = options;
  const command = options.command ?? CREW_HOOK_COMMAND;
  const current = readSettings(settingsPath);
  if (options.uninstall) {
    if (current === undefined) return { action: 'not_installed', settingsPath, changed: false };
    const next = removeCrewHooks(current, command, settingsPath);
    if (next === current) return { action: 'not_installed', settingsPath, changed: false };
    writeSettings(settingsPath, next);
    return { action: 'uninstalled', settingsPath, changed: true };
  }
  const base = current ?? {};
  const next = mergeCrewHooks(base, command, settingsPath);
  if (current !== undefined && JSON.stringify(next) === JSON.stringify(current)) {
    return { action: 'already_installed', settingsPath, changed: false };
  }
  writeSettings(settingsPath, next);
  return { action: 'installed', settingsPath, changed: true };
}
