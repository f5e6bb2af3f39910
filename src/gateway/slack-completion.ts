import type { CompletionOptions } from '../core/completion-text.js';

/** Parent keys of Slack users (`slack:<user>`, as the Slack front end admits runs). */
const SLACK_PARENT_PREFIX = 'slack:';
/** Messages a result may take in a Slack DM before it says how to read on: 25 of 3,900 chars. */
export const SLACK_RESULT_MAX_MESSAGES = 25;
export const SLACK_RESULT_MAX_CHARS = SLACK_RESULT_MAX_MESSAGES * 3900;

/**
 * How a run's completion is written for its parent. A Slack user gets the result itself, split into
 * 3,900-char messages by the Slack sink (the seed), not `agent.completion_keep_chars` of it and a path
 * on the server they cannot open: the head up to {@link SLACK_RESULT_MAX_CHARS}, then the command that
 * pages on from the first line not shown. Every other parent gets the configured preview.
 */
export function completionOptionsFor(parent: string, configured: CompletionOptions): CompletionOptions {
  if (!parent.startsWith(SLACK_PARENT_PREFIX)) return configured;
  return {
    keep: 'head',
    keepChars: SLACK_RESULT_MAX_CHARS,
    readMore: (member, shownLines) =>
      `[the result goes on past ${SLACK_RESULT_MAX_MESSAGES} messages; read the rest with \`spawn status ${member.id} offset=${shownLines}\`]`,
  };
}
