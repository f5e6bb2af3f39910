import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crewCommand, type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';
import { call, httpClient } from './mcp-http-client.js';

/** A command agent that prints `word`, written aside and renamed in (never seen half written). */
function writeAgent(dir: string, name: string, word: string): void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.md`);
  const command = JSON.stringify([process.execPath, '-e', `console.log(${JSON.stringify(word)})`]);
  writeFileSync(`${path}.tmp`, `---\nname: ${name}\nrunner: command\ncommand: ${command}\n---\n`);
  renameSync(`${path}.tmp`, path);
}

/** Spawns one run of `agent` and waits for it; its status and transcript. */
async function runOnce(client: Client, args: Record<string, unknown>) {
  const spawned = await call(client, 'spawn_run', { task: 'say it', ...args });
  if (!spawned.ok) return { refusal: spawned.refusal?.code };
  const id = (spawned.runs as { id: string }[])[0]!.id;
  await call(client, 'spawn_wait', { timeout_secs: 30 });
  const status = await call(client, 'spawn_status', { agent_id: id });
  return { status: (status.run as { status: string }).status, text: String(status.text) };
}

describe('a running daemon sees agent files added and changed, and each parent its own project agents', () => {
  let d: DaemonProcess;
  let projects: string;
  beforeAll(async () => {
    projects = realpathSync(mkdtempSync(join(tmpdir(), 'crew-projects-')));
    d = await startDaemonProcess({ config: { 'agent.subagent_cwd_allowed_roots': [projects] } });
  }, 30_000);
  afterAll(async () => {
    expect(await d.stop()).toBe(0);
    d.cleanup();
    rmSync(projects, { recursive: true, force: true });
  });

  it('an agent file added to $CREW_HOME/agents after the start is spawnable at once, and its edit is used', async () => {
    const client = await httpClient(d);
    try {
      expect(await runOnce(client, { agent: 'late' })).toEqual({ refusal: 'unknown_agent' });
      writeAgent(join(d.home, 'agents'), 'late', 'first-version');
      const first = await runOnce(client, { agent: 'late' });
      expect(first.status).toBe('completed');
      expect(first.text).toContain('first-version');
      writeAgent(join(d.home, 'agents'), 'late', 'second-version');
      const second = await runOnce(client, { agent: 'late' });
      expect(second.text).toContain('second-version');
    } finally {
      await client.close();
    }
  }, 60_000);

  it("crew mcp started in a project finds that project's .crew/agents; another parent does not", async () => {
    const project = join(projects, 'alpha');
    writeAgent(join(project, '.crew', 'agents'), 'alpha-agent', 'from-alpha');
    const [node, args] = crewCommand(['mcp']);
    const bridge = new Client({ name: 'project-parent', version: '1' });
    await bridge.connect(
      new StdioClientTransport({
        command: node,
        args,
        cwd: project,
        env: { ...(process.env as Record<string, string>), CREW_HOME: d.home, CREW_URL: d.url },
        stderr: 'pipe',
      }),
    );
    const elsewhere = await httpClient(d);
    try {
      const run = await runOnce(bridge, { agent: 'alpha-agent' });
      expect(run.status).toBe('completed');
      expect(run.text).toContain('from-alpha');
      expect(await runOnce(elsewhere, { agent: 'alpha-agent' })).toEqual({ refusal: 'unknown_agent' });
    } finally {
      await bridge.close();
      await elsewhere.close();
    }
  }, 60_000);

  it("a spawn's cwd brings that directory's project agents, even ones written after the daemon started", async () => {
    const project = join(projects, 'beta');
    mkdirSync(project);
    const client = await httpClient(d);
    try {
      expect(await runOnce(client, { agent: 'beta-agent', cwd: project })).toEqual({
        refusal: 'unknown_agent',
      });
      writeAgent(join(project, '.crew', 'agents'), 'beta-agent', 'from-beta');
      const run = await runOnce(client, { agent: 'beta-agent', cwd: project });
      expect(run.status).toBe('completed');
      expect(run.text).toContain('from-beta');
      // The refusal order holds: an unknown agent with a directory outside the roots is still unknown_agent.
      expect(await runOnce(client, { agent: 'beta-agent', cwd: '/etc' })).toEqual({
        refusal: 'unknown_agent',
      });
      expect(await runOnce(client, { cwd: '/etc' })).toEqual({ refusal: 'cwd_not_allowed' });
    } finally {
      await client.close();
    }
  }, 60_000);
});
