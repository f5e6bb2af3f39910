import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import {
  ackPress,
  dmEvent,
  type FakeMessage,
  FakeSlack,
  postToSlackRoute,
  TEST_SIGNING_SECRET,
} from './fake-slack.js';

const USER = 'U0ALLOWED';
const STRANGER = 'U0STRANGER';

function sectionsText(m: FakeMessage): string {
  return (m.blocks ?? [])
    .filter((b) => b.type === 'section')
    .map((b) => b.text?.text ?? '')
    .join('');
}

function selLines(home: string): { outcome: string; metadata: Record<string, unknown>; source: string }[] {
  return readFileSync(join(home, 'security_events.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

describe('Slack over HTTP on a real daemon, against a loopback fake Web API', () => {
  let slack: FakeSlack;
  let d: DaemonProcess;

  /** Sends a DM and returns the thread replies once `count` have come. */
  async function dm(text: string, count = 1, user = USER): Promise<FakeMessage[]> {
    const event = dmEvent(user, text);
    const r = await postToSlackRoute(d.url, event.body);
    expect(r.status).toBe(200);
    // Slack's 3-second deadline: the answer goes before any work.
    expect(r.ms).toBeLessThan(3000);
    return pollFor(`${count} replies to "${text}"`, () => {
      const replies = slack.replies(event.ts);
      return replies.length >= count ? replies : undefined;
    });
  }

  async function runsOf(parent: string) {
    const r = await api(d, 'GET', '/api/runs');
    return (
      r.body.runs as { id: string; parent: string; status: string; acked_at?: string; delivery: string }[]
    ).filter((run) => run.parent === parent);
  }

  beforeAll(async () => {
    slack = new FakeSlack();
    await slack.start();
    d = await startDaemonProcess({
      config: {
        'slack.bot_token': 'xoxb-test-token',
        'slack.signing_secret': TEST_SIGNING_SECRET,
        'slack.allowed_users': [USER],
        'slack.api_url': slack.url,
        'agent.completion_keep_chars': 0,
      },
    });
  }, 60_000);

  afterAll(async () => {
    await d?.stop();
    d?.cleanup();
    await slack?.close();
  });

  it('a DM "spawn #sim …" creates a run under slack:<user>; the result comes as a DM in chunks that reassemble; Ack marks it and edits the message', async () => {
    const [started] = await dm('spawn #sim bytes=12000 chunks=4');
    expect(started?.text).toMatch(/^Started `([\w-]+)`/);
    const runId = /`([\w-]+)`/.exec(started?.text ?? '')?.[1] as string;
    const [run] = await runsOf(`slack:${USER}`);
    expect(run?.id).toBe(runId);
    const parts = await pollFor('the result DM', () => {
      const results = slack.results();
      const eventId = results[0]?.metadata?.event_payload.event_id;
      return eventId
        ? slack.resultParts(eventId).length >= 4
          ? slack.resultParts(eventId)
          : undefined
        : undefined;
    });
    expect(slack.calls.filter((c) => c.method === 'conversations.open')).toHaveLength(1);
    for (const part of parts) {
      expect(part.channel).toBe(`D${USER}`);
      expect(sectionsText(part).length).toBeLessThanOrEqual(3900);
    }
    const whole = parts.map(sectionsText).join('');
    const status = await api(d, 'GET', `/api/runs/${runId}`);
    const transcript = status.body.text as string;
    expect(transcript.length).toBe(12000);
    expect(whole.startsWith(`[Subagent completion event] id=${runId} agent=sim status=completed`)).toBe(true);
    expect(whole).toContain(transcript);
    const first = parts[0] as FakeMessage;
    expect(first.blocks?.[0]).toMatchObject({ type: 'header' });
    expect(first.blocks?.[0]?.text?.text).toMatch(new RegExp(`^Run ${runId} · sim · completed · \\d`));
    const button = first.blocks?.find((b) => b.type === 'actions')?.elements?.[0];
    expect(button).toMatchObject({ action_id: 'crew_ack', value: runId });

    const press = await postToSlackRoute(d.url, ackPress(USER, first, runId), {
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(press.status).toBe(200);
    const acked = await pollFor('acked_at', async () => (await runsOf(`slack:${USER}`))[0]?.acked_at);
    expect(Date.parse(acked)).toBeGreaterThan(0);
    const update = await pollFor('chat.update', () => slack.updates[0]);
    expect(update.ts).toBe(first.ts);
    expect(JSON.stringify(update.blocks)).toContain(`Acked by <@${USER}>`);
    expect(JSON.stringify(update.blocks)).not.toContain('crew_ack');
  });

  it('spawn list, spawn status and spawn cancel render in the thread; an unknown form answers with the grammar', async () => {
    const [started] = await dm('spawn #sim sleep=30s key AKIAIOSFODNN7EXAMPLE');
    const runId = /`([\w-]+)`/.exec(started?.text ?? '')?.[1] as string;
    const [list] = await dm('spawn list');
    expect(list?.text).toContain(runId);
    expect(list?.text).not.toContain('AKIAIOSFODNN7EXAMPLE');
    expect(list?.text).toMatch(/live/);
    const [status] = await dm(`spawn status ${runId}`);
    expect(status?.text).toMatch(new RegExp(`\`${runId}\` (starting|running) · sim\ntask: #sim sleep=30s`));
    expect(status?.text).not.toContain('AKIAIOSFODNN7EXAMPLE');
    const [cancel] = await dm(`spawn cancel ${runId}`);
    expect(cancel?.text).toBe(`Cancelled \`${runId}\`.`);
    await pollFor('cancelled', async () =>
      (await runsOf(`slack:${USER}`)).find((r) => r.id === runId && r.status === 'cancelled'),
    );
    const [grammar] = await dm('spawn status');
    expect(grammar?.text).toMatch(/takes one run id[\s\S]*spawn list/);
    const [missing] = await dm('spawn status r_nope');
    expect(missing?.text).toMatch(/Refused \(`not_found`\)/);
  });

  it('a mention works like a DM, replying in the channel thread', async () => {
    const event = dmEvent(USER, 'spawn list', { mention: true });
    expect((await postToSlackRoute(d.url, event.body)).status).toBe(200);
    const [reply] = await pollFor('mention reply', () => {
      const r = slack.replies(event.ts);
      return r.length > 0 ? r : undefined;
    });
    expect(reply?.channel).toBe('C1');
    expect(reply?.text).toMatch(/Your runs/);
  });

  it('anything else goes to the user’s hosted chat, whose answer comes back in the thread', async () => {
    const [answer] = await dm('hello, what can you do?');
    expect(answer?.text).toContain('sim: done');
  }, 60_000);

  it('a user not in slack.allowed_users is refused, told how to be allowed, and audited; nothing spawns', async () => {
    const [refusal] = await dm('spawn #sim', 1, STRANGER);
    expect(refusal?.text).toMatch(/not allowed[\s\S]*crew config set slack.allowed_users/);
    expect(await runsOf(`slack:${STRANGER}`)).toEqual([]);
    const audited = selLines(d.home).filter((l) => l.outcome === 'refused_not_allowed');
    expect(audited.at(-1)?.source).toBe(`slack:${STRANGER}`);
  });

  it('bad signature, stale timestamp and the ssl_check trick (event and interactive payload) are refused: 401, SEL, nothing done', async () => {
    const before = (await api(d, 'GET', '/api/runs')).body.runs as unknown[];
    const spawn = dmEvent(USER, 'spawn #sim sleep=10ms');
    expect((await postToSlackRoute(d.url, spawn.body, { secret: 'wrong-secret' })).status).toBe(401);
    const old = Math.floor(Date.now() / 1000) - 301;
    expect((await postToSlackRoute(d.url, spawn.body, { timestampSecs: old })).status).toBe(401);
    // ssl_check with an event: an unsigned JSON body that claims to be a check, and the query flag.
    const smuggledEvent = JSON.stringify({ ...spawn.payload, ssl_check: '1' });
    expect(
      (await postToSlackRoute(d.url, smuggledEvent, { signature: 'v0=00', query: '?ssl_check=1' })).status,
    ).toBe(401);
    // ssl_check with an interactive payload: unsigned is refused; signed answers 200 but reads nothing else.
    const target = await pollFor('a result to press on', () => slack.results()[0]);
    const runId = target.blocks?.find((b) => b.type === 'actions')?.elements?.[0]?.value as string;
    const form = `ssl_check=1&${ackPress(STRANGER, target, runId)}`;
    const formType = { contentType: 'application/x-www-form-urlencoded' };
    expect((await postToSlackRoute(d.url, form, { ...formType, signature: 'v0=bad' })).status).toBe(401);
    expect((await postToSlackRoute(d.url, form, formType)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(slack.replies(target.ts)).toEqual([]); // the stranger's press was never read
    const after = (await api(d, 'GET', '/api/runs')).body.runs as unknown[];
    expect(after.length).toBe(before.length);
    const reasons = selLines(d.home)
      .filter((l) => l.outcome === 'slack_bad_signature')
      .map((l) => l.metadata.reason);
    expect(reasons).toEqual(['bad_signature', 'stale_timestamp', 'bad_signature', 'bad_signature']);
  });

  it('url_verification answers the challenge once signed; no bearer token is needed on the route', async () => {
    const r = await postToSlackRoute(
      d.url,
      JSON.stringify({ type: 'url_verification', challenge: 'abc123' }),
    );
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual({ challenge: 'abc123' });
  });

  it('ratelimited with Retry-After is waited out: the DM still arrives, once', async () => {
    const [started] = await dm('spawn #sim sleep=1500ms');
    const runId = /`([\w-]+)`/.exec(started?.text ?? '')?.[1] as string;
    slack.failures['chat.postMessage'] = [{ status: 429, retryAfter: 1 }];
    const isTheResult = (m: FakeMessage) => m.blocks?.[0]?.text?.text.startsWith(`Run ${runId} `) === true;
    const result = await pollFor('the result after a rate limit', () => slack.results().find(isTheResult));
    expect(slack.results().filter(isTheResult)).toHaveLength(1);
    const attempts = slack.calls.filter(
      (c) => c.method === 'chat.postMessage' && JSON.stringify(c.body).includes(`Run ${runId} `),
    );
    expect(attempts).toHaveLength(2);
    expect((attempts[1]?.at ?? 0) - (attempts[0]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(result.channel).toBe(`D${USER}`);
  });
});
