import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkAgent } from '../../src/agents/check-agent.js';
import { realClock } from '../../src/clock/real-clock.js';
import { runCrew } from '../cli/run-crew.js';
import { bundledCommand } from '../helpers/test-bundle.js';

/** `crew agents` and `crew agents check` with real processes: the simulator, a missing CLI, the CLI itself. */

const home = mkdtempSync(join(tmpdir(), 'crew-agents-check-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('crew agents check', () => {
  it('says ok for an agent that answers initialize and session/new', async () => {
    const result = await checkAgent(
      { name: 'sim', runner: 'acp', command: bundledCommand('sim/main'), shared: false, skills: [] },
      { clock: realClock, env: process.env, timeoutMs: 20_000 },
    );
    expect(result).toMatchObject({ name: 'sim', outcome: 'ok' });
  }, 30_000);

  it('says not installed, with the preset it matches, and the env variables left unset', async () => {
    const result = await checkAgent(
      {
        name: 'claude',
        runner: 'acp',
        command: ['claude-agent-acp-surely-missing'],
        shared: false,
        skills: [],
        env: { ANTHROPIC_API_KEY: `\${CREW_TEST_SURELY_UNSET_VAR}` },
      },
      { clock: realClock, env: { PATH: '/nonexistent' }, timeoutMs: 5000 },
    );
    expect(result).toMatchObject({ outcome: 'not_installed', missingEnv: ['CREW_TEST_SURELY_UNSET_VAR'] });
    expect(result.message).toMatch(/not on PATH/);
  });

  it('says failed, with the reason, for an agent that exits at once', async () => {
    const result = await checkAgent(
      {
        name: 'broken',
        runner: 'acp',
        command: [process.execPath, '-e', 'process.exit(3)'],
        shared: false,
        skills: [],
      },
      { clock: realClock, env: process.env, timeoutMs: 5000 },
    );
    expect(result.outcome).toBe('failed');
    expect(result.message).toMatch(/exited with code 3/);
  });

  it('the CLI: lists env keys only and the presets with their enable line; check exits 1 on a failure', async () => {
    mkdirSync(join(home, 'agents'), { recursive: true });
    writeFileSync(
      join(home, 'agents', 'secretive.md'),
      '---\ncommand: definitely-not-installed-cli acp\nenv:\n  API_TOKEN: sk-very-secret-value\n---\n',
    );
    const env = { CREW_HOME: home, PATH: '/nonexistent' };
    const listed = await runCrew(['agents', '--json'], env);
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).not.toContain('sk-very-secret-value');
    const body = JSON.parse(listed.out);
    expect(body.agents.find((a: { name: string }) => a.name === 'secretive')).toMatchObject({
      env_keys: ['API_TOKEN'],
    });
    expect(body.presets.map((p: { name: string }) => p.name)).toEqual([
      'claude',
      'codex',
      'gemini',
      'opencode',
      'kiro',
      'goose',
    ]);
    expect(body.presets[0]).toMatchObject({
      installed: false,
      enable: expect.stringMatching(/^crew config set agents\.claude '/),
    });
    const table = await runCrew(['agents'], env);
    expect(table.out).toContain('API_TOKEN');
    expect(table.out).not.toContain('sk-very-secret-value');
    expect(table.out).toMatch(/kiro +not installed \(kiro-cli\)/);

    const checked = await runCrew(['agents', 'check', 'secretive', '--json'], env);
    expect(checked.code).toBe(1);
    expect(JSON.parse(checked.out).results[0]).toMatchObject({ name: 'secretive', outcome: 'not_installed' });
    expect((await runCrew(['agents', 'check', 'nobody'], env)).code).toBe(2);
  }, 60_000);
});
