/**
 * A grep pool thread (`grep-pool.ts`): pages one transcript file with `grep` per message, off the
 * gateway's event loop, within the call's wall-clock budget. A refusal travels back as its plain data
 * (a class does not cross threads); any other failure as its message.
 */
import { performance } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';
import { isCrewError } from '../core/errors.js';
import { fileSource } from './file-bytes.js';
import type { GrepJob, GrepReply } from './grep-pool.js';
import { pageTranscript } from './paging.js';

const port = parentPort;
// Internal: only the grep pool starts this file, always as a worker thread.
if (!port) throw new Error('grep-worker runs as a worker thread of the grep pool');

port.on('message', (job: GrepJob) => {
  void answer(job).then((reply) => port.postMessage(reply));
});

async function answer(job: GrepJob): Promise<GrepReply> {
  try {
    const page = await pageTranscript(fileSource(job.path), job.options, {
      budgetMs: job.budgetMs,
      now: () => performance.now(),
      offLoop: true,
    });
    return { id: job.id, ok: true, page };
  } catch (error) {
    if (isCrewError(error)) return { id: job.id, ok: false, refusal: error.refusal };
    return { id: job.id, ok: false, message: (error as Error).message ?? String(error) };
  }
}
