import { Scheduler } from '../../../src/core/scheduler.js';
import type { SchedulerCommand, SchedulerEvent, StepResult } from '../../../src/core/scheduler-types.js';
import type { RunId } from '../../../src/core/types.js';

/**
 * Deliberately broken schedulers, each a subclass that bends one rule of DESIGN §3, so a test can show
 * the explorer notices. No module mocks: the explorer takes the scheduler's factory as an argument.
 */

/** Returns a tree's permit as soon as its top-level run ends, while descendants still run. */
export class EarlyPermitReturn extends Scheduler {
  override step(event: SchedulerEvent, now: number): StepResult {
    const result = super.step(event, now);
    // `permitHolders()` hands out the live map; this reaches through it on purpose.
    const holders = this.permitHolders() as Map<RunId, number>;
    for (const id of [...holders.keys()]) if (this.liveRun(id) === undefined) holders.delete(id);
    return result;
  }
}

/** Cancelling a queued run also drops the run queued right behind it (an off-by-one removal). */
export class CancelDropsNeighbour extends Scheduler {
  override step(event: SchedulerEvent, now: number): StepResult {
    const queued = this.queuedIds();
    const at = event.type === 'cancel' ? queued.indexOf(event.runId) : -1;
    const result = super.step(event, now);
    const behind = queued[at + 1];
    if (at < 0 || behind === undefined) return result;
    const dropped = super.step({ type: 'cancel', runId: behind }, now);
    return { commands: [...result.commands, ...dropped.commands], reply: result.reply };
  }
}

/** Writes every completion event to the outbox twice. */
export class DoubleAnnouncement extends Scheduler {
  override step(event: SchedulerEvent, now: number): StepResult {
    const result = super.step(event, now);
    const commands = result.commands.flatMap((c): SchedulerCommand[] =>
      c.type === 'announce' ? [c, c] : [c],
    );
    return { ...result, commands };
  }
}

/** Never lets a deadline fire: a tick does nothing. */
export class DeadlinesNeverFire extends Scheduler {
  override step(event: SchedulerEvent, now: number): StepResult {
    // A tick becomes an event that changes nothing: a cancel of a run that does not exist.
    return super.step(event.type === 'tick' ? { type: 'cancel', runId: '(none)' } : event, now);
  }
}

/** Loses the launch of run r2: it holds its permit in `starting` forever, and nothing can end it. */
export class LostLaunch extends Scheduler {
  override step(event: SchedulerEvent, now: number): StepResult {
    const result = super.step(event, now);
    return { ...result, commands: result.commands.filter((c) => !(c.type === 'launch' && c.runId === 'r2')) };
  }
}

/** Ends a run stopped by its turn budget `cancelled`, as if the turn-limit stop were any other cancel. */
export class TurnLimitEndsCancelled extends Scheduler {
  override step(event: SchedulerEvent, now: number): StepResult {
    const result = super.step(event, now);
    const commands = result.commands.map(
      (c): SchedulerCommand =>
        c.type === 'persist' && c.run.status === 'completed' && 'stop' in c.run && c.run.stop === 'turn_limit'
          ? { ...c, run: { ...c.run, status: 'cancelled' } }
          : c,
    );
    return { ...result, commands };
  }
}
