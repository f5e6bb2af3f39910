import type { RunView } from '../gateway/run-view.js';
import { CREW_EVENT_TYPE, type SlackMessage } from './slack-api.js';
import { escapeSlackText, sectionsOf } from './slack-chunks.js';
import { splitResult } from './slack-result-split.js';

/** The Ack button's `action_id`; its value is the run id. */
export const ACK_ACTION_ID = 'crew_ack';
const HEADER_MAX_CHARS = 150;

/**
 * A result as it is posted: one message per 3,900-char chunk ({@link splitResult}: at line ends, code
 * fences closed and reopened), the first with the header and the Ack button.
 */
export function resultMessages(input: {
  channel: string;
  eventId: string;
  runId: string;
  header: string;
  text: string;
}): SlackMessage[] {
  const chunks = splitResult(input.text);
  return chunks.map((chunk, part) => {
    const blocks: unknown[] = [];
    if (part === 0) blocks.push(headerBlock(input.header));
    for (const section of sectionsOf(chunk)) {
      if (section !== '')
        blocks.push({ type: 'section', text: { type: 'plain_text', text: section, emoji: false } });
    }
    if (chunks.length > 1) blocks.push(contextBlock(`part ${part + 1} of ${chunks.length}`));
    if (part === 0) blocks.push(ackButton(input.runId));
    return {
      channel: input.channel,
      text: chunk === '' ? escapeSlackText(input.header) : escapeSlackText(chunk),
      blocks,
      metadata: { event_type: CREW_EVENT_TYPE, event_payload: { event_id: input.eventId, part } },
    };
  });
}

/** The header line: id, agent, status, duration (a digest: the wave and its members' statuses). */
export function headerOf(
  runIds: readonly string[],
  views: (RunView | undefined)[],
  batchId?: string,
): string {
  const known = views.filter((v): v is RunView => v !== undefined);
  if (batchId !== undefined || runIds.length > 1) {
    const counts = new Map<string, number>();
    for (const v of known) counts.set(v.status, (counts.get(v.status) ?? 0) + 1);
    const summary = [...counts].map(([status, n]) => `${n} ${status}`).join(', ');
    return clip(`Wave ${batchId ?? runIds[0]} · ${runIds.length} runs · ${summary || 'ended'}`);
  }
  const v = known[0];
  if (!v) return clip(`Run ${runIds[0] ?? '?'} · ended`);
  const duration = v.duration_secs !== undefined ? ` · ${formatSecs(v.duration_secs)}` : '';
  return clip(`Run ${v.id} · ${v.agent} · ${v.status}${duration}`);
}

/** The message after an ack: the Ack button replaced by who acked and when. */
export function ackedBlocks(blocks: unknown[], user: string, ackedAtIso: string): unknown[] {
  const kept = blocks.filter(
    (b) =>
      !(
        typeof b === 'object' &&
        b !== null &&
        (b as { type?: unknown }).type === 'actions' &&
        JSON.stringify(b).includes(ACK_ACTION_ID)
      ),
  );
  return [...kept, contextBlock(`✅ Acked by <@${user}> at ${ackedAtIso}`, 'mrkdwn')];
}

/** The single reminder of an unacked result, linking to the first message. */
export function reannounceMessage(input: {
  channel: string;
  runId: string;
  firstTs: string;
  header: string;
}): SlackMessage {
  const link = permalinkOf(input.channel, input.firstTs);
  const text = `Reminder: not acked yet — ${escapeSlackText(input.header)} (<${link}|the result>)`;
  return {
    channel: input.channel,
    text,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }, ackButton(input.runId)],
  };
}

/** A link to a message that works in any workspace (Slack redirects it). */
export function permalinkOf(channel: string, ts: string): string {
  return `https://slack.com/archives/${channel}/p${ts.replace('.', '')}`;
}

function headerBlock(text: string): unknown {
  return { type: 'header', text: { type: 'plain_text', text: clip(text), emoji: false } };
}

function contextBlock(text: string, type: 'plain_text' | 'mrkdwn' = 'plain_text'): unknown {
  return { type: 'context', elements: [{ type, text }] };
}

function ackButton(runId: string): unknown {
  return {
    type: 'actions',
    elements: [
      {
        type: 'button',
        action_id: ACK_ACTION_ID,
        text: { type: 'plain_text', text: 'Ack' },
        style: 'primary',
        value: runId,
      },
    ],
  };
}

function clip(text: string): string {
  return text.length > HEADER_MAX_CHARS ? `${text.slice(0, HEADER_MAX_CHARS - 1)}…` : text;
}

function formatSecs(secs: number): string {
  return secs < 60 ? `${secs.toFixed(1)}s` : `${Math.floor(secs / 60)}m ${Math.round(secs % 60)}s`;
}
