import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { dmEvent, type FakeMessage, FakeSlack, postToSlackRoute, TEST_SIGNING_SECRET } from './fake-slack.js';

const USER = 'U0RESTART';

describe('the result DM is posted exactly once across a daemon restart (SIGKILL)', () => {
  let slack: FakeSlack;
  let d: DaemonProcess | undefined;
  let home: string | undefined;
  let config: Record<string, unknown>;

  beforeEach(async () => {
    slack = new FakeSlack();
    await slack.start();
    config = {
      'slack.bot_token': 'xoxb-test-token',
      'slack.signing_secret': TEST_SIGNING_SECRET,
      'slack.allowed_users': [USER],
      'slack.api_url': slack.url,
      'host.kill_grace_secs': 1,
    };
  });
  afterEach(async () => {
    await d?.stop('SIGKILL');
    d?.cleanup();
    await slack.close();
  });

  /** Spawns through a DM and returns the run id once the thread reply has come. */
  async function spawnFromSlack(task: string): Promise<string> {
    const event = dmEvent(USER, `spawn ${task}`);
    expect((await postToSlackRoute((d as DaemonProcess).url, event.body)).status).toBe(200);
    const [reply] = await pollFor('the spawn reply', () => {
      const r = slack.replies(event.ts);
      return r.length > 0 ? r : undefined;
    });
    return /`([\w-]+)`/.exec(reply?.text ?? '')?.[1] as string;
  }

  async function delivered(daemon: DaemonProcess, runId: string): Promise<true | undefined> {
    const r = await api(daemon, 'GET', `/api/runs/${runId}`);
    return (r.body.run as { delivery?: string } | undefined)?.delivery === 'delivered' ? true : undefined;
  }

  const resultsOf = (runId: string): FakeMessage[] =>
    slack.results().filter((m) => m.blocks?.[0]?.text?.text.startsWith(`Run ${runId} `));

  it('killed after completion, before anything was posted: the new daemon posts it once', async () => {
    d = await startDaemonProcess({ config });
    home = d.home;
    const runId = await spawnFromSlack('#sim sleep=300ms');
    // Slack is down for the result: every attempt fails until the daemon is killed.
    slack.failures['chat.postMessage'] = Array.from({ length: 100 }, () => ({ error: 'internal_error' }));
    await pollFor('a failed attempt at the result', () =>
      slack.calls.some(
        (c) => c.method === 'chat.postMessage' && JSON.stringify(c.body).includes(`Run ${runId} `),
      )
        ? true
        : undefined,
    );
    await d.stop('SIGKILL');
    expect(resultsOf(runId)).toEqual([]);
    slack.failures['chat.postMessage'] = [];
    d = await startDaemonProcess({ config, home });
    await pollFor('delivered after the restart', () => delivered(d as DaemonProcess, runId));
    await new Promise((r) => setTimeout(r, 500));
    expect(resultsOf(runId)).toHaveLength(1);
  }, 90_000);

  it('killed after Slack took the post but before its answer came back: the new daemon finds it and posts nothing', async () => {
    d = await startDaemonProcess({ config });
    home = d.home;
    const runId = await spawnFromSlack('#sim sleep=300ms');
    slack.failures['chat.postMessage'] = [{ hang: true }];
    await pollFor('the result landing in Slack', () => (resultsOf(runId).length > 0 ? true : undefined));
    await d.stop('SIGKILL');
    d = await startDaemonProcess({ config, home });
    await pollFor('delivered after the restart', () => delivered(d as DaemonProcess, runId));
    await new Promise((r) => setTimeout(r, 500));
    expect(slack.calls.some((c) => c.method === 'conversations.history')).toBe(true);
    expect(resultsOf(runId)).toHaveLength(1);
  }, 90_000);
});
