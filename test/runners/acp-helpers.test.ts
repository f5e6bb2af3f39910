import type * as acp from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import { fillArgv } from '../../src/runners/acp-argv.js';
import { configValueFor, findConfigOption } from '../../src/runners/acp-config-options.js';
import { answerPermission } from '../../src/runners/acp-permission.js';
import { describeExit } from '../../src/runners/acp-process.js';
import { allowsFollowUp, endedFor } from '../../src/runners/acp-stop-reason.js';

describe('fillArgv', () => {
  it('fills placeholders, whole or inside an argument', () => {
    expect(
      fillArgv(['agent', '--model', '{model}', '--effort={effort}'], { model: 'm', effort: 'high' }),
    ).toEqual(['agent', '--model', 'm', '--effort=high']);
  });

  it('drops an argument whose placeholder has no value, and the flag right before a bare one', () => {
    expect(fillArgv(['agent', '--model', '{model}', '--effort={effort}', 'acp'], {})).toEqual([
      'agent',
      'acp',
    ]);
  });

  it('keeps a positional argument before a bare placeholder', () => {
    expect(fillArgv(['agent', 'acp', '{model}'], {})).toEqual(['agent', 'acp']);
    expect(fillArgv(['agent', '--x=1', '{model}'], {})).toEqual(['agent', '--x=1']);
  });

  it('leaves argv without placeholders alone', () => {
    expect(fillArgv(['kiro-cli', 'acp'], { model: 'm' })).toEqual(['kiro-cli', 'acp']);
  });
});

describe('answerPermission', () => {
  const options: acp.PermissionOption[] = [
    { optionId: 'always', name: 'Always', kind: 'allow_always' },
    { optionId: 'once', name: 'Once', kind: 'allow_once' },
    { optionId: 'no', name: 'No', kind: 'reject_once' },
  ];

  it('prefers the one-time option of the policy', () => {
    expect(answerPermission(options, 'allow')).toEqual({
      outcome: { outcome: 'selected', optionId: 'once' },
    });
    expect(answerPermission(options, 'reject')).toEqual({ outcome: { outcome: 'selected', optionId: 'no' } });
  });

  it('falls back to the lasting option of the same kind', () => {
    expect(answerPermission(options.slice(0, 1), 'allow')).toEqual({
      outcome: { outcome: 'selected', optionId: 'always' },
    });
  });

  it('never picks an option of the other kind', () => {
    expect(answerPermission(options.slice(0, 2), 'reject')).toEqual({ outcome: { outcome: 'cancelled' } });
    expect(answerPermission(options.slice(2), 'allow')).toEqual({ outcome: { outcome: 'cancelled' } });
  });
});

describe('config options', () => {
  const model: acp.SessionConfigOption = {
    type: 'select',
    id: 'llm',
    name: 'Model',
    category: 'model',
    currentValue: 'a',
    options: [
      { group: 'fast', name: 'Fast', options: [{ value: 'a', name: 'Alpha' }] },
      { group: 'big', name: 'Big', options: [{ value: 'b-2025', name: 'Beta' }] },
    ],
  };
  const effort: acp.SessionConfigOption = {
    type: 'select',
    id: 'reasoning_effort',
    name: 'Effort',
    currentValue: 'medium',
    options: [
      { value: 'low', name: 'Low' },
      { value: 'high', name: 'High' },
    ],
  };
  const toggle: acp.SessionConfigOption = { type: 'boolean', id: 'model', name: 'x', currentValue: true };

  it('finds the option by category, else by a known id; never a boolean', () => {
    expect(findConfigOption([toggle, effort, model], 'model')?.id).toBe('llm');
    expect(findConfigOption([toggle, effort, model], 'effort')?.id).toBe('reasoning_effort');
    expect(findConfigOption([toggle], 'model')).toBeUndefined();
    expect(findConfigOption(undefined, 'model')).toBeUndefined();
  });

  it('maps a wanted value to an offered one by value or name, in groups too', () => {
    const select = findConfigOption([model], 'model')!;
    expect(configValueFor(select, 'b-2025')).toBe('b-2025');
    expect(configValueFor(select, 'beta')).toBe('b-2025');
    expect(configValueFor(select, 'gamma')).toBe('gamma');
  });
});

describe('stop reasons', () => {
  it('maps each ACP stop reason to how the run ends', () => {
    expect(endedFor('end_turn')).toEqual({ type: 'ended', status: 'completed' });
    expect(endedFor('max_tokens')).toEqual({ type: 'ended', status: 'completed', stop: 'max_tokens' });
    expect(endedFor('max_turn_requests')).toEqual({
      type: 'ended',
      status: 'completed',
      stop: 'max_turn_requests',
    });
    expect(endedFor('refusal')).toMatchObject({ status: 'failed', stop: 'refusal' });
    expect(endedFor('cancelled')).toEqual({ type: 'ended', status: 'cancelled', stop: 'cancelled' });
    expect(endedFor('paused' as acp.StopReason)).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/paused/),
    });
  });

  it('lets follow-ups run only after a turn that ended normally', () => {
    expect(
      ['end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled'].map((r) =>
        allowsFollowUp(r as acp.StopReason),
      ),
    ).toEqual([true, true, true, false, false]);
  });

  it('describes an exit', () => {
    expect(describeExit({ code: 3, signal: null })).toBe('exited with code 3');
    expect(describeExit({ code: null, signal: 'SIGKILL' })).toBe('was killed by SIGKILL');
  });
});
