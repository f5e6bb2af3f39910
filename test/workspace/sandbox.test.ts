import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import type { Gateway } from '../../src/gateway/gateway.js';
import type { Runner } from '../../src/runners/runner.js';
import { BwrapSandbox } from '../../src/workspace/sandbox.js';
import { Workspaces } from '../../src/workspace/workspaces.js';
import { eventsUntil, makeRepo, makeWorkspaceGateway, sh, snapshot, workspaceConfig } from './git-rig.js';

const open: { gateway: Gateway; runner: Runner; dir: string; servers: Server[] }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.gateway.close();
    await o.runner.close();
    for (const s of o.servers) s.close();
    rmSync(o.dir, { recursive: true, force: true });
  }
});

/** A loopback TCP server that answers every connection with `hello <name>`. */
async function greeter(name: string): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.end(`hello ${name}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

/** A command agent that tries what a sandbox must refuse and says what happened, one line each. */
const PROBE = `
const fs = require('fs'); const net = require('net');
const [secret, outside, allowed, denied, token] = JSON.parse(process.argv[1]);
const say = (k, v) => console.log(k + ': ' + v);
const tryIt = (k, f) => { try { say(k, 'ok ' + f()); } catch (e) { say(k, 'failed ' + e.code); } };
tryIt('read-secret', () => fs.readFileSync(secret, 'utf8'));
tryIt('read-token', () => fs.readFileSync(token, 'utf8'));
tryIt('write-outside', () => { fs.writeFileSync(outside, 'escaped'); return outside; });
tryIt('write-tmp', () => { fs.writeFileSync('/tmp/crew-sandbox-escape', 'x'); return 'x'; });
tryIt('write-private-tmp', () => { fs.writeFileSync(require('path').join(process.env.TMPDIR, 'x'), 'x'); return 'x'; });
tryIt('write-worktree', () => { fs.writeFileSync('inside.txt', 'made in the sandbox'); return 'inside.txt'; });
// Each dial says one line: the first of its answer, its error or its timeout.
const dial = (k, port, host) => new Promise((resolve) => {
  const s = net.connect(port, host);
  let got = '';
  let said = false;
  const once = (v) => { if (said) return; said = true; clearTimeout(timer); say(k, v); s.destroy(); resolve(); };
  const timer = setTimeout(() => once('failed timeout'), 3000);
  s.on('data', (d) => { got += d; });
  s.on('end', () => once('ok ' + got));
  s.on('error', (e) => once('failed ' + e.code));
});
(async () => {
  await dial('connect-allowed', allowed, '127.0.0.1');
  await dial('connect-denied', denied, '127.0.0.1');
  await dial('connect-internet', 443, '1.1.1.1');
})();
`;

describe('sandbox: true (issue 31)', () => {
  it('runs the agent under bubblewrap in its worktree: it cannot read ~/.ssh or CREW_HOME, write outside its worktree or reach any port but the allowed one', async () => {
    const { dir, repo } = makeRepo();
    const home = join(dir, 'home');
    const crewHome = join(home, '.crew');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY');
    mkdirSync(crewHome, { recursive: true });
    writeFileSync(join(crewHome, 'token'), 'operator-token');
    const allowed = await greeter('provider-gateway');
    const denied = await greeter('anything-else');
    const config = workspaceConfig(dir);
    const workspaces = new Workspaces({
      root: join(crewHome, 'worktrees'),
      clock: realClock,
      gitTimeoutMs: 30_000,
      unmergedKeepMs: 0,
      maxBranches: 100,
      conflictCheckMax: 10,
      sandbox: new BwrapSandbox({
        bwrap: 'bwrap',
        crewHome,
        hiddenPaths: [],
        home,
        allowedPorts: () => [allowed.port],
      }),
    });
    const probe: AgentDef = {
      name: 'probe',
      runner: 'command',
      command: [process.execPath, '-e', PROBE, '{task}'],
      shared: false,
      skills: [],
    };
    const { gateway, runner } = makeWorkspaceGateway(dir, config, workspaces, undefined, [probe]);
    open.push({ gateway, runner, dir, servers: [allowed.server, denied.server] });
    const before = snapshot(repo);
    const outside = join(repo, 'escaped.txt');
    const spawned = gateway.spawn('mcp:sbx', {
      task: JSON.stringify([
        join(home, '.ssh', 'id_ed25519'),
        outside,
        allowed.port,
        denied.port,
        join(crewHome, 'token'),
      ]),
      agent: 'probe',
      isolation: 'worktree',
      sandbox: true,
      cwd: repo,
    });
    if (!spawned.ok) throw new Error(JSON.stringify(spawned));
    const id = spawned.runs[0]?.id as string;
    await eventsUntil(gateway, 'mcp:sbx', (e) => e.some((x) => x.run_ids.includes(id)));
    const status = await gateway.status(id, { kind: 'operator' });
    if (!status.ok) throw new Error(JSON.stringify(status));
    const said = new Map(
      (status.text ?? '')
        .split('\n')
        .filter((l) => l.includes(': '))
        .map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]),
    );
    expect(status.run.status, status.text).toBe('completed');
    expect(said.get('read-secret')).toMatch(/^failed /);
    expect(said.get('read-token')).toMatch(/^failed /);
    expect(said.get('write-outside')).toMatch(/^failed (EROFS|EACCES)/);
    expect(said.get('write-tmp')).toMatch(/^failed (EROFS|EACCES)/);
    expect(said.get('write-private-tmp')).toBe('ok x');
    expect(said.get('write-worktree')).toBe('ok inside.txt');
    expect(said.get('connect-allowed')).toBe('ok hello provider-gateway');
    expect(said.get('connect-denied')).toMatch(/^failed /);
    expect(said.get('connect-internet')).toMatch(/^failed /);
    expect(status.run.workspace?.sandbox).toBe(true);
    // What it wrote inside is on its branch; nothing of the parent's moved; the secret is intact.
    expect(sh(repo, 'show', `crew/${id}:inside.txt`)).toBe('made in the sandbox');
    expect(snapshot(repo)).toBe(before);
    expect(readFileSync(join(home, '.ssh', 'id_ed25519'), 'utf8')).toBe('PRIVATE KEY');
  }, 60_000);

  it('refuses sandbox_unavailable where bubblewrap is missing, admitting nothing (never a run without it)', async () => {
    const { dir } = makeRepo();
    const config = workspaceConfig(dir, { 'workspace.bwrap_path': join(dir, 'no-bwrap') });
    const workspaces = new Workspaces({
      root: join(dir, 'worktrees'),
      clock: realClock,
      gitTimeoutMs: 30_000,
      unmergedKeepMs: 0,
      maxBranches: 100,
      conflictCheckMax: 10,
    });
    const { gateway, runner } = makeWorkspaceGateway(dir, config, workspaces);
    open.push({ gateway, runner, dir, servers: [] });
    const refused = gateway.spawn('mcp:sbx', { task: 'a=1', sandbox: true });
    expect(refused).toMatchObject({ ok: false, refusal: { code: 'sandbox_unavailable' } });
    expect(gateway.list({ kind: 'operator' }).runs).toHaveLength(0);
  });
});
