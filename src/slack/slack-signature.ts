import { createHmac, timingSafeEqual } from 'node:crypto';

/** Requests older (or newer) than this are refused: a captured request cannot be replayed later. */
export const MAX_SKEW_MS = 5 * 60 * 1000;

export type SignatureVerdict =
  | { ok: true }
  | { ok: false; reason: 'missing_headers' | 'stale_timestamp' | 'bad_signature' | 'no_secret' };

/**
 * Slack's request signature (`x-slack-signature: v0=<hex>`): HMAC-SHA256 with the signing secret over
 * `v0:<x-slack-request-timestamp>:<raw body>`, computed on the raw bytes before anything parses them.
 * Nothing in the body or the query (such as `ssl_check=1`) exempts a request.
 */
export function verifySlackSignature(input: {
  secret: string;
  rawBody: Uint8Array;
  timestamp: string | undefined;
  signature: string | undefined;
  nowMs: number;
}): SignatureVerdict {
  const { secret, rawBody, timestamp, signature, nowMs } = input;
  if (secret === '') return { ok: false, reason: 'no_secret' };
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp))
    return { ok: false, reason: 'missing_headers' };
  if (Math.abs(nowMs - Number(timestamp) * 1000) > MAX_SKEW_MS)
    return { ok: false, reason: 'stale_timestamp' };
  const expected = Buffer.from(signSlackRequest(secret, timestamp, rawBody), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'bad_signature' };
  }
  return { ok: true };
}

/** The `x-slack-signature` value for a body (what Slack sends; tests and the benchmark sign with it). */
export function signSlackRequest(secret: string, timestamp: string, rawBody: Uint8Array | string): string {
  const hmac = createHmac('sha256', secret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody);
  return `v0=${hmac.digest('hex')}`;
}
