import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/http/body-limit.js';
import { SLACK_MAX_BODY_BYTES } from '../../src/slack/slack-http.js';
import { type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';
import { FakeSlack, TEST_SIGNING_SECRET } from '../slack/fake-slack.js';
import { peakRssDuring, rssOf, sendChunked } from './chunked-send.js';
import { daemonRoutes, methodsOf, pathWith } from './daemon-routes.js';

/**
 * Bodies are bounded by the bytes that arrive (issue 28): a chunked body declares no length, so the
 * daemon counts it as it reads and stops at the limit with a typed 413, on every route that reads a
 * body, before any parse; its memory does not grow with the body. A body just within the limit works.
 */

const BODY = 64 * 1024 * 1024;
/** Generous: the daemon holds at most one limit's worth (4 MiB) per request, and the GC is lazy. */
const RSS_GROWTH_BOUND = 32 * 1024 * 1024;

type Refusal = { code: string; path?: string; limit?: number; current?: number };

describe('a real crew serve: chunked bodies over the limit', () => {
  let d: DaemonProcess;
  let slack: FakeSlack;
  beforeAll(async () => {
    slack = new FakeSlack();
    await slack.start();
    d = await startDaemonProcess({
      config: {
        'agent.max_subagents': 4,
        'slack.bot_token': 'xoxb-test-token',
        'slack.signing_secret': TEST_SIGNING_SECRET,
        'slack.api_url': slack.url,
      },
    });
  }, 60_000);
  afterAll(async () => {
    expect(await d?.stop()).toBe(0);
    d?.cleanup();
    await slack?.close();
  });

  const bodyRoutes = () =>
    daemonRoutes().flatMap((route) =>
      methodsOf(route)
        .filter((method) => method !== 'GET' && method !== 'HEAD')
        .map((method) => ({ method, path: pathWith(route, 'r-none') })),
    );

  it('every route that reads a body answers a 64 MB chunked body with a typed 413, and RSS does not follow the body', async () => {
    const routes = bodyRoutes();
    expect(routes.map((r) => r.path)).toEqual(
      expect.arrayContaining(['/api/spawn', '/mcp', '/slack/events']),
    );
    const pid = d.proc.pid as number;
    const before = rssOf(pid);
    const answers: {
      route: string;
      status: number;
      refusal?: Refusal;
      sent: number;
      growth: number;
    }[] = [];
    for (const { method, path } of routes) {
      const start = rssOf(pid);
      const { value: answer, peak } = await peakRssDuring(pid, () =>
        sendChunked(`${d.url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${d.token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          totalBytes: BODY,
        }),
      );
      let refusal: Refusal | undefined;
      try {
        refusal = (JSON.parse(answer.text) as { refusal?: Refusal }).refusal;
      } catch {
        refusal = undefined;
      }
      answers.push({
        route: `${method} ${path}`,
        status: answer.status,
        sent: answer.sent,
        growth: peak - start,
        ...(refusal ? { refusal } : {}),
      });
    }
    for (const answer of answers) {
      // OAuth discovery is answered 404 before anything reads a body; every other route counts it.
      const expected = answer.route.includes('/.well-known/')
        ? { status: 404, code: 'not_found' }
        : { status: 413, code: 'invalid_argument' };
      expect({ route: answer.route, status: answer.status, code: answer.refusal?.code }).toEqual({
        route: answer.route,
        ...expected,
      });
      if (answer.status === 413) {
        const limit = answer.route.endsWith('/slack/events') ? SLACK_MAX_BODY_BYTES : MAX_BODY_BYTES;
        expect(answer.refusal).toMatchObject({ path: '(body)', limit });
        expect(answer.refusal?.current).toBeGreaterThan(limit);
      }
    }
    // No request grows the daemon by its body's size; all of them together (1 GB sent) not by one body.
    for (const { route, growth } of answers)
      expect({ route, growth: growth < RSS_GROWTH_BOUND }).toEqual({ route, growth: true });
    expect(rssOf(pid) - before, `RSS ${before} → ${rssOf(pid)}`).toBeLessThan(BODY);
    const health = await fetch(`${d.url}/api/health`, { headers: { authorization: `Bearer ${d.token}` } });
    expect(health.status).toBe(200);
  }, 60_000);

  it('a chunked body of exactly the limit is read and admitted', async () => {
    const head = '{"args":{"task":"#sim echo"},';
    const tail = '"parent":"cli:body"}';
    const padding = ' '.repeat(MAX_BODY_BYTES - Buffer.byteLength(head) - Buffer.byteLength(tail));
    const body = Buffer.from(head + padding + tail);
    expect(body.length).toBe(MAX_BODY_BYTES);
    const answer = await sendChunked(`${d.url}/api/spawn`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
      totalBytes: body.length,
      chunk: body,
    });
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ ok: true, runs: [{ id: expect.any(String) }] });
    const over = await sendChunked(`${d.url}/api/spawn`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
      totalBytes: body.length + 1,
      chunk: Buffer.concat([body, Buffer.from(' ')]),
    });
    expect(over.status).toBe(413);
  }, 30_000);

  it('a body of exactly the limit with its length declared is read (from the socket, no stream) and admitted', async () => {
    const head = '{"args":{"task":"#sim echo"},';
    const tail = '"parent":"cli:declared"}';
    const padding = ' '.repeat(MAX_BODY_BYTES - Buffer.byteLength(head) - Buffer.byteLength(tail));
    const body = head + padding + tail;
    const post = (text: string) =>
      fetch(`${d.url}/api/spawn`, {
        method: 'POST',
        headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
        body: text,
      });
    const answer = await post(body);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ ok: true, runs: [{ id: expect.any(String) }] });
    const over = await post(`${body} `);
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ ok: false, refusal: { path: '(body)' } });
  }, 30_000);
});
