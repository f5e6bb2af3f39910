import { parseRunEnds, type RunEnd, runEndsOf, summaryLine } from './completion-events.js';
import type { CrewTools } from './crew-client.js';
import type { ParentDirectives } from './directives.js';

/**
 * The simulator as a parent (DESIGN §6, The simulator): it spawns runs through Crew's MCP tools and
 * reports how they ended. With `wait` it polls `spawn_wait` within the turn; with `yield` it ends the turn
 * and takes the completion events as later prompts of the same session (a hosted chat's injections),
 * acknowledging each and answering `summary: …` once the last awaited run has reported.
 */

export interface ParentIo {
  say(text: string): Promise<void>;
  /** Aborted when the turn is cancelled. */
  signal: AbortSignal;
  /** Opens a client on Crew's MCP server; rejects with a message fit for the turn's error. */
  connect(signal: AbortSignal): Promise<CrewTools>;
  /**
   * The session's runs spawned with `yield`, in spawn order, each with its status once its event came.
   * Emptied when the summary has been said.
   */
  awaited: Map<string, string | undefined>;
}

export type ParentOutcome = { kind: 'done' } | { kind: 'cancelled' } | { kind: 'error'; message: string };

/** `spawn_wait`'s timeout per call: below its 50 s bound and the MCP client's 60 s request timeout. */
export const WAIT_CALL_SECS = 30;
/** The longest a `wait` turn waits for its runs before the turn fails. */
export const WAIT_BOUND_MS = 10 * 60_000;

/**
 * Whether the turn is a parent's: it spawns, carries completion events, or comes while the session
 * awaits some. A parent turn's lines take the place of the default answer.
 */
export function isParentTurn(
  parent: ParentDirectives | undefined,
  prompt: string,
  awaited: ReadonlyMap<string, unknown>,
): boolean {
  return parent !== undefined || awaited.size > 0 || parseRunEnds(prompt).length > 0;
}

/** Acknowledges the prompt's completion events, spawns and waits as `parent` says, then sums up. */
export async function parentTurn(
  parent: ParentDirectives | undefined,
  prompt: string,
  io: ParentIo,
): Promise<ParentOutcome> {
  for (const end of parseRunEnds(prompt)) {
    await io.say(`ack ${end.id}=${end.status}\n`);
    record(io.awaited, end);
  }
  if (parent) {
    let crew: CrewTools | undefined;
    try {
      crew = await io.connect(io.signal);
      const admitted = await spawnAll(crew, parent, io);
      if (parent.after === 'wait') {
        const ends = await waitFor(crew, admitted, io);
        await io.say(summaryLine(admitted.map((id) => ({ id, status: ends.get(id) as string }))));
      } else {
        for (const id of admitted) io.awaited.set(id, undefined);
      }
    } catch (error) {
      if (io.signal.aborted) return { kind: 'cancelled' };
      return { kind: 'error', message: `sim: ${error instanceof Error ? error.message : String(error)}` };
    } finally {
      await crew?.close().catch(() => undefined);
    }
  }
  const missing = [...io.awaited.values()].filter((status) => status === undefined).length;
  if (io.awaited.size > 0 && missing === 0) {
    await io.say(summaryLine([...io.awaited].map(([id, status]) => ({ id, status: status as string }))));
    io.awaited.clear();
  } else if (missing > 0 && !parent) {
    await io.say(`waiting for ${missing} completion event${missing === 1 ? '' : 's'}\n`);
  } else if (parent?.after === 'yield' && io.awaited.size === 0) {
    // Nothing was admitted, so no event will ever come: the summary is due now.
    await io.say(summaryLine([]));
  }
  return { kind: 'done' };
}

/** Calls `spawn_run` (once per task, or once for the wave) and says each result; the admitted ids. */
async function spawnAll(crew: CrewTools, parent: ParentDirectives, io: ParentIo): Promise<string[]> {
  const calls = parent.wave ? [{ tasks: parent.tasks }] : parent.tasks.map((task) => ({ task }));
  const admitted: string[] = [];
  for (const args of calls) {
    const answer = await crew.spawnRun(args, io.signal);
    if (!answer.ok) {
      await io.say(`refused ${answer.refusal.code}: ${oneLine(answer.refusal.message)}\n`);
      continue;
    }
    for (const run of answer.runs) {
      admitted.push(run.id);
      await io.say(`spawned ${run.id}\n`);
    }
  }
  return admitted;
}

/**
 * Calls `spawn_wait` until every id in `ids` has been in some event's `run_ids`; each run's status. Runs
 * of earlier `yield` turns that report meanwhile count for the session too: their events are delivered
 * now and will not come again as a prompt.
 */
async function waitFor(crew: CrewTools, ids: readonly string[], io: ParentIo): Promise<Map<string, string>> {
  const ends = new Map<string, string>();
  const pending = new Set(ids);
  const deadline = Date.now() + WAIT_BOUND_MS;
  while (pending.size > 0) {
    const leftMs = deadline - Date.now();
    // The simulator's own failures (a test agent, not Crew): they end up in its run's error.
    if (leftMs <= 0) {
      throw new Error(
        `gave up after ${WAIT_BOUND_MS / 1000} s waiting for the completion events of ${[...pending].join(', ')}`,
      );
    }
    const answer = await crew.spawnWait(Math.min(WAIT_CALL_SECS, Math.ceil(leftMs / 1000)), io.signal);
    if (!answer.ok) throw new Error(`spawn_wait refused ${answer.refusal.code}: ${answer.refusal.message}`);
    // A notice (a released conversation) ends no run; only completions and digests do.
    const ended = answer.events.filter((event) => event.kind !== 'notice');
    for (const end of ended.flatMap(runEndsOf)) {
      if (!ends.has(end.id)) ends.set(end.id, end.status);
      pending.delete(end.id);
      record(io.awaited, end);
    }
  }
  return ends;
}

/** Notes `end` for a run the session awaits (and only for one: the map lists what was spawned). */
function record(awaited: Map<string, string | undefined>, end: RunEnd): void {
  if (awaited.has(end.id) && awaited.get(end.id) === undefined) awaited.set(end.id, end.status);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
