import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { dmEvent, FakeSlack } from './fake-slack.js';

const USER = 'U0SOCKET';

/**
 * Socket Mode is covered with a fake socket-mode server: the fake Web API answers `apps.connections.open`
 * with a loopback WebSocket URL, sends `hello`, and delivers envelopes the daemon must acknowledge.
 */
describe('Socket Mode (slack.app_token set) on a real daemon, against a fake socket-mode server', () => {
  let slack: FakeSlack;
  let d: DaemonProcess;

  beforeAll(async () => {
    slack = new FakeSlack();
    await slack.start();
    d = await startDaemonProcess({
      config: {
        'slack.bot_token': 'xoxb-test-token',
        'slack.app_token': 'xapp-1-test-token',
        'slack.allowed_users': [USER],
        'slack.api_url': slack.url,
      },
    });
  }, 60_000);

  afterAll(async () => {
    await d?.stop();
    d?.cleanup();
    await slack?.close();
  });

  it('connects, acknowledges an events_api envelope, spawns under slack:<user> and posts the result DM; Ack works over the socket', async () => {
    await pollFor('the socket connection', () => (slack.connected() > 0 ? true : undefined));
    expect(slack.calls.some((c) => c.method === 'apps.connections.open')).toBe(true);
    const event = dmEvent(USER, 'spawn #sim sleep=50ms');
    expect(slack.sendEnvelope('env-1', event.payload)).toBe(1);
    await pollFor('the envelope ack', () => (slack.acks.includes('env-1') ? true : undefined));
    const [reply] = await pollFor('the spawn reply', () => {
      const r = slack.replies(event.ts);
      return r.length > 0 ? r : undefined;
    });
    const runId = /`([\w-]+)`/.exec(reply?.text ?? '')?.[1] as string;
    const runs = (await api(d, 'GET', '/api/runs')).body.runs as { id: string; parent: string }[];
    expect(runs.find((r) => r.id === runId)?.parent).toBe(`slack:${USER}`);
    const result = await pollFor('the result DM', () =>
      slack.results().find((m) => m.blocks?.[0]?.text?.text.startsWith(`Run ${runId} `)),
    );
    slack.sendEnvelope(
      'env-2',
      {
        type: 'block_actions',
        team: { id: 'T1' },
        user: { id: USER },
        api_app_id: 'A1',
        token: 'x',
        container: { type: 'message', channel_id: result.channel, message_ts: result.ts },
        channel: { id: result.channel },
        message: { ts: result.ts, text: result.text, blocks: result.blocks },
        actions: [{ type: 'button', action_id: 'crew_ack', block_id: 'b', value: runId, action_ts: '1' }],
      },
      'interactive',
    );
    await pollFor('the ack envelope acknowledged', () => (slack.acks.includes('env-2') ? true : undefined));
    const acked = await pollFor('acked_at', async () => {
      const r = await api(d, 'GET', `/api/runs/${runId}`);
      return (r.body.run as { acked_at?: string }).acked_at;
    });
    expect(Date.parse(acked)).toBeGreaterThan(0);
    await pollFor('the edited message', () => slack.updates.find((u) => u.ts === result.ts));
  }, 60_000);
});
