/**
 * A streaming line test: `begin`, any number of `feed`s, then `end`, in time linear in the line whatever
 * the pattern. Lines come in pieces, so a line of any length is matched in bounded memory.
 *
 * Left out: the pattern language (`grep-pattern.ts`), which matcher a pattern gets
 * (`create-line-matcher.ts`), and where lines come from (the pager).
 */
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
