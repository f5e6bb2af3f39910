import {
  type CompletionMember,
  type CompletionOptions,
  DigestBuilder,
  type DigestMember,
  formatCompletion,
} from '../core/completion-text.js';
import type { Truncated } from '../core/truncate.js';
import type { OutboxEvent, RunRecord } from '../store/store.js';
import type { TranscriptStore } from '../transcripts/transcript-store.js';
import { digestWorkspaceText, workspaceLine } from '../workspace/workspace-text.js';

/** Previews read at once for a digest: enough to hide file latency, few enough to bound open files. */
export const PREVIEW_CONCURRENCY = 8;

const PRUNED = '(transcript pruned)';

/**
 * Renders an outbox event's text at delivery, from the runs' records and their transcripts. A digest
 * reads only the previews that fit its bound (in member order, a few at a time), so rendering a wave of
 * thousands costs a handful of reads, not one per member.
 */
export async function renderEvent(
  event: OutboxEvent,
  records: RunRecord[],
  transcripts: Pick<TranscriptStore, 'preview' | 'pathOf'>,
  options: CompletionOptions,
): Promise<string> {
  if (event.kind === 'notice') {
    const run = records[0]?.run;
    const conversation = run ? (run.conversationId ?? run.id) : '?';
    return `[Crew notice] conversation ${conversation} was released (idle past agent.keep_ttl_secs, or beyond agent.max_kept_conversations); start a new one with spawn_run keep=true`;
  }
  const members = records.map((record) => memberOf(record, transcripts));
  const readOutput = (i: number): Promise<string | Truncated> => {
    const record = records[i] as RunRecord;
    return record.prunedAt !== undefined
      ? Promise.resolve(PRUNED)
      : transcripts.preview(record.run.id, options);
  };
  if (event.kind === 'digest') {
    const digest = new DigestBuilder(event.batchId ?? '?', members, options);
    for (let start = 0; digest.wantsMore; start += PREVIEW_CONCURRENCY) {
      const window = members.slice(start, start + PREVIEW_CONCURRENCY).map((_, k) => readOutput(start + k));
      for (const output of await Promise.all(window)) if (!digest.offer(output)) break;
    }
    const workspaces = digestWorkspaceText(records, event.batchId ?? '?');
    return workspaces === '' ? digest.text() : `${digest.text()}\n${workspaces}`;
  }
  const member = members[0];
  if (!member) return `[Subagent completion event] runs=${event.runIds.join(',')}`;
  const full: CompletionMember = { ...member, output: await readOutput(0) };
  const text = formatCompletion(full, options);
  const ws = records[0]?.workspace;
  return ws ? `${text}\n${workspaceLine(member.id, ws)}` : text;
}

function memberOf(record: RunRecord, transcripts: Pick<TranscriptStore, 'pathOf'>): DigestMember {
  const run = record.run;
  const started = run.startedAt;
  const ended = run.endedAt;
  return {
    id: run.id,
    agent: run.agent,
    status: run.status,
    durationSecs: started !== undefined && ended !== undefined ? (ended - started) / 1000 : 0,
    resultPath: record.resultPath ?? transcripts.pathOf(run.id),
    ...(run.error !== undefined ? { error: run.error } : {}),
    ...(run.stop !== undefined ? { stop: run.stop } : {}),
  };
}
