import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentDef } from '../core/agent-def.js';
import { CrewError, refuse } from '../core/errors.js';
import { entryCommand } from '../self-command.js';
import type { SandboxLauncher } from './workspaces.js';

/** Where secrets live in a home directory: hidden from every sandboxed agent (besides CREW_HOME). */
export const DEFAULT_HIDDEN = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.config/gh',
  '.kube',
  '.docker',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
];

export interface BwrapSandboxOptions {
  /** `workspace.bwrap_path`. */
  bwrap: string;
  /** CREW_HOME: hidden (its token, database and transcripts); a run's worktree under it is bound back. */
  crewHome: string;
  /** `workspace.sandbox_hidden_paths`: more paths hidden. */
  hiddenPaths: readonly string[];
  /** `workspace.sandbox_writable_paths`: more paths writable (those that exist). */
  writablePaths?: readonly string[];
  /** The loopback ports a sandboxed agent may reach (the provider gateway's, Crew's own). */
  allowedPorts: () => number[];
  /** @default os.homedir() */
  home?: string;
  /** Where each run's private directory is made. @default os.tmpdir() */
  tmpRoot?: string;
  /** How to start the network bridge. @default Crew's own `workspace/net-bridge-main` entry */
  bridgeCommand?: string[];
}

/**
 * Runs a run's agent under bubblewrap (issue 31): every namespace new (user, pid, net, ipc, uts, cgroup),
 * the whole filesystem read-only, home-directory secrets and CREW_HOME hidden behind empty mounts, and
 * writable only the run's worktree (or cwd), its git administrative directory and a private temp dir. The
 * network namespace has only loopback; a bridge inside listens on each allowed port and forwards to a unix
 * socket that Crew serves outside, connected to the same port on the host's loopback. Nothing else
 * reaches out. What it leaves out is in docs/decisions.md.
 */
export class BwrapSandbox implements SandboxLauncher {
  constructor(private readonly options: BwrapSandboxOptions) {}

  async wrap(runId: string, agent: AgentDef, writable: string[]) {
    const bridge = this.options.bridgeCommand
      ? { ok: true as const, command: this.options.bridgeCommand }
      : entryCommand('workspace/net-bridge-main');
    if (!bridge.ok)
      throw new CrewError(
        refuse(
          'sandbox_unavailable',
          `the sandbox's network bridge is missing (${bridge.missing}); rebuild Crew (npm run build) or run without sandbox: true`,
        ),
      );
    const dir = await mkdtemp(join(this.options.tmpRoot ?? tmpdir(), `crew-sandbox-${runId}-`));
    const tmp = join(dir, 'tmp');
    const net = join(dir, 'net');
    await mkdir(tmp, { mode: 0o700 });
    await mkdir(net, { mode: 0o700 });
    const servers: Server[] = [];
    const maps: string[] = [];
    try {
      for (const port of new Set(this.options.allowedPorts())) {
        const socket = join(net, `${port}.sock`);
        servers.push(await forward(socket, port));
        maps.push('--map', `${port}=${socket}`);
      }
    } catch (error) {
      for (const server of servers) server.close();
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    const args = [
      this.options.bwrap,
      '--die-with-parent',
      '--unshare-all',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      ...this.hide(),
      '--bind',
      tmp,
      tmp,
      '--bind',
      net,
      net,
      ...[...writable, ...(this.options.writablePaths ?? []).filter((p) => existsSync(p))].flatMap((path) => [
        '--bind',
        path,
        path,
      ]),
      '--setenv',
      'TMPDIR',
      tmp,
      // An agent's own state (sessions, logs) goes to the private temp dir: its home is read-only.
      '--setenv',
      'XDG_DATA_HOME',
      join(tmp, 'data'),
      '--setenv',
      'XDG_STATE_HOME',
      join(tmp, 'state'),
      '--',
      // No port to reach: no bridge to start (the namespace has no network at all).
      ...(maps.length > 0 ? [...bridge.command, ...maps, '--'] : []),
      ...agent.command,
    ];
    return {
      agent: { ...agent, command: args },
      close: async () => {
        for (const server of servers) server.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  }

  /** Empty mounts over every hidden path that exists: a tmpfs over a directory, /dev/null over a file. */
  private hide(): string[] {
    const home = this.options.home ?? homedir();
    const paths = [
      ...DEFAULT_HIDDEN.map((p) => join(home, p)),
      this.options.crewHome,
      ...this.options.hiddenPaths,
    ];
    const out: string[] = [];
    for (const path of paths) {
      if (!existsSync(path)) continue;
      if (statSync(path).isDirectory()) out.push('--tmpfs', path);
      else out.push('--ro-bind', '/dev/null', path);
    }
    return out;
  }
}

/** A unix socket whose every connection is piped to 127.0.0.1:port. */
async function forward(socket: string, port: number): Promise<Server> {
  const server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  return server;
}
