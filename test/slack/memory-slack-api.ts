import { type SlackApi, SlackApiError, type SlackMessage } from '../../src/slack/slack-api.js';

export interface StoredMessage extends SlackMessage {
  ts: string;
}

/** An in-memory Slack Web API for unit tests: messages per channel, scripted failures per method. */
export class MemorySlackApi implements SlackApi {
  readonly messages: StoredMessage[] = [];
  readonly updates: (SlackMessage & { ts: string })[] = [];
  readonly calls: string[] = [];
  /** Errors to throw, in order, per method; `lost` posts the message and then throws (an answer lost). */
  readonly failures: Record<string, (SlackApiError | 'lost')[]> = {};
  private seq = 0;

  async authTest(): Promise<{ user: string; team: string }> {
    this.calls.push('auth.test');
    this.fail('auth.test');
    return { user: 'crew', team: 'T1' };
  }

  async openDm(user: string): Promise<string> {
    this.calls.push('conversations.open');
    this.fail('conversations.open');
    return `D${user}`;
  }

  async post(message: SlackMessage): Promise<string> {
    this.calls.push('chat.postMessage');
    const next = this.failures['chat.postMessage']?.shift();
    if (next instanceof SlackApiError) throw next;
    const ts = `1700000000.${String(++this.seq).padStart(6, '0')}`;
    this.messages.push({ ...message, ts });
    if (next === 'lost') throw new SlackApiError('chat.postMessage', 'request_failed');
    return ts;
  }

  async update(message: SlackMessage & { ts: string }): Promise<void> {
    this.calls.push('chat.update');
    this.fail('chat.update');
    this.updates.push(message);
  }

  async findPosted(channel: string, eventId: string, part: number): Promise<string | undefined> {
    this.calls.push('conversations.history');
    this.fail('conversations.history');
    return this.messages.find(
      (m) =>
        m.channel === channel &&
        m.metadata?.event_payload.event_id === eventId &&
        m.metadata.event_payload.part === part,
    )?.ts;
  }

  private fail(method: string): void {
    const next = this.failures[method]?.shift();
    if (next instanceof SlackApiError) throw next;
  }
}
