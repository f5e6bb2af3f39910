import type { Command } from 'commander';
import { realClock } from '../../clock/real-clock.js';
import { formatProblems, loadConfig, readConfigFile, writeConfigFile } from '../../config/config-file.js';
import { LIVE_KEYS } from '../../config/live-config.js';
import {
  CONFIG_KEYS,
  clampBounds,
  defaultConfig,
  isConfigKey,
  parseKeyValue,
  shownValue,
} from '../../core/config-schema.js';
import { readGatewayFile } from '../../daemon/daemon-address.js';
import { SelWriter, selPath } from '../../sel/sel-writer.js';
import { checkAgentNameKey } from '../agent-keys.js';
import type { CliContext } from '../context.js';

/** `crew config get|set|unset|list`: works without a daemon, through the schema. */
export function registerConfig(program: Command, ctx: CliContext): void {
  const config = program.command('config').description('read and change $CREW_HOME/config.json (validated)');

  config
    .command('get <key>')
    .description('print the effective value of a key')
    .option('--json', 'print as JSON')
    .action((key: string) => {
      const effective = loadConfig(ctx.crewHome).config as unknown as Record<string, unknown>;
      if (key.startsWith('agents.')) {
        // Own keys only: `agents.constructor` must not find Object's.
        const agents = effective.agents as Record<string, unknown>;
        const name = key.slice(7);
        if (!Object.hasOwn(agents, name)) return ctx.usage(`no agent ${name} in config`);
        ctx.out(JSON.stringify(shownValue(key, agents[name]), null, 2));
        return;
      }
      if (!isConfigKey(key)) return ctx.usage(unknownKey(key));
      ctx.out(JSON.stringify(shownValue(key, effective[key])));
    });

  config
    .command('set <key> <value>')
    .description('set a key (the value is JSON, or a plain string)')
    .action(async (key: string, value: string) => {
      const parsedValue = parseCliValue(value);
      const checked = parseKeyValue(key, parsedValue);
      if (!checked.ok) {
        if (!key.startsWith('agents.') && !isConfigKey(key)) return ctx.usage(unknownKey(key));
        return ctx.fail(formatProblems(checked.problems));
      }
      await checkAgentNameKey(key, checked.value, {
        crewHome: ctx.crewHome,
        projectDir: process.cwd(),
        config: loadConfig(ctx.crewHome).config,
      });
      let stored = checked.value;
      if (isConfigKey(key)) {
        const probe = { ...defaultConfig(), [key]: checked.value };
        const clamped = clampBounds(probe).find((c) => c.key === key);
        if (clamped) {
          stored = clamped.to;
          ctx.err(`${key} ${clamped.from} was raised to ${clamped.to}: ${clamped.reason}`);
          // Audited where it happens, as the daemon audits a clamp it makes at start.
          const sel = new SelWriter({ path: selPath(ctx.crewHome), clock: realClock });
          sel.write({
            event_type: 'config',
            source: 'cli',
            tool_name: 'crew config set',
            outcome: 'config_bounds_clamped',
            metadata: { key, from: clamped.from, to: clamped.to, reason: clamped.reason },
          });
          await sel.close();
        }
      }
      const raw = readConfigFile(ctx.crewHome);
      raw[key] = stored;
      writeConfigFile(ctx.crewHome, raw);
      ctx.out(`${key} = ${JSON.stringify(shownValue(key, stored))}`);
      ctx.err(
        LIVE_KEYS.has(key)
          ? `${key} applies at once (a running daemon reads it when it needs it)`
          : whenApplied(ctx.crewHome),
      );
    });

  config
    .command('unset <key>')
    .description('remove a key, so its default applies')
    .action((key: string) => {
      if (!key.startsWith('agents.') && !isConfigKey(key)) return ctx.usage(unknownKey(key));
      const raw = readConfigFile(ctx.crewHome);
      const had = Object.hasOwn(raw, key);
      delete raw[key];
      writeConfigFile(ctx.crewHome, raw);
      ctx.out(had ? `${key} unset (default ${JSON.stringify(defaultOf(key))})` : `${key} was not set`);
      if (had) ctx.err(whenApplied(ctx.crewHome));
    });

  config
    .command('list')
    .description('every key with its effective value; * marks the ones you set')
    .option('--json', 'print as JSON')
    .action((options: { json?: boolean }) => {
      const raw = readConfigFile(ctx.crewHome);
      const effective = loadConfig(ctx.crewHome).config as unknown as Record<string, unknown>;
      if (options.json) {
        const shown = Object.fromEntries(Object.entries(effective).map(([k, v]) => [k, shownValue(k, v)]));
        ctx.out(JSON.stringify(shown, null, 2));
        return;
      }
      const width = Math.max(...Object.keys(CONFIG_KEYS).map((k) => k.length));
      for (const key of Object.keys(CONFIG_KEYS)) {
        const mark = Object.hasOwn(raw, key) ? '*' : ' ';
        ctx.out(`${mark} ${key.padEnd(width)}  ${JSON.stringify(shownValue(key, effective[key]))}`);
      }
      for (const name of Object.keys(effective.agents as object)) ctx.out(`* agents.${name}`);
    });
}

/**
 * When a change takes effect: the daemon reads its configuration once, at start, so a running one
 * applies it at its next start.
 */
export function whenApplied(crewHome: string): string {
  const running = readGatewayFile(crewHome);
  if (running && isAlive(running.pid)) {
    return `the running daemon (pid ${running.pid}, ${running.url}) applies this at its next start; restart crew serve to apply it now`;
  }
  return 'no daemon is running; the next crew serve (or crew mcp) applies this when it starts';
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `8` → 8, `true` → true, `["/a"]` → array, `tail` → "tail". */
export function parseCliValue(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function defaultOf(key: string): unknown {
  return isConfigKey(key) ? CONFIG_KEYS[key].default : undefined;
}

function unknownKey(key: string): string {
  const stem = key.split('.').at(-1) ?? key;
  const near = Object.keys(CONFIG_KEYS).filter((k) => k.includes(stem.slice(0, 6)));
  return `unknown configuration key "${key}"${near.length > 0 ? `; did you mean ${near.slice(0, 3).join(', ')}?` : '; see crew config list'}`;
}
