import type { Refusal } from '../core/errors.js';
import type { SchedulerReply } from '../core/scheduler-types.js';
import type { RunId, RunSpec, SteerMode } from '../core/types.js';
import type { RunHandle, RunnerEvent } from '../runners/runner.js';
import type { PageOptions, TranscriptPage } from '../transcripts/transcript-store.js';

/**
 * The id of the copy an executing gateway runs for the cluster: apart from the origin's run id, so a
 * gateway that takes its own job holds both the proxy and the copy.
 */
export function copyIdOf(runId: RunId): RunId {
  return `x${runId}`;
}

/** The parent of a run a gateway executes for the cluster: `cluster:<origin gateway>`. */
export const CLUSTER_PARENT_PREFIX = 'cluster:';

/** Whether `parent` is the cluster's: its top-level runs are copies executed here for another gateway. */
export function isClusterCopyParent(parent: string): boolean {
  return parent.startsWith(CLUSTER_PARENT_PREFIX);
}

/** The origin's run id of an executed copy. */
export function originIdOf(copyId: RunId): RunId {
  return copyId.startsWith('x') ? copyId.slice(1) : copyId;
}

/** Which cluster-wide queue bound a job counts against (DESIGN §3, 7): its BullMQ job name. */
export type ClusterJobKind = 'single' | 'wave';

/** A top-level run admitted on its origin gateway and executed on whichever gateway's worker takes it. */
export interface ClusterJob {
  runId: RunId;
  kind: ClusterJobKind;
  /** The gateway that admitted it: its outcome goes back there. */
  origin: string;
  spec: RunSpec;
  /** Tool-call budget resolved at admission on the origin; absent or 0 = none. */
  maxTurns?: number;
  /** Token budget resolved at admission on the origin (narrowed by nothing: a cluster job is top-level). */
  maxTokens?: number;
  /**
   * A continuation (`spawn_continue`): the kept conversation it continues (the origin's id of its first
   * run). It runs on `host`, the gateway holding the conversation's session, whichever worker takes it.
   */
  continues?: RunId;
  /** With `continues`: the gateway that executed the conversation's first run and keeps its session. */
  host?: string;
}

/**
 * What a cluster link drives on its own gateway (the executing side): it runs the jobs its worker takes as
 * copies there, and hands it the commands other gateways send for them.
 */
export interface ClusterGateway {
  executeForCluster(job: ClusterJob): Promise<SchedulerReply>;
  attachSink(parent: string, sink: { deliver(event: { run_ids: string[] }): Promise<void> }): () => void;
  cancel(id: RunId, scope: { kind: 'operator' }): { ok: boolean };
  steer(id: RunId, message: string, mode: SteerMode, scope: { kind: 'operator' }): { ok: boolean };
  /** A run's status as this gateway holds it now (undefined for an unknown run). */
  statusOf(id: RunId): string | undefined;
  /** A run's status and bounded text as this gateway holds it (for the outcome sent to the origin). */
  outcomeOf(id: RunId): Promise<{ status: string; stop?: string; error?: string; text: string } | undefined>;
  /** A page of a run's transcript as this gateway holds it (throws its refusal as a CrewError). */
  pageOf(id: RunId, options: PageOptions): Promise<TranscriptPage>;
  /** Releases the session this gateway holds for kept conversation `conversationId` (an origin's id). */
  releaseForCluster(conversationId: RunId): void;
  /**
   * The gateway holding the session of this gateway's kept conversation `conversationId` released it
   * (its reaper): released here too, with a notice to its parent, unless it is busy or already released.
   */
  releasedElsewhere(conversationId: RunId, reason: 'expired' | 'evicted'): void;
}

/**
 * The cluster as the gateway sees it (cluster mode, `cluster.redis_url` set; absent = single host). The
 * gateway admits as on one host and hands each top-level run it would launch to `dispatch`; the
 * implementation (`redis/redis-cluster.ts` on BullMQ; `memory-cluster.ts` in one process) runs it on some gateway of the cluster and reports the
 * run's start and end through `onEvent`, exactly once each. Nested runs never come here.
 *
 * Left out: executing jobs (the implementation calls the gateway's `executeForCluster`), transcripts (they
 * stay on the executing host; the end carries a bounded copy for the origin's completion event).
 */
export interface ClusterLink {
  /** This gateway's name in the cluster. */
  readonly gatewayName: string;
  /**
   * Permits the origin's scheduler needs beyond the host cap: the runs the cluster's bounds may leave live
   * here as proxies (queued cluster-wide, or executing elsewhere). BullMQ's two concurrencies are the caps.
   */
  readonly proxyRoom: number;
  /**
   * Runs `admission` (the gateway's synchronous admission step) under the cluster-wide queue bounds and
   * waits until the jobs it dispatched are in the queue. Answers a refusal instead (`cluster_unavailable`
   * while Redis does not answer, `queue_full` past a bound) without calling `admission`.
   */
  admit<T>(kind: ClusterJobKind, members: number, admission: () => T): Promise<T | { refusal: Refusal }>;
  /**
   * A page of the transcript of `runId` (an origin's id) from `host`, the gateway that executes it, read
   * there. Throws a CrewError: `not_here` naming `host` when it does not answer, or its own refusal
   * (`pruned`, `not_found`).
   */
  page(host: string, runId: RunId, options: PageOptions): Promise<TranscriptPage>;
  /** Adds a launched run's job to the cluster queue; `onEvent` hears `started`, `output` and `ended`. */
  dispatch(job: ClusterJob, onEvent: (event: RunnerEvent) => void): RunHandle;
  /**
   * The provider answered 429 / 529 / 503 to a model call of `runId`, a run this gateway executes for the
   * cluster (its origin id; calls of runs nested under it count for it): the cluster's provider cap drops
   * and every gateway's starts are held for the retry-after.
   */
  providerLimited(runId: RunId, retryAfterMs?: number): void;
  /**
   * Until when (ms since the epoch) the provider holds every start in the cluster, as this gateway last saw
   * it; undefined when there is no hold. A run still waiting in the cluster queue shows it.
   */
  providerHoldUntil(): number | undefined;
  /**
   * Whether `host` published itself to the cluster lately (its registry entry is not stale); undefined
   * while this gateway cannot tell (Redis away, or no registry read yet).
   */
  hasGateway(host: string): boolean | undefined;
  /** Asks `host`, which holds the session of kept conversation `conversationId` (an origin's id), to release it. */
  release(host: string, conversationId: RunId): void;
  /**
   * This gateway's reaper released the session of kept conversation `conversationId` (an origin's id)
   * that it held for `origin`: the origin releases its conversation too, so continuing it answers
   * `conversation_released`.
   */
  released(origin: string, conversationId: RunId, reason: 'expired' | 'evicted'): void;
}
