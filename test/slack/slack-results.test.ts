import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import type { DeliveredEvent } from '../../src/gateway/relay.js';
import type { RunView } from '../../src/gateway/run-view.js';
import { MemorySelSink } from '../../src/sel/memory-sel-sink.js';
import { SlackApiError } from '../../src/slack/slack-api.js';
import { CHUNK_MAX_CHARS } from '../../src/slack/slack-chunks.js';
import { SlackLedger } from '../../src/slack/slack-ledger.js';
import { ACK_ACTION_ID } from '../../src/slack/slack-messages.js';
import { SlackResults } from '../../src/slack/slack-results.js';
import { MemorySlackApi } from './memory-slack-api.js';

const HOUR = 3_600_000;
const view: RunView = {
  id: 'r_1',
  status: 'completed',
  agent: 'sim',
  parent: 'slack:U1',
  depth: 1,
  task_preview: 'x',
  created_at: '2026-01-01T00:00:00.000Z',
  duration_secs: 1.5,
  delivery: 'pending',
};

function event(id: string, text: string, runId = 'r_1'): DeliveredEvent {
  return { id, parent: 'slack:U1', kind: 'completion', run_ids: [runId], text };
}

/** The text a result's messages carry, in order (plain-text sections joined). */
function reassembled(api: MemorySlackApi, eventId: string): string {
  return api.messages
    .filter((m) => m.metadata?.event_payload.event_id === eventId)
    .sort((a, b) => Number(a.metadata?.event_payload.part) - Number(b.metadata?.event_payload.part))
    .map((m) =>
      (m.blocks as { type: string; text?: { type: string; text: string } }[])
        .filter((b) => b.type === 'section')
        .map((b) => b.text?.text ?? '')
        .join(''),
    )
    .join('');
}

describe('SlackResults: results as DMs, exactly once, re-announced once', () => {
  let clock: FakeClock;
  let api: MemorySlackApi;
  let ledger: SlackLedger;
  let sel: MemorySelSink;
  let acked: Map<string, number>;
  let results: SlackResults;
  const make = () =>
    new SlackResults({
      clock,
      api,
      ledger,
      sel,
      runView: (id) => (id === 'r_1' ? view : undefined),
      ackedAt: (id) => acked.get(id),
      reannounceMs: HOUR,
      log: () => undefined,
    });

  beforeEach(() => {
    clock = new FakeClock();
    api = new MemorySlackApi();
    ledger = new SlackLedger(':memory:');
    sel = new MemorySelSink(clock);
    acked = new Map();
    results = make();
  });
  afterEach(async () => {
    await results.close();
    expect(results.pendingTimers()).toBe(0);
    ledger.close();
  });

  it('a long result: header, chunks of at most 3,900 characters that reassemble, an Ack button with the run id', async () => {
    const text = Array.from({ length: 500 }, (_, i) => `output line ${i} & <more>`).join('\n');
    await results.sinkFor('U1').deliver(event('e1', text));
    expect(api.calls.filter((c) => c === 'conversations.open')).toHaveLength(1);
    expect(api.messages.length).toBeGreaterThan(3);
    for (const m of api.messages) {
      expect(m.channel).toBe('DU1');
      const sections = (m.blocks as { type: string; text?: { text: string } }[]).filter(
        (b) => b.type === 'section',
      );
      expect(sections.map((s) => s.text?.text ?? '').join('').length).toBeLessThanOrEqual(CHUNK_MAX_CHARS);
      for (const s of sections) expect(s.text?.text.length).toBeLessThanOrEqual(3000);
    }
    expect(reassembled(api, 'e1')).toBe(text);
    const first = api.messages[0]?.blocks as {
      type: string;
      text?: { text: string };
      elements?: unknown[];
    }[];
    expect(first[0]).toMatchObject({ type: 'header', text: { text: 'Run r_1 · sim · completed · 1.5s' } });
    expect(first.at(-1)).toMatchObject({
      type: 'actions',
      elements: [{ action_id: ACK_ACTION_ID, value: 'r_1' }],
    });
  });

  it('the same event again, from this instance or a restarted one, posts nothing', async () => {
    await results.sinkFor('U1').deliver(event('e1', 'done'));
    await results.sinkFor('U1').deliver(event('e1', 'done'));
    await results.close();
    results = make();
    results.start();
    await results.sinkFor('U1').deliver(event('e1', 'done'));
    expect(api.messages).toHaveLength(1);
  });

  it('a post whose answer was lost (a crash between posting and recording) is found, not posted again', async () => {
    const text = 'y'.repeat(9000);
    api.failures['chat.postMessage'] = ['lost'];
    await expect(results.sinkFor('U1').deliver(event('e1', text))).rejects.toThrow(/request_failed/);
    await results.close();
    results = make();
    await results.sinkFor('U1').deliver(event('e1', text));
    expect(api.calls).toContain('conversations.history');
    expect(api.messages).toHaveLength(3);
    expect(reassembled(api, 'e1')).toBe(text);
  });

  it('ratelimited: waits Retry-After on the clock, then posts', async () => {
    api.failures['chat.postMessage'] = [new SlackApiError('chat.postMessage', 'ratelimited', 2)];
    const delivered = results.sinkFor('U1').deliver(event('e1', 'done'));
    await clock.advance(1999);
    expect(api.messages).toHaveLength(0);
    await clock.advance(1);
    await delivered;
    expect(api.messages).toHaveLength(1);
    expect(api.calls.filter((c) => c === 'chat.postMessage')).toHaveLength(2);
  });

  it('msg_too_long and channel_not_found are recorded in the SEL and never thrown; a transient error is', async () => {
    api.failures['chat.postMessage'] = [new SlackApiError('chat.postMessage', 'msg_too_long')];
    await results.sinkFor('U1').deliver(event('e1', 'done'));
    expect(sel.withOutcome('slack_post_failed')[0]?.metadata).toMatchObject({
      error: 'msg_too_long',
      event_id: 'e1',
    });
    expect(api.messages.at(-1)?.text).toMatch(/too long for Slack.*spawn status r_1/);
    api.failures['chat.postMessage'] = [new SlackApiError('chat.postMessage', 'channel_not_found')];
    await results.sinkFor('U1').deliver(event('e2', 'done'));
    expect(sel.withOutcome('slack_post_failed')[1]?.metadata).toMatchObject({ error: 'channel_not_found' });
    api.failures['chat.postMessage'] = [new SlackApiError('chat.postMessage', 'http_503')];
    await expect(results.sinkFor('U1').deliver(event('e3', 'done'))).rejects.toThrow(/http_503/);
  });

  it('an unacked result is re-announced once after reannounce_secs, with a link to the first message', async () => {
    await results.sinkFor('U1').deliver(event('e1', 'done'));
    const firstTs = api.messages[0]?.ts as string;
    await clock.advance(HOUR - 1);
    expect(api.messages).toHaveLength(1);
    await clock.advance(1);
    expect(api.messages).toHaveLength(2);
    const reminder = api.messages[1];
    expect(reminder?.text).toContain(`https://slack.com/archives/DU1/p${firstTs.replace('.', '')}`);
    expect(JSON.stringify(reminder?.blocks)).toContain(ACK_ACTION_ID);
    await clock.advance(5 * HOUR);
    expect(api.messages).toHaveLength(2);
    // A restarted instance does not announce it again either.
    await results.close();
    results = make();
    results.start();
    await clock.advance(5 * HOUR);
    expect(api.messages).toHaveLength(2);
  });

  it('an acked result is not re-announced; a restart re-arms the timer of one posted before it', async () => {
    await results.sinkFor('U1').deliver(event('e1', 'done'));
    await results.sinkFor('U1').deliver(event('e2', 'done'));
    acked.set('e1', clock.now());
    await clock.advance(HOUR / 2);
    await results.close();
    results = make();
    results.start();
    await clock.advance(HOUR / 2);
    expect(api.messages.map((m) => m.text).filter((t) => t.startsWith('Reminder'))).toHaveLength(1);
  });

  it('acked: the button is replaced by who acked and when; an update failure is recorded, not thrown', async () => {
    await results.sinkFor('U1').deliver(event('e1', 'done'));
    const first = api.messages[0];
    await results.acked({
      user: 'U1',
      channel: 'DU1',
      ts: first?.ts as string,
      text: first?.text as string,
      blocks: first?.blocks as unknown[],
      ackedAtIso: '2026-12-02T03:00:00.000Z',
    });
    const update = api.updates[0];
    expect(update?.ts).toBe(first?.ts);
    expect(JSON.stringify(update?.blocks)).not.toContain(ACK_ACTION_ID);
    expect(JSON.stringify(update?.blocks)).toContain('Acked by <@U1> at 2026-12-02T03:00:00.000Z');
    api.failures['chat.update'] = [new SlackApiError('chat.update', 'message_not_found')];
    await results.acked({ user: 'U1', channel: 'DU1', ts: 'x', text: 't', blocks: [], ackedAtIso: 'now' });
    expect(sel.withOutcome('slack_api_error')).toHaveLength(1);
  });

  it('the ledger is bounded: beyond its maximum the oldest results go', () => {
    const small = new SlackLedger(':memory:', { maxResults: 3 });
    for (let i = 0; i < 10; i++) {
      small.recordIntent(`e${i}`, 0, 'D', i);
      small.recordPart(`e${i}`, 0, `${i}.0`);
      small.recordResult({
        eventId: `e${i}`,
        user: 'U',
        channel: 'D',
        firstTs: `${i}.0`,
        runId: 'r',
        postedAt: i,
      });
    }
    expect(small.size()).toBe(3);
    expect(small.result('e0')).toBeUndefined();
    expect(small.parts('e0')).toEqual([]);
    expect(small.result('e9')?.firstTs).toBe('9.0');
    small.close();
  });
});
