import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrew } from '../cli/run-crew.js';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { dmEvent, type FakeMessage, FakeSlack, postToSlackRoute, TEST_SIGNING_SECRET } from './fake-slack.js';

const USER = 'U0FIRST';
const NEWCOMER = 'U0NEWCOMER';

/**
 * Slack's first hour (issue 32 §3) on a real daemon against the loopback fake Web API: a bot token Slack
 * refuses is said at start in one line while the daemon stays up, and a user allowed with
 * `crew config set` can use Crew at once, results included, without a restart.
 */
describe('Slack: a bad token is said at start; allowing a user needs no restart', () => {
  let slack: FakeSlack;
  let d: DaemonProcess;

  async function dm(text: string, user: string): Promise<FakeMessage> {
    const event = dmEvent(user, text);
    const r = await postToSlackRoute(d.url, event.body);
    expect(r.status).toBe(200);
    return pollFor(`a reply to "${text}"`, () => slack.replies(event.ts)[0]);
  }

  beforeAll(async () => {
    slack = new FakeSlack();
    await slack.start();
    slack.failures['auth.test'] = [{ error: 'invalid_auth' }];
    d = await startDaemonProcess({
      config: {
        'slack.bot_token': 'xoxb-revoked-token',
        'slack.signing_secret': TEST_SIGNING_SECRET,
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

  it('says once at start that Slack refused the bot token, and what to do; the daemon keeps serving', async () => {
    const line = await pollFor('the auth.test line', () =>
      d
        .stderr()
        .split('\n')
        .find((l) => l.includes('auth.test')),
    );
    expect(line).toMatch(
      /^crew: slack: Slack refused the bot token \(auth\.test: invalid_auth\); Slack messages will fail until you set a valid one: crew config set slack\.bot_token xoxb-… and restart crew serve$/,
    );
    expect(
      d
        .stderr()
        .split('\n')
        .filter((l) => l.includes('auth.test')),
    ).toHaveLength(1);
    expect(slack.calls.filter((c) => c.method === 'auth.test')).toHaveLength(1);
    expect((await api(d, 'GET', '/api/runs')).status).toBe(200);
  });

  it('a user allowed with crew config set while the daemon runs can spawn at once and gets the result DM', async () => {
    const refused = await dm('spawn #sim', NEWCOMER);
    expect(refused.text).toMatch(/not allowed/);
    expect(refused.text).toMatch(/takes effect at once/);

    const set = await runCrew(['config', 'set', 'slack.allowed_users', JSON.stringify([USER, NEWCOMER])], {
      CREW_HOME: d.home,
    });
    expect(set.code, set.err).toBe(0);
    expect(set.err).toMatch(/slack\.allowed_users applies at once/);

    const started = await dm('spawn #sim echo hello newcomer', NEWCOMER);
    expect(started.text).toMatch(/^Started `([\w-]+)`/);
    const runId = /`([\w-]+)`/.exec(started.text)?.[1] as string;
    const result = await pollFor('the result DM', () =>
      slack.results().find((m) => m.blocks?.[0]?.text?.text.startsWith(`Run ${runId} `) === true),
    );
    expect(result.channel).toBe(`D${NEWCOMER}`);
  }, 60_000);
});
