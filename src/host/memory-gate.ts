import { type MemoryPosture, memoryPosture } from '../core/cap.js';
import type { Clock } from '../core/clock.js';
import type { HostProbe, MemoryReading } from './host-probe.js';

export interface MemoryGateOptions {
  probe: Pick<HostProbe, 'memory'>;
  clock: Clock;
  /** `agent.spawn_min_memory_gb`; 0 disables the gate. */
  minGb: number;
  /** How long one reading answers for. @default 1000 */
  maxAgeMs?: number;
}

export interface MemoryGateVerdict {
  /** True when available memory is below the minimum: refuse the spawn with `memory_critical`. */
  isBelowMin: boolean;
  posture: MemoryPosture;
  reading: MemoryReading;
  minGb: number;
}

/**
 * The per-spawn memory gate (DESIGN §3 step 4) on a live reading, cached for at most `maxAgeMs` so a
 * wave of spawns does not reread the host for each. An unknown reading lets the spawn through: the
 * gate guards against measured pressure, and the cap (which fell back to 3) already guards the unknown.
 */
export class MemoryGate {
  private cached: { reading: MemoryReading; atMs: number } | undefined;

  constructor(private readonly options: MemoryGateOptions) {}

  /** The reading, fresh or at most `maxAgeMs` old. */
  reading(): MemoryReading {
    const nowMs = this.options.clock.now();
    const maxAgeMs = this.options.maxAgeMs ?? 1000;
    if (this.cached === undefined || nowMs - this.cached.atMs > maxAgeMs || nowMs < this.cached.atMs) {
      this.cached = { reading: this.options.probe.memory(), atMs: nowMs };
    }
    return this.cached.reading;
  }

  check(): MemoryGateVerdict {
    const reading = this.reading();
    const { minGb } = this.options;
    const availableGb = reading.availableGb;
    return {
      isBelowMin: minGb > 0 && availableGb !== undefined && availableGb < minGb,
      posture: memoryPosture(availableGb, minGb),
      reading,
      minGb,
    };
  }
}
