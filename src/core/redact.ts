/**
 * Masks credentials and exfiltration URLs in text that leaves the run (DESIGN §7): the SEL, logs,
 * `task_preview`, the dashboard. The runner, the transcript and the parent still get the real text.
 *
 * Built on a table: {@link SECRET_SHAPES} has one row per detector (provider token shapes with their
 * prefixes and lengths, assignments, headers, URLs), and {@link URL_SHAPES} one row per way a URL is
 * masked. Every row carries a case it must mask and a lookalike it must keep; the tests check both.
 *
 * Linear time by construction: every pattern starts at a token boundary (a lookbehind) or with a fixed
 * literal, has no nested quantifiers, and each quantified class is followed by something the class cannot
 * match, so a failed attempt costs at most the length of one token and the engine never backtracks
 * across choices. A token's run is capped (4,096 chars, a JWT's parts 16,384: `{20,4096}`, not `{20,}`): an open run over a
 * megabyte of one class made V8 grow its backtrack stack and cost 50x from 1 MB to 2 MB (issue 28). Private-key blocks are found with `indexOf`, not a lazy `[\s\S]*?`, which would rescan
 * to the end of the text for every unmatched BEGIN line. Idempotent: a mask never matches a pattern, and a pass
 * that masked anything is repeated until nothing changes ({@link MAX_PASSES}).
 */
import { PRIVATE_KEY_SHAPE, SECRET_SHAPES, URL_SHAPES } from './redact-shapes.js';
import { mask, type Replacer, type TextContext } from './secret-shape.js';
import { countChars, takeHead } from './truncate.js';

export { RANDOM_KEY_MAX_WORDY_CHARS, RANDOM_KEY_MIN_BITS_PER_CHAR } from './redact-matchers.js';
export { CAPTURE_HOSTS, ENCODED_BLOB_MIN_CHARS } from './redact-url.js';
export type { MaskedCase, SecretKind, SecretShape, UrlShape } from './secret-shape.js';
export { mask, REDACTED_PREFIX } from './secret-shape.js';
export { PRIVATE_KEY_SHAPE, SECRET_SHAPES, URL_SHAPES };

/**
 * The contexts rows may ask for ({@link SecretShape.onlyIn}), each tested once per text:
 * - `aws`: the text names AWS or holds an access key id;
 * - `twilio`: it names Twilio or holds an account SID (`AC` + 32 hex).
 */
const CONTEXTS: ReadonlyMap<TextContext, RegExp> = new Map<TextContext, RegExp>([
  ['aws', /aws|amazon|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/i],
  ['twilio', /twilio|(?<![A-Za-z0-9])AC[0-9a-f]{32}(?![A-Za-z0-9])/i],
]);

/**
 * What every row needs somewhere in a text to match, so a text with none of it holds no secret and
 * `redact` returns it as is without running the table (most tasks at admission are such prose):
 * - `:` or `=`: headers, URLs (`://`), labelled AWS and Azure keys, Telegram tokens, assignments;
 * - `--`: command-line secret flags and PEM blocks (`-----BEGIN`);
 * - a dot followed by two letters: a capture host without a scheme (`hookb.in`);
 * - `eyJ`: a JWT (its first part may be as short as 11 characters);
 * - `bearer` in any case: a bare Bearer token (its dots may cut it into short pieces);
 * - 15 token characters in a row: every provider token (the shortest, `xoxb-` and 10, is 15; a bare
 *   Bearer token without dots is 16; `ya29.` and `SG.` tokens have 16+ after their dot).
 * A new row must keep this true: the test runs every substring of every must-mask case through both.
 */
const MAY_HOLD_SECRET = /[:=]|--|\.[A-Za-z]{2}|eyJ|bearer|[A-Za-z0-9_~+/-]{15}/i;

/** Whether `text` can hold anything {@link redact} masks (false: it certainly holds nothing). */
export function mayHoldSecret(text: string): boolean {
  return MAY_HOLD_SECRET.test(text);
}

/**
 * How many times {@link redact} runs the table at most. A row's match may hide a secret behind it that
 * only shows once a later row masked part of that match (`webhook.site.xoxb-…`: the host is not a capture
 * host until the Slack token after it is masked), so a pass that masked anything is followed by another
 * until nothing changes. Property runs never needed more than three.
 */
const MAX_PASSES = 4;

/** Masks every credential and exfiltration URL in `text` as `[REDACTED:<kind>]`. */
export function redact(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let before = text;
  let out = redactByTable(text);
  for (let pass = 1; pass < MAX_PASSES && out !== before; pass++) {
    before = out;
    out = redactByTable(out);
  }
  return out;
}

/** {@link redact} without its pre-check: every row of the table runs (the reference the pre-check is tested against). */
export function redactByTable(text: string): string {
  let out = redactPrivateKeys(text);
  // Contexts are read on the text before any row masks it, so a mask's own kind never sets one.
  const before = out;
  const known = new Map<TextContext, boolean>();
  const holds = (context: TextContext): boolean => {
    let value = known.get(context);
    if (value === undefined) {
      value = CONTEXTS.get(context)?.test(before) ?? false;
      known.set(context, value);
    }
    return value;
  };
  for (const shape of SECRET_SHAPES) {
    if (shape.hints !== undefined && !shape.hints.some((hint) => out.includes(hint))) continue;
    if (shape.onlyIn !== undefined && !holds(shape.onlyIn)) continue;
    const { inContext } = shape;
    const replace: Replacer =
      inContext === undefined
        ? shape.replace
        : (match, ...groups) =>
            (holds(inContext.context) ? inContext.replace : shape.replace)(match, ...groups);
    out = out.replace(shape.pattern, replace as (substring: string) => string);
  }
  return out;
}

/** Whitespace that flattening changes: any but a plain space, or two spaces in a row. */
const NOT_FLAT = /[^\S ]| {2}/;

/** A task as the SEL, logs and dashboards show it: redacted, whitespace collapsed, cut to `maxChars`. */
export function taskPreview(task: string, maxChars = 200): string {
  const redacted = redact(task);
  // Only a task with whitespace other than single spaces is rewritten: most previews are then the task
  // string itself, not a copy every admitted run keeps.
  const flat = (NOT_FLAT.test(redacted) ? redacted.replace(/\s+/g, ' ') : redacted).trim();
  if (countChars(flat) <= maxChars) return flat;
  return maxChars <= 1 ? takeHead(flat, maxChars) : `${takeHead(flat, maxChars - 1)}…`;
}

const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----/g;
const PEM_END_PREFIX = '-----END ';

/**
 * Masks `-----BEGIN … PRIVATE KEY-----` blocks through their END line; a block with no END line (cut
 * off) is masked through its base64 body. Also catches keys inside JSON, where newlines are `\n`.
 */
function redactPrivateKeys(text: string): string {
  if (!text.includes('PRIVATE KEY')) return text;
  const lastEnd = text.lastIndexOf(PEM_END_PREFIX);
  let out = '';
  let from = 0;
  PEM_BEGIN.lastIndex = 0;
  for (let found = PEM_BEGIN.exec(text); found; found = PEM_BEGIN.exec(text)) {
    const start = found.index;
    let stop = -1;
    if (lastEnd > start) {
      const endAt = text.indexOf(PEM_END_PREFIX, start);
      const close = text.indexOf('-----', endAt + PEM_END_PREFIX.length);
      if (close >= 0 && close - endAt < 60) stop = close + 5;
    }
    if (stop < 0) stop = endOfBase64Body(text, start + found[0].length);
    out += text.slice(from, start) + mask('private_key');
    from = stop;
    PEM_BEGIN.lastIndex = stop;
  }
  return out + text.slice(from);
}

// Base64 lines and line breaks (real or JSON-escaped); a space ends the body, so prose after a cut-off
// key is not swallowed.
function endOfBase64Body(text: string, from: number): number {
  let i = from;
  while (i < text.length && /[A-Za-z0-9+/=\r\n\\]/.test(text[i]!)) i++;
  return i;
}
