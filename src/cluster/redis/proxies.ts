import { CrewError } from '../../core/errors.js';
import * as refusals from '../../core/refusals.js';
import type { RunId, SteerMode } from '../../core/types.js';
import type { RunHandle, RunnerEvent } from '../../runners/runner.js';
import type { ClusterJob } from '../cluster-link.js';
import type { ClusterMessage } from '../cluster-message.js';
import { type ClusterContext, KEEP_FINISHED_JOBS, text } from './context.js';

/** A run admitted here (the origin) and executed on whichever gateway's worker takes its job. */
export interface Proxy {
  job: ClusterJob;
  onEvent: (event: RunnerEvent) => void;
  /** The gateway executing it, once it said `started`. */
  host?: string;
  stopAsked: boolean;
  /** Added to the queue (a Redis that restarted empty loses it: added again while not started). */
  added: boolean;
}

/**
 * The origin side: each run this gateway admitted lives here as a proxy until its executing gateway says it
 * ended. Dispatched jobs go to the queue together; stop and steer go to the executing gateway's command
 * stream (or take a job still waiting out of the queue).
 */
export class Proxies {
  private readonly proxies = new Map<RunId, Proxy>();
  /** Jobs dispatched and not yet handed to the queue (flushed together). */
  private pending: Proxy[] = [];
  private flushing: Promise<void> | undefined;

  constructor(private readonly ctx: ClusterContext) {}

  /** Jobs dispatched and not yet handed to the queue (admission counts those an admission added). */
  pendingCount(): number {
    return this.pending.length;
  }

  /** The kinds of the jobs dispatched since `pendingCount()` was `before`. */
  pendingKindsSince(before: number): ClusterJob['kind'][] {
    return this.pending.slice(before).map((proxy) => proxy.job.kind);
  }

  dispatch(job: ClusterJob, onEvent: (event: RunnerEvent) => void): RunHandle {
    const proxy: Proxy = { job, onEvent, stopAsked: false, added: false };
    this.proxies.set(job.runId, proxy);
    this.pending.push(proxy);
    queueMicrotask(() => {
      this.flush().catch(() => undefined);
    });
    return {
      stop: () => this.stopProxy(proxy),
      steer: (message, mode) => this.steerProxy(proxy, message, mode),
    };
  }

  /** Hands every dispatched job to the queue; jobs that could not be added wait for Redis to return. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    const batch = this.pending.filter((p) => !p.added && this.proxies.get(p.job.runId) === p);
    this.pending = [];
    if (batch.length === 0) return Promise.resolve();
    this.flushing = this.ctx.queue
      .addBulk(
        batch.map((p) => ({
          name: p.job.kind,
          data: p.job,
          opts: {
            jobId: p.job.runId,
            removeOnComplete: { count: KEEP_FINISHED_JOBS },
            removeOnFail: { count: KEEP_FINISHED_JOBS },
          },
        })),
      )
      .then(() => {
        for (const p of batch) p.added = true;
      })
      .catch((error: unknown) => {
        this.ctx.log(
          `crew: cluster: adding ${batch.length} jobs failed (${text(error)}); retried when Redis returns`,
        );
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }

  /** Redis is back after being away: jobs not yet started are added again (a restarted Redis lost them). */
  addAgain(): void {
    for (const proxy of this.proxies.values()) {
      if (proxy.host === undefined) {
        proxy.added = false;
        this.pending.push(proxy);
      }
    }
    this.flush().catch(() => undefined);
  }

  private stopProxy(proxy: Proxy): void {
    if (proxy.stopAsked) return;
    proxy.stopAsked = true;
    const { ctx } = this;
    if (proxy.host !== undefined) {
      ctx.command(proxy.host, { type: 'cancel', runId: proxy.job.runId });
      // A closing gateway does not wait for the executing one (Redis may be away): its proxy ends now.
      if (ctx.closing)
        this.endProxy(proxy.job.runId, { type: 'ended', status: 'cancelled', stop: 'cancelled' });
      return;
    }
    if (ctx.closing) {
      ctx.queue.remove(proxy.job.runId).catch(() => undefined);
      this.endProxy(proxy.job.runId, { type: 'ended', status: 'cancelled', stop: 'cancelled' });
      return;
    }
    // Still waiting: take it out of the queue. A job a worker took meanwhile is cancelled when it says so.
    ctx.queue
      .remove(proxy.job.runId)
      .then((removed) => {
        if (removed === 1 || !proxy.added)
          this.endProxy(proxy.job.runId, { type: 'ended', status: 'cancelled', stop: 'cancelled' });
      })
      .catch(() => {
        if (!proxy.added)
          this.endProxy(proxy.job.runId, { type: 'ended', status: 'cancelled', stop: 'cancelled' });
      });
  }

  private async steerProxy(proxy: Proxy, message: string, mode: SteerMode): Promise<void> {
    if (proxy.host === undefined)
      throw new CrewError(refusals.notSteerable(proxy.job.runId, 'waiting in the cluster queue'));
    await this.ctx.xadd(this.ctx.keys.cmd(proxy.host), {
      type: 'steer',
      runId: proxy.job.runId,
      message,
      mode,
    });
  }

  private endProxy(runId: RunId, event: Extract<RunnerEvent, { type: 'ended' }>, text?: string): void {
    const proxy = this.proxies.get(runId);
    if (!proxy) return;
    this.proxies.delete(runId);
    if (text) proxy.onEvent({ type: 'output', text });
    proxy.onEvent(event);
  }

  /** The executing gateway said the run started. */
  started(message: Extract<ClusterMessage, { type: 'started' }>): void {
    const proxy = this.proxies.get(message.runId);
    if (!proxy || proxy.host !== undefined) return;
    proxy.host = message.host;
    proxy.onEvent({ type: 'started', shared: false, host: message.host });
    if (proxy.stopAsked) this.ctx.command(message.host, { type: 'cancel', runId: message.runId });
  }

  /** The executing gateway (or a gateway that found it lost) said the run ended. */
  ended(message: Extract<ClusterMessage, { type: 'ended' }>): void {
    this.endProxy(
      message.runId,
      {
        type: 'ended',
        status: message.status,
        ...(message.stop !== undefined ? { stop: message.stop } : {}),
        ...(message.error !== undefined ? { error: message.error } : {}),
      },
      message.text,
    );
  }

  /** Proxies still live end with the gateway (its close cancels them first); none may wait for ever. */
  closeAll(): void {
    for (const proxy of this.proxies.values()) {
      proxy.onEvent({ type: 'ended', status: 'cancelled', error: 'the gateway closed' });
    }
    this.proxies.clear();
  }
}
