import { describe, expect, it } from 'vitest';
import { statusPage } from '../../src/slack/slack-status-page.js';

const page = (from: number, count: number, total: number, width = 10) => ({
  text: `[lines ${from + 1}-${from + count} of ${total} | more available — call again with offset=${from + count}]\n${Array.from(
    { length: count },
    (_, i) => `l${from + i}`.padEnd(width, '.'),
  ).join('\n')}`,
  from_line: from + 1,
  to_line: from + count,
  total_lines: total,
});

describe("spawn status's page in Slack (issue 28)", () => {
  it('replaces the MCP header with a range and names the next offset while lines remain', () => {
    expect(statusPage(page(40, 40, 300), 40, 2800)).toMatchObject({ range: 'lines 41–80 of 300', next: 80 });
    expect(statusPage(page(280, 20, 300), 280, 2800)).toEqual({
      text: Array.from({ length: 20 }, (_, i) => `l${280 + i}`.padEnd(10, '.')).join('\n'),
      range: 'lines 281–300 of 300',
    });
  });

  it('keeps whole lines within the char budget, so the next page starts at the first line not shown', () => {
    const shown = statusPage(page(0, 40, 300, 100), 0, 1000);
    expect(shown.text.split('\n')).toHaveLength(9);
    expect(shown).toMatchObject({ range: 'lines 1–9 of 300', next: 9 });
  });

  it('cuts one over-long line and still moves on; past the end says so', () => {
    const long = statusPage(page(5, 1, 10, 5000), 5, 2800);
    expect(long.text.length).toBe(2800);
    expect(long.text.endsWith('…')).toBe(true);
    expect(long.next).toBe(6);
    expect(statusPage({ text: '[lines 501-500 of 300]', total_lines: 300 }, 500, 2800)).toEqual({
      text: '',
      range: 'past the end: the transcript has 300 lines',
    });
  });
});
