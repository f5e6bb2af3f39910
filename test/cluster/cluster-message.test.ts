import { describe, expect, it } from 'vitest';
import {
  type ClusterMessage,
  MAX_PAGE_CHARS,
  pageOptionsOf,
  parseMessage,
  toFields,
} from '../../src/cluster/cluster-message.js';
import { clusterStatusOf } from '../../src/cluster/cluster-status.js';

describe('cluster stream messages', () => {
  it('round-trip every kind through flat stream fields', () => {
    const messages: ClusterMessage[] = [
      { type: 'started', runId: 'r1', host: 'g1' },
      { type: 'ended', runId: 'r1', status: 'completed', stop: 'end_turn', host: 'g1', text: 'a\nb' },
      { type: 'ended', runId: 'r2', status: 'lost', error: 'gateway g2 died', host: 'g0', text: '' },
      { type: 'cancel', runId: 'r3' },
      { type: 'steer', runId: 'r4', message: 'go on', mode: 'follow_up' },
      { type: 'page', runId: 'r5', requestId: 'g0:1', replyTo: 'g0', options: '{"offset":3}' },
      { type: 'paged', runId: 'r5', requestId: 'g0:1' },
      { type: 'turn', runId: 'r6', replyTo: 'g2' },
      { type: 'turn_ended', runId: 'r6' },
      { type: 'turn_ended', runId: 'r6', error: 'gateway g1 has no continuation r6 to run' },
      { type: 'release', runId: 'r7' },
      { type: 'released', runId: 'r7', reason: 'expired' },
      { type: 'released', runId: 'r8', reason: 'evicted' },
    ];
    for (const m of messages) expect(parseMessage(toFields(m))).toEqual(m);
  });

  it('drops what it does not recognise instead of guessing', () => {
    expect(parseMessage(['type', 'ended', 'runId', 'r1', 'status', 'exploded'])).toBeUndefined();
    expect(parseMessage(['type', 'started', 'runId', 'r1'])).toBeUndefined();
    expect(parseMessage(['type', 'reboot', 'runId', 'r1'])).toBeUndefined();
    expect(parseMessage(['type', 'cancel'])).toBeUndefined();
    expect(parseMessage(['type', 'page', 'runId', 'r1', 'requestId', 'x'])).toBeUndefined();
    expect(parseMessage(['type', 'paged', 'runId', 'r1'])).toBeUndefined();
  });

  it('drops kept-conversation messages that are missing a field or carry one of the wrong kind', () => {
    expect(parseMessage(['type', 'turn', 'runId', 'r1'])).toBeUndefined();
    expect(parseMessage(['type', 'turn', 'runId', 'r1', 'replyTo', ''])).toBeUndefined();
    expect(parseMessage(['type', 'turn', 'replyTo', 'g1'])).toBeUndefined();
    expect(parseMessage(['type', 'turn_ended'])).toBeUndefined();
    expect(parseMessage(['type', 'release', 'runId', ''])).toBeUndefined();
    expect(parseMessage(['type', 'released', 'runId', 'r1'])).toBeUndefined();
    // Only the reaper's two reasons: anything else (a JSON blob, another reason) is not trusted.
    expect(parseMessage(['type', 'released', 'runId', 'r1', 'reason', 'requested'])).toBeUndefined();
    expect(parseMessage(['type', 'released', 'runId', 'r1', 'reason', '{"x":1}'])).toBeUndefined();
    // An odd field count (a truncated entry) keeps the pairs it has and drops the rest.
    expect(parseMessage(['type', 'turn', 'runId', 'r1', 'replyTo'])).toBeUndefined();
    // Extra fields are ignored, not copied into the message.
    expect(parseMessage(['type', 'release', 'runId', 'r1', 'host', 'evil', '__proto__', '{}'])).toEqual({
      type: 'release',
      runId: 'r1',
    });
  });

  it("reads a page request's options from another gateway, keeping only well-typed fields and bounding the size", () => {
    expect(pageOptionsOf('{"offset":3,"limit":20,"grep":"err","maxChars":5000}')).toEqual({
      offset: 3,
      limit: 20,
      grep: 'err',
      maxChars: 5000,
    });
    expect(pageOptionsOf('{"offset":"3","limit":-1,"grep":7,"maxChars":1e12}')).toEqual({
      maxChars: MAX_PAGE_CHARS,
    });
    for (const hostile of ['', '{nope', 'null', '[1]', '"text"', '{"maxChars":0}', '{"__proto__":{"x":1}}'])
      expect(pageOptionsOf(hostile).maxChars).toBeGreaterThan(0);
  });
});

describe('the cluster status', () => {
  it('lists the gateways that published recently, sorted, marks one short of memory, and leaves out stale or broken entries', () => {
    const status = clusterStatusOf({
      name: 'crew',
      gateway: 'b',
      providerCap: 5,
      running: 4,
      queued: 7,
      entries: {
        b: JSON.stringify({ cap: 3, running: 2, runs: ['r1', 'r2'], at: 10_000 }),
        a: JSON.stringify({ cap: 2, running: 2, runs: ['r3', 'r4'], at: 9_500 }),
        short: JSON.stringify({ cap: 4, running: 0, runs: [], at: 9_900, memoryShort: true }),
        dead: JSON.stringify({ cap: 3, running: 1, runs: ['r5'], at: 1_000 }),
        garbage: '{nope',
      },
      now: 10_000,
      staleMs: 3000,
    });
    expect(status).toEqual({
      name: 'crew',
      gateway: 'b',
      available: true,
      provider_cap: 5,
      running: 4,
      queued: 7,
      gateways: [
        { name: 'a', cap: 2, running: 2 },
        { name: 'b', cap: 3, running: 2 },
        { name: 'short', cap: 4, running: 0, memory_short: true },
      ],
    });
  });
});
