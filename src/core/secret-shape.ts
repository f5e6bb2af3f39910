/**
 * The row type of the redaction table ({@link SecretShape}), the masks rows write, and the small helpers
 * rows share. Apart from `redact.ts` so the table can live in several files without an import cycle.
 */

/** What a mask says was there: `[REDACTED:<kind>]`. */
export type SecretKind =
  | 'aws_key'
  | 'aws_secret'
  | 'azure_key'
  | 'google_api_key'
  | 'google_oauth_secret'
  | 'google_oauth_token'
  | 'github_token'
  | 'gitlab_token'
  | 'slack_token'
  | 'slack_webhook'
  | 'discord_webhook'
  | 'telegram_bot_token'
  | 'mailgun_key'
  | 'openai_key'
  | 'anthropic_key'
  | 'stripe_key'
  | 'npm_token'
  | 'huggingface_token'
  | 'sendgrid_key'
  | 'twilio_key'
  | 'twilio_token'
  | 'shopify_token'
  | 'pypi_token'
  | 'digitalocean_token'
  | 'vault_token'
  | 'docker_token'
  | 'bearer_token'
  | 'jwt'
  | 'url_password'
  | 'secret'
  | 'private_key'
  | 'exfil_url';

export const REDACTED_PREFIX = '[REDACTED:';

/** The mask for one kind of secret. */
export function mask(kind: SecretKind): string {
  return `${REDACTED_PREFIX}${kind}]`;
}

export type Replacer = (match: string, ...groups: (string | undefined)[]) => string;

/** A must-mask case: the input and what it becomes. */
export type MaskedCase = readonly [input: string, expected: string];

/**
 * What a text holds somewhere, computed once per text before the table runs: a row that needs it runs
 * only in such a text (any 40-char key of the right shape near AWS words, a 32-hex string near a
 * Twilio account SID or the word Twilio).
 */
export type TextContext = 'aws' | 'twilio';

/** One row of the table: a detector, a case it must mask and a lookalike it must keep. */
export interface SecretShape {
  /** What the row finds, for people. */
  name: string;
  pattern: RegExp;
  replace: Replacer;
  /** The row runs only in a text with this context (see {@link TextContext}). */
  onlyIn?: TextContext;
  /**
   * In a text with this context, matches go to this replacer instead; the context is read at the first
   * match, so a text the pattern never matches never pays for it.
   */
  inContext?: { context: TextContext; replace: Replacer };
  /**
   * Literals every match contains (case as written): a text holding none skips the row without running
   * its pattern (`includes` is a fast scan; a pattern is not).
   */
  hints?: readonly string[];
  redacts: readonly MaskedCase[];
  keeps: readonly string[];
}

/** A way a URL is masked, checked inside the URL row; its cases go through `redact` like the rest. */
export interface UrlShape {
  name: string;
  redacts: readonly MaskedCase[];
  keeps: readonly string[];
}

export const isMasked = (value: string | undefined): boolean => value?.startsWith(REDACTED_PREFIX) ?? false;
export const hasDigit = (value: string): boolean => /\d/.test(value);

/** Upper case, lower case and a digit: how a random key differs from a word, a name or a hex digest. */
export const isMixedCaseWithDigit = (value: string): boolean =>
  /[A-Z]/.test(value) && /[a-z]/.test(value) && /\d/.test(value);

/** Replaces the whole match with a mask. */
export const whole =
  (kind: SecretKind): Replacer =>
  () =>
    mask(kind);

/** Shannon entropy of `text`'s characters, in bits per character (counts kept per UTF-16 unit). */
export function entropyBitsPerChar(text: string): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    counts.set(code, (counts.get(code) ?? 0) + 1);
  }
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}
