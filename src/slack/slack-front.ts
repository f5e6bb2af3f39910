import type { Refusal } from '../core/errors.js';
import type { Gateway } from '../gateway/gateway.js';
import type { RunView } from '../gateway/run-view.js';
import type { SelSink } from '../sel/sel-sink.js';
import type { SlackApi } from './slack-api.js';
import type { SlackChatBridge } from './slack-chat-bridge.js';
import { escapeSlackText } from './slack-chunks.js';
import { GRAMMAR, parseSlackCommand } from './slack-grammar.js';
import type { SlackResults } from './slack-results.js';
import { type StatusPage, statusPage } from './slack-status-page.js';

/** What the Slack front end asks of the gateway: the same API as every other front end. */
export type SlackGateway = Pick<Gateway, 'admit' | 'list' | 'status' | 'cancel' | 'ack'>;

/** A DM to the app, or a mention, as Crew reads it. */
export interface SlackIncoming {
  user: string;
  text: string;
  channel: string;
  ts: string;
  /** Set when the message is itself in a thread. */
  threadTs?: string;
}

/** A press of the Ack button. */
export interface SlackAckPress {
  user: string;
  runId: string;
  channel: string;
  ts: string;
  text: string;
  blocks: unknown[];
}

export interface SlackFrontOptions {
  gateway: SlackGateway;
  api: SlackApi;
  results: SlackResults;
  chats?: SlackChatBridge;
  /** Whether a user may use Crew here: `slack.allowed_users` as it is now (read live, no restart). */
  isAllowed(user: string): boolean;
  sel: SelSink;
  log(line: string): void;
}

const LIST_MAX = 15;
const STATUS_PAGE_LINES = 40;
const STATUS_MAX_CHARS = 2800;

/**
 * The Slack front end (issue 16), thin like the others: it reads a message's grammar and calls the
 * gateway with parent `slack:<user>`; anything that is not a command goes to the person's hosted chat.
 * Only `slack.allowed_users` may use it: anyone else gets a refusal saying how to be allowed, and the
 * SEL records it. Every reply goes in the thread of the message it answers; a reply that cannot be
 * posted is logged, never thrown.
 */
export class SlackFront {
  constructor(private readonly options: SlackFrontOptions) {}

  async message(incoming: SlackIncoming): Promise<void> {
    const { user } = incoming;
    const thread = incoming.threadTs ?? incoming.ts;
    const reply = (text: string) => this.reply(incoming.channel, thread, text);
    if (!this.options.isAllowed(user)) {
      this.audit(user, 'refused_not_allowed', { channel: incoming.channel });
      return reply(notAllowed(user));
    }
    const parent = `slack:${user}`;
    const scope = { kind: 'parent' as const, parent };
    const command = parseSlackCommand(incoming.text);
    switch (command.kind) {
      case 'spawn': {
        const answer = await this.options.gateway.admit(parent, { task: command.task });
        if (!answer.ok) return reply(refused(answer.refusal));
        const run = answer.runs[0];
        const where = run?.position !== undefined ? `queued at ${run.position}` : (run?.status ?? 'admitted');
        return reply(
          `Started \`${run?.id}\` (${where})${command.background ? ' in the background' : ''}. The result will come as a DM with an Ack button.`,
        );
      }
      case 'list':
        return reply(renderList(this.options.gateway.list(scope, 200).runs, parent));
      case 'status': {
        const offset = command.offset ?? 0;
        const answer = await this.options.gateway.status(command.id, scope, {
          offset,
          limit: STATUS_PAGE_LINES,
        });
        if (!answer.ok) return reply(refused(answer.refusal));
        return reply(renderStatus(answer.run, statusPage(answer, offset, STATUS_MAX_CHARS)));
      }
      case 'cancel': {
        const answer = this.options.gateway.cancel(command.id, scope);
        return reply(answer.ok ? `Cancelled \`${command.id}\`.` : refused(answer.refusal));
      }
      case 'grammar':
        return reply(command.problem ? `${command.problem}.\n${GRAMMAR}` : GRAMMAR);
      case 'chat': {
        if (!this.options.chats) return reply(`Hosted chats are not available here.\n${GRAMMAR}`);
        try {
          await this.options.chats.send(user, incoming.channel, thread, command.text);
        } catch (error) {
          return reply(
            `Your chat could not start: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
        return;
      }
      default:
        command satisfies never;
    }
  }

  /** Ack pressed: the gateway records it (`acked_at`), then the message says who acked and when. */
  async ack(press: SlackAckPress): Promise<void> {
    if (!this.options.isAllowed(press.user)) {
      this.audit(press.user, 'refused_not_allowed', { action: 'crew_ack', run_id: press.runId });
      return this.reply(press.channel, press.ts, notAllowed(press.user));
    }
    const answer = this.options.gateway.ack(press.runId, { kind: 'parent', parent: `slack:${press.user}` });
    if (!answer.ok) return this.reply(press.channel, press.ts, refused(answer.refusal));
    await this.options.results.acked({
      user: press.user,
      channel: press.channel,
      ts: press.ts,
      text: press.text,
      blocks: press.blocks,
      ackedAtIso: answer.acked_at,
    });
  }

  private async reply(channel: string, threadTs: string, text: string): Promise<void> {
    try {
      await this.options.api.post({ channel, thread_ts: threadTs, text });
    } catch (error) {
      this.options.log(`crew: slack: replying failed: ${String(error)}`);
    }
  }

  private audit(user: string, outcome: string, metadata: Record<string, unknown>): void {
    this.options.sel.write({
      event_type: 'slack',
      source: `slack:${user}`,
      tool_name: 'slack',
      outcome,
      metadata: { user, ...metadata },
    });
  }
}

function notAllowed(user: string): string {
  return `Sorry, <@${user}>, you are not allowed to use Crew here. An operator can allow you with \`crew config set slack.allowed_users '["${user}"]'\` (the list replaces the old one; it takes effect at once).`;
}

function refused(refusal: Refusal): string {
  return `Refused (\`${refusal.code}\`): ${escapeSlackText(refusal.message)}`;
}

function renderList(runs: RunView[], parent: string): string {
  const own = runs.filter((r) => r.parent === parent);
  if (own.length === 0) return 'You have no runs yet. Start one with `spawn <task>`.';
  const live = own.filter((r) => !r.ended_at);
  const ended = own.filter((r) => r.ended_at);
  const shown = [...live, ...ended].slice(0, LIST_MAX);
  const lines = shown.map(
    (r) =>
      `• \`${r.id}\` ${r.status} · ${r.agent}${r.duration_secs !== undefined ? ` · ${r.duration_secs.toFixed(1)}s` : ''} · ${escapeSlackText(oneLine(r.task_preview))}`,
  );
  const more = own.length > shown.length ? `\n…and ${own.length - shown.length} more` : '';
  return `Your runs (${live.length} live, ${ended.length} ended):\n${lines.join('\n')}${more}`;
}

function renderStatus(run: RunView, page: StatusPage): string {
  const head = [
    `\`${run.id}\` ${run.status} · ${run.agent}${run.duration_secs !== undefined ? ` · ${run.duration_secs.toFixed(1)}s` : ''}`,
    `task: ${escapeSlackText(oneLine(run.task_preview))}`,
    run.error ? `error: ${escapeSlackText(run.error)}` : '',
    page.range,
  ].filter((l) => l !== '');
  const body = `${head.join('\n')}\n\`\`\`\n${escapeSlackText(page.text) || '(no output yet)'}\n\`\`\``;
  return page.next === undefined
    ? body
    : `${body}\nNext page: \`spawn status ${run.id} offset=${page.next}\``;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}
