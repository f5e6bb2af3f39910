import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../../src/clock/real-clock.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import type { CrewConfig } from '../../src/core/config-schema.js';
import { defaultConfig } from '../../src/core/config-schema.js';
import { createGateway } from '../../src/gateway/create-gateway.js';
import type { Gateway } from '../../src/gateway/gateway.js';
import type { DeliveredEvent } from '../../src/gateway/relay.js';
import { AcpRunner } from '../../src/runners/acp-runner.js';
import { CommandRunner } from '../../src/runners/command-runner.js';
import type { Runner } from '../../src/runners/runner.js';
import type { SelSink } from '../../src/sel/sel-sink.js';
import { Workspaces } from '../../src/workspace/workspaces.js';
import { simCommand } from '../helpers/sim.js';

/** A real git repository and a gateway whose `writer` agent writes the files its task names. */

export function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-C', cwd, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  }).trim();
}

/** A repository on `main` with a few committed files. */
export function makeRepo(): { dir: string; repo: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crew-ws-')));
  const repo = join(dir, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  execFileSync('sh', [
    '-c',
    `cd ${repo} && printf 'one\\ntwo\\nthree\\n' > shared.txt && echo base > readme.md`,
  ]);
  sh(repo, 'add', '.');
  sh(repo, 'commit', '-qm', 'init');
  return { dir, repo };
}

/**
 * The parent's checkout as bytes: HEAD, the branch ref, the index file and every tracked and untracked
 * file's content. Equal snapshots = nothing of the parent's moved.
 */
export function snapshot(repo: string): string {
  const files = sh(repo, 'ls-files', '-co', '--exclude-standard').split('\n').filter(Boolean).sort();
  return JSON.stringify({
    head: readFileSync(join(repo, '.git/HEAD'), 'utf8'),
    ref: sh(repo, 'rev-parse', 'refs/heads/main'),
    index: readFileSync(join(repo, '.git/index')).toString('base64'),
    status: sh(repo, 'status', '--porcelain'),
    files: files.map((f) => [f, readFileSync(join(repo, f), 'utf8')]),
  });
}

/** `node -e` writing each `path=content` of its task (`;`-separated) under its cwd; `hang` sleeps. */
const WRITER = `
const fs = require('fs'); const path = require('path');
const task = process.argv[1] ?? '';
for (const part of task.split(';')) {
  const m = /^([^=]+)=(.*)$/.exec(part.trim());
  if (m) { fs.mkdirSync(path.dirname(m[1]), { recursive: true }); fs.writeFileSync(m[1], m[2].replace(/\\\\n/g, '\\n')); }
}
console.log('wrote in ' + process.cwd());
if (task.includes('hang')) setInterval(() => {}, 1000);
`;

export const writerAgent: AgentDef = {
  name: 'writer',
  runner: 'command',
  command: [process.execPath, '-e', WRITER, '{task}'],
  shared: false,
  skills: [],
};

export function workspaceConfig(dir: string, extra: Partial<CrewConfig> = {}): CrewConfig {
  return {
    ...defaultConfig(),
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
    'agent.subagent_cwd_allowed_roots': [dir],
    'agent.default_agent': 'writer',
    ...extra,
  };
}

export function makeWorkspaces(dir: string, config: CrewConfig): Workspaces {
  return new Workspaces({
    root: join(dir, 'worktrees'),
    clock: realClock,
    gitTimeoutMs: 30_000,
    unmergedKeepMs: config['workspace.unmerged_keep_secs'] * 1000,
    maxBranches: config['workspace.max_branches'],
    conflictCheckMax: config['workspace.conflict_check_max'],
  });
}

export function makeWorkspaceGateway(
  dir: string,
  config: CrewConfig,
  workspaces: Workspaces,
  reaperIntervalMs?: number,
  more: AgentDef[] = [],
  sel?: SelSink,
): { gateway: Gateway; runner: Runner } {
  const command = new CommandRunner({ clock: realClock, killGraceMs: 1000 });
  const acp = new AcpRunner({ clock: realClock, killGraceMs: 1000, requestTimeoutMs: 10_000 });
  const runner: Runner = {
    start: () => {
      throw new Error('the gateway chooses a runner per agent');
    },
    release: async () => undefined,
    close: async () => {
      await Promise.all([command.close(), acp.close()]);
    },
  };
  const sim: AgentDef = { name: 'sim', runner: 'acp', command: simCommand(), shared: false, skills: [] };
  const gateway = createGateway(config, {
    runnerFor: (agent) => (agent.runner === 'command' ? command : acp),
    agents: new Map([
      ['writer', writerAgent],
      ['sim', sim],
      ...more.map((a): [string, AgentDef] => [a.name, a]),
    ]),
    cap: 3,
    defaultCwd: dir,
    workspaces,
    ...(sel ? { sel } : {}),
    ...(reaperIntervalMs !== undefined ? { reaperIntervalMs } : {}),
  });
  return { gateway, runner };
}

/** Waits for this parent's events until `done` says so (bounded). */
export async function eventsUntil(
  gateway: Gateway,
  parent: string,
  done: (events: DeliveredEvent[]) => boolean,
  timeoutMs = 30_000,
): Promise<DeliveredEvent[]> {
  const events: DeliveredEvent[] = [];
  const deadline = Date.now() + timeoutMs;
  while (!done(events)) {
    if (Date.now() > deadline) throw new Error(`timed out; events so far: ${JSON.stringify(events)}`);
    events.push(...(await gateway.waitForEvents(parent, 1000)));
  }
  return events;
}

/** Gateways a test file opened, closed with their runners and scratch folders after each case. */
export function openGateways(): {
  open: { gateway: Gateway; runner: Runner; dir: string }[];
  closeAll: () => Promise<void>;
} {
  const open: { gateway: Gateway; runner: Runner; dir: string }[] = [];
  const closeAll = async () => {
    for (const o of open.splice(0)) {
      await o.gateway.close();
      await o.runner.close();
      rmSync(o.dir, { recursive: true, force: true });
    }
  };
  return { open, closeAll };
}
