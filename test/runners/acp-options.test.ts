import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { PermissionPolicy } from '../../src/runners/acp-permission.js';
import { AcpRunner } from '../../src/runners/acp-runner.js';
import { DEFAULT_ANSWER } from '../../src/sim/answer.js';
import { infoOf, simAgent } from '../helpers/sim.js';
import { useRunner } from './runner-conformance.js';

describe.each([
  ['allow', 'permission: allowed\n', 'allow_once'],
  ['reject', 'permission: rejected\n', 'reject_once'],
] as const)('ACP runner: permission policy %s', (policy: PermissionPolicy, line, chosen) => {
  const fixture = useRunner(() => new AcpRunner({ clock: realClock, permissionPolicy: policy }));

  it.each([false, true])('answers `ask` accordingly (shared runtime: %s)', async (shared) => {
    const r = fixture.start(simAgent({ shared }), '#sim ask', { shared });
    expect(await r.ended).toMatchObject({ status: 'completed' });
    // The transcript records the answer Crew gave, on a line of its own, then the agent's own words.
    expect(r.output()).toMatch(new RegExp(`^\\[permission\\] .*: ${chosen} \\(policy ${policy}\\)\n`));
    expect(r.output().replace(/^\[permission\] .*\n/, '')).toBe(`${line}${DEFAULT_ANSWER}`);
  });
});

describe('ACP runner: session setup', () => {
  const fixture = useRunner(() => new AcpRunner({ clock: realClock }));
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'crew-acp-')));
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));

  it('opens the session in the run’s cwd with the run’s MCP servers (HTTP, with headers)', async () => {
    const r = fixture.start(simAgent(), '#sim info', {
      cwd,
      mcpServers: [
        { name: 'crew', url: 'http://127.0.0.1:7777/mcp', headers: { Authorization: 'Bearer t' } },
      ],
    });
    await r.ended;
    expect(infoOf(r.output())).toMatchObject({
      cwd,
      mcpServers: [
        { name: 'crew', type: 'http', url: 'http://127.0.0.1:7777/mcp', headers: ['Authorization'] },
      ],
    });
  });

  it('sets model and effort through the config options the agent advertises', async () => {
    const r = fixture.start(simAgent({ args: ['--config-options'] }), '#sim info', {
      model: 'sim-large',
      reasoningEffort: 'high',
    });
    await r.ended;
    expect(infoOf(r.output())).toMatchObject({ model: 'sim-large', effort: 'high' });
  });

  it('fails the run when the agent rejects the model', async () => {
    const r = fixture.start(simAgent({ args: ['--config-options'] }), 'hello', { model: 'gpt-9' });
    const ended = await r.ended;
    expect(ended.status).toBe('failed');
    expect(ended.error).toMatch(
      /^could not set model to "gpt-9": session\/set_config_option failed: .*no value "gpt-9"/,
    );
  });

  it('puts model and effort into argv placeholders when the agent advertises no option', async () => {
    const agent = simAgent({ args: ['--model', '{model}', '--effort={effort}'] });
    const r = fixture.start(agent, '#sim info', { model: 'm-x', reasoningEffort: 'low' });
    await r.ended;
    expect(infoOf(r.output())).toMatchObject({ model: 'm-x', effort: 'low' });
  });

  it('uses the agent’s own model and drops placeholders that have no value', async () => {
    const agent = {
      ...simAgent({ args: ['--model', '{model}', '--effort={effort}'] }),
      model: 'agent-model',
    };
    const r = fixture.start(agent, '#sim info');
    expect(await r.ended).toMatchObject({ status: 'completed' });
    expect(infoOf(r.output())).toMatchObject({ model: 'agent-model', effort: null });
  });

  it('a model or effort the agent can take neither by option nor by argv is a warning in the transcript, never dropped in silence', async () => {
    const r = fixture.start(simAgent(), 'hello', { model: 'm-x', reasoningEffort: 'high' });
    expect(await r.ended).toMatchObject({ status: 'completed' });
    // At the head of the transcript, where the completion event's preview shows it to the parent.
    expect(r.output()).toMatch(/^\[crew warning\] agent \S+ cannot take model "m-x": .*\n/);
    expect(r.output()).toMatch(/\[crew warning\] agent \S+ cannot take reasoning_effort "high": .*\n/);
  });

  it('no warning when the option or the argv takes it', async () => {
    const byOption = fixture.start(simAgent({ args: ['--config-options'] }), 'hello', { model: 'sim-large' });
    await byOption.ended;
    expect(byOption.output()).not.toMatch(/crew warning/);
    const byArgv = fixture.start(simAgent({ args: ['--model', '{model}'] }), 'hello', { model: 'm-x' });
    await byArgv.ended;
    expect(byArgv.output()).not.toMatch(/crew warning/);
  });
});
