/**
 * Percent-decoding that never throws (pure): each run of `%XX` escapes is decoded as UTF-8 when it is
 * valid, and left as it was when it is not (`%`, `%ZZ`, a cut multi-byte sequence, an overlong or
 * surrogate encoding). Repeated while it changes, up to `rounds`, so `%2567` (a doubly encoded `g`)
 * decodes too. For redaction: a secret percent-encoded in a path must be seen in its plain form.
 */

const ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;

/** @default rounds 3 */
export function decodePercentSafely(text: string, rounds = 3): string {
  let out = text;
  for (let round = 0; round < rounds && out.includes('%'); round++) {
    const next = out.replace(ESCAPES, decodeRun);
    if (next === out) break;
    out = next;
  }
  return out;
}

function decodeRun(run: string): string {
  try {
    return decodeURIComponent(run);
  } catch {
    // Part of the run is not valid UTF-8: decode escape by escape, keeping those that do not stand alone.
    return run.replace(/%[0-9A-Fa-f]{2}/g, (one) => {
      try {
        return decodeURIComponent(one);
      } catch {
        return one;
      }
    });
  }
}
