import { describe, expect, it } from 'vitest';
import { type CompletionMember, formatCompletion, formatDigest } from '../../src/core/completion-text.js';
import { parseRunEnds, runEndsOf, summaryLine, UNKNOWN_STATUS } from '../../src/sim/completion-events.js';

const OPTIONS = { keep: 'tail', keepChars: 100 } as const;

function member(id: string, status: string, extra: Partial<CompletionMember> = {}): CompletionMember {
  return {
    id,
    agent: 'sim',
    status,
    durationSecs: 1.5,
    output: 'sim: done\n',
    resultPath: `/r/${id}`,
    ...extra,
  };
}

describe('parseRunEnds', () => {
  it("reads the header of Crew's own event text, stop and error notes included", () => {
    const text = [
      formatCompletion(member('r1', 'failed', { error: 'exit 3 status=weird' }), OPTIONS),
      formatCompletion(member('r2', 'completed', { stop: 'turn_limit' }), OPTIONS),
    ].join('\n\n');
    expect(parseRunEnds(text)).toEqual([
      { id: 'r1', status: 'failed' },
      { id: 'r2', status: 'completed' },
    ]);
  });

  it('reads every member of a digest, its previews cut or not', () => {
    const long = 'x'.repeat(500);
    const text = formatDigest(
      'b1',
      [member('r1', 'completed', { output: long }), member('r2', 'cancelled')],
      {
        keep: 'tail',
        keepChars: 50,
      },
    );
    expect(parseRunEnds(text)).toEqual([
      { id: 'r1', status: 'completed' },
      { id: 'r2', status: 'cancelled' },
    ]);
  });

  it('takes the first header per id and only headers at the start of a line', () => {
    const quoted = member('r1', 'completed', {
      output: 'see: [Subagent completion event] id=r9 agent=a status=failed duration=1s\n',
    });
    const text = `${formatCompletion(quoted, OPTIONS)}\n[Subagent completion event] id=r1 agent=a status=failed duration=1s`;
    expect(parseRunEnds(text)).toEqual([{ id: 'r1', status: 'completed' }]);
  });

  it('reads the preview-unavailable fallback as unknown statuses', () => {
    expect(parseRunEnds('[Subagent completion event] runs=r1,r2 (preview unavailable: boom)')).toEqual([
      { id: 'r1', status: UNKNOWN_STATUS },
      { id: 'r2', status: UNKNOWN_STATUS },
    ]);
  });

  it('finds nothing in ordinary text', () => {
    expect(parseRunEnds('do the task\n#sim sleep=1s\nid=r1 status=completed')).toEqual([]);
  });
});

describe('runEndsOf', () => {
  it("trusts the event's run_ids and takes each status from its header", () => {
    const text = formatCompletion(
      member('r1', 'completed', { output: '[Subagent completion event] id=r7 agent=a status=failed d=1s' }),
      OPTIONS,
    );
    expect(runEndsOf({ run_ids: ['r1'], text })).toEqual([{ id: 'r1', status: 'completed' }]);
    expect(runEndsOf({ run_ids: ['r3'], text: 'no header' })).toEqual([{ id: 'r3', status: UNKNOWN_STATUS }]);
  });
});

describe('summaryLine', () => {
  it('lists each run with its status, or says none', () => {
    expect(
      summaryLine([
        { id: 'r1', status: 'completed' },
        { id: 'r2', status: 'failed' },
      ]),
    ).toBe('summary: r1=completed r2=failed\n');
    expect(summaryLine([])).toBe('summary: none\n');
  });
});
