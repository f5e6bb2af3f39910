import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { MemorySelSink } from '../../src/sel/memory-sel-sink.js';
import { mountSlackEvents } from '../../src/slack/slack-http.js';
import { signSlackRequest } from '../../src/slack/slack-signature.js';

const secret = 'route-secret';

function setup() {
  const clock = new FakeClock();
  const sel = new MemorySelSink(clock);
  const dispatched: Record<string, unknown>[] = [];
  const app = new Hono();
  mountSlackEvents(app, { signingSecret: secret, clock, sel, dispatch: (body) => dispatched.push(body) });
  const send = (
    body: string,
    options: { contentType?: string; signature?: string; ts?: number; query?: string } = {},
  ) => {
    const ts = String(options.ts ?? clock.now() / 1000);
    return app.request(`/slack/events${options.query ?? ''}`, {
      method: 'POST',
      headers: {
        'content-type': options.contentType ?? 'application/json',
        'x-slack-request-timestamp': ts,
        'x-slack-signature': options.signature ?? signSlackRequest(secret, ts, body),
      },
      body,
    });
  };
  return { clock, sel, dispatched, send };
}

const settle = () => new Promise((r) => setImmediate(r));
const event = JSON.stringify({
  type: 'event_callback',
  event_id: 'Ev1',
  event: { type: 'message', text: 'spawn x' },
});
const press = new URLSearchParams({
  payload: JSON.stringify({ type: 'block_actions', actions: [{ action_id: 'crew_ack', value: 'r1' }] }),
}).toString();
const form = 'application/x-www-form-urlencoded';

describe('POST /slack/events', () => {
  it('a signed event is answered 200 first and dispatched after', async () => {
    const { send, dispatched } = setup();
    const response = await send(event);
    expect(response.status).toBe(200);
    expect(dispatched).toEqual([]);
    await settle();
    expect(dispatched).toEqual([JSON.parse(event)]);
  });

  it('a signed interactive payload is parsed from the form', async () => {
    const { send, dispatched } = setup();
    expect((await send(press, { contentType: form })).status).toBe(200);
    await settle();
    expect(dispatched[0]).toMatchObject({ type: 'block_actions' });
  });

  it('ssl_check smuggles nothing: unsigned it is refused, signed it is answered and nothing is dispatched', async () => {
    const { send, dispatched, sel } = setup();
    const smuggled = `ssl_check=1&${press}`;
    expect((await send(smuggled, { contentType: form, signature: 'v0=0' })).status).toBe(401);
    expect(
      (
        await send(JSON.stringify({ ...JSON.parse(event), ssl_check: 1 }), {
          signature: 'v0=0',
          query: '?ssl_check=1',
        })
      ).status,
    ).toBe(401);
    expect((await send(smuggled, { contentType: form })).status).toBe(200);
    expect((await send('ssl_check=1', { contentType: form })).status).toBe(200);
    await settle();
    expect(dispatched).toEqual([]);
    expect(sel.withOutcome('slack_bad_signature')).toHaveLength(2);
  });

  it('a stale timestamp gets 401 and a SEL event; a body that is not a payload gets 400 once verified', async () => {
    const { send, dispatched, sel, clock } = setup();
    expect((await send(event, { ts: clock.now() / 1000 - 301 })).status).toBe(401);
    expect(sel.withOutcome('slack_bad_signature')[0]?.metadata).toMatchObject({ reason: 'stale_timestamp' });
    expect((await send('not json')).status).toBe(400);
    await settle();
    expect(dispatched).toEqual([]);
  });

  it('url_verification answers its challenge', async () => {
    const { send } = setup();
    const response = await send(JSON.stringify({ type: 'url_verification', challenge: 'c-1' }));
    expect(await response.json()).toEqual({ challenge: 'c-1' });
  });
});
