import { describe, expect, it } from 'vitest';
import { isTerminal, LIVE_STATUSES, TERMINAL_STATUSES } from '../../src/core/types.js';

describe('isTerminal', () => {
  it('answers true for every terminal status and false for every live one (its switch follows the lists)', () => {
    for (const status of TERMINAL_STATUSES) expect(isTerminal(status)).toBe(true);
    for (const status of LIVE_STATUSES) expect(isTerminal(status)).toBe(false);
  });
});
