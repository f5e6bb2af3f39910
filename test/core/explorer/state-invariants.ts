import { isTerminal, type RunId } from '../../../src/core/types.js';
import type { World } from './world.js';

/**
 * DESIGN §3's invariants that hold in every reachable state, judged from the model against what the
 * scheduler exposes publicly (`permitHolders`, `queuedIds`, `counts`).
 */
export function checkState(world: World): void {
  checkPermits(world);
  checkQueue(world);
  checkAnnouncements(world);
  checkCascade(world);
}

/**
 * Permits held ≤ cap, and the holders are exactly the top-level runs whose tree is in flight (some run
 * of it has left the queue and not ended): a permit is bound to its run, taken when it leaves the
 * queue and returned when the run and every descendant ended, not before and not later. The cap
 * counts runs in flight: no permit idles while runs wait.
 */
function checkPermits(world: World): void {
  const { cap } = world.limits;
  const holders = world.scheduler.permitHolders();
  if (holders.size > cap) world.fail(`${holders.size} permits held, cap is ${cap}`);
  const tokens = new Set(holders.values());
  if (tokens.size !== holders.size) world.fail('two runs hold the same permit token');
  const inFlight = new Set<RunId>();
  for (const run of world.live()) if (run.status !== 'queued') inFlight.add(run.rootId);
  for (const root of inFlight) {
    if (!holders.has(root)) world.fail(`tree of ${root} is in flight without its permit`);
  }
  for (const holder of holders.keys()) {
    const run = world.records.get(holder);
    if (run?.depth !== 1) world.fail(`permit held by ${holder}, not a top-level run`);
    else if (!inFlight.has(holder))
      world.fail(`${holder} keeps its permit while its tree is ${world.isLive(holder) ? 'queued' : 'ended'}`);
  }
  if (world.queue.length > 0 && holders.size < cap)
    world.fail(`${world.queue.length} runs wait while only ${holders.size} of ${cap} permits are held`);
}

/** The scheduler's queue is the model's FIFO, and its counts agree with the records. */
function checkQueue(world: World): void {
  const queued = world.scheduler.queuedIds().join(',');
  if (queued !== world.queue.join(','))
    world.fail(`queue is [${queued}], admission order says [${world.queue.join(',')}]`);
  const counts = world.scheduler.counts();
  const live = world.live().length;
  if (counts.live !== live) world.fail(`scheduler counts ${counts.live} live runs, the records ${live}`);
}

/**
 * An ended single run was announced in the step that ended it; a wave is digested exactly when its
 * last member ends (so a digest names every member once, and no member waits forever).
 */
function checkAnnouncements(world: World): void {
  for (const run of world.records.values()) {
    if (run.batchId === undefined && isTerminal(run.status) && !world.announced.has(run.id))
      world.fail(`run ${run.id} ended ${run.status} without a completion event`);
  }
  for (const [batchId, wave] of world.waves) {
    // A wave being admitted in this very step has no records yet: not done.
    const done = wave.members.every((id) => world.records.has(id) && !world.isLive(id));
    if (done && !wave.digested) world.fail(`every member of ${batchId} ended, no digest was sent`);
    if (!done && wave.digested) world.fail(`${batchId} digested while members are live`);
  }
}

/**
 * Cancel (and a timeout, which cancels the descendants) cascades: no live run has an ancestor that was
 * told to stop, or ended cancelled or timed out, unless it is stopping or ending itself.
 */
function checkCascade(world: World): void {
  for (const run of world.live()) {
    if (world.stopping.has(run.id)) continue;
    const stopped = world
      .ancestors(run)
      .find((a) => world.stopping.has(a.id) || a.status === 'cancelled' || a.status === 'timed_out');
    if (stopped)
      world.fail(
        `${run.id} (${run.status}) lives on under ${stopped.id}, which ${world.stopping.has(stopped.id) ? 'is stopping' : `ended ${stopped.status}`}`,
      );
  }
}
