import type { SchedulerReply } from '../core/scheduler-types.js';
import { isTerminal, type RunId, type RunSpec, type SteerMode } from '../core/types.js';
import type { Gateway } from '../gateway/gateway.js';
import type { PageOptions, TranscriptPage } from '../transcripts/transcript-store.js';
import { CLUSTER_PARENT_PREFIX, type ClusterGateway, type ClusterJob, copyIdOf } from './cluster-link.js';

/**
 * The executing side of cluster mode (issue 30): what a cluster link drives on its own gateway, built on
 * the gateway's public API alone. A job another gateway (or this one) admitted runs here as a top-level
 * copy with id `x<runId>` and parent `cluster:<origin>`; its completion goes to that parent's sink (the
 * link's), which sends it to the origin. A kept run's session stays here; a continuation
 * (`job.continues`) is the next turn in it.
 */
export class ClusterExecutor implements ClusterGateway {
  constructor(
    private readonly gateway: Gateway,
    private readonly log: (line: string) => void = () => undefined,
  ) {}

  /** Admits the job's copy here; resolves once it has ended (at once with a refusal or a repeat). */
  executeForCluster(job: ClusterJob): Promise<SchedulerReply> {
    const { gateway } = this;
    const id = copyIdOf(job.runId);
    let stop: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => {
      stop = gateway.watch((change) => {
        if (change.kind !== 'runs' || !change.runIds.includes(id)) return;
        const status = gateway.statusOf(id);
        if (status === undefined || isTerminal(status)) {
          stop();
          resolve();
        }
      });
    });
    const budget = {
      ...(job.maxTurns !== undefined ? { maxTurns: job.maxTurns } : {}),
      ...(job.maxTokens !== undefined ? { maxTokens: job.maxTokens } : {}),
    };
    const parent = `${CLUSTER_PARENT_PREFIX}${job.origin}`;
    const reply =
      job.continues === undefined
        ? gateway.admitResolved(parent, id, job.spec, budget)
        : gateway.admitResolved(
            parent,
            id,
            { ...job.spec, keep: true } as RunSpec,
            budget,
            copyIdOf(job.continues),
          );
    if (reply.kind === 'admitted' && !reply.existing) return ended.then(() => reply);
    stop();
    return Promise.resolve(reply);
  }

  attachSink(parent: string, sink: { deliver(event: { run_ids: string[] }): Promise<void> }): () => void {
    return this.gateway.attachSink(parent, sink);
  }

  cancel(id: RunId, scope: { kind: 'operator' }): { ok: boolean } {
    return this.gateway.cancel(id, scope);
  }

  steer(id: RunId, message: string, mode: SteerMode, scope: { kind: 'operator' }): { ok: boolean } {
    return this.gateway.steer(id, message, mode, scope);
  }

  statusOf(id: RunId): string | undefined {
    return this.gateway.statusOf(id);
  }

  /** A run's end as recorded here, with its transcript up to `agent.status_max_chars`, for its origin. */
  async outcomeOf(
    id: RunId,
  ): Promise<{ status: string; stop?: string; error?: string; text: string } | undefined> {
    const record = this.gateway.recordOf(id);
    if (!record) return undefined;
    const { run } = record;
    let text = '';
    try {
      text = (await this.gateway.pageOf(id, { maxChars: this.gateway.config['agent.status_max_chars'] }))
        .text;
    } catch (error) {
      this.log(
        `crew: reading run ${id}'s transcript for its origin failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    return {
      status: run.status,
      ...(run.stop !== undefined ? { stop: run.stop } : {}),
      ...(run.error !== undefined ? { error: run.error } : {}),
      text,
    };
  }

  pageOf(id: RunId, options: PageOptions): Promise<TranscriptPage> {
    return this.gateway.pageOf(id, options);
  }

  /** The origin asks to release the session kept here for its conversation. */
  releaseForCluster(conversationId: RunId): void {
    this.gateway.endConversation(copyIdOf(conversationId), 'requested');
  }

  /**
   * The gateway keeping this gateway's conversation's session released it (its reaper): released here
   * too, with a notice to its parent, as this gateway's own reaper would.
   */
  releasedElsewhere(conversationId: RunId, reason: 'expired' | 'evicted'): void {
    this.gateway.endConversation(conversationId, reason);
  }
}
