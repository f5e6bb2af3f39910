import type { Env, Hono } from 'hono';
import type { Clock } from '../core/clock.js';
import { refuse } from '../core/errors.js';
import { limitBody } from '../http/body-limit.js';
import type { SelSink } from '../sel/sel-sink.js';
import { verifySlackSignature } from './slack-signature.js';

/** Slack's request bodies are small; anything bigger is refused before it is read whole. */
export const SLACK_MAX_BODY_BYTES = 1024 * 1024;

export interface SlackEventsRouteOptions {
  signingSecret: string;
  clock: Clock;
  sel: SelSink;
  /** A verified event or interaction, handed on after Slack has been answered. */
  dispatch(body: Record<string, unknown>, retryNum?: number): void;
}

/**
 * `POST /slack/events` (Events API and interactivity) on the daemon's own app and port. Slack's
 * signature is the authentication (no bearer token): it is verified on the raw bytes before anything
 * parses them, with nothing exempt — `ssl_check=1` in the body or the query does not skip it, and a
 * verified `ssl_check` answers 200 without reading anything else of the body. A bad or stale signature
 * is answered 401 and recorded in the SEL. Slack is answered at once; the work is dispatched after, so
 * its 3-second deadline never waits on a spawn.
 */
export function mountSlackEvents<E extends Env>(app: Hono<E>, options: SlackEventsRouteOptions): void {
  // The body is counted as it arrives and refused past the bound before its signature is checked.
  const bounded = limitBody(SLACK_MAX_BODY_BYTES, (c, refusal) => c.json({ ok: false, refusal }, 413));
  app.post('/slack/events', bounded, async (c) => {
    const raw = new Uint8Array(await c.req.arrayBuffer());
    const verdict = verifySlackSignature({
      secret: options.signingSecret,
      rawBody: raw,
      timestamp: c.req.header('x-slack-request-timestamp'),
      signature: c.req.header('x-slack-signature'),
      nowMs: options.clock.now(),
    });
    if (!verdict.ok) {
      options.sel.write({
        event_type: 'slack',
        source: 'slack',
        tool_name: 'POST /slack/events',
        outcome: 'slack_bad_signature',
        metadata: { reason: verdict.reason, bytes: raw.byteLength },
      });
      return c.json(
        {
          ok: false,
          refusal: refuse(
            'unauthorized',
            verdict.reason === 'no_secret'
              ? 'slack.signing_secret is not set; set it to the app signing secret and restart the daemon'
              : `the Slack request signature did not verify (${verdict.reason})`,
          ),
        },
        401,
      );
    }
    // Only a verified body is parsed.
    const body = parseBody(Buffer.from(raw).toString('utf8'), c.req.header('content-type') ?? '');
    if (!body) {
      return c.json(
        { ok: false, refusal: refuse('invalid_argument', 'the body is not a Slack payload') },
        400,
      );
    }
    if (body.ssl_check !== undefined) return c.body(null, 200);
    if (body.type === 'url_verification') return c.json({ challenge: String(body.challenge ?? '') });
    const retry = Number(c.req.header('x-slack-retry-num'));
    setImmediate(() => options.dispatch(body, Number.isInteger(retry) ? retry : undefined));
    return c.body(null, 200);
  });
}

/** JSON (Events API) or a form (`payload=` for interactivity; `ssl_check=1`). */
function parseBody(text: string, contentType: string): Record<string, unknown> | undefined {
  try {
    if (contentType.includes('application/x-www-form-urlencoded')) {
      const form = new URLSearchParams(text);
      if (form.has('ssl_check')) return { ssl_check: form.get('ssl_check') };
      const payload = form.get('payload');
      if (payload === null) return undefined;
      const parsed = JSON.parse(payload) as unknown;
      return isObject(parsed) ? parsed : undefined;
    }
    const parsed = JSON.parse(text) as unknown;
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
