import { ownValue } from '../own.js';
import { type LiveRunMemory, reserveStarts } from '../reservation.js';
import type { MemorySample, SchedulerLimits } from '../scheduler-types.js';
import type { RunTable } from './run-table.js';

/**
 * The reservation gate (DESIGN §5): the sampler's last view of memory, and how many runs it lets start a
 * process here given what the live runs here may still grow into.
 */
export class ReservationGate {
  /** The sampler's last view of memory; absent until one arrives. */
  private memory: MemorySample | undefined;

  constructor(private readonly limits: SchedulerLimits) {}

  observe(sample: MemorySample): void {
    this.memory = sample;
  }

  /** Whether there is a sample (until the first, the gate lets everything through). */
  hasSample(): boolean {
    return this.memory !== undefined;
  }

  /** Whether the reservation gate holds anything back: it needs a memory sample and a buffer. */
  isGating(): boolean {
    return this.memory !== undefined && this.limits.reservationBufferGb !== undefined;
  }

  /**
   * The reservation gate: how many of `next` (runs that would start a process here, in order) may start
   * now, given the memory the live runs here (nested ones too; not the proxies of runs that execute
   * elsewhere) may still grow into. No samples, no gate.
   */
  room(table: RunTable, next: readonly { agent: string }[]): number {
    const sample = this.memory;
    const bufferGb = this.limits.reservationBufferGb;
    if (!sample || bufferGb === undefined) return next.length;
    const expected = (agent: string) =>
      ownValue(sample.expectedGb, agent) ?? this.limits.fallbackCostGb ?? 0.5;
    const spread = (agent: string) => ownValue(sample.spreadGb, agent) ?? 0;
    const runs: LiveRunMemory[] = [];
    for (const node of table.nodes.values()) {
      const { run } = node;
      if (run.status === 'queued' || (run.depth === 1 && !table.startsHere(run.parent))) continue;
      runs.push({
        expectedGb: expected(run.agent),
        spreadGb: spread(run.agent),
        currentGb: ownValue(sample.currentGb, run.id) ?? 0,
        settledGb: ownValue(sample.settledGb, run.id),
        isPaused: sample.paused?.includes(run.id) === true,
      });
    }
    return reserveStarts({
      availableGb: sample.availableGb,
      runs,
      nextExpectedGb: next.map((run) => expected(run.agent)),
      nextSpreadGb: next.map((run) => spread(run.agent)),
      bufferGb,
    }).startsAllowed;
  }
}
