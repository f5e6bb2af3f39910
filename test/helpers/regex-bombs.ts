/**
 * The regex bombs of issue 13 and the text they were built for, shared by the grep stall test
 * (`test/daemon/grep-stall.test.ts`) and the grep benchmark (`bench/grep.bench.ts`), so both measure
 * the same work.
 */

/** Patterns whose backtracking explodes on long `a`/`b` lines. */
export const REGEX_BOMBS = ['[ab]*a[ab]{200}$', '(a|b)*a(a|b){999}$'] as const;

/**
 * `lines` lines of 80 `a`/`b` characters from a fixed-seed linear congruential generator (the same text
 * every run), each ending in a newline.
 *
 * @default lines 100_000
 */
export function abTranscript(lines = 100_000): string {
  let seed = 42;
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    let line = '';
    for (let j = 0; j < 80; j++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      line += seed & 0x10000 ? 'a' : 'b';
    }
    out.push(line);
  }
  return `${out.join('\n')}\n`;
}
