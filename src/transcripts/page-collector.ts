/**
 * Builds one `spawn_status` page as the transcript's lines stream past (see `paging.ts` for the line
 * numbering). Holds at most the page's text: lines before the page are skipped, lines after it only
 * counted, and with grep tested until one more match shows whether more remain.
 */
import { countChars, takeHead } from '../core/truncate.js';
import type { LineMatcher } from './line-matcher.js';
import type { LineVisitor } from './line-reader.js';
import type { TranscriptPage } from './transcript-store.js';

/**
 * Matcher work (NFA state visits on cache misses) one `grep` call may spend before it stops and returns
 * what it found with a continuation offset. Typical patterns spend almost none; it bounds the cost of a
 * pattern built to defeat the matcher's cache. About a second of CPU at most.
 * @default 30000000
 */
export const GREP_WORK_BUDGET = 30_000_000;
/** The matcher is fed at most this many UTF-16 units between budget checks. */
const GREP_SLICE_UNITS = 4096;

/** A page as built: the port's page with every field, and whether more remain. */
export interface CollectedPage extends TranscriptPage {
  fromLine: number;
  toLine: number;
  totalLines: number;
  /** Whether lines (or matches) remain after `toLine`. */
  more: boolean;
}

/** The header line: `[lines X-Y of N]`, plus the continuation when more remain. */
export function pageHeader(fromLine: number, toLine: number, totalLines: number, more: boolean): string {
  const continuation = more ? ` | more available — call again with offset=${toLine}` : '';
  return `[lines ${fromLine}-${toLine} of ${totalLines}${continuation}]`;
}

/** A wall-clock budget for one grep call (`agent.grep_budget_ms`), read from `now` in ms. */
export interface GrepDeadline {
  now: () => number;
  /** `now()` past this stops the scan. */
  atMs: number;
  /** The budget, for the note on the page. */
  budgetMs: number;
}

export interface CollectorOptions {
  /** 0-based first line of the page. */
  start: number;
  maxLines: number;
  budgetChars: number;
  matcher: LineMatcher | null;
  /** With grep: when to stop and return the matches found so far with the continuation. */
  deadline?: GrepDeadline;
}

/** Why a grep stopped before the end: too much matcher work, or its wall-clock budget spent. */
type BudgetSpent = 'work' | 'time';

/** Builds one page as the lines stream past. */
export class PageCollector implements LineVisitor {
  private lineIndex = 0;
  private readonly shown: string[] = [];
  private usedChars = 0;
  /** The page is full; later lines are only counted (and, with grep, tested until one more matches). */
  private closed = false;
  /** 0-based index one past the last line the page covers, once closed. */
  private coveredEnd = 0;
  private more = false;
  private budgetSpent: BudgetSpent | undefined;
  // The current line's text, kept only up to what could still fit, and its full length in chars.
  private pieces: string[] = [];
  private pieceChars = 0;
  private lineChars = 0;
  private lineMatched = false;

  constructor(private readonly options: CollectorOptions) {}

  wantsPieces(): boolean {
    if (this.lineIndex < this.options.start || this.budgetSpent) return false;
    if (!this.closed) return true;
    // A full page with grep: test lines until one more matches, so `more` is exact.
    return this.options.matcher !== null && !this.more && !this.lineMatched;
  }

  piece(text: string): void {
    const { matcher } = this.options;
    if (matcher && !this.lineMatched) this.lineMatched = this.feedMatcher(matcher, text);
    if (this.closed) return;
    const chars = countChars(text);
    this.lineChars += chars;
    const room = this.roomChars() + 1 - this.pieceChars; // one over, to tell "fits" from "cut"
    if (room > 0) {
      const kept = chars <= room ? text : takeHead(text, room);
      this.pieces.push(kept);
      this.pieceChars += chars <= room ? chars : countChars(kept);
    }
  }

  lineEnd(): void {
    const index = this.lineIndex++;
    const { matcher, start } = this.options;
    const counted = index >= start && !this.budgetSpent;
    const matched = counted && (matcher ? matcher.end() : true);
    // Lines too short to reach the per-slice check are timed here: the clock is read once a line.
    if (counted && matcher && !matched && this.isPastDeadline()) this.spendBudget('time');
    matcher?.begin();
    const text = this.pieces.join('');
    const complete = this.pieceChars === this.lineChars;
    const lineChars = this.lineChars;
    this.pieces = [];
    this.pieceChars = 0;
    this.lineChars = 0;
    this.lineMatched = false;
    if (!matched) return;
    if (this.closed) {
      this.more = true; // one more match after a full grep page
      return;
    }
    if (this.shown.length >= this.options.maxLines) {
      this.close(index, true);
      return;
    }
    this.addLine(index, complete ? text : null, text, lineChars);
  }

  finish(totalLines: number, paged: boolean): CollectedPage {
    const { start, matcher } = this.options;
    if (paged && start >= totalLines) {
      const text = `[no lines at offset=${start}: the transcript has ${totalLines} lines]`;
      return { text, fromLine: start + 1, toLine: start, totalLines, more: false };
    }
    if (!this.closed) this.close(totalLines, false);
    if (matcher === null) this.more = this.more || this.coveredEnd < totalLines;
    const fromLine = start + 1;
    const toLine = this.coveredEnd;
    const parts: string[] = [];
    if (paged || this.more) parts.push(pageHeader(fromLine, toLine, totalLines, this.more));
    if (this.budgetSpent === 'work') {
      parts.push(`[grep stopped at line ${toLine}: the pattern is too costly to finish in one call]`);
    } else if (this.budgetSpent === 'time') {
      const budgetMs = this.options.deadline?.budgetMs ?? 0;
      parts.push(
        `[grep stopped at line ${toLine} after ${budgetMs} ms (agent.grep_budget_ms): call again with offset=${toLine} to go on]`,
      );
    }
    if (matcher && this.shown.length === 0) parts.push('(no matching lines)');
    if (this.shown.length > 0) parts.push(this.shown.join('\n'));
    return { text: parts.join('\n'), fromLine, toLine, totalLines, more: this.more };
  }

  /** Chars the current line may still take: the budget left, less the newline and line number. */
  private roomChars(): number {
    const separator = this.shown.length > 0 ? 1 : 0;
    return this.options.budgetChars - this.usedChars - separator - this.prefix(this.lineIndex).length;
  }

  private prefix(index: number): string {
    return this.options.matcher ? `${index + 1}: ` : '';
  }

  /**
   * Shows a finished line if it fits; `whole` is null when the line was longer than the room left. A
   * line longer than a whole page is shown cut (its start and a note) and counted as covered.
   */
  private addLine(index: number, whole: string | null, head: string, lineChars: number): void {
    const separator = this.shown.length > 0 ? 1 : 0;
    const room = this.options.budgetChars - this.usedChars - separator;
    const prefix = this.prefix(index);
    if (whole !== null && prefix.length + lineChars <= room) {
      this.shown.push(prefix + whole);
      this.usedChars += separator + prefix.length + lineChars;
    } else if (this.shown.length === 0) {
      const kept = takeHead(head, Math.max(0, room - prefix.length));
      this.shown.push(
        `${prefix}${kept} … [line ${index + 1} cut: ${countChars(kept)} of ${lineChars} chars shown]`,
      );
      this.usedChars = this.options.budgetChars;
    } else {
      this.close(index, true);
      return;
    }
    if (this.options.matcher === null && this.shown.length >= this.options.maxLines)
      this.close(index + 1, false);
  }

  private close(coveredEnd: number, more: boolean): void {
    this.closed = true;
    this.coveredEnd = coveredEnd;
    this.more = this.more || more;
  }

  private feedMatcher(matcher: LineMatcher, text: string): boolean {
    let from = 0;
    while (from < text.length) {
      let to = Math.min(text.length, from + GREP_SLICE_UNITS);
      if (to < text.length && isHighSurrogate(text.charCodeAt(to - 1))) to++;
      if (matcher.feed(text.slice(from, to))) return true;
      if (matcher.work > GREP_WORK_BUDGET) {
        this.spendBudget('work');
        return false;
      }
      if (this.isPastDeadline()) {
        this.spendBudget('time');
        return false;
      }
      from = to;
    }
    return false;
  }

  private isPastDeadline(): boolean {
    const { deadline } = this.options;
    return deadline !== undefined && deadline.now() > deadline.atMs;
  }

  private spendBudget(why: BudgetSpent): void {
    if (this.budgetSpent) return;
    this.budgetSpent = why;
    if (!this.closed) this.close(this.lineIndex, true);
    else this.more = true;
  }
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
