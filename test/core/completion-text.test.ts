import { describe, expect, it } from 'vitest';
import {
  type CompletionMember,
  formatCompletion,
  formatDigest,
  formatSecs,
} from '../../src/core/completion-text.js';
import { countChars, truncate } from '../../src/core/truncate.js';

const member = (overrides: Partial<CompletionMember> = {}): CompletionMember => ({
  id: 'r1',
  agent: 'sim',
  status: 'completed',
  durationSecs: 12.34,
  output: 'all done',
  resultPath: '/home/u/.crew/subagents/r1/result.txt',
  ...overrides,
});

describe('formatCompletion', () => {
  it('writes the DESIGN §6 event with no truncated line when the output fits', () => {
    expect(formatCompletion(member(), { keep: 'head', keepChars: 3000 })).toBe(
      '[Subagent completion event] id=r1 agent=sim status=completed duration=12.3s\nall done',
    );
  });

  it('cuts the preview and says where the rest is', () => {
    const text = formatCompletion(member({ output: 'abcdefghij' }), { keep: 'tail', keepChars: 4 });
    expect(text).toBe(
      [
        '[Subagent completion event] id=r1 agent=sim status=completed duration=12.3s',
        'ghij',
        '[truncated: kept 4 of 10 chars (tail); full transcript: /home/u/.crew/subagents/r1/result.txt; read more with spawn_status]',
      ].join('\n'),
    );
  });

  it('uses a preview already read from the file as is, with its totals', () => {
    const preview = { text: 'head…', kept: 4, total: 5_000_000, truncated: true };
    const text = formatCompletion(member({ output: preview }), { keep: 'head', keepChars: 4 });
    expect(text.split('\n')[1]).toBe('head…');
    expect(text).toContain('[truncated: kept 4 of 5000000 chars (head); full transcript:');
  });

  it('shows stop notes and a one-line, bounded error reason on the header', () => {
    const header = formatCompletion(member({ status: 'completed', stop: 'turn_limit' }), {
      keep: 'head',
      keepChars: 10,
    }).split('\n')[0];
    expect(header).toBe(
      '[Subagent completion event] id=r1 agent=sim status=completed duration=12.3s stop=turn_limit',
    );
    const failed = formatCompletion(
      member({ status: 'lost', error: 'gateway\nrestarted   while running', output: '' }),
      {
        keep: 'head',
        keepChars: 10,
      },
    );
    expect(failed).toBe(
      '[Subagent completion event] id=r1 agent=sim status=lost duration=12.3s error=gateway restarted while running\n(no output)',
    );
    const long = formatCompletion(member({ error: 'x'.repeat(1000) }), { keep: 'head', keepChars: 10 });
    expect(countChars(long.split('\n')[0]!)).toBeLessThan(400);
  });

  it('formats durations with at most one decimal', () => {
    expect([formatSecs(0), formatSecs(4), formatSecs(0.04), formatSecs(61.25), formatSecs(-1)]).toEqual([
      '0',
      '4',
      '0',
      '61.3',
      '0',
    ]);
  });

  it('keepChars 0 keeps the whole output', () => {
    const output = 'y'.repeat(10_000);
    expect(formatCompletion(member({ output }), { keep: 'head', keepChars: 0 })).toContain(output);
  });
});

describe('formatDigest', () => {
  const wave = (count: number, outputChars: number): CompletionMember[] =>
    Array.from({ length: count }, (_, i) =>
      member({
        id: `w${i}`,
        status: i % 3 === 2 ? 'failed' : 'completed',
        durationSecs: i + 1,
        output: String(i % 10).repeat(outputChars),
        resultPath: `/t/w${i}/result.txt`,
      }),
    );

  it('names every member and includes previews that fit', () => {
    const text = formatDigest('b1', wave(3, 5), { keep: 'head', keepChars: 1000 });
    expect(text).toBe(
      [
        '[Subagent completion digest] batch=b1 members=3 completed=2 failed=1',
        '[Subagent completion event] id=w0 agent=sim status=completed duration=1s',
        '00000',
        '[Subagent completion event] id=w1 agent=sim status=completed duration=2s',
        '11111',
        '[Subagent completion event] id=w2 agent=sim status=failed duration=3s',
        '22222',
      ].join('\n'),
    );
  });

  it('stays within 4 × keepChars, listing later members without preview', () => {
    const keepChars = 1000;
    const members = wave(5, 3000);
    const text = formatDigest('b2', members, { keep: 'head', keepChars });
    expect(countChars(text)).toBeLessThanOrEqual(4 * keepChars);
    for (const m of members) expect(text).toContain(`id=${m.id} agent=sim status=${m.status}`);
    const withPreview = members.filter((m) =>
      text.includes(`[truncated: kept 1000 of 3000 chars (head); full transcript: ${m.resultPath};`),
    );
    const without = members.length - withPreview.length;
    expect(withPreview.length).toBeGreaterThan(0);
    expect(without).toBeGreaterThan(0);
    expect(text.split('\n').at(-1)).toBe(
      `[no preview for the last ${without} of 5 members: digest bound of 4000 chars reached; read each with spawn_status <id>]`,
    );
    // Previews go to the first members, in order; the rest are listed without.
    expect(withPreview.map((m) => m.id)).toEqual(members.slice(0, withPreview.length).map((m) => m.id));
  });

  it('is within the bound whenever the member headers alone fit (exact accounting)', () => {
    const keepChars = 300;
    for (const count of [1, 2, 3, 4, 5]) {
      const text = formatDigest('b3', wave(count, 1000), { keep: 'both', keepChars });
      expect(countChars(text)).toBeLessThanOrEqual(4 * keepChars);
    }
    // One preview more would not have fit: the first member without a preview is the budget's edge.
    const text = formatDigest('b3', wave(5, 1000), { keep: 'both', keepChars });
    expect(text.split('\n').at(-1)).toMatch(/^\[no preview for the last \d+ of 5 members/);
    const preview = truncate('x'.repeat(1000), { keep: 'both', keepChars }).text;
    expect(countChars(text) + countChars(preview)).toBeGreaterThan(4 * keepChars);
  });

  it('a 100-member wave at the default 3000 chars still shows previews within the bound', () => {
    const text = formatDigest('b6', wave(100, 50), { keep: 'head', keepChars: 3000 });
    expect(countChars(text)).toBeLessThanOrEqual(12_000);
    expect(text).toContain('0'.repeat(50));
    expect(text.split('\n').filter((line) => line.startsWith('[Subagent completion event]'))).toHaveLength(
      100,
    );
  });

  it('has no bound with keepChars 0', () => {
    const text = formatDigest('b4', wave(20, 1000), { keep: 'head', keepChars: 0 });
    expect(text).not.toContain('[no preview');
    expect(text).not.toContain('[truncated');
    expect(text).toContain('9'.repeat(1000));
  });

  it('lists every member of a huge wave even past the bound', () => {
    const text = formatDigest('b5', wave(1000, 50), { keep: 'head', keepChars: 10 });
    expect(text.split('\n').filter((line) => line.startsWith('[Subagent completion event]'))).toHaveLength(
      1000,
    );
    expect(text.split('\n')[0]).toBe(
      '[Subagent completion digest] batch=b5 members=1000 completed=667 failed=333',
    );
  });
});
