import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/core/config-schema.js';
import type { CostSample } from '../../src/core/cost.js';
import { gateCosts, learnCostsFor } from '../../src/host/cap-at-start.js';
import { CostSampleLog, costSamplesPath, readCostSamples } from '../../src/host/cost-samples.js';
import { numRuns } from '../helpers/fc-runs.js';

function lineCounts(path: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of readFileSync(path, 'utf8').split('\n').filter(Boolean)) {
    const agent = (JSON.parse(line) as CostSample).agent;
    counts.set(agent, (counts.get(agent) ?? 0) + 1);
  }
  return counts;
}

describe('CostSampleLog', () => {
  let home: string;
  let path: string;

  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'crew-cost-'));
    path = costSamplesPath(home);
  });

  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
  });

  it('lives at $CREW_HOME/subagents/cost_samples.jsonl, one JSON object a line, 0600', () => {
    const log = new CostSampleLog({ path, perAgent: 3 });
    log.appendUsage('sim', { peakMemGb: 0.25, cpuCores: 0.5 }, 1_700_000_000_000);
    expect(path).toBe(join(home, 'subagents', 'cost_samples.jsonl'));
    expect(readFileSync(path, 'utf8')).toBe(
      '{"agent":"sim","mem_gb":0.25,"cpu_cores":0.5,"ts":1700000000}\n',
    );
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('never holds more than N samples of an agent, whatever the order of appends', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 60 }),
        (perAgent, agents) => {
          rmSync(path, { force: true });
          const log = new CostSampleLog({ path, perAgent });
          agents.forEach((agent, i) => {
            log.append({ agent, mem_gb: i, cpu_cores: 0.1, ts: i });
            for (const count of lineCounts(path).values()) expect(count).toBeLessThanOrEqual(perAgent);
          });
          // The kept samples are each agent's last N, in order.
          for (const agent of ['a', 'b', 'c']) {
            const expected = agents
              .map((a, i) => [a, i] as const)
              .filter(([a]) => a === agent)
              .slice(-perAgent)
              .map(([, i]) => i);
            expect(
              log
                .read()
                .filter((s) => s.agent === agent)
                .map((s) => s.mem_gb),
            ).toEqual(expected);
          }
        },
      ),
      { numRuns: numRuns(60) },
    );
  });

  it('compacts an oversized file when opened', () => {
    new CostSampleLog({ path, perAgent: 100 });
    for (let i = 0; i < 40; i++) {
      new CostSampleLog({ path, perAgent: 100 }).append({ agent: 'x', mem_gb: i, cpu_cores: 0, ts: i });
    }
    const sizeBefore = statSync(path).size;
    const log = new CostSampleLog({ path, perAgent: 5 });
    expect(log.read().map((s) => s.mem_gb)).toEqual([35, 36, 37, 38, 39]);
    expect(statSync(path).size).toBeLessThan(sizeBefore / 4);
  });

  it('skips a torn last line and foreign lines', () => {
    const log = new CostSampleLog({ path, perAgent: 5 });
    log.append({ agent: 'a', mem_gb: 1, cpu_cores: 1, ts: 1 });
    appendFileSync(
      path,
      '{"agent":"a","mem_gb":2,"cpu_cores":1,"ts":2}\nnot json\n{"agent":"a","mem_gb":-1}\n{"agent":"a","mem',
    );
    expect(readCostSamples(path).map((s) => s.mem_gb)).toEqual([1, 2]);
  });

  it('does not create the file until there is a sample', () => {
    new CostSampleLog({ path, perAgent: 5 });
    expect(readCostSamples(path)).toEqual([]);
    expect(() => statSync(path)).toThrow();
  });

  it('feeds the learner: the fallback until cost_min_samples, then the p90', () => {
    const log = new CostSampleLog({ path, perAgent: 50 });
    const config = defaultConfig();
    const mems = [0.2, 0.3, 0.25, 0.9, 0.35];
    mems.slice(0, 4).forEach((mem, i) => {
      log.append({ agent: 'sim', mem_gb: mem, cpu_cores: 0.1, ts: i });
    });
    expect(learnCostsFor(log.read(), config).memCostGb).toBe(0.5);
    log.append({ agent: 'sim', mem_gb: 0.35, cpu_cores: 0.1, ts: 5 });
    expect(learnCostsFor(log.read(), config).memCostGb).toBe(0.9);
  });

  it("feeds the reservation gate each agent's mean peak and spread; an agent not yet learned: the fallback, no spread", () => {
    const log = new CostSampleLog({ path, perAgent: 50 });
    [0.5, 1.5, 0.5, 1.5].forEach((mem_gb, ts) => {
      log.append({ agent: 'wide', mem_gb, cpu_cores: 0.1, ts });
    });
    log.append({ agent: 'wide', mem_gb: 1, cpu_cores: 0.1, ts: 4 });
    log.append({ agent: 'new', mem_gb: 3, cpu_cores: 0.1, ts: 5 });
    const sample = gateCosts(learnCostsFor(log.read(), defaultConfig()));
    // wide: mean 1, deviations ±0.5 ×4 and 0: sd √(1/5).
    expect(sample.expectedGb).toEqual({ new: 0.5, wide: 1 });
    expect(sample.spreadGb).toEqual({ new: 0, wide: expect.closeTo(Math.sqrt(0.2), 12) });
  });
});
