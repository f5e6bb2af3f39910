import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { slackAppManifest } from '../../src/slack/slack-manifest.js';

const DOC = join(import.meta.dirname, '..', '..', 'docs', 'slack-app-manifest.json');

async function crew(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['node', 'crew', ...args], { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('the Slack app manifest', () => {
  it('docs/slack-app-manifest.json is the HTTP-mode manifest crew slack manifest prints (regenerate it with the command)', async () => {
    const printed = await crew('slack', 'manifest');
    expect(printed.code, printed.err).toBe(0);
    expect(JSON.parse(readFileSync(DOC, 'utf8'))).toEqual(JSON.parse(printed.out));
  });

  it('asks for the scopes and events Crew uses: DMs, mentions, the Ack button; nothing more', () => {
    const m = slackAppManifest({ requestUrl: 'https://crew.example.org/slack/events' });
    expect([...m.oauth_config.scopes.bot].sort()).toEqual(
      ['app_mentions:read', 'chat:write', 'im:history', 'im:read', 'im:write'].sort(),
    );
    expect([...m.settings.event_subscriptions.bot_events].sort()).toEqual(['app_mention', 'message.im']);
    expect(m.settings.event_subscriptions.request_url).toBe('https://crew.example.org/slack/events');
    expect(m.settings.interactivity).toEqual({
      is_enabled: true,
      request_url: 'https://crew.example.org/slack/events',
    });
    expect(m.settings.socket_mode_enabled).toBe(false);
    expect(m.features.app_home).toMatchObject({
      messages_tab_enabled: true,
      messages_tab_read_only_enabled: false,
    });
  });

  it('--socket-mode drops the request URLs; --request-url must be an https URL ending in /slack/events', async () => {
    const socket = JSON.parse((await crew('slack', 'manifest', '--socket-mode')).out);
    expect(socket.settings.socket_mode_enabled).toBe(true);
    expect(socket.settings.event_subscriptions.request_url).toBeUndefined();
    expect(socket.settings.interactivity).toEqual({ is_enabled: true });
    const url = JSON.parse(
      (await crew('slack', 'manifest', '--request-url', 'https://h.example/slack/events')).out,
    );
    expect(url.settings.event_subscriptions.request_url).toBe('https://h.example/slack/events');
    const bad = await crew('slack', 'manifest', '--request-url', 'http://h.example/hook');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--request-url: expected an https URL ending in \/slack\/events/);
  });
});
