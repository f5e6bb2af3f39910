/**
 * Where a URL in a text takes data out (DESIGN §7): the capture and tunnelling hosts, and an encoded blob
 * in a path or query. {@link redactUrl} masks such a URL whole, or just the password in its userinfo.
 */
import { mask, REDACTED_PREFIX } from './secret-shape.js';

/**
 * Hosts of request-capture, interaction-logging and tunnelling services, matched as the host or a parent
 * domain of it. A URL to one of these in a task is how a prompt-injected agent would ship data out.
 */
export const CAPTURE_HOSTS: readonly string[] = [
  'webhook.site',
  'webhook.cool',
  'requestbin.com',
  'requestbin.net',
  'requestbin.io',
  'requestbin.fullcontact.com',
  'requestcatcher.com',
  'requestinspector.com',
  'pipedream.net',
  'pipedream.com',
  'hookb.in',
  'hookbin.com',
  'postb.in',
  'ptsv2.com',
  'ptsv3.com',
  'mockbin.org',
  'mockbin.io',
  'beeceptor.com',
  'smee.io',
  'webhookrelay.com',
  'ngrok.io',
  'ngrok.app',
  'ngrok.dev',
  'ngrok-free.app',
  'ngrok-free.dev',
  'ngrok.pizza',
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
  'canarytokens.com',
  'canarytokens.org',
  'dnslog.cn',
  'ceye.io',
  'trycloudflare.com',
  'loca.lt',
  'localtunnel.me',
  'serveo.net',
  'localhost.run',
  'lhr.life',
  'pagekite.me',
  'telebit.cloud',
];

/** Length of an encoded run in a URL's path or query that marks the URL as carrying data out. */
export const ENCODED_BLOB_MIN_CHARS = 32;

/** Masks a URL whole when it exfiltrates, else just the password in its userinfo. */
export function redactUrl(raw: string): string {
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
export function hostOf(hostAndMore: string): string {
  const end = firstIndexOfAny(hostAndMore, ':/?#');
  return hostAndMore.slice(0, end).toLowerCase();
}

export function isCaptureHost(host: string): boolean {
  return CAPTURE_HOSTS.some((known) => host === known || host.endsWith(`.${known}`));
}

/**
 * Whether a URL's path or query carries an encoded blob: a path segment or query part holding a run of
 * {@link ENCODED_BLOB_MIN_CHARS}+ base64/hex chars that is all hex, or looks like base64 (upper case,
 * lower case and digits, with few `-`/`_`, which tells it from a long slug such as a blog post's). A
 * digest (40 or 64 hex: a git commit, a lockfile's SHA-1 or SHA-256) names content; it is not data.
 */
function carriesEncodedBlob(pathAndQuery: string): boolean {
  if (!LONG_RUN.test(pathAndQuery)) return false; // most URLs: no run long enough, nothing to split
  for (const piece of pathAndQuery.split(/[/?#&=;]/)) {
    if (piece.length < ENCODED_BLOB_MIN_CHARS) continue;
    for (const run of decodePercent(piece).split(/[^A-Za-z0-9+/=_-]/)) {
      if (run.length >= ENCODED_BLOB_MIN_CHARS && looksEncoded(run)) return true;
    }
  }
  return false;
}

/** A run of {@link ENCODED_BLOB_MIN_CHARS}+ chars that could be (percent-encoded) base64 or hex. */
const LONG_RUN = new RegExp(`[A-Za-z0-9+/=_%-]{${ENCODED_BLOB_MIN_CHARS},}`);

function looksEncoded(run: string): boolean {
  if (/^[0-9a-fA-F]+$/.test(run)) return !isDigest(run);
  const separators = run.length - run.replace(/[-_]/g, '').length;
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /\d/.test(run) && separators * 10 < run.length;
}

/** A SHA-1 or SHA-256 in hex, one case: how git, lockfiles and registries name content. */
function isDigest(hex: string): boolean {
  return (hex.length === 40 || hex.length === 64) && (hex === hex.toLowerCase() || hex === hex.toUpperCase());
}

function decodePercent(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
