import { describe, expect, it } from 'vitest';
import { signSlackRequest, verifySlackSignature } from '../../src/slack/slack-signature.js';

const secret = 'test-signing-secret';
const now = 1_700_000_000_000;
const ts = String(now / 1000);
const body = Buffer.from('{"type":"event_callback","event":{"type":"message","text":"spawn hi"}}');

describe('Slack request signature', () => {
  it('accepts the HMAC-SHA256 of v0:<ts>:<raw body> with the signing secret', () => {
    const signature = signSlackRequest(secret, ts, body);
    expect(signature).toMatch(/^v0=[0-9a-f]{64}$/);
    expect(verifySlackSignature({ secret, rawBody: body, timestamp: ts, signature, nowMs: now })).toEqual({
      ok: true,
    });
  });

  it('refuses a changed body, another secret, a truncated signature and missing headers', () => {
    const signature = signSlackRequest(secret, ts, body);
    const changed = Buffer.from(body.toString().replace('hi', 'ho'));
    expect(verifySlackSignature({ secret, rawBody: changed, timestamp: ts, signature, nowMs: now })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    const other = signSlackRequest('another', ts, body);
    expect(
      verifySlackSignature({ secret, rawBody: body, timestamp: ts, signature: other, nowMs: now }).ok,
    ).toBe(false);
    expect(
      verifySlackSignature({
        secret,
        rawBody: body,
        timestamp: ts,
        signature: signature.slice(0, 20),
        nowMs: now,
      }).ok,
    ).toBe(false);
    expect(
      verifySlackSignature({ secret, rawBody: body, timestamp: undefined, signature, nowMs: now }),
    ).toEqual({
      ok: false,
      reason: 'missing_headers',
    });
  });

  it('refuses a timestamp more than five minutes old (or ahead), even correctly signed', () => {
    const old = String(now / 1000 - 301);
    expect(
      verifySlackSignature({
        secret,
        rawBody: body,
        timestamp: old,
        signature: signSlackRequest(secret, old, body),
        nowMs: now,
      }),
    ).toEqual({ ok: false, reason: 'stale_timestamp' });
    const edge = String(now / 1000 - 299);
    expect(
      verifySlackSignature({
        secret,
        rawBody: body,
        timestamp: edge,
        signature: signSlackRequest(secret, edge, body),
        nowMs: now,
      }).ok,
    ).toBe(true);
  });

  it('refuses everything when no secret is configured', () => {
    const signature = signSlackRequest('', ts, body);
    expect(verifySlackSignature({ secret: '', rawBody: body, timestamp: ts, signature, nowMs: now })).toEqual(
      {
        ok: false,
        reason: 'no_secret',
      },
    );
  });
});
