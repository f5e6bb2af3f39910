/** The longest client name kept, in characters (a name is a label, not a message). */
export const CLIENT_NAME_MAX = 64;

/**
 * A client name fit to show: a string, control and format characters (terminal escapes, bidi overrides,
 * zero-width ones) removed, white space collapsed, at most `CLIENT_NAME_MAX` characters; undefined when
 * nothing is left. The one cleaning every surface uses: where a name is recorded (`ClientNames`), where
 * it is kept with a run (admission), and where it is printed (`parentLabel`).
 */
export function cleanClientName(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  // Cut first so a huge name costs no more than a short one to clean.
  const cleaned = raw
    .slice(0, CLIENT_NAME_MAX * 4)
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = Array.from(cleaned).slice(0, CLIENT_NAME_MAX).join('').trim();
  return chars === '' ? undefined : chars;
}
