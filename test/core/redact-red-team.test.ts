import { describe, expect, it } from 'vitest';
import { redact, taskPreview } from '../../src/core/redact.js';
import { RED_TEAM_KEPT, RED_TEAM_MASKED } from './red-team-secrets.js';

describe('redact: the red team shapes of issue 28', () => {
  it.each(RED_TEAM_MASKED)('masks %j', (input, expected) => {
    expect(redact(input)).toBe(expected);
  });

  it.each(RED_TEAM_KEPT)('keeps the near miss %j', (input) => {
    expect(redact(input)).toBe(input);
  });

  it('masks them in the task preview (what the list, dashboard, Slack and the SEL show)', () => {
    for (const [input, expected] of RED_TEAM_MASKED) expect(taskPreview(input, 1000)).toBe(expected);
  });

  it('masks a long JWT whole: token runs are capped (for linear time) above any real token', () => {
    const part = (n: number) => 'aB3_'.repeat(n / 4);
    const jwt = `eyJhbGciOiJIUzI1NiJ9.${part(6000)}.${part(400)}`;
    expect(redact(`use ${jwt} now`)).toBe('use [REDACTED:jwt] now');
  });

  it('covers every shape the issue names (the cases and near misses counted in the report)', () => {
    expect(RED_TEAM_MASKED.length).toBeGreaterThanOrEqual(35);
    expect(RED_TEAM_KEPT.length).toBeGreaterThanOrEqual(25);
  });
});
