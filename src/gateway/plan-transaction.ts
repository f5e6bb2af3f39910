import type { SchedulerCommand } from '../core/scheduler-types.js';
import { assertNever, type RunId, type RunSpec } from '../core/types.js';
import type { OutboxEvent, RunInfoUpdate, StoreTx } from '../store/store.js';

/** A command with an effect outside the store: carried out by the run supervisor after the commit. */
export type Effect = Extract<SchedulerCommand, { type: 'launch' | 'stop' | 'steer' | 'release_session' }>;

/** A security event the step decided on. */
export type SelWrite = Extract<SchedulerCommand, { type: 'sel' }>;

/** The specs of the runs a step admits, by run id: a `Map`, or for one run a {@link OneSpec}. */
export interface NewSpecs {
  readonly size: number;
  get(id: RunId): RunSpec | undefined;
}

/** The spec of the one run a single spawn admits, without a map. */
export class OneSpec implements NewSpecs {
  readonly size = 1;
  constructor(
    private readonly id: RunId,
    private readonly spec: RunSpec,
  ) {}

  get(id: RunId): RunSpec | undefined {
    return id === this.id ? this.spec : undefined;
  }
}

export interface PlanInput {
  epoch: number;
  now: number;
  /** Specs of the runs this step admits (the only place a spec enters the store). */
  newSpecs?: NewSpecs;
  /** Runs a restarted gateway takes over before ending them `lost`. */
  claim?: readonly RunId[];
  /** Facts the runner reported with the event (pid at start; result size and peak at the end). */
  runInfo?: readonly RunInfoUpdate[];
  /** A fresh outbox event id. */
  eventId: () => string;
}

export interface Plan {
  /** One store transaction: everything the step decided, committed together or not at all. */
  tx: StoreTx;
  /** The outbox events in `tx`, for the relay once the transaction committed. */
  announced: readonly OutboxEvent[];
  effects: readonly Effect[];
  sel: readonly SelWrite[];
}

/**
 * The pure translation of one scheduler step's commands into one store transaction plus what to do
 * after it commits (DESIGN §3: a run's terminal record and its completion event are written together).
 * No I/O: the caller applies `tx`, then hands `announced` to the relay and `effects` to the supervisor.
 */
export function planTransaction(commands: readonly SchedulerCommand[], input: PlanInput): Plan {
  const tx: StoreTx = { epoch: input.epoch };
  // Each list is made when its first item comes (a step starts, ends or delivers one run, so most
  // lists stay empty): the plan is built once per step, on the hot path.
  let newRuns: NonNullable<StoreTx['newRuns']> | undefined;
  // The runs admitted in this step whose first record is made: a single spawn (the common admission)
  // needs only a flag, a wave a set, made at its first record.
  let singleRecorded = false;
  let waveRecorded: Set<RunId> | undefined;
  let runs: NonNullable<StoreTx['runs']> | undefined;
  let conversations: NonNullable<StoreTx['conversations']> | undefined;
  let announced: OutboxEvent[] | undefined;
  let effects: Effect[] | undefined;
  let sel: SelWrite[] | undefined;
  for (const command of commands) {
    switch (command.type) {
      case 'persist': {
        const specs = input.newSpecs;
        const spec = specs?.get(command.run.id);
        // The first record of a run admitted in this step carries its spec; later ones update it.
        let first = false;
        if (spec && specs?.size === 1) {
          first = !singleRecorded;
          singleRecorded = true;
        } else if (spec) {
          waveRecorded ??= new Set<RunId>();
          first = !waveRecorded.has(command.run.id);
          waveRecorded.add(command.run.id);
        }
        if (spec && first) {
          newRuns = pushed(newRuns, { run: command.run, spec });
        } else {
          runs = pushed(runs, command.run);
        }
        break;
      }
      case 'persist_conversation':
        conversations = pushed(conversations, command.conversation);
        break;
      case 'announce': {
        const a = command.announcement;
        const event: OutboxEvent = {
          id: input.eventId(),
          parent: a.parent,
          kind: a.kind,
          runIds: a.kind === 'digest' ? a.runIds : [a.runId],
          createdAt: input.now,
          state: 'pending',
          attempts: 0,
        };
        if (a.kind === 'digest') event.batchId = a.batchId;
        announced = pushed(announced, event);
        break;
      }
      case 'sel':
        sel = pushed(sel, command);
        break;
      case 'launch':
      case 'stop':
      case 'steer':
      case 'release_session':
        effects = pushed(effects, command);
        break;
      default:
        assertNever(command);
    }
  }
  if (newRuns) tx.newRuns = newRuns;
  if (runs) tx.runs = runs;
  if (conversations) tx.conversations = conversations;
  if (announced) tx.outbox = announced;
  if (input.runInfo && input.runInfo.length > 0) tx.runInfo = [...input.runInfo];
  if (input.claim && input.claim.length > 0) tx.claim = [...input.claim];
  return { tx, announced: announced ?? NONE, effects: effects ?? NONE, sel: sel ?? NONE };
}

/** `list` with `item` appended, made when it is the first. */
function pushed<T>(list: T[] | undefined, item: T): T[] {
  if (list === undefined) return [item];
  list.push(item);
  return list;
}

/** The plan's empty lists: one shared array that nobody writes to (a `Plan`'s lists are only read). */
const NONE: never[] = [];

/** Whether a transaction writes anything (an empty step needs no commit). */
export function isEmptyTx(tx: StoreTx): boolean {
  return (
    tx.newRuns === undefined &&
    tx.runs === undefined &&
    tx.conversations === undefined &&
    tx.outbox === undefined &&
    tx.runInfo === undefined &&
    tx.claim === undefined &&
    tx.settle === undefined &&
    tx.attempts === undefined
  );
}
