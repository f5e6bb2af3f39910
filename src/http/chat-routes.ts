import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Chat } from '../chat/chat.js';
import type { NumberedChatEvent } from '../chat/chat-event.js';
import type { ChatHost } from '../chat/chat-host.js';
import { CrewError, refuse } from '../core/errors.js';
import type { Principal } from './tokens.js';

/**
 * Hosted chats over HTTP (DESIGN §6, hosted parents), for `crew chat`, the dashboard and Slack; every
 * route needs the operator token:
 *
 * - `POST /api/chats` `{cwd?, agent?}` → `{ok, chat}` once the parent runs;
 * - `GET /api/chats` → `{ok, chats}`; `GET /api/chats/:id` → `{ok, chat}`;
 * - `POST /api/chats/:id/messages` `{text, wait?}` → `{ok, chat}` at once (with `wait: true`, after the
 *   turn, with `turn: {turn, stop_reason | error}`);
 * - `POST /api/chats/:id/cancel` cancels the turn in flight; `DELETE /api/chats/:id` ends the chat;
 * - `GET /api/chats/:id/events[?since=N]`: server-sent events, one per chat event (`event:` its type,
 *   `id:` its number, `data:` the event as JSON), from the oldest held (or after `since` /
 *   `Last-Event-ID`) until the chat closes.
 */

type App = Hono<{ Variables: { principal: Principal } }>;

/** A comment line this often, so a client that went away is noticed by the failing write. */
const KEEPALIVE_MS = 15_000;

export function mountChatRoutes(app: App, chats: ChatHost): void {
  const operatorOnly = (principal: Principal) => {
    if (principal.kind !== 'operator')
      throw new CrewError(refuse('unauthorized', 'chats are for the operator token only'));
  };
  const chatOf = (id: string): Chat => {
    const chat = chats.get(id);
    if (!chat) throw new CrewError(refuse('not_found', `no chat ${id}; start one with POST /api/chats`));
    return chat;
  };
  const body = async (req: { json: () => Promise<unknown> }): Promise<Record<string, unknown>> => {
    try {
      const value = await req.json();
      if (value !== null && typeof value === 'object' && !Array.isArray(value))
        return value as Record<string, unknown>;
    } catch {
      // fall through
    }
    throw new CrewError(refuse('invalid_argument', 'the body must be a JSON object', { path: '(body)' }));
  };

  app.post('/api/chats', async (c) => {
    operatorOnly(c.get('principal'));
    const raw = await body(c.req);
    const cwd = raw.cwd === undefined ? undefined : checkedCwd(raw.cwd);
    if (raw.agent !== undefined && (typeof raw.agent !== 'string' || raw.agent === '')) {
      throw new CrewError(refuse('invalid_argument', 'agent must be an agent name', { path: 'agent' }));
    }
    const chat = await chats.create({
      ...(cwd !== undefined ? { cwd } : {}),
      ...(typeof raw.agent === 'string' ? { agent: raw.agent } : {}),
    });
    return c.json({ ok: true, chat: chat.view() });
  });

  app.get('/api/chats', (c) => {
    operatorOnly(c.get('principal'));
    return c.json({ ok: true, chats: chats.list().map((chat) => chat.view()) });
  });

  app.get('/api/chats/:id', (c) => {
    operatorOnly(c.get('principal'));
    return c.json({ ok: true, chat: chatOf(c.req.param('id')).view() });
  });

  app.post('/api/chats/:id/messages', async (c) => {
    operatorOnly(c.get('principal'));
    const chat = chatOf(c.req.param('id'));
    const raw = await body(c.req);
    if (typeof raw.text !== 'string' || raw.text.trim() === '') {
      throw new CrewError(
        refuse('empty_task', 'the message is empty; say something to the parent', { path: 'text' }),
      );
    }
    const turn = chat.send(raw.text);
    if (raw.wait === true) return c.json({ ok: true, chat: chat.view(), turn: await turn });
    return c.json({ ok: true, chat: chat.view() });
  });

  app.post('/api/chats/:id/cancel', (c) => {
    operatorOnly(c.get('principal'));
    const chat = chatOf(c.req.param('id'));
    if (!chat.interrupt())
      throw new CrewError(refuse('not_running', `chat ${chat.id} runs no turn now; nothing to cancel`));
    return c.json({ ok: true, chat: chat.view() });
  });

  app.delete('/api/chats/:id', async (c) => {
    operatorOnly(c.get('principal'));
    const id = c.req.param('id');
    if (!(await chats.close(id, 'closed by the operator')))
      throw new CrewError(refuse('not_found', `no chat ${id}`));
    return c.json({ ok: true });
  });

  app.get('/api/chats/:id/events', (c) => {
    operatorOnly(c.get('principal'));
    const chat = chatOf(c.req.param('id'));
    const since = Number(c.req.query('since') ?? c.req.header('last-event-id') ?? 0);
    return streamSSE(c, async (stream) => {
      let finish = () => {};
      const finished = new Promise<void>((resolve) => {
        finish = resolve;
      });
      // Writes go one after another, in the events' order.
      let writing: Promise<void> = stream.write(`: chat ${chat.id}\n\n`).then(
        () => undefined,
        () => finish(),
      );
      const send = (event: NumberedChatEvent) => {
        writing = writing
          .then(() =>
            stream.writeSSE({ event: event.type, id: String(event.seq), data: JSON.stringify(event) }),
          )
          .then(() => {
            if (event.type === 'closed') finish();
          })
          .catch(() => finish());
      };
      const keepalive = setInterval(() => {
        writing = writing
          .then(() => stream.write(': keepalive\n\n'))
          .then(
            () => undefined,
            () => finish(),
          );
      }, KEEPALIVE_MS);
      stream.onAbort(() => finish());
      const unsubscribe = chat.subscribe(send, Number.isInteger(since) && since > 0 ? since : 0);
      if (chat.isClosed) finish();
      try {
        await finished;
      } finally {
        clearInterval(keepalive);
        unsubscribe();
        await writing;
      }
    });
  });
}

function checkedCwd(value: unknown): string {
  if (typeof value !== 'string' || !isAbsolute(value)) {
    throw new CrewError(refuse('invalid_argument', 'cwd must be an absolute path', { path: 'cwd' }));
  }
  let isDirectory = false;
  try {
    isDirectory = statSync(value).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory)
    throw new CrewError(refuse('invalid_argument', `cwd ${value} is not a directory`, { path: 'cwd' }));
  return value;
}
