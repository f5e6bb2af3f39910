import type { CrewConfig } from '../core/config-schema.js';
import { CrewError, isCrewError } from '../core/errors.js';
import * as refusals from '../core/refusals.js';
import type { Scheduler } from '../core/scheduler.js';
import { isTerminal, type RunId } from '../core/types.js';
import type { RunRecord } from '../store/store.js';
import type { PageOptions, TranscriptPage } from '../transcripts/transcript-store.js';
import {
  type GatewayCounts,
  type ListResult,
  refusalOf,
  type StatusOptions,
  type StatusResult,
} from './answers.js';
import type { GatewayDeps } from './gateway-deps.js';
import type { Placement } from './placement.js';
import type { ProviderFeed } from './provider-feed.js';
import { RunListCache } from './run-list-cache.js';
import { type RunView, toRunView } from './run-view.js';
import type { Scope, Visibility } from './visibility.js';

/** What the reads look at: the gateway's parts. */
export interface RunReadsDeps {
  config: CrewConfig;
  deps: GatewayDeps;
  scheduler: Scheduler;
  providers: ProviderFeed;
  placement: Placement;
  visibility: Visibility;
}

/**
 * What the gateway answers about runs without changing them (issue 30: out of gateway.ts): counts, views,
 * lists with their header's numbers, and transcript pages read where the placement says.
 */
export class RunReads {
  /** `list`'s records and stored views, read once per store write (issue 32 §4). */
  private readonly listed: RunListCache;

  constructor(private readonly d: RunReadsDeps) {
    this.listed = new RunListCache({
      version: () => d.deps.store.stats().transactions,
      read: (scope, limit) => d.visibility.records(scope, limit),
    });
  }

  /**
   * The scheduler's counts as the host sees them. With a placement that holds proxies (cluster mode)
   * `running`, `starting` and `topLevel` count the runs executing here (copies and their nested runs), the
   * ones the host cap bounds; the proxies of runs admitted here (waiting in the cluster queue or executing
   * on any gateway) are `proxies`, so no run counts twice among those (docs/decisions.md, cluster polish).
   * A proxy still waiting in the cluster queue is also `queued`: the queue a header shows (issue 30).
   */
  counts(): GatewayCounts {
    const counts = this.d.scheduler.counts();
    const proxies = { starting: 0, running: 0 };
    if (this.d.placement.proxyRoom > 0) {
      for (const id of this.d.scheduler.permitHolders().keys()) {
        const run = this.d.scheduler.liveRun(id);
        if (!run || !this.d.placement.isProxy(run)) continue;
        if (run.status === 'starting' || run.status === 'running') proxies[run.status]++;
      }
    }
    return {
      ...counts,
      cap: this.d.deps.cap,
      running: counts.running - proxies.running,
      starting: counts.starting - proxies.starting,
      topLevel: counts.topLevel - proxies.running - proxies.starting,
      // A proxy whose job no gateway took yet waits in the placement's queue: queued, as its view shows.
      queued: counts.queued + proxies.starting,
      proxies: proxies.running + proxies.starting,
    };
  }

  /**
   * A page of run `id`'s transcript as this gateway holds it (`pruned` once the reaper took it,
   * `not_found` for a run it does not know): what this gateway answers whoever asks for the transcript of
   * a run it executes (cluster mode: the origin of a copy it runs).
   */
  pageOf(id: RunId, options: PageOptions): Promise<TranscriptPage> {
    const record = this.d.deps.store.run(id);
    if (!record) return Promise.reject(new CrewError(refusals.notVisible(id)));
    return this.localPage(record, options);
  }

  /** Where `spawn_status` reads a run's transcript: where the placement says, or here. */
  private transcriptOf(record: RunRecord, options: PageOptions): Promise<TranscriptPage> {
    return this.d.placement.page(record, options) ?? this.localPage(record, options);
  }

  private localPage(record: RunRecord, options: PageOptions): Promise<TranscriptPage> {
    if (record.prunedAt !== undefined)
      return Promise.reject(new CrewError(refusals.transcriptPruned(record.run.id, record.run.status)));
    return this.d.deps.transcripts.page(record.run.id, options);
  }

  list(scope: Scope, limit = 500): ListResult {
    const counts = this.counts();
    return {
      ok: true,
      runs: this.listed.records(scope, limit).map((r) => this.viewOf(r, this.listedView)),
      cap: this.d.deps.cap,
      running: counts.running + counts.starting,
      running_top_level: counts.topLevel,
      running_nested: counts.running + counts.starting - counts.topLevel,
      permits_held_by_ended_parents: this.endedHoldingPermits(),
      queued: counts.queued,
    };
  }

  /** Top-level runs that ended while their nested runs go on: each holds its permit until the last ends. */
  private endedHoldingPermits(): number {
    let held = 0;
    for (const id of this.d.scheduler.permitHolders().keys()) if (!this.d.scheduler.liveRun(id)) held++;
    return held;
  }

  private readonly listedView = (record: RunRecord): RunView => this.listed.view(record);

  /**
   * A stored run as every surface shows it, with what a queued one waits for (its provider's hold).
   * `stored` makes the view of the record as stored (`list` passes its cache's).
   */
  viewOf(record: RunRecord, stored: (record: RunRecord) => RunView = toRunView): RunView {
    // A live run's usage so far comes from the provider gateway; an ended one's is on its record.
    const live =
      record.providerUsage === undefined && !isTerminal(record.run.status)
        ? this.d.deps.liveUsage?.(record.run.id)
        : undefined;
    const waiting = this.d.providers.withWaiting(
      live ? toRunView({ ...record, providerUsage: live }) : stored(record),
    );
    // A run the memory pause stopped stays `running`, marked (issue 28).
    const view =
      waiting.status === 'running' && this.d.deps.isPaused?.(record.run.id)
        ? { ...waiting, paused: true as const }
        : waiting;
    return this.d.placement.view(view);
  }

  /** The current view of each of these runs the scope can see (others are left out), in the given order. */
  views(ids: readonly RunId[], scope: Scope): RunView[] {
    const views: RunView[] = [];
    for (const id of ids) {
      try {
        views.push(this.viewOf(this.d.visibility.assertVisible(scope, id)));
      } catch (error) {
        if (!isCrewError(error)) throw error;
      }
    }
    return views;
  }

  /** `spawn_status` unaudited: the run's view and a page of its transcript, or the refusal. */
  async status(id: RunId, scope: Scope, options: StatusOptions): Promise<StatusResult> {
    try {
      const record = this.d.visibility.assertVisible(scope, id);
      const page = await this.transcriptOf(record, {
        ...options,
        maxChars: this.d.config['agent.status_max_chars'],
        client: scopeName(scope), // greps take turns between clients (issue 28)
      });
      return {
        ok: true,
        run: this.viewOf(record),
        text: page.text,
        ...(page.fromLine !== undefined ? { from_line: page.fromLine } : {}),
        ...(page.toLine !== undefined ? { to_line: page.toLine } : {}),
        ...(page.totalLines !== undefined ? { total_lines: page.totalLines } : {}),
      };
    } catch (error) {
      return refusalOf(error);
    }
  }
}

/** Who asked, for the SEL: the parent a scope speaks for, or the operator. */
export function scopeName(scope: Scope): string {
  return scope.kind === 'operator' ? 'operator' : scope.parent;
}
