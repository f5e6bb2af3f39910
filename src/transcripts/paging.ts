/**
 * `spawn_status` paging over a transcript (DESIGN §6). The bytes are streamed, never loaded: memory is
 * bounded by `maxChars` whatever the transcript's size.
 *
 * Line numbers: `offset` is 0-based (the first line is offset 0). A page header reads
 * `[lines X-Y of N]` with X and Y 1-based and inclusive, so X = offset + 1 and Y = offset + lines
 * covered; Y is then also the 0-based offset of the next line, which is why the continuation says
 * `call again with offset=Y`. An empty range is written X = Y + 1. With `grep`, X-Y is the range of
 * lines scanned, each matching line is shown as `<line number>: <text>`, and `limit` counts matches.
 */
import { CrewError, refuse } from '../core/errors.js';
import { createLineMatcher } from './create-line-matcher.js';
import { READ_CHUNK_BYTES, readLines } from './line-reader.js';
import { type CollectedPage, type GrepDeadline, PageCollector } from './page-collector.js';
import type { ByteSource } from './transcript-bytes.js';
import type { PageOptions } from './transcript-store.js';

/** @default 200 */
export const PAGE_DEFAULT_LIMIT = 200;
/** A larger `limit` is clamped to this. @default 10000 */
export const PAGE_MAX_LIMIT = 10_000;
/**
 * Smaller reads with grep: a costly pattern then holds the event loop for tens of milliseconds per read
 * at most, between which other work runs.
 */
const GREP_READ_CHUNK_BYTES = 16 * 1024;

/**
 * Returns one page of the transcript in `source`; refuses bad arguments with `invalid_argument` and a
 * path (before opening the source), and a missing transcript as the source does (`not_found`).
 */
export async function pageTranscript(
  source: ByteSource,
  options: PageOptions,
  grepBudget?: GrepBudget,
): Promise<CollectedPage> {
  const { offset, limit, grep, maxChars } = options;
  validateOffset(offset);
  validateLimit(limit);
  if (grep !== undefined && typeof grep !== 'string')
    invalid('grep', `Expected \`grep\` to be a string, got ${typeof grep}`);
  const matcher = grep === undefined ? null : createLineMatcher(grep);
  const paged = offset !== undefined || limit !== undefined || grep !== undefined;
  const collector = new PageCollector({
    start: offset ?? 0,
    maxLines: paged ? Math.min(limit ?? PAGE_DEFAULT_LIMIT, PAGE_MAX_LIMIT) : Number.POSITIVE_INFINITY,
    budgetChars: Math.max(1, Math.floor(maxChars)),
    matcher,
    ...(matcher && grepBudget ? { deadline: deadlineOf(grepBudget) } : {}),
  });
  const reader = await source.open();
  try {
    const chunkBytes = matcher && !grepBudget?.offLoop ? GREP_READ_CHUNK_BYTES : READ_CHUNK_BYTES;
    const totalLines = await readLines(reader, collector, chunkBytes);
    return collector.finish(totalLines, paged);
  } finally {
    await reader.close();
  }
}

/** A grep call's wall-clock budget (`agent.grep_budget_ms`) and the clock it is read from, in ms. */
export interface GrepBudget {
  budgetMs: number;
  now: () => number;
  /** Off the event loop (a grep thread): read in full-size chunks, nothing else waits on them. */
  offLoop?: boolean;
}

function deadlineOf({ budgetMs, now }: GrepBudget): GrepDeadline {
  return { now, budgetMs, atMs: now() + budgetMs };
}

function validateOffset(offset: number | undefined): void {
  if (offset === undefined) return;
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0) {
    invalid('offset', `Expected \`offset\` to be a non-negative integer, got ${String(offset)}`);
  }
}

function validateLimit(limit: number | undefined): void {
  if (limit === undefined) return;
  if (typeof limit !== 'number' || Number.isNaN(limit) || limit < 1) {
    invalid('limit', `Expected \`limit\` to be a positive integer, got ${String(limit)}`);
  }
  // A huge limit (even Infinity) is clamped, not refused; a fraction is a mistake worth saying.
  if (Number.isFinite(limit) && !Number.isInteger(limit)) {
    invalid('limit', `Expected \`limit\` to be a positive integer, got ${String(limit)}`);
  }
}

function invalid(path: string, message: string): never {
  throw new CrewError(refuse('invalid_argument', message, { path }));
}
