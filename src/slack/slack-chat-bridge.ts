import type { NumberedChatEvent, TurnOutcome } from '../chat/chat-event.js';
import type { SlackApi } from './slack-api.js';
import { chunkText, escapeSlackText } from './slack-chunks.js';

/** What the bridge needs of a hosted chat. */
export interface SlackChat {
  send(text: string): Promise<TurnOutcome>;
  subscribe(listener: (event: NumberedChatEvent) => void): () => void;
  readonly isClosed: boolean;
}

/** Longest answer kept per turn; beyond it the answer is cut with a marker. */
const TURN_MAX_CHARS = 40_000;

interface UserChat {
  chat: SlackChat;
  channel: string;
  /** Threads of messages sent and not yet started as turns, in order. */
  waiting: string[];
  lastThread: string;
  threadOf: Map<number, string>;
  text: Map<number, string>;
  unsubscribe: () => void;
}

/**
 * "Anything else goes to a hosted chat": one chat per Slack user (DESIGN §6, hosted parents), opened on
 * their first such message. A person's message becomes a turn; the parent's answer to it is posted in
 * that message's thread when the turn ends, and the answers to injected completion events go to the
 * thread of the person's latest message.
 */
export class SlackChatBridge {
  private readonly chats = new Map<string, Promise<UserChat>>();

  constructor(
    private readonly options: {
      open(user: string): Promise<SlackChat>;
      api: SlackApi;
      log(line: string): void;
    },
  ) {}

  /** Sends `text` to the user's chat; its answer comes back in the thread `threadTs` of `channel`. */
  async send(user: string, channel: string, threadTs: string, text: string): Promise<void> {
    const entry = await this.chatOf(user, channel, threadTs);
    entry.waiting.push(threadTs);
    entry.lastThread = threadTs;
    entry.channel = channel;
    void entry.chat.send(text);
  }

  /** Users with an open chat (bounded by the allowed users). */
  size(): number {
    return this.chats.size;
  }

  close(): void {
    for (const entry of this.chats.values()) void entry.then((e) => e.unsubscribe()).catch(() => undefined);
    this.chats.clear();
  }

  private chatOf(user: string, channel: string, threadTs: string): Promise<UserChat> {
    const known = this.chats.get(user);
    if (known) {
      return known.then(
        (entry) => (entry.chat.isClosed ? this.reopen(user, channel, threadTs) : entry),
        () => this.reopen(user, channel, threadTs),
      );
    }
    return this.reopen(user, channel, threadTs);
  }

  private reopen(user: string, channel: string, threadTs: string): Promise<UserChat> {
    const opening = this.options.open(user).then((chat) => {
      const entry: UserChat = {
        chat,
        channel,
        waiting: [],
        lastThread: threadTs,
        threadOf: new Map(),
        text: new Map(),
        unsubscribe: () => undefined,
      };
      entry.unsubscribe = chat.subscribe((event) => this.onEvent(user, entry, event));
      return entry;
    });
    this.chats.set(user, opening);
    opening.catch(() => {
      if (this.chats.get(user) === opening) this.chats.delete(user);
    });
    return opening;
  }

  private onEvent(user: string, entry: UserChat, event: NumberedChatEvent): void {
    switch (event.type) {
      case 'message':
        entry.threadOf.set(event.turn, entry.waiting.shift() ?? entry.lastThread);
        return;
      case 'injected':
        entry.threadOf.set(event.turn, entry.lastThread);
        return;
      case 'text': {
        const sofar = entry.text.get(event.turn) ?? '';
        if (sofar.length < TURN_MAX_CHARS) entry.text.set(event.turn, sofar + event.text);
        return;
      }
      case 'turn_ended': {
        const thread = entry.threadOf.get(event.turn) ?? entry.lastThread;
        let text = entry.text.get(event.turn) ?? '';
        entry.threadOf.delete(event.turn);
        entry.text.delete(event.turn);
        if (text.length > TURN_MAX_CHARS)
          text = `${text.slice(0, TURN_MAX_CHARS)}\n[answer cut at ${TURN_MAX_CHARS} characters]`;
        if (event.error !== undefined)
          text = `${text}${text ? '\n' : ''}(the turn ended with an error: ${event.error})`;
        if (text.trim() === '') text = '(no answer)';
        void this.post(entry.channel, thread, text);
        return;
      }
      case 'closed':
        entry.unsubscribe();
        void this.chats.get(user)?.then((current) => {
          if (current === entry) this.chats.delete(user);
        });
        return;
      default:
        return;
    }
  }

  private async post(channel: string, thread: string, text: string): Promise<void> {
    for (const chunk of chunkText(text)) {
      try {
        await this.options.api.post({ channel, thread_ts: thread, text: escapeSlackText(chunk) });
      } catch (error) {
        this.options.log(`crew: slack: posting a chat answer failed: ${String(error)}`);
        return;
      }
    }
  }
}
