import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/daemon-process.js';
import { ensureCli, INSTALL_TIMEOUT_MS, type Rig, runStatus, startRig, waitEnded } from './real-agent-rig.js';

/**
 * Issue 31 with a real agent: opencode, on the scripted provider through Crew's provider gateway, runs in
 * its own worktree under the sandbox, and the file its shell tool call writes lands on its branch while
 * the parent's checkout stays as it was.
 */
describe('opencode in a worktree and a sandbox (real CLI, scripted provider)', () => {
  let rig: Rig;
  let cache = '';
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', rig.cwd, ...args], {
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    }).trim();

  beforeAll(async () => {
    // Its home is read-only in the sandbox, and opencode writes its cache (the provider package it
    // loads): the cache is a directory the sandbox lets it write (workspace.sandbox_writable_paths).
    cache = mkdtempSync(join(tmpdir(), 'crew-opencode-cache-'));
    rig = await startRig(
      'opencode',
      await ensureCli('opencode'),
      { 'workspace.sandbox_writable_paths': [cache] },
      { viaGateway: 'openai' },
    );
    // opencode also writes into its config directory (a .gitignore): that moves into the writable place too.
    // The daemon may have made that directory already (its native spawner is built there): it moves too.
    const homeCache = join(rig.home, '.cache');
    if (existsSync(homeCache)) renameSync(homeCache, join(cache, 'cache'));
    else mkdirSync(join(cache, 'cache'));
    symlinkSync(join(cache, 'cache'), homeCache);
    renameSync(join(rig.home, '.config', 'opencode'), join(cache, 'config'));
    symlinkSync(join(cache, 'config'), join(rig.home, '.config', 'opencode'));
    // The agent's provider is Crew's gateway (the only address its sandbox reaches).
    const config = join(cache, 'config', 'opencode.json');
    const settings = JSON.parse(readFileSync(config, 'utf8'));
    settings.provider.fake.options.baseURL = '{env:CREW_PROVIDER_BASE_URL}/v1';
    writeFileSync(config, JSON.stringify(settings));
    execFileSync('git', ['init', '-q', '-b', 'main', rig.cwd]);
    writeFileSync(join(rig.cwd, 'readme.md'), 'parent\n');
    git('add', '.');
    git('commit', '-qm', 'init');
  }, INSTALL_TIMEOUT_MS + 30_000);
  afterAll(async () => {
    await rig?.close();
    if (cache) rmSync(cache, { recursive: true, force: true });
  });

  it('writes a file through its shell tool inside its worktree and sandbox; the branch has it, the parent does not', async () => {
    const head = git('rev-parse', 'HEAD');
    const spawned = await api(rig.daemon, 'POST', '/api/spawn', {
      parent: 'cli:real-agents',
      args: {
        task: '#fake shell="echo made-by-opencode > proof.txt" then="wrote the proof"',
        agent: 'opencode',
        cwd: rig.cwd,
        isolation: 'worktree',
        sandbox: true,
      },
    });
    const id = (spawned.body.runs as { id: string }[] | undefined)?.[0]?.id;
    expect(id, JSON.stringify(spawned.body)).toBeDefined();
    const { run, text } = await waitEnded(rig, id as string);
    expect(run.status, `${run.error} / ${text}`).toBe('completed');
    expect(text).toContain('wrote the proof');
    const status = await runStatus(rig, id as string);
    const ws = (
      status.run as unknown as {
        workspace?: { branch: string; sandbox?: boolean; files?: { path: string }[] };
      }
    ).workspace;
    expect(ws?.sandbox).toBe(true);
    expect(ws?.files?.map((f) => f.path)).toEqual(['proof.txt']);
    expect(git('show', `crew/${id}:proof.txt`)).toBe('made-by-opencode');
    expect(git('rev-parse', 'HEAD')).toBe(head);
    expect(git('status', '--porcelain')).toBe('');
  }, 180_000);
});
