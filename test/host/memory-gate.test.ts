import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import type { MemoryReading } from '../../src/host/host-probe.js';
import { MemoryGate } from '../../src/host/memory-gate.js';

function scriptedProbe(readings: Array<number | undefined>) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    memory(): MemoryReading {
      const availableGb = readings[Math.min(calls, readings.length - 1)];
      calls++;
      return { availableGb };
    },
  };
}

describe('MemoryGate', () => {
  it('refuses below spawn_min_memory_gb with the reading and the posture', () => {
    const gate = new MemoryGate({ probe: scriptedProbe([3.5]), clock: new FakeClock(), minGb: 4 });
    expect(gate.check()).toEqual({
      isBelowMin: true,
      posture: 'critical',
      reading: { availableGb: 3.5 },
      minGb: 4,
    });
  });

  it('lets spawns through at and above the minimum; low below twice it', () => {
    const clock = new FakeClock();
    const probe = scriptedProbe([4, 9]);
    const gate = new MemoryGate({ probe, clock, minGb: 4 });
    expect(gate.check()).toMatchObject({ isBelowMin: false, posture: 'low' });
  });

  it('reuses a reading for at most one second', async () => {
    const clock = new FakeClock();
    const probe = scriptedProbe([10, 2, 7]);
    const gate = new MemoryGate({ probe, clock, minGb: 4 });
    expect(gate.check().reading.availableGb).toBe(10);
    await clock.advance(1000);
    expect(gate.check().reading.availableGb).toBe(10);
    expect(probe.calls).toBe(1);
    await clock.advance(1);
    expect(gate.check()).toMatchObject({ isBelowMin: true, reading: { availableGb: 2 } });
    expect(probe.calls).toBe(2);
  });

  it('is disabled by a minimum of 0', () => {
    const gate = new MemoryGate({ probe: scriptedProbe([0]), clock: new FakeClock(), minGb: 0 });
    expect(gate.check()).toMatchObject({ isBelowMin: false, posture: 'ok' });
  });

  it('fails open on an unknown reading', () => {
    const gate = new MemoryGate({ probe: scriptedProbe([undefined]), clock: new FakeClock(), minGb: 4 });
    expect(gate.check()).toMatchObject({ isBelowMin: false, posture: 'unknown' });
  });
});
