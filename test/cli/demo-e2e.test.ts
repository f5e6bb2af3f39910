import { describe, expect, it } from 'vitest';
import { runCrew } from './run-crew.js';

/** Apart from cli-e2e.test.ts, the longest case of which it was, so the two run side by side. */
describe('crew demo', () => {
  it('runs to completion on its own temporary CREW_HOME and exits 0', async () => {
    const started = Date.now();
    const demo = await runCrew(['demo'], {}, 120_000);
    expect(demo.code, demo.err).toBe(0);
    expect(demo.out).toMatch(/cap \d+ \((auto|pinned|fallback)\): mem_term/);
    expect(demo.out).toMatch(/refused — queue_full/);
    expect(demo.out).toMatch(/refused depth_exceeded/);
    expect(demo.out).toMatch(/\[Subagent completion digest\] batch=\S+ members=12/);
    expect(Date.now() - started).toBeLessThan(120_000);
  }, 130_000);
});
