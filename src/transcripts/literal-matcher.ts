import type { LineMatcher } from './line-matcher.js';

/** A pattern with no special characters: a substring search, carrying a tail across pieces. */
export class LiteralMatcher implements LineMatcher {
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
