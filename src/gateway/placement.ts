import type { Refusal } from '../core/errors.js';
import type { Conversation, SchedulerEvent } from '../core/scheduler-types.js';
import type { ParentKey, Run, RunId, RunSpec } from '../core/types.js';
import type { RunHandle, RunnerEvent } from '../runners/runner.js';
import type { RunRecord } from '../store/store.js';
import type { PageOptions, TranscriptPage } from '../transcripts/transcript-store.js';
import type { RunView } from './run-view.js';

/** How many top-level runs one admission asks for, and whether they are a wave (bounds differ). */
export interface AdmissionSize {
  kind: 'single' | 'wave';
  members: number;
}

/** What a placement reads of its gateway, handed to it once the gateway exists (`bind`). */
export interface PlacementHost {
  /** The stored record of a run; undefined for an unknown one. */
  record(id: RunId): RunRecord | undefined;
  /** A page of the transcript of a run this gateway holds (a refusal is thrown as a CrewError). */
  pageOf(id: RunId, options: PageOptions): Promise<TranscriptPage>;
  now(): number;
}

/** The release reason of a conversation whose session's host is gone (the scheduler's own wording). */
export type LostSession = Exclude<
  Extract<SchedulerEvent, { type: 'release' }>['reason'],
  'requested' | 'expired' | 'evicted'
>;

/** A run's start somewhere else: its events (`started`, `output`, `ended`) come back through `onEvent`. */
export type StartElsewhere = (onEvent: (event: RunnerEvent) => void) => RunHandle;

/**
 * Where a run executes (issue 30). The gateway admits, records and delivers the same way whatever the
 * placement; at each point where "here" is not the only answer it asks its placement. The local placement
 * ({@link localPlacement}) answers "here" everywhere; cluster mode (src/cluster/cluster-placement.ts) puts
 * each top-level run on whichever gateway of the cluster takes it and holds a proxy of it here. One
 * conformance suite (test/gateway/placement-conformance.ts) holds both to the same outward behaviour.
 */
export interface Placement {
  /** Permits the scheduler needs beyond the host cap: runs held here as proxies of runs placed elsewhere. */
  readonly proxyRoom: number;
  /**
   * Whether a run of `parent` starts a process here (the stagger and the reservation gate weigh only those);
   * absent = every run does.
   */
  readonly startsHere?: (parent: ParentKey) => boolean;
  /** Whether this host's scheduler applies the per-host provider limits (off where a shared cap binds). */
  readonly providerLimitsHere: boolean;
  /** Called once by the gateway it serves. */
  bind(host: PlacementHost): void;
  /** Whether `run` is held here only as a proxy of a run that executes elsewhere. */
  isProxy(run: Readonly<Run>): boolean;
  /**
   * Runs `admission` (the gateway's synchronous admission of parsed arguments) under the placement's own
   * bounds, or answers its refusal without calling it.
   */
  admit<T>(size: AdmissionSize, admission: () => T): Promise<T | { refusal: Refusal }>;
  /** How `run` starts elsewhere, or why it cannot; undefined = it starts here. */
  startElsewhere(run: Readonly<Run>, spec: RunSpec): StartElsewhere | { failed: string } | undefined;
  /** Releases a kept conversation's session where it is kept; false = it is kept here (release it here). */
  releaseSession(conversationId: RunId): boolean;
  /**
   * This gateway's reaper released `conversation`'s session; true = the placement tells whoever admitted
   * it (no notice goes to its parent here).
   */
  sessionReleased(conversation: Conversation, reason: 'expired' | 'evicted'): boolean;
  /** Where a run's transcript page is read, when not here; undefined = read it here. */
  page(record: RunRecord, options: PageOptions): Promise<TranscriptPage> | undefined;
  /**
   * Why this conversation's session is lost (the host keeping it is gone), so it is released and continuing
   * it answers `conversation_released`; undefined while it is not.
   */
  sessionLost(conversationId: RunId): LostSession | undefined;
  /** The provider limited a model call of a run whose top-level ancestor is `root`. */
  providerLimited(root: Readonly<Run>, retryAfterMs?: number): void;
  /** A run's view as this placement shows it (a proxy waiting elsewhere shows as queued). */
  view(view: RunView): RunView;
}

/** Every run executes here: the single-host gateway. */
export function localPlacement(): Placement {
  return {
    proxyRoom: 0,
    providerLimitsHere: true,
    bind: () => undefined,
    isProxy: () => false,
    // Runs in the caller's turn: a single host's admission stays one synchronous step.
    admit: async (_size, admission) => admission(),
    startElsewhere: () => undefined,
    releaseSession: () => false,
    sessionReleased: () => false,
    page: () => undefined,
    sessionLost: () => undefined,
    providerLimited: () => undefined,
    view: (view) => view,
  };
}
