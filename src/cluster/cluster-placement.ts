import type { Refusal } from '../core/errors.js';
import type { Conversation } from '../core/scheduler-types.js';
import { isTerminal, type Run, type RunId, type RunSpec } from '../core/types.js';
import type {
  AdmissionSize,
  LostSession,
  Placement,
  PlacementHost,
  StartElsewhere,
} from '../gateway/placement.js';
import type { RunView } from '../gateway/run-view.js';
import type { RunRecord } from '../store/store.js';
import type { PageOptions, TranscriptPage } from '../transcripts/transcript-store.js';
import {
  CLUSTER_PARENT_PREFIX,
  type ClusterJob,
  type ClusterLink,
  copyIdOf,
  isClusterCopyParent,
  originIdOf,
} from './cluster-link.js';

/**
 * Cluster mode as a {@link Placement} (issue 30): a top-level run admitted here is a job in the cluster
 * queue, held here as a proxy while whichever gateway takes it executes a copy (`x<id>`, parent
 * `cluster:<origin>`); nested runs and copies execute here as on one host. The queue bounds, the provider
 * cap and hold are the cluster's (docs/decisions.md, cluster mode).
 */
export class ClusterPlacement implements Placement {
  readonly proxyRoom: number;
  // A proxy's "start" is a job added to the queue, not a process: the stagger spaces and the reservation
  // gate weighs only the copies this gateway executes.
  readonly startsHere = isClusterCopyParent;
  // The provider cap is the cluster's, one shared value (docs/decisions.md, the shared provider cap): a
  // per-host cap beside it would cut twice, and an origin's would bound jobs it only queues.
  readonly providerLimitsHere = false;
  private host: PlacementHost | undefined;

  constructor(private readonly link: ClusterLink) {
    this.proxyRoom = link.proxyRoom;
  }

  bind(host: PlacementHost): void {
    this.host = host;
  }

  isProxy(run: Readonly<Run>): boolean {
    return run.depth === 1 && !isClusterCopyParent(run.parent);
  }

  admit<T>(size: AdmissionSize, admission: () => T): Promise<T | { refusal: Refusal }> {
    return this.link.admit(size.kind, size.members, admission);
  }

  startElsewhere(run: Readonly<Run>, spec: RunSpec): StartElsewhere | { failed: string } | undefined {
    if (!this.isProxy(run)) return undefined;
    const job: ClusterJob = {
      runId: run.id,
      kind: run.batchId === undefined ? 'single' : 'wave',
      origin: this.link.gatewayName,
      spec,
      ...(run.maxTurns !== undefined ? { maxTurns: run.maxTurns } : {}),
      ...(run.maxTokens !== undefined ? { maxTokens: run.maxTokens } : {}),
    };
    if (run.conversationId !== undefined) {
      // A continuation runs where the conversation's session is kept.
      const host = this.sessionHostOf(run.conversationId);
      if (host === undefined)
        return { failed: `conversation ${run.conversationId} has no gateway keeping its session` };
      job.continues = run.conversationId;
      job.host = host;
    }
    return (onEvent) => this.link.dispatch(job, onEvent);
  }

  releaseSession(conversationId: RunId): boolean {
    // A conversation admitted here keeps its session on the gateway that ran it.
    const host = this.sessionHostOf(conversationId);
    if (host === undefined) return false;
    this.link.release(host, conversationId);
    return true;
  }

  sessionReleased(conversation: Conversation, reason: 'expired' | 'evicted'): boolean {
    // A session kept here for another gateway's conversation: its origin releases it and tells the parent.
    if (!isClusterCopyParent(conversation.parent)) return false;
    const origin = conversation.parent.slice(CLUSTER_PARENT_PREFIX.length);
    this.link.released(origin, originIdOf(conversation.id), reason);
    return true;
  }

  /**
   * A run's transcript is read where it executes (a copy `x<id>` this gateway runs, or another gateway,
   * asked through the cluster). An ended run asked for without paging or grep is answered here: its
   * outcome brought that first page along, so its status stays readable when its gateway is gone.
   */
  page(record: RunRecord, options: PageOptions): Promise<TranscriptPage> | undefined {
    const host = record.host;
    const firstPage =
      options.offset === undefined && options.limit === undefined && options.grep === undefined;
    if (host === undefined || (firstPage && isTerminal(record.run.status))) return undefined;
    if (host === this.link.gatewayName) return this.bound().pageOf(copyIdOf(record.run.id), options);
    // Who asks only orders greps here; another gateway gets the page options without it.
    const { client: _client, ...forwarded } = options;
    return this.link.page(host, record.run.id, forwarded);
  }

  /**
   * An idle conversation whose session was kept on a gateway that has left the cluster (gone from its
   * registry, so its runs were declared lost too) is released, so continuing it answers
   * `conversation_released` naming that gateway (docs/decisions.md, kept conversations in cluster mode).
   */
  sessionLost(conversationId: RunId): LostSession | undefined {
    const host = this.sessionHostOf(conversationId);
    if (host === undefined || this.link.hasGateway(host) !== false) return undefined;
    return `its gateway ${host} left the cluster`;
  }

  providerLimited(root: Readonly<Run>, retryAfterMs?: number): void {
    // A run executed here for the cluster (or nested under one): the cluster's shared cap hears it.
    if (isClusterCopyParent(root.parent)) this.link.providerLimited(originIdOf(root.id), retryAfterMs);
  }

  /**
   * A top-level run still waiting in the cluster queue (no gateway took it yet) shows as `queued`, as a
   * queued run does on one host (the scheduler holds its proxy as `starting`: its job is added); while the
   * provider holds the cluster's starts it says so.
   */
  view(view: RunView): RunView {
    if (view.status !== 'starting' || view.depth !== 1 || view.started_at !== undefined) return view;
    const shown = isClusterCopyParent(view.parent) ? view : { ...view, status: 'queued' };
    const holdUntil = this.link.providerHoldUntil();
    if (holdUntil === undefined || holdUntil <= this.bound().now()) return shown;
    return { ...shown, waiting_for: 'provider', hold_until: new Date(holdUntil).toISOString() };
  }

  /**
   * The gateway keeping the session of a conversation admitted here (its first run's host); undefined for
   * one whose session is here (nested, or a copy).
   */
  private sessionHostOf(conversationId: string): string | undefined {
    const record = this.bound().record(conversationId);
    if (record?.run.depth !== 1 || isClusterCopyParent(record.run.parent)) return undefined;
    return record.host;
  }

  /** The gateway binds its placement in its constructor, before any run can reach it. */
  private bound(): PlacementHost {
    return this.host as PlacementHost;
  }
}
