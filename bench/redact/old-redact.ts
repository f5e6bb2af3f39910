// The detector as it was before the table (issue 13), kept verbatim as the benchmark's baseline.
/**
 * Masks credentials and exfiltration URLs in text that leaves the run (DESIGN §7): the SEL, logs,
 * `task_preview`, the dashboard. The runner, the transcript and the parent still get the real text.
 *
 * Linear time by construction: every pattern starts at a token boundary (a lookbehind) or with a fixed
 * literal, has no nested quantifiers, and each quantified class is followed by something the class cannot
 * match, so a failed attempt costs at most the length of one token and the engine never backtracks
 * across choices. Private-key blocks are found with `indexOf`, not a lazy `[\s\S]*?`, which would rescan
 * to the end of the text for every unmatched BEGIN line. Idempotent: a mask never matches a pattern.
 */
import { countChars, takeHead } from '../../src/core/truncate.js';

/** What a mask says was there: `[REDACTED:<kind>]`. */
export type SecretKind =
  | 'aws_key'
  | 'aws_secret'
  | 'google_api_key'
  | 'google_oauth_secret'
  | 'google_oauth_token'
  | 'github_token'
  | 'gitlab_token'
  | 'slack_token'
  | 'slack_webhook'
  | 'discord_webhook'
  | 'openai_key'
  | 'anthropic_key'
  | 'stripe_key'
  | 'npm_token'
  | 'huggingface_token'
  | 'sendgrid_key'
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

/**
 * Hosts of request-capture and tunnelling services, matched as the host or a parent domain of it. A URL
 * to one of these in a task is how a prompt-injected agent would ship data out.
 */
export const CAPTURE_HOSTS: readonly string[] = [
  'webhook.site',
  'requestbin.com',
  'requestbin.net',
  'requestbin.io',
  'pipedream.net',
  'pipedream.com',
  'ngrok.io',
  'ngrok.app',
  'ngrok.dev',
  'ngrok-free.app',
  'ngrok-free.dev',
  'interact.sh',
  'interactsh.com',
  'oast.fun',
  'oast.live',
  'oast.me',
  'oast.online',
  'oast.pro',
  'oast.site',
  'oastify.com',
  'burpcollaborator.net',
  'beeceptor.com',
  'hookbin.com',
  'requestcatcher.com',
  'postb.in',
  'canarytokens.com',
  'dnslog.cn',
  'ceye.io',
  'trycloudflare.com',
  'loca.lt',
  'serveo.net',
  'localhost.run',
];

/** Length of an encoded run in a URL's path or query that marks the URL as carrying data out. */
export const ENCODED_BLOB_MIN_CHARS = 32;

type Replacer = (match: string, ...groups: (string | undefined)[]) => string;

interface Rule {
  pattern: RegExp;
  replace: Replacer;
}

const isMasked = (value: string | undefined): boolean => value?.startsWith(REDACTED_PREFIX) ?? false;
const hasDigit = (value: string): boolean => /\d/.test(value);

/** Replaces the whole match with a mask. */
const whole =
  (kind: SecretKind): Replacer =>
  () =>
    mask(kind);

// Order matters only for the label: header-shaped secrets first, then URLs (which may be masked whole),
// then provider tokens, then generic `key=value` assignments (which skip values already masked).
const RULES: readonly Rule[] = [
  {
    // `Authorization: Bearer <token>`, `"authorization": "Basic …"`: the scheme stays, the value goes.
    pattern:
      /(?<![A-Za-z0-9_-])(authorization["']?[ \t]*[:=][ \t]*["']?)(?:(bearer|basic|token|bot)[ \t]+)?([^\s"',;]{8,})/gi,
    replace: (match, prefix, scheme, value) => {
      // Without a scheme, only a value with a digit: "Authorization: required" is prose.
      if (value === undefined || isMasked(value) || (!scheme && !hasDigit(value))) return match;
      return `${prefix}${scheme ? `${scheme} ` : ''}${mask('bearer_token')}`;
    },
  },
  {
    pattern: /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/[^\s<>"'`]+/g,
    replace: (match) => redactUrl(match),
  },
  {
    // A capture host written without a scheme: `webhook.site/abc`, `x.oast.fun`.
    pattern: /(?<![A-Za-z0-9.@/:_-])(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?:[/?#][^\s<>"'`]*)?/g,
    replace: (match) => (isCaptureHost(hostOf(match)) ? mask('exfil_url') : match),
  },
  {
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
    replace: whole('jwt'),
  },
  {
    pattern:
      /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
    replace: whole('aws_key'),
  },
  {
    pattern:
      /(?<![A-Za-z0-9])(aws_?secret_?(?:access_?)?key["']?[ \t]*[:=][ \t]*["']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/gi,
    replace: (_match, prefix) => `${prefix}${mask('aws_secret')}`,
  },
  { pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g, replace: whole('google_api_key') },
  { pattern: /(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{20,}/g, replace: whole('google_oauth_secret') },
  { pattern: /(?<![A-Za-z0-9_-])ya29\.[0-9A-Za-z_-]{20,}/g, replace: whole('google_oauth_token') },
  { pattern: /(?<![A-Za-z0-9_])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}/g, replace: whole('github_token') },
  { pattern: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{30,}/g, replace: whole('github_token') },
  { pattern: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}/g, replace: whole('gitlab_token') },
  { pattern: /(?<![A-Za-z0-9_-])xox[abprs]-[A-Za-z0-9-]{10,}/g, replace: whole('slack_token') },
  { pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}/g, replace: whole('anthropic_key') },
  {
    // OpenAI keys always carry digits; a long kebab-case word after `sk-` does not.
    pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}/g,
    replace: (match) => (hasDigit(match) ? mask('openai_key') : match),
  },
  { pattern: /(?<![A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{16,}/g, replace: whole('stripe_key') },
  { pattern: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/g, replace: whole('npm_token') },
  { pattern: /(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}/g, replace: whole('huggingface_token') },
  {
    pattern: /(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g,
    replace: whole('sendgrid_key'),
  },
  {
    // A bare `Bearer <token>` outside a header; real tokens carry digits, prose after "bearer" does not.
    pattern: /(?<![A-Za-z0-9_-])(bearer[ \t]+)([A-Za-z0-9._~+/=-]{16,})/gi,
    replace: (match, prefix, token) =>
      token !== undefined && hasDigit(token) ? `${prefix}${mask('bearer_token')}` : match,
  },
  {
    // `--password hunter2`, `--token=abc`.
    pattern:
      /(?<![A-Za-z0-9-])(--(?:password|passwd|passphrase|token|api-key|apikey|secret|access-token|auth-token|client-secret)[= ])([^\s"'-][^\s"']*)/gi,
    replace: (match, prefix, value) => (isMasked(value) ? match : `${prefix}${mask('secret')}`),
  },
  {
    // `password=…`, `"api_key": "…"`, `secret: …`. The key may carry any prefix (`DB_PASSWORD`); a bare
    // value followed by `(` is a call (`password=getPassword()`), not a secret.
    pattern:
      /(password|passwd|passphrase|secret|secret[_-]?key|api[_-]?key|apikey|access[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|private[_-]?key|token)(["']?)([ \t]*[:=][ \t]*)(?:(["'])([^"'\n]{1,200})\4|([^\s"'&;,()<>[\]{}]{1,200})(?![^\s"'&;,()<>[\]{}])(?!\())/gi,
    replace: (match, key, keyQuote, separator, quote, quoted, bare) =>
      redactAssignment(match, { key, keyQuote, separator, quote, quoted, bare }),
  },
];

/** Masks every credential and exfiltration URL in `text` as `[REDACTED:<kind>]`. */
export function redact(text: string): string {
  let out = redactPrivateKeys(text);
  for (const rule of RULES) out = out.replace(rule.pattern, rule.replace as (substring: string) => string);
  return out;
}

/** A task as the SEL, logs and dashboards show it: redacted, whitespace collapsed, cut to `maxChars`. */
export function taskPreview(task: string, maxChars = 200): string {
  const flat = redact(task).replace(/\s+/g, ' ').trim();
  if (countChars(flat) <= maxChars) return flat;
  return maxChars <= 1 ? takeHead(flat, maxChars) : `${takeHead(flat, maxChars - 1)}…`;
}

interface AssignmentParts {
  key: string | undefined;
  keyQuote: string | undefined;
  separator: string | undefined;
  quote: string | undefined;
  quoted: string | undefined;
  bare: string | undefined;
}

function redactAssignment(match: string, parts: AssignmentParts): string {
  const { key = '', keyQuote = '', separator = '', quote, quoted, bare } = parts;
  const prefix = `${key}${keyQuote}${separator}`;
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

/** Masks a URL whole when it exfiltrates, else just the password in its userinfo. */
function redactUrl(raw: string): string {
  // Prose punctuation after a URL is not part of it.
  let end = raw.length;
  while (end > 0 && '.,;:!?)]}'.includes(raw[end - 1]!)) end--;
  const url = raw.slice(0, end);
  const rest = raw.slice(end);
  const schemeEnd = url.indexOf('://') + 3;
  const afterScheme = url.slice(schemeEnd);
  const authorityEnd = firstIndexOfAny(afterScheme, '/?#');
  const authority = afterScheme.slice(0, authorityEnd);
  const pathAndQuery = afterScheme.slice(authorityEnd);
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at) : '';
  const host = hostOf(authority.slice(at + 1));
  if (isCaptureHost(host) || carriesEncodedBlob(pathAndQuery)) return mask('exfil_url') + rest;
  if (host === 'hooks.slack.com' && pathAndQuery.startsWith('/services/'))
    return mask('slack_webhook') + rest;
  if (/(^|\.)discord(app)?\.com$/.test(host) && pathAndQuery.startsWith('/api/webhooks/')) {
    return mask('discord_webhook') + rest;
  }
  const colon = userinfo.indexOf(':');
  // A mask's own `:` is not a password separator.
  if (colon < 0 || colon === userinfo.length - 1 || userinfo.includes(REDACTED_PREFIX)) return raw;
  return `${url.slice(0, schemeEnd)}${userinfo.slice(0, colon + 1)}${mask('url_password')}${authority.slice(at)}${pathAndQuery}${rest}`;
}

function firstIndexOfAny(text: string, chars: string): number {
  for (let i = 0; i < text.length; i++) if (chars.includes(text[i]!)) return i;
  return text.length;
}

/** The lower-cased host of `host[:port][/path…]`. */
function hostOf(hostAndMore: string): string {
  const end = firstIndexOfAny(hostAndMore, ':/?#');
  return hostAndMore.slice(0, end).toLowerCase();
}

function isCaptureHost(host: string): boolean {
  return CAPTURE_HOSTS.some((known) => host === known || host.endsWith(`.${known}`));
}

/**
 * Whether a URL's path or query carries an encoded blob: a path segment or query part holding a run of
 * {@link ENCODED_BLOB_MIN_CHARS}+ base64/hex chars that is all hex, or looks like base64 (upper case,
 * lower case and digits, with few `-`/`_`, which tells it from a long slug such as a blog post's).
 */
function carriesEncodedBlob(pathAndQuery: string): boolean {
  for (const piece of pathAndQuery.split(/[/?#&=;]/)) {
    if (piece.length < ENCODED_BLOB_MIN_CHARS) continue;
    for (const run of decodePercent(piece).split(/[^A-Za-z0-9+/=_-]/)) {
      if (run.length >= ENCODED_BLOB_MIN_CHARS && looksEncoded(run)) return true;
    }
  }
  return false;
}

function looksEncoded(run: string): boolean {
  if (/^[0-9a-fA-F]+$/.test(run)) return true;
  const separators = run.length - run.replace(/[-_]/g, '').length;
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /\d/.test(run) && separators * 10 < run.length;
}

function decodePercent(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
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
