import { describe, expect, it } from 'vitest';
import type { Refusal } from '../../src/core/errors.js';
import * as refusals from '../../src/core/refusals.js';

/** Issue 13: a refusal that names a limit always says where the caller stands against it (`current`). */
describe('every refusal with a limit carries current', () => {
  const made: [string, Refusal][] = [
    ['taskTooLong', refusals.taskTooLong(2, 120_000, 100_000)],
    ['maxTurnsOutOfRange', refusals.maxTurnsOutOfRange(500)],
    ['batchTooLarge', refusals.batchTooLarge(1001, 1000)],
    ['depthExceeded', refusals.depthExceeded(2, 1)],
    [
      'memoryCritical (known reading)',
      refusals.memoryCritical({ critical: true, availableGb: 1.234, minGb: 4 }),
    ],
    ['memoryCritical (unknown reading)', refusals.memoryCritical({ critical: true, minGb: 4 })],
    ['childrenLimit', refusals.childrenLimit('r1', 5, 5)],
    ['queueFull', refusals.queueFull(32, 32)],
    ['waveQueueFull', refusals.waveQueueFull(10, 8, 4996, 5000)],
  ];
  it.each(made)('%s', (_, refusal) => {
    if (refusal.limit !== undefined) expect(refusal.current).toEqual(expect.any(Number));
    else expect(refusal.current).toBeUndefined();
  });

  it('memory_critical gives the available GiB as current', () => {
    expect(refusals.memoryCritical({ critical: true, availableGb: 1.234, minGb: 4 })).toMatchObject({
      limit: 4,
      current: 1.23,
    });
  });
});
