/**
 * The Slack app manifest for Crew (api.slack.com → Create New App → From an app manifest): the scopes,
 * events and settings the README's manual steps describe, as one paste. `crew slack manifest` prints it;
 * `docs/slack-app-manifest.json` is its HTTP-mode form (a test keeps the two equal).
 */
export interface SlackManifestOptions {
  /** HTTP mode: the public URL of the daemon's `POST /slack/events`. */
  requestUrl?: string;
  /** Socket Mode: no public URL; an app-level token (`xapp-…`, `connections:write`) instead. */
  socketMode?: boolean;
}

/** The placeholder in the documented manifest, replaced with `--request-url`. */
export const REQUEST_URL_PLACEHOLDER = 'https://YOUR-HOST/slack/events';

export function slackAppManifest(options: SlackManifestOptions = {}) {
  const socketMode = options.socketMode === true;
  const requestUrl = options.requestUrl ?? REQUEST_URL_PLACEHOLDER;
  return {
    display_information: {
      name: 'Crew',
      description: 'Fan work out to sub-agents and get every result back as a DM',
    },
    features: {
      app_home: {
        home_tab_enabled: false,
        messages_tab_enabled: true,
        messages_tab_read_only_enabled: false,
      },
      bot_user: { display_name: 'crew', always_online: true },
    },
    oauth_config: {
      scopes: {
        // DMs in and out (conversations.open, chat.postMessage/update, conversations.history for a post
        // whose answer was lost), and mentions in channels.
        bot: ['chat:write', 'im:history', 'im:read', 'im:write', 'app_mentions:read'],
      },
    },
    settings: {
      event_subscriptions: {
        ...(socketMode ? {} : { request_url: requestUrl }),
        bot_events: ['message.im', 'app_mention'],
      },
      // The Ack button.
      interactivity: socketMode ? { is_enabled: true } : { is_enabled: true, request_url: requestUrl },
      org_deploy_enabled: false,
      socket_mode_enabled: socketMode,
      token_rotation_enabled: false,
    },
  };
}
