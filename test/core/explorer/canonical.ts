import { LinkedFifo } from '../../../src/core/fifo.js';
import { MinHeap } from '../../../src/core/min-heap.js';

/**
 * A canonical text of an object graph (the scheduler's private state), abstracted so that states which
 * behave the same merge:
 *
 * - Timestamps that nothing compares (`createdAt`, `startedAt`, …) and message text are dropped;
 *   `launchedAt` only counts as present or absent: the core branches on it, never on its value.
 * - Instants the core does compare with `now` (deadlines, the stagger's next start) are replaced by
 *   their rank among the future ones; every instant at or before `now` is just "past" (0), since a
 *   later event only ever sees it as passed. The explorer keeps every duration far longer than any
 *   path, so only the order of future instants can change what a later event does.
 * - A `MinHeap` is written as its sorted contents, not its array layout.
 * - A `LinkedFifo` (the queue, threaded through the run nodes) is written as its items' run ids in
 *   order; the links on each node are left out (the queue's text holds the order).
 * - `undefined` fields are skipped; key, Map and Set order is kept (the queue is a Map whose order is
 *   the FIFO; two objects of one shape built in another key order only split a state, never merge
 *   two).
 *
 * A field renamed in the scheduler only makes the abstraction finer (fewer merges, never a wrong
 * one): an unknown timestamp is written as its value. The explorer's state budget then trips instead
 * of a wrong merge passing silently.
 */
export interface CanonicalOptions {
  /** Added to `lastLaunchAt` to get the instant the stagger lets the next run start. */
  staggerMs: number;
  /** Fields left out entirely (constants such as `limits`, scratch buffers such as `commands`). */
  skip: ReadonlySet<string>;
  /** Maps whose values are arbitrary identities (permit tokens): only their keys are written. */
  tokens: ReadonlySet<string>;
  /**
   * Whether a heap entry can still fire. The deadline heap deletes lazily: an entry superseded by a
   * later deadline, or of a run already stopping or gone, is skipped when it reaches the top, so it
   * changes nothing and is left out. @default every entry counts
   */
  heapEntryLive?: (key: number, value: unknown) => boolean;
}

/** Read by nothing that decides: timestamps only reported, and text only shown in messages. */
const DROPPED = new Set(['createdAt', 'startedAt', 'endedAt', 'lastUsedAt', 'settledAt', 'releasedReason']);
const PRESENCE_TIMES = new Set(['launchedAt']);
/** A queued node's links to its neighbours: written once, as the queue's order. */
const FIFO_LINKS = new Set(['fifoPrev', 'fifoNext']);
/** Marks where a ranked instant goes; replaced once every instant of the state is known. */
const INSTANT = '\u0001';

export function canonical(root: unknown, now: number, options: CanonicalOptions): string {
  const instants: number[] = [];
  const text = write(root, options, instants);
  const future = [...new Set(instants.filter((at) => at > now))].sort((a, b) => a - b);
  const rank = new Map(future.map((value, i) => [value, i + 1]));
  const parts = text.split(INSTANT);
  let out = parts[0] as string;
  for (let i = 1; i < parts.length; i++) out += `${rank.get(instants[i - 1] as number) ?? 0}${parts[i]}`;
  return out;
}

function write(value: unknown, options: CanonicalOptions, instants: number[]): string {
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? 'fn' : String(value);
  if (value instanceof MinHeap) return writeHeap(value, options, instants);
  if (value instanceof LinkedFifo) {
    let out = 'Q[';
    for (const item of value as LinkedFifo<never>) out += `${(item as { run: { id: string } }).run.id},`;
    return `${out}]`;
  }
  if (value instanceof Map) {
    let out = 'M{';
    for (const [k, v] of value) out += `${write(k, options, instants)}:${write(v, options, instants)},`;
    return `${out}}`;
  }
  if (value instanceof Set) {
    let out = 'S[';
    for (const v of value) out += `${write(v, options, instants)},`;
    return `${out}]`;
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (const v of value) out += `${write(v, options, instants)},`;
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const key of Object.keys(record)) {
    const field = record[key];
    if (field === undefined || options.skip.has(key) || DROPPED.has(key) || FIFO_LINKS.has(key)) continue;
    if (PRESENCE_TIMES.has(key)) out += `${key}:+,`;
    else if (options.tokens.has(key) && field instanceof Map)
      out += `${key}:${write([...field.keys()], options, instants)},`;
    else if (key === 'deadlineAt' && typeof field === 'number') out += `${key}:${instant(field, instants)},`;
    else if (key === 'lastLaunchAt' && typeof field === 'number')
      // With no stagger the last start time is never compared with anything.
      out +=
        options.staggerMs === 0 ? `${key}:+,` : `${key}:${instant(field + options.staggerMs, instants)},`;
    else out += `${key}:${write(field, options, instants)},`;
  }
  return `${out}}`;
}

function instant(value: number, instants: number[]): string {
  instants.push(value);
  return INSTANT;
}

/** A heap's behaviour is its contents in pop order; its array layout and insertion counter are not. */
function writeHeap(heap: MinHeap<unknown>, options: CanonicalOptions, instants: number[]): string {
  const fields = heap as unknown as { keys: number[]; seqs: number[]; values: unknown[] };
  const order = fields.keys
    .map((_, i) => i)
    .sort(
      (a, b) =>
        (fields.keys[a] as number) - (fields.keys[b] as number) ||
        (fields.seqs[a] as number) - (fields.seqs[b] as number),
    );
  let out = 'H[';
  for (const i of order) {
    if (options.heapEntryLive && !options.heapEntryLive(fields.keys[i] as number, fields.values[i])) continue;
    out += `${instant(fields.keys[i] as number, instants)}=${write(fields.values[i], options, instants)},`;
  }
  return `${out}]`;
}
