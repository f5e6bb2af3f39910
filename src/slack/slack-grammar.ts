import { unescapeSlackText } from './slack-chunks.js';

/**
 * What a Slack message asks for. In a DM to the app or a mention (the mention itself stripped):
 * `spawn <task>` / `bg <task>` start a run; `spawn list`, `spawn status <id> [offset=<line>]`, `spawn cancel <id>`;
 * `help`, or a `spawn`/`bg` form that does not fit, answers with the grammar; anything else goes to the
 * person's hosted chat. There is no `run` subcommand.
 */
export type SlackCommand =
  | { kind: 'spawn'; task: string; background: boolean }
  | { kind: 'list' }
  | { kind: 'status'; id: string; offset?: number }
  | { kind: 'cancel'; id: string }
  | { kind: 'grammar'; problem?: string }
  | { kind: 'chat'; text: string };

export const GRAMMAR = [
  '*Crew* understands, in a DM or a mention:',
  '• `spawn <task>` — start a run; its result comes back here as a DM with an Ack button',
  '• `bg <task>` — the same, without the reply in the thread',
  '• `spawn list` — your live and recent runs',
  '• `spawn status <id>` — one run and the first page of its transcript; `spawn status <id> offset=40` — the page from line 40',
  '• `spawn cancel <id>` — cancel a run',
  'Anything else goes to your own chat with the parent agent Crew hosts; it answers in the thread.',
].join('\n');

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const OFFSET = /^offset=(\d{1,16})$/i;
/** The largest line offset `spawn status` accepts (a transcript has far fewer lines). */
const MAX_OFFSET = 1_000_000_000;

/** Parses a message's text (Slack's escapes undone, a leading `<@BOT>` mention removed). */
export function parseSlackCommand(raw: string): SlackCommand {
  const text = stripMention(unescapeSlackText(raw)).trim();
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(text);
  if (!match) return { kind: 'grammar', problem: 'the message is empty' };
  const verb = (match[1] as string).toLowerCase();
  const rest = (match[2] ?? '').trim();
  if (verb === 'help') return { kind: 'grammar' };
  if (verb === 'bg') {
    return rest === ''
      ? { kind: 'grammar', problem: '`bg` needs a task' }
      : { kind: 'spawn', task: rest, background: true };
  }
  if (verb !== 'spawn') return { kind: 'chat', text };
  if (rest === '') return { kind: 'grammar', problem: '`spawn` needs a task or a subcommand' };
  const [sub, ...args] = rest.split(/\s+/);
  switch (sub?.toLowerCase()) {
    case 'list':
      return args.length === 0
        ? { kind: 'list' }
        : { kind: 'grammar', problem: '`spawn list` takes nothing' };
    case 'status': {
      const [id, page, ...extra] = args;
      const offset = page === undefined ? undefined : OFFSET.exec(page)?.[1];
      if (
        id === undefined ||
        !RUN_ID.test(id) ||
        extra.length > 0 ||
        (page !== undefined && offset === undefined)
      )
        return { kind: 'grammar', problem: '`spawn status` takes one run id and, to page, `offset=<line>`' };
      if (offset === undefined) return { kind: 'status', id };
      const line = Number(offset);
      if (!Number.isSafeInteger(line) || line > MAX_OFFSET)
        return { kind: 'grammar', problem: `\`offset\` is a line number from 0 to ${MAX_OFFSET}` };
      return { kind: 'status', id, offset: line };
    }
    case 'cancel': {
      const id = args[0];
      if (args.length !== 1 || id === undefined || !RUN_ID.test(id))
        return { kind: 'grammar', problem: '`spawn cancel` takes one run id' };
      return { kind: 'cancel', id };
    }
    default:
      return { kind: 'spawn', task: rest, background: false };
  }
}

function stripMention(text: string): string {
  return text.replace(/^\s*<@[A-Z0-9]+(?:\|[^>]*)?>[\s:,]*/, '');
}
