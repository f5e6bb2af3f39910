import { describe, expect, it } from 'vitest';
import { formatCompletion } from '../../src/core/completion-text.js';
import { completionOptionsFor, SLACK_RESULT_MAX_CHARS } from '../../src/gateway/slack-completion.js';

const member = (output: string) => ({
  id: 'r_1',
  agent: 'sim',
  status: 'completed',
  durationSecs: 1,
  output,
  resultPath: '/home/crew/.crew/subagents/r_1/result.txt',
});
const configured = { keep: 'tail' as const, keepChars: 3000 };

describe('a completion for a Slack parent (issue 28)', () => {
  it('keeps the whole result up to 25 messages, with no server path, where others get the preview', () => {
    const output = Array.from({ length: 500 }, (_, i) => `line ${i} ${'x'.repeat(50)}`).join('\n');
    const slack = formatCompletion(member(output), completionOptionsFor('slack:U1', configured));
    expect(slack).toContain(output);
    expect(slack).not.toContain('result.txt');
    const mcp = formatCompletion(member(output), completionOptionsFor('mcp:session', configured));
    expect(mcp).toContain('full transcript: /home/crew/.crew/subagents/r_1/result.txt');
    expect(mcp.length).toBeLessThan(3500);
  });

  it('past 25 messages, names the spawn status command that pages on from the first line not shown', () => {
    const line = `${'y'.repeat(99)}\n`;
    const output = line.repeat(2000);
    const text = formatCompletion(member(output), completionOptionsFor('slack:U1', configured));
    const shownLines = Math.floor(SLACK_RESULT_MAX_CHARS / line.length);
    expect(text.endsWith(`read the rest with \`spawn status r_1 offset=${shownLines}\`]`)).toBe(true);
    expect(text.length).toBeLessThan(SLACK_RESULT_MAX_CHARS + 400);
  });
});
