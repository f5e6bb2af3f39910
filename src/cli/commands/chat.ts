import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import type { ChatView, NumberedChatEvent } from '../../chat/chat-event.js';
import { ChatPrinter } from '../../chat/chat-printer.js';
import { readSse } from '../../chat/sse-reader.js';
import type { Refusal } from '../../core/errors.js';
import { readToken } from '../../daemon/daemon-address.js';
import { runTable } from '../../gateway/run-table.js';
import type { RunView } from '../../gateway/run-view.js';
import type { CliContext } from '../context.js';
import { type DaemonClient, daemonClient, daemonUnreachable } from '../daemon-client.js';

/**
 * `crew chat`: a terminal chat with a parent agent the daemon hosts (`chat.parent_agent`). The parent's
 * text streams in as it comes; the completion events of the runs it spawned are shown as they are
 * injected into the chat (`« …`). Slash commands: `/list` (this chat's runs), `/status <id>`,
 * `/cancel <id>`, `/quit`. At the end of input the chat ends once its last turn has.
 */

const HELP = 'type a message for the parent; /list, /status <id>, /cancel <id>, /quit';
const IDLE_POLL_MS = 200;

export function registerChat(program: Command, ctx: CliContext): void {
  program
    .command('chat')
    .description(
      "chat with a parent agent Crew hosts; its sub-agents' completion events come back into the chat",
    )
    .option('--agent <name>', 'host this ACP agent instead of chat.parent_agent')
    .option('--cwd <dir>', "the parent's working directory (default: here)")
    .action(async (options: { agent?: string; cwd?: string }) => {
      await runChat(ctx, options);
    });
}

type Answer<T> = T & { ok: boolean; refusal?: Refusal };

async function runChat(ctx: CliContext, options: { agent?: string; cwd?: string }): Promise<void> {
  const client = daemonClient(ctx.crewHome, process.env);
  const created = await client.call<{ chat: ChatView }>('POST', '/api/chats', {
    // Resolved here, against the caller's directory: the daemon's is another.
    cwd: resolve(process.cwd(), options.cwd ?? '.'),
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
  });
  if (!created.ok) ctx.fail(`refused (${created.refusal?.code}): ${created.refusal?.message}`);
  const chat = created.chat;
  ctx.out(`chat ${chat.id} with agent "${chat.agent}" (pid ${chat.pid ?? '?'}) in ${chat.cwd}`);
  ctx.out(HELP);

  const printer = new ChatPrinter(ctx.out, ctx.err);
  const lines = createInterface({ input: process.stdin, ...(ctx.isTty ? { output: process.stdout } : {}) });
  let busy = false;
  const abort = new AbortController();
  const token = readToken(ctx.crewHome, process.env);
  const following = followEvents(client.url, token, chat.id, abort.signal, (event) => {
    printer.print(event);
    if (event.type === 'message' || event.type === 'injected') busy = true;
    if (event.type === 'turn_ended') {
      busy = false;
      if (ctx.isTty) lines.prompt();
    }
  });
  let quitting = false;
  let ended: 'closed' | 'lost' | undefined;
  // The chat ended elsewhere (or the daemon went): stop reading. Once this CLI has asked the chat to
  // close, however the stream ends is the expected end (a stream opened after the close is refused).
  void following.then((how) => {
    ended = quitting ? 'closed' : how;
    if (!quitting) lines.close();
  });
  lines.on('SIGINT', () => {
    if (busy) void client.call('POST', `/api/chats/${chat.id}/cancel`).catch(() => undefined);
    else lines.close();
  });
  if (ctx.isTty) lines.prompt();

  let quit = false;
  for await (const raw of lines) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('/')) {
      if (await slashCommand(ctx, client, chat, line)) {
        quit = true;
        break;
      }
      continue;
    }
    const sent = await client.call('POST', `/api/chats/${chat.id}/messages`, { text: raw });
    if (!sent.ok) ctx.err(`crew: refused (${sent.refusal?.code}): ${sent.refusal?.message}`);
  }
  if (!quit && ended === undefined) {
    // End of input: let the last message's turn finish first.
    await Promise.race([waitIdle(client, chat.id), following]);
  }
  quitting = true;
  if (ended === undefined) {
    await client.call('DELETE', `/api/chats/${chat.id}`).catch(() => undefined);
    await Promise.race([following, delay(2000)]);
  }
  abort.abort();
  lines.close();
  if (ended === 'lost') throw daemonUnreachable(client.url, 'the chat event stream ended');
}

/** Runs one slash command; true for `/quit`. */
async function slashCommand(
  ctx: CliContext,
  client: DaemonClient,
  chat: ChatView,
  line: string,
): Promise<boolean> {
  const [name, ...args] = line.split(/\s+/);
  const id = args[0];
  switch (name) {
    case '/quit':
    case '/exit':
      return true;
    case '/list': {
      const body = await client.call<{ runs: RunView[] }>('GET', '/api/runs?limit=1000');
      if (!body.ok) ctx.err(`crew: refused (${body.refusal?.code}): ${body.refusal?.message}`);
      else ctx.out(runTable(runsOf(chat.parent, body.runs)));
      return false;
    }
    case '/status': {
      if (id === undefined) {
        ctx.err('crew: usage: /status <run id>');
        return false;
      }
      const body = await client.call<{ run: RunView; text?: string }>(
        'GET',
        `/api/runs/${encodeURIComponent(id)}?limit=40`,
      );
      if (!body.ok) {
        ctx.err(`crew: refused (${body.refusal?.code}): ${body.refusal?.message}`);
        return false;
      }
      const run = body.run;
      ctx.out(
        `${run.id}  ${run.status}  agent=${run.agent}${run.duration_secs !== undefined ? `  ${run.duration_secs.toFixed(1)}s` : ''}  delivery=${run.delivery}`,
      );
      if (run.error) ctx.out(`error: ${run.error}`);
      if (body.text) ctx.out(body.text.replace(/\n$/, ''));
      return false;
    }
    case '/cancel': {
      if (id === undefined) {
        ctx.err('crew: usage: /cancel <run id>');
        return false;
      }
      const body: Answer<object> = await client.call('POST', `/api/runs/${encodeURIComponent(id)}/cancel`);
      if (body.ok) ctx.out(`cancelled ${id}`);
      else ctx.err(`crew: refused (${body.refusal?.code}): ${body.refusal?.message}`);
      return false;
    }
    case '/help':
      ctx.out(HELP);
      return false;
    default:
      ctx.err(`crew: unknown command ${name}; ${HELP}`);
      return false;
  }
}

/** The chat's runs and their descendants, from an operator listing. */
function runsOf(parent: string, runs: RunView[]): RunView[] {
  const mine = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const run of runs) {
      if (mine.has(run.id)) continue;
      if (run.parent === parent || (run.parent.startsWith('run:') && mine.has(run.parent.slice(4)))) {
        mine.add(run.id);
        grew = true;
      }
    }
  }
  return runs.filter((run) => mine.has(run.id));
}

/** Follows the chat's event stream until it closes (`closed`), is aborted, or breaks (`lost`). */
async function followEvents(
  url: string,
  token: string | undefined,
  chatId: string,
  signal: AbortSignal,
  onEvent: (event: NumberedChatEvent) => void,
): Promise<'closed' | 'lost'> {
  let response: Response;
  try {
    response = await fetch(`${url}/api/chats/${encodeURIComponent(chatId)}/events`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal,
    });
  } catch {
    return signal.aborted ? 'closed' : 'lost';
  }
  if (!response.ok || !response.body) return 'lost';
  try {
    for await (const message of readSse(response.body)) {
      const event = JSON.parse(message.data) as NumberedChatEvent;
      onEvent(event);
      if (event.type === 'closed') return 'closed';
    }
  } catch {
    // aborted or broken: told below
  }
  return signal.aborted ? 'closed' : 'lost';
}

async function waitIdle(client: DaemonClient, chatId: string): Promise<void> {
  for (;;) {
    const body = await client.call<{ chat: ChatView }>('GET', `/api/chats/${chatId}`);
    if (!body.ok) return;
    const { state, queued_messages: queued } = body.chat;
    if (state === 'closed' || (state === 'idle' && queued === 0)) return;
    await delay(IDLE_POLL_MS);
  }
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}
