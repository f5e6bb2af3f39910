import { type CompletionMember, formatCompletion, formatDigest } from '../core/completion-text.js';
import type { KeepMode } from '../core/truncate.js';
import { endedAtOf, startedAtOf } from '../core/types.js';
import type { OutboxEvent, RunRecord } from '../store/store.js';
import type { TranscriptStore } from '../transcripts/transcript-store.js';

/** Renders an outbox event's text at delivery, from the runs' records and their transcripts. */
export async function renderEvent(
  event: OutboxEvent,
  records: RunRecord[],
  transcripts: TranscriptStore,
  options: { keep: KeepMode; keepChars: number },
): Promise<string> {
  if (event.kind === 'notice') {
    const run = records[0]?.run;
    const conversation = run ? (run.conversationId ?? run.id) : '?';
    return `[Crew notice] conversation ${conversation} was released (idle past agent.keep_ttl_secs, or beyond agent.max_kept_conversations); start a new one with spawn_run keep=true`;
  }
  const members: CompletionMember[] = [];
  for (const record of records) {
    const run = record.run;
    const output =
      record.prunedAt !== undefined ? '(transcript pruned)' : await transcripts.preview(run.id, options);
    const started = startedAtOf(run);
    const ended = endedAtOf(run);
    members.push({
      id: run.id,
      agent: run.agent,
      status: run.status,
      durationSecs: started !== undefined && ended !== undefined ? (ended - started) / 1000 : 0,
      output,
      resultPath: record.resultPath ?? transcripts.pathOf(run.id),
      ...('error' in run && run.error !== undefined ? { error: run.error } : {}),
      ...('stop' in run && run.stop !== undefined ? { stop: run.stop } : {}),
    });
  }
  if (event.kind === 'digest') return formatDigest(event.batchId ?? '?', members, options);
  const member = members[0];
  return member
    ? formatCompletion(member, options)
    : `[Subagent completion event] runs=${event.runIds.join(',')}`;
}
