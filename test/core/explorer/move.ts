import type { Scheduler } from '../../../src/core/scheduler.js';
import type { SchedulerLimits } from '../../../src/core/scheduler-types.js';
import type { ParentKey } from '../../../src/core/types.js';
import type { World } from './world.js';

/** How far the explorer goes: every interleaving within these bounds is visited. */
export interface Bounds {
  /** Runs admitted along one path in total, continues included. */
  maxRuns: number;
  /** Top-level parent keys that spawn. */
  parents: ParentKey[];
  /** Sizes of the top-level waves tried. */
  waveSizes: number[];
  /** Sizes of the nested spawns tried (1 = a single child, more = a nested wave). */
  nestedSizes: number[];
  /**
   * Whether a run the scheduler asked to stop still tries to spawn (its runner has not seen the stop
   * yet): it must be refused `not_running`, or its child would escape the cascade.
   */
  spawnWhileStopping: boolean;
  /** The tool-call budget every spawned run gets (0 = none; then no tool calls are tried). */
  maxTurns: number;
  /** Whether single top-level spawns are also tried with `keep: true` (conversations). */
  keep: boolean;
  /** Gateway restarts along one path. */
  maxRestarts: number;
}

/** What a move needs beyond the state: how to build a scheduler (restart; a planted bug swaps it). */
export interface MoveContext {
  bounds: Bounds;
  /** The kinds of event interleaved (all of `MOVE_KINDS` unless a configuration narrows them). */
  kinds: readonly MoveKind[];
  makeScheduler: (limits: SchedulerLimits) => Scheduler;
}

/** One transition out of a state: a labelled event (or a restart) and the checks that belong to it. */
export interface Move {
  /** Unique among a state's moves, so a trace of labels replays. */
  label: string;
  /** Runner-side progress (a start, an end, time passing): the moves the deadlock check may use. */
  progress: boolean;
  apply(world: World, context: MoveContext): void;
}

/** Lists the moves of one kind available in a state. */
export type MoveKind = (world: World, context: MoveContext) => Move[];
