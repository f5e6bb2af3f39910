import { type SlackApi, SlackApiError } from './slack-api.js';

/** Slack's answers that mean the token itself is wrong, not that Slack is away. */
const BAD_TOKEN = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
]);

/**
 * Checks the bot token once (`auth.test`) and says what it found in one log line, so a revoked or mistyped
 * token shows at start rather than as the first failed DM. Never throws: the daemon runs on either way
 * (its HTTP API, the dashboard and every other front end do not need Slack).
 */
export async function checkSlackToken(
  api: Pick<SlackApi, 'authTest'>,
  log: (line: string) => void,
): Promise<void> {
  try {
    const who = await api.authTest();
    log(`crew: slack: the bot token works (auth.test: ${who.user} in team ${who.team})`);
  } catch (error) {
    const code = error instanceof SlackApiError ? error.error : String(error);
    if (BAD_TOKEN.has(code)) {
      log(
        `crew: slack: Slack refused the bot token (auth.test: ${code}); Slack messages will fail until you set a valid one: crew config set slack.bot_token xoxb-… and restart crew serve`,
      );
    } else {
      log(
        `crew: slack: could not check the bot token (auth.test: ${code}); Slack may be unreachable from here, and messages are retried`,
      );
    }
  }
}
