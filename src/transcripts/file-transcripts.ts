import type { Clock } from '../core/clock.js';
import { ByteTranscriptStore } from './byte-transcript-store.js';
import { FileTranscriptBytes } from './file-bytes.js';

/**
 * Transcripts on disk: `$CREW_HOME/subagents/<id>/result.txt` (0600), written as output streams in and
 * cut at `agent.transcript_max_bytes`; previews read only the head/tail, pages stream the file. Buffered
 * output reaches the file within the writer's flush delay on `clock`.
 */
export class FileTranscripts extends ByteTranscriptStore {
  constructor(crewHome: string, options: { maxBytes: number; clock: Clock }) {
    super(new FileTranscriptBytes(crewHome), options);
  }
}
