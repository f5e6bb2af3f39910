/**
 * The checks the secret table's rows call from their replacers ({@link SECRET_SHAPES} in
 * `redact-shapes.ts`): whether a token looks like a random key, and how an assignment's value is masked.
 */
import { entropyBitsPerChar, isMasked, isMixedCaseWithDigit, mask } from './secret-shape.js';
import { countChars } from './truncate.js';

/** Keys that also name things that are not secrets: `PWD=/home/me`, `pass: 12` in a test summary. */
const AMBIGUOUS_KEYS: ReadonlySet<string> = new Set(['pass', 'pwd', 'pat']);

/** 40 base64 chars with upper case, lower case and a digit: the shape of an AWS secret access key. */
export function looksLikeAwsSecret(token: string): boolean {
  return isMixedCaseWithDigit(token) && !/^[A-Za-z]+[0-9]*$/.test(token);
}

/**
 * Bits per char a random key's 40 chars reach: 30 random bytes in base64 give ≥ 4.3 in 99.85 % of draws
 * (median 4.8); a path or an identifier of 40 chars mostly repeats its letters (3.9–4.2).
 */
export const RANDOM_KEY_MIN_BITS_PER_CHAR = 4.3;
/**
 * Most chars of a 40-char key that may sit in word-like runs (`Abc…`, `abc…`, 3+ lower-case letters):
 * long identifiers pass the entropy bar (`xmlSecOpenSSLTransformHmacSha256GetKlass`, 4.4 bits) but are
 * made of words; a random key has 18 or fewer such chars in 98.6 % of draws.
 */
export const RANDOM_KEY_MAX_WORDY_CHARS = 18;

/**
 * An AWS-secret-shaped token as random as a key, anywhere in a text (issue 28): mixed case and a digit,
 * ≥ {@link RANDOM_KEY_MIN_BITS_PER_CHAR} bits per char, ≤ {@link RANDOM_KEY_MAX_WORDY_CHARS} chars in
 * words. Over the 924 tokens of this shape in 207 MB of source and docs (Python's library, C headers,
 * node_modules, this repository) it flagged only real keys and base64 data; it misses ~1.5 % of random
 * keys, which the AWS-context row still masks where the text names AWS.
 */
export function looksRandom(token: string): boolean {
  return (
    looksLikeAwsSecret(token) &&
    entropyBitsPerChar(token) >= RANDOM_KEY_MIN_BITS_PER_CHAR &&
    wordyChars(token) <= RANDOM_KEY_MAX_WORDY_CHARS
  );
}

function wordyChars(token: string): number {
  let count = 0;
  for (const word of token.matchAll(/[A-Z]?[a-z]{3,}/g)) count += word[0].length;
  return count;
}

/** A short key (`pass`, `pwd`, `pat`) as a word of its own or after `_`; any other key: always. */
export function isShortKeyAlone(key: string, offset: number, text: string): boolean {
  const lower = key.toLowerCase();
  if (!AMBIGUOUS_KEYS.has(lower)) return true;
  const before = text[offset - 1] ?? ' ';
  return lower === 'pat' ? before === '_' : !/[A-Za-z]/.test(before);
}

interface AssignmentParts {
  alone: boolean;
  key: string | undefined;
  keyQuote: string | undefined;
  separator: string | undefined;
  quote: string | undefined;
  quoted: string | undefined;
  bare: string | undefined;
}

export function redactAssignment(match: string, parts: AssignmentParts): string {
  const { alone, key = '', keyQuote = '', separator = '', quote, quoted, bare } = parts;
  if (!alone) return match;
  const prefix = `${key}${keyQuote}${separator}`;
  if (AMBIGUOUS_KEYS.has(key.toLowerCase()) && isPlainValue(quoted ?? bare ?? '')) return match;
  if (quoted !== undefined && quote !== undefined) {
    return isMasked(quoted) ? match : `${prefix}${quote}${mask('secret')}${quote}`;
  }
  if (bare === undefined || isMasked(bare) || bare.startsWith('$')) return match;
  if (key.toLowerCase() === 'token' && countChars(bare) < 8) return match;
  // `password: string`, `password = getPassword` and `secret: be kind` are code or prose: with a spaced
  // `=` or a `:`, a bare value must look like a secret (a digit or a symbol), not like an identifier.
  const spaced = separator.includes(':') || /[ \t]/.test(separator);
  if (spaced && /^[A-Za-z_.]+$/.test(bare)) return match;
  return `${prefix}${mask('secret')}`;
}

/** A number, a path or a flag word: what `pass`, `pwd` and `pat` hold when they are not secrets. */
function isPlainValue(value: string): boolean {
  return /^(?:\d+|[/~.].*|true|false|yes|no|null|none)$/i.test(value);
}
