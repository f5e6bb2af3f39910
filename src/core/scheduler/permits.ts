import * as refusals from '../refusals.js';
import type { SchedulerLimits, SchedulerReply } from '../scheduler-types.js';
import type { ParentKey, Run, RunId } from '../types.js';
import type { Deadlines } from './deadlines.js';
import type { ProviderGate } from './provider-gate.js';
import type { ReservationGate } from './reservation-gate.js';
import { DONE, type Node, refused } from './run-node.js';
import type { RunTable } from './run-table.js';

/** The parts of the scheduler a start reads and changes besides the permits (handed in, not held). */
export interface StartParts {
  readonly table: RunTable;
  readonly provider: ProviderGate;
  readonly reservation: ReservationGate;
  readonly deadlines: Deadlines;
}

/**
 * Permits and starts (DESIGN §3): the permit each top-level run holds until its whole tree has ended, the
 * stagger between launches, and which queued runs the gates let take a free permit.
 */
export class Permits {
  /** Permit tokens by the top-level run that holds them. */
  readonly held = new Map<RunId, number>();
  private nextPermit = 1;
  /** Top-level runs holding a permit that the stagger has not yet let start, in order. */
  pendingLaunch: RunId[] = [];
  lastLaunchAt: number | undefined;
  /** Set by `stop_starts` (the gateway is closing): no permit is granted and no run launched after it. */
  stopped = false;

  constructor(private readonly limits: SchedulerLimits) {}

  /** When the stagger lets the next pending launch go, if one waits. */
  nextLaunchAt(): number | undefined {
    return !this.stopped && this.pendingLaunch.length > 0 && this.lastLaunchAt !== undefined
      ? this.lastLaunchAt + this.limits.staggerMs
      : undefined;
  }

  /**
   * A permit for a top-level run, and its launch when nothing would hold it back: no start waiting before
   * it, no stagger gap still running, no per-run stagger rule. Such a run is recorded once, starting and
   * launched (one run state, one record); otherwise it waits in `pendingLaunch` for `pump`.
   */
  grant(s: StartParts, node: Node, now: number): void {
    this.held.set(node.run.id, this.nextPermit++);
    s.provider.bind(node.run.id, node.run.provider);
    if (this.launchesAtOnce(now)) {
      this.lastLaunchAt = now;
      this.launchRun(s, node, { ...node.run, status: 'starting', launchedAt: now }, now);
      return;
    }
    s.table.transition(node, { ...node.run, status: 'starting' });
    s.table.persist(node.run);
    this.pendingLaunch.push(node.run.id);
  }

  /** Nothing starts from now on; what was granted or queued stays as it is for the next start. */
  stopStarts(): void {
    this.stopped = true;
  }

  /** Whether a start granted now launches in the same step (what `pump`'s launch loop would do next). */
  private launchesAtOnce(now: number): boolean {
    return (
      !this.stopped &&
      this.pendingLaunch.length === 0 &&
      this.limits.startsHere === undefined &&
      !this.staggerHolds(now)
    );
  }

  /** Whether the stagger's gap since the last launch is still running at `now`. */
  private staggerHolds(now: number): boolean {
    const { staggerMs } = this.limits;
    return staggerMs > 0 && this.lastLaunchAt !== undefined && now < this.lastLaunchAt + staggerMs;
  }

  /** Returns a top-level run's permit; a second release is a no-op. */
  release(s: Pick<StartParts, 'provider'>, rootId: RunId): void {
    this.held.delete(rootId);
    s.provider.unbind(rootId);
  }

  /** Forgets a run an undone admission added: its permit, and its place among the pending launches. */
  forget(s: Pick<StartParts, 'provider'>, id: RunId): void {
    this.release(s, id);
    this.pendingLaunch = this.pendingLaunch.filter((pending) => pending !== id);
  }

  /**
   * Fills free permits from the queue in order (a run held back by the reservation gate lets a run behind
   * it that starts elsewhere pass), then launches what the stagger allows.
   */
  pump(s: StartParts, now: number): void {
    if (this.stopped) return;
    const { table } = s;
    const room = Math.max(0, Math.min(this.limits.cap - this.held.size, table.queue.size));
    if (room > 0 && (s.reservation.hasSample() || s.provider.isActive())) {
      for (const node of this.startable(s, room, now)) {
        table.dequeue(node);
        this.grant(s, node, now);
      }
    } else {
      for (let i = 0; i < room && table.queue.size > 0; i++) {
        const node = table.queue.peek() as Node;
        table.dequeue(node);
        this.grant(s, node, now);
      }
    }
    const { startsHere } = this.limits;
    if (startsHere && this.pendingLaunch.length > 0) {
      // Starts the stagger does not space go at once, also past a staggered one still waiting.
      this.pendingLaunch = this.pendingLaunch.filter((id) => {
        const node = table.nodes.get(id);
        if (node && startsHere(node.run.parent)) return true;
        if (node) this.launch(s, node, now);
        return false;
      });
    }
    while (this.pendingLaunch.length > 0) {
      if (this.staggerHolds(now)) break;
      const id = this.pendingLaunch.shift() as RunId;
      const node = table.nodes.get(id);
      if (!node) continue;
      this.lastLaunchAt = now;
      this.launch(s, node, now);
    }
  }

  /** Launches a nested run, or a top-level one holding its permit. */
  launch(s: StartParts, node: Node, now: number): void {
    if (node.run.status !== 'starting') return;
    this.launchRun(s, node, { ...node.run, launchedAt: now }, now);
  }

  /** Records `run` (the node's run, launched now) and asks for its launch. */
  private launchRun(s: StartParts, node: Node, run: Run, now: number): void {
    s.table.transition(node, run);
    // Until the agent is ready the same span bounds its start; `started` sets the run's own deadline.
    s.deadlines.set(node, now + this.limits.timeoutMs);
    s.table.persist(run);
    s.table.commands.push({ type: 'launch', runId: run.id });
  }

  /** The runner says a launched run's agent is ready: it runs, and its timeout starts. */
  started(s: StartParts, runId: RunId, now: number): SchedulerReply {
    const node = s.table.nodes.get(runId);
    const launched = node?.run.launchedAt;
    if (node?.run.status !== 'starting' || launched === undefined) {
      return refused(refusals.notLive(runId, undefined));
    }
    const running: Run = { ...node.run, status: 'running', launchedAt: launched, startedAt: now };
    s.table.transition(node, running);
    s.table.persist(running);
    // The timeout counts the agent's working time, as `duration_secs` does (started → ended).
    if (node.stopping === undefined) s.deadlines.set(node, now + this.limits.timeoutMs);
    return DONE;
  }

  /**
   * How many of one spawn's top-level members (in order, at most `room`) may start at once: the provider
   * caps' room, and for runs that start here the reservation gate's.
   */
  admissionRoom(
    s: StartParts,
    room: number,
    members: readonly { agent: string; provider?: string | undefined }[],
    now: number,
    parent: ParentKey,
  ): number {
    if (room <= 0) return 0;
    room = Math.min(room, s.provider.room(members, now));
    if (room <= 0 || !s.table.startsHere(parent) || !s.reservation.isGating()) return room;
    return Math.min(room, s.reservation.room(s.table, members.slice(0, room)));
  }

  /**
   * Which queued runs may start now, at most `room`, in queue order. The candidates are the first `room`
   * runs that start here and the first `room` that start elsewhere (cluster proxies); of them a prefix by
   * the provider caps, and within it every run that starts elsewhere and as many runs here from the front
   * as the reservation gate lets (a run here held back holds the runs here behind it, not the others).
   */
  private startable(s: StartParts, room: number, now: number): Node[] {
    const { table } = s;
    const heads: Node[] = [];
    const wantHere = Math.min(room, table.queue.size - table.queuedElsewhere);
    const wantElsewhere = Math.min(room, table.queuedElsewhere);
    let here = 0;
    let elsewhere = 0;
    for (const node of table.queue) {
      if (table.startsHere(node.run.parent)) {
        if (here++ < wantHere) heads.push(node);
      } else if (elsewhere++ < wantElsewhere) {
        heads.push(node);
      }
      if (here >= wantHere && elsewhere >= wantElsewhere) break;
    }
    const runs = heads.map((node) => node.run);
    const candidates = heads.slice(0, s.provider.room(runs, now));
    let allowed = s.reservation.room(
      table,
      candidates.filter((node) => table.startsHere(node.run.parent)).map((node) => node.run),
    );
    return candidates.filter((node) => !table.startsHere(node.run.parent) || allowed-- > 0).slice(0, room);
  }
}
