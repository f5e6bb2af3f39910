/**
 * Tests transcript lines against a grep pattern in time linear in the line, whatever the pattern: plain
 * text by substring search, anything else by the NFA simulation in `nfa-matcher.ts`. Lines are fed in
 * pieces, so a line of any length is matched in bounded memory.
 */
import { parseGrepPattern } from './grep-pattern.js';
import { compileGrepProgram } from './grep-program.js';
import { NfaMatcher } from './nfa-matcher.js';

/** A streaming line test: `begin`, any number of `feed`s, then `end`. */
export interface LineMatcher {
  /** Starts a new line. */
  begin(): void;
  /** Feeds the next piece of the current line; true once the line is known to match. */
  feed(piece: string): boolean;
  /** Ends the line; true when it matched. */
  end(): boolean;
  /**
   * Work done so far, in NFA state visits (cached steps are free). Callers bound a scan with it, so a
   * pattern whose states defeat the cache cannot keep the process busy for long.
   */
  readonly work: number;
}

/**
 * Most cached DFA states before the cache is dropped and rebuilt; bounds memory for patterns whose
 * state sets explode (`(a|b)*a(a|b){20}`), which then run at NFA speed.
 * @default 2000
 */
export const DFA_CACHE_MAX_STATES = 2000;

export interface LineMatcherOptions {
  /** See {@link DFA_CACHE_MAX_STATES}; tests set it low to exercise the plain simulation. @default 2000 */
  dfaCacheMaxStates?: number;
}

/** Parses and compiles `pattern`; throws an `invalid_argument` refusal (path `grep`) when it is not valid. */
export function createLineMatcher(pattern: string, options: LineMatcherOptions = {}): LineMatcher {
  const parsed = parseGrepPattern(pattern);
  const cacheMaxStates = options.dfaCacheMaxStates ?? DFA_CACHE_MAX_STATES;
  if (parsed.literal !== null && options.dfaCacheMaxStates === undefined)
    return new LiteralMatcher(parsed.literal);
  return new NfaMatcher(compileGrepProgram(parsed.root, parsed.ignoreCase), cacheMaxStates);
}

/** A pattern with no special characters: a substring search, carrying a tail across pieces. */
class LiteralMatcher implements LineMatcher {
  readonly work = 0;
  private carry = '';
  private matched = false;

  constructor(private readonly needle: string) {}

  begin(): void {
    this.carry = '';
    this.matched = false;
  }

  feed(piece: string): boolean {
    if (this.matched) return true;
    const haystack = this.carry + piece;
    if (haystack.includes(this.needle)) {
      this.matched = true;
      return true;
    }
    this.carry = haystack.slice(Math.max(0, haystack.length - (this.needle.length - 1)));
    return false;
  }

  end(): boolean {
    return this.matched;
  }
}
