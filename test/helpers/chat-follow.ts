import type { NumberedChatEvent } from '../../src/chat/chat-event.js';
import { readSse } from '../../src/chat/sse-reader.js';
import type { DaemonProcess } from './daemon-process.js';

export type Injected = Extract<NumberedChatEvent, { type: 'injected' }>;
export const isInjected = (e: NumberedChatEvent): e is Injected => e.type === 'injected';

/** The chat's event stream of a daemon process from the start, collected until `stop` (or the daemon stops). */
export function followChat(d: DaemonProcess, chatId: string) {
  const events: NumberedChatEvent[] = [];
  const abort = new AbortController();
  void (async () => {
    try {
      const response = await fetch(`${d.url}/api/chats/${chatId}/events`, {
        headers: { authorization: `Bearer ${d.token}` },
        signal: abort.signal,
      });
      if (!response.body) return;
      for await (const message of readSse(response.body)) events.push(JSON.parse(message.data));
    } catch {
      // aborted, or the daemon stopped
    }
  })();
  return { events, stop: () => abort.abort() };
}

/** The run ids of every event injected into the chat, in order. */
export function injectedRunIds(events: readonly NumberedChatEvent[]): string[] {
  return events.filter(isInjected).flatMap((e) => e.events.flatMap((ev) => ev.run_ids));
}
