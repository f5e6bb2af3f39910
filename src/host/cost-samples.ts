import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type CostSample, compactSamples, isCostSample } from '../core/cost.js';
import type { RunUsage } from './sampler.js';

/** `$CREW_HOME/subagents/cost_samples.jsonl`. */
export function costSamplesPath(crewHome: string): string {
  return join(crewHome, 'subagents', 'cost_samples.jsonl');
}

/** Every well-formed sample in the file, in order; a torn or foreign line is skipped, a missing file is empty. */
export function readCostSamples(path: string): CostSample[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const samples: CostSample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const value: unknown = JSON.parse(line);
      if (isCostSample(value)) samples.push(value);
    } catch {
      // A line cut short by a crash mid-append: the rest of the file is still good.
    }
  }
  return samples;
}

function serialize(samples: readonly CostSample[]): string {
  return samples.map((s) => `${JSON.stringify(s)}\n`).join('');
}

/** Rewrites the file with the last `perAgent` samples of each agent; atomic (temp file + rename). */
export function compactCostSamples(path: string, perAgent: number): CostSample[] {
  if (!existsSync(path)) return [];
  const kept = compactSamples(readCostSamples(path), perAgent);
  writeAtomically(path, kept);
  return kept;
}

function writeAtomically(path: string, samples: readonly CostSample[]): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, serialize(samples), { mode: 0o600 });
  renameSync(temp, path);
}

export interface CostSampleLogOptions {
  path: string;
  /** `agent.cost_samples_per_agent`: the file never holds more than this many samples of one agent. */
  perAgent: number;
}

/**
 * The learner's bounded sample log. Opening compacts it; each append adds one line, and an append that
 * would give its agent more than N samples compacts the file instead, so the bound holds at every
 * moment, not only after a periodic pass. Appends are rare (one per finished run), and the rewrite is
 * at most N lines per agent.
 */
export class CostSampleLog {
  private readonly counts = new Map<string, number>();

  constructor(private readonly options: CostSampleLogOptions) {
    for (const sample of compactCostSamples(options.path, options.perAgent)) this.bump(sample.agent);
  }

  /** Records one finished run. */
  append(sample: CostSample): void {
    if (!isCostSample(sample)) return;
    const { path, perAgent } = this.options;
    if ((this.counts.get(sample.agent) ?? 0) < perAgent) {
      mkdirSync(dirname(path), { recursive: true });
      appendFileSync(path, serialize([sample]), { mode: 0o600 });
      this.bump(sample.agent);
      return;
    }
    const kept = compactSamples([...readCostSamples(path), sample], perAgent);
    writeAtomically(path, kept);
    this.counts.clear();
    for (const s of kept) this.bump(s.agent);
  }

  /** Records a finished run's usage from the sampler; `ts` is `nowMs` in epoch seconds. */
  appendUsage(agent: string, usage: RunUsage, nowMs: number): void {
    this.append({ agent, mem_gb: usage.peakMemGb, cpu_cores: usage.cpuCores, ts: nowMs / 1000 });
  }

  /** The samples on disk now. */
  read(): CostSample[] {
    return readCostSamples(this.options.path);
  }

  private bump(agent: string): void {
    this.counts.set(agent, (this.counts.get(agent) ?? 0) + 1);
  }
}
