/**
 * Chooses the line matcher for a grep pattern: plain text by substring search (`literal-matcher.ts`),
 * anything else by the NFA simulation in `nfa-matcher.ts`.
 */
import { parseGrepPattern } from './grep-pattern.js';
import { compileGrepProgram } from './grep-program.js';
import type { LineMatcher } from './line-matcher.js';
import { LiteralMatcher } from './literal-matcher.js';
import { NfaMatcher } from './nfa-matcher.js';

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
