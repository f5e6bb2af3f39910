/**
 * Runs `spawn_status` greps off the gateway's event loop: a bounded pool of worker threads
 * (`grep-worker.ts`), each paging one transcript file at a time within the call's wall-clock budget
 * (`agent.grep_budget_ms`). The engine is linear-time but a hostile pattern over a big transcript still
 * takes seconds of CPU; on the event loop that stalled every other request (DESIGN §6, issue 13).
 *
 * Bounds: at most `size` threads, started on demand and kept (unref'd) while idle; at most `maxQueued`
 * calls waiting, and `maxQueuedPerClient` of one client (`PageOptions.client`), past which a call is
 * refused `queue_full`. Waiting calls are served by turns between clients ({@link FairQueue}), so one
 * parent's burst of greps delays another parent's grep by one call per busy client at most (issue 28).
 * `close()` ends every thread and refuses what was still waiting.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { CrewError, type Refusal, refuse } from '../core/errors.js';
import { FairQueue } from '../core/fair-queue.js';
import { entryRoot } from '../self-command.js';
import type { CollectedPage } from './page-collector.js';
import type { PageOptions } from './transcript-store.js';

/** One grep call, as sent to a thread. */
export interface GrepJob {
  id: number;
  path: string;
  options: PageOptions;
  budgetMs: number;
}

export type GrepReply =
  | { id: number; ok: true; page: CollectedPage }
  | { id: number; ok: false; refusal: Refusal }
  | { id: number; ok: false; message: string };

export interface GrepPoolOptions {
  /** The built `grep-worker.js`. */
  workerFile: string;
  /** Most threads at once. @default 2 */
  size?: number;
  /** Most calls waiting for a thread. @default 64 */
  maxQueued?: number;
  /** Most calls one client may have waiting. @default 16 */
  maxQueuedPerClient?: number;
}

/** @default 2 */
export const GREP_POOL_SIZE = 2;
/** @default 64 */
export const GREP_POOL_MAX_QUEUED = 64;
/** @default 16: a quarter of the queue, so four busy clients cannot fill it for a fifth alone. */
export const GREP_POOL_MAX_QUEUED_PER_CLIENT = 16;
/** The client of a call that names none. */
export const ANONYMOUS_CLIENT = 'anonymous';

/** The built worker entry beside Crew's other entry points (`dist/`, a bundle); undefined in `src/`. */
export function findGrepWorkerFile(baseDir = entryRoot): string | undefined {
  const file = join(baseDir, 'transcripts', 'grep-worker.js');
  return existsSync(file) ? file : undefined;
}

interface Pending {
  client: string;
  job: GrepJob;
  resolve: (page: CollectedPage) => void;
  reject: (error: Error) => void;
}

export class GrepPool {
  private readonly size: number;
  private readonly maxQueued: number;
  private readonly maxQueuedPerClient: number;
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Pending>();
  private readonly queue: FairQueue<Pending>;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: GrepPoolOptions) {
    this.size = Math.max(1, options.size ?? GREP_POOL_SIZE);
    this.maxQueued = options.maxQueued ?? GREP_POOL_MAX_QUEUED;
    this.maxQueuedPerClient = Math.max(
      1,
      Math.min(options.maxQueuedPerClient ?? GREP_POOL_MAX_QUEUED_PER_CLIENT, this.maxQueued),
    );
    this.queue = new FairQueue({ maxPerClient: this.maxQueuedPerClient, maxTotal: this.maxQueued });
  }

  /** Threads alive now (busy or idle). */
  get threads(): number {
    return this.idle.length + this.busy.size;
  }

  /** Pages the transcript at `path` with `options.grep` on a pool thread, in `options.client`'s turn. */
  run(path: string, options: PageOptions, budgetMs: number): Promise<CollectedPage> {
    if (this.closed) return Promise.reject(new CrewError(closedRefusal()));
    const { client = ANONYMOUS_CLIENT, ...pageOptions } = options;
    return new Promise((resolve, reject) => {
      const job = { id: this.nextId++, path, options: pageOptions, budgetMs };
      const full = this.queue.push(client, { client, job, resolve, reject });
      if (full === 'client_full') {
        const waiting = this.queue.waitingFor(client);
        reject(
          new CrewError(
            refuse(
              'queue_full',
              `you already have ${waiting} greps waiting; wait for one to answer, then call again (other callers take turns with you)`,
              { limit: this.maxQueuedPerClient, current: waiting, retry_after_secs: 1 },
            ),
          ),
        );
        return;
      }
      if (full === 'queue_full') {
        reject(
          new CrewError(
            refuse('queue_full', `${this.queue.size} greps are already waiting; call again in a moment`, {
              limit: this.maxQueued,
              current: this.queue.size,
              retry_after_secs: 1,
            }),
          ),
        );
        return;
      }
      this.dispatch();
    });
  }

  /** Ends every thread; calls still waiting or running are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.drain()) pending.reject(new CrewError(closedRefusal()));
    const workers = [...this.idle.splice(0), ...this.busy.keys()];
    for (const pending of this.busy.values()) pending.reject(new CrewError(closedRefusal()));
    this.busy.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.size > 0) {
      const worker = this.idle.pop() ?? (this.threads < this.size ? this.startWorker() : undefined);
      if (!worker) return;
      const pending = this.queue.take()!.item;
      this.busy.set(worker, pending);
      worker.ref();
      worker.postMessage(pending.job);
    }
  }

  private startWorker(): Worker {
    const worker = new Worker(this.options.workerFile);
    worker.on('message', (reply: GrepReply) => {
      const pending = this.busy.get(worker);
      if (!pending || pending.job.id !== reply.id) return;
      this.busy.delete(worker);
      this.queue.done(pending.client);
      if (this.closed) return;
      worker.unref();
      this.idle.push(worker);
      if (reply.ok) pending.resolve(reply.page);
      else if ('refusal' in reply) pending.reject(new CrewError(reply.refusal));
      else pending.reject(new Error(reply.message));
      this.dispatch();
    });
    // A thread that dies takes its call with it; the next call starts a fresh one.
    const lose = (error: Error) => {
      const pending = this.busy.get(worker);
      this.busy.delete(worker);
      if (pending) this.queue.done(pending.client);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      pending?.reject(error);
      if (!this.closed) this.dispatch();
    };
    worker.on('error', lose);
    worker.on('exit', (code) => {
      if (this.busy.has(worker) || this.idle.includes(worker))
        lose(new Error(`a grep thread exited with code ${code}`));
    });
    return worker;
  }
}

function closedRefusal(): Refusal {
  return refuse('not_running', 'the gateway is shutting down; grep is no longer available');
}
