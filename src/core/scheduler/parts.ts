import type { Permits, StartParts } from './permits.js';

/**
 * The scheduler's state, one part per seam that owns some: the run table (live runs, queue, outputs), the
 * permits, the two gates and the deadlines. The seams without state of their own (admission, ends, stops,
 * restore) are functions of it. Plain data and no part refers to another, so the explorer's structural
 * copy (test/core/explorer/deep-clone.ts) forks a scheduler whole and writes each part once.
 */
export interface SchedulerParts extends StartParts {
  readonly permits: Permits;
}
