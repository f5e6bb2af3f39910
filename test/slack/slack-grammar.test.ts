import { describe, expect, it } from 'vitest';
import { parseSlackCommand } from '../../src/slack/slack-grammar.js';

describe('the Slack grammar', () => {
  it('spawn and bg start runs with the rest of the message as the task', () => {
    expect(parseSlackCommand('spawn #sim sleep=10ms\nsecond line')).toEqual({
      kind: 'spawn',
      task: '#sim sleep=10ms\nsecond line',
      background: false,
    });
    expect(parseSlackCommand('bg fix the tests')).toEqual({
      kind: 'spawn',
      task: 'fix the tests',
      background: true,
    });
    expect(parseSlackCommand('<@U0BOT> spawn a &amp; b &lt;c&gt;')).toEqual({
      kind: 'spawn',
      task: 'a & b <c>',
      background: false,
    });
  });

  it('list, status and cancel are subcommands of spawn', () => {
    expect(parseSlackCommand('spawn list')).toEqual({ kind: 'list' });
    expect(parseSlackCommand('SPAWN status r_1a2b')).toEqual({ kind: 'status', id: 'r_1a2b' });
    expect(parseSlackCommand('spawn cancel r_9')).toEqual({ kind: 'cancel', id: 'r_9' });
  });

  it('spawn status pages with offset=<line> (issue 28)', () => {
    expect(parseSlackCommand('spawn status r_1 offset=120')).toEqual({
      kind: 'status',
      id: 'r_1',
      offset: 120,
    });
    expect(parseSlackCommand('spawn status r_1 OFFSET=0')).toEqual({ kind: 'status', id: 'r_1', offset: 0 });
    for (const text of [
      'spawn status r_1 offset=-3',
      'spawn status r_1 offset=1.5',
      'spawn status r_1 offset=',
      'spawn status r_1 offset=99999999999',
      'spawn status r_1 offset=12 more',
      'spawn status r_1 page=2',
      'spawn status r_1 offset=__proto__',
    ]) {
      const command = parseSlackCommand(text);
      expect(command.kind, text).toBe('grammar');
      expect(command.kind === 'grammar' && command.problem, text).toMatch(/offset/);
    }
  });

  it('malformed subcommands, empty forms and help answer with the grammar', () => {
    for (const text of [
      'spawn',
      'bg',
      'spawn status',
      'spawn cancel a b',
      'spawn list now',
      'help',
      '<@U0BOT>',
    ]) {
      expect(parseSlackCommand(text).kind, text).toBe('grammar');
    }
    expect(parseSlackCommand('spawn status ../etc').kind).toBe('grammar');
  });

  it('anything else (run included: there is no run subcommand) goes to the chat', () => {
    expect(parseSlackCommand('what is running?')).toEqual({ kind: 'chat', text: 'what is running?' });
    expect(parseSlackCommand('run the tests')).toEqual({ kind: 'chat', text: 'run the tests' });
  });
});
