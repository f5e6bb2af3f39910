import type { ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { composeChunks } from './answer.js';
import { allocateTouched, startCpuBurn } from './ballast.js';
import type { CrewTools } from './crew-client.js';
import { parseDirectives, type SimDirectives } from './directives.js';
import { startGrandchild, stopGrandchild } from './grandchild.js';
import { isParentTurn, parentTurn } from './parent.js';

/**
 * One simulated turn, independent of how it is reported: the ACP agent turns `say` into
 * `agent_message_chunk` updates, the one-shot mode writes it to stdout.
 */

export type PermissionAnswer = 'allowed' | 'rejected' | 'cancelled';

export interface TurnIo {
  /** Sends one piece of the answer. */
  say(text: string): Promise<void>;
  /** Reports tool call number `index` (1-based). */
  toolCall(index: number): Promise<void>;
  /** Reports context usage once, at the end of the turn. */
  usage(usedTokens: number): Promise<void>;
  /** Asks the client for permission; absent where nobody can be asked (one-shot mode). */
  askPermission?: () => Promise<PermissionAnswer>;
  /** What `#sim info` reports. */
  info(): Record<string, unknown>;
  /**
   * Opens a client on Crew's MCP server (for `spawn=`); rejects with a message saying why it cannot.
   * Absent where no server can have been given (one-shot mode).
   */
  connectCrew?: (signal: AbortSignal) => Promise<CrewTools>;
  /** The session's runs awaited after a `yield` (see `ParentIo.awaited`); absent = a fresh map per turn. */
  awaited?: Map<string, string | undefined>;
  /** Aborted when the turn is cancelled. */
  signal: AbortSignal;
  /** Where `write=` paths are relative to (the session's cwd). @default process.cwd() */
  cwd?: string;
}

/** How a turn ended; `crash` and `exit` are for the caller to carry out on the process. */
export type TurnOutcome =
  | { kind: 'stop'; stopReason: 'end_turn' | 'cancelled' | 'refusal' }
  | { kind: 'error'; message: string }
  | { kind: 'crash' }
  | { kind: 'exit'; code: number };

/** The exit code of `fail=crash`: what a shell shows for an aborted process. */
export const CRASH_EXIT_CODE = 134;

/** The context window the simulator claims in its `usage_update`. */
export const SIM_CONTEXT_TOKENS = 200_000;

type TimelineEvent = { kind: 'chunk'; text: string } | { kind: 'tool'; index: number };

const CANCELLED: TurnOutcome = { kind: 'stop', stopReason: 'cancelled' };

/** Runs the turn that `prompt`'s `#sim` directives describe. */
export async function runTurn(prompt: string, io: TurnIo): Promise<TurnOutcome> {
  const { directives: d, problems } = parseDirectives(prompt);
  for (const problem of problems) process.stderr.write(`sim: ${problem}\n`);

  // Referenced again in `finally`, so the memory stays held (and resident) until the turn ends.
  const ballast = allocateTouched(d.memBytes);
  const stopBurn = startCpuBurn(d.cpuFraction);
  let grandchild: ChildProcess | undefined;
  const startedAt = Date.now();
  let saidChars = 0;
  const say = async (text: string) => {
    saidChars += text.length;
    await io.say(text);
  };
  try {
    if (d.child === 'sleep') {
      grandchild = startGrandchild();
      await say(`child: pid=${grandchild.pid ?? 'none'}\n`);
    }
    if (d.ask && io.askPermission) {
      const answer = await io.askPermission();
      await say(`permission: ${answer}\n`);
      if (io.signal.aborted) return CANCELLED;
    } else if (d.ask) {
      process.stderr.write('sim: #sim ask ignored: there is nobody to ask\n');
    }
    if (d.info) await say(`info: ${JSON.stringify(io.info())}\n`);
    for (const write of d.writes) await say(`${await writeOne(io.cwd ?? process.cwd(), write)}\n`);

    const awaited = io.awaited ?? new Map<string, string | undefined>();
    const parent = isParentTurn(d.parent, prompt, awaited);
    // A parent's lines are its answer: the default text would only stand between them and the summary.
    const chunks = parent && isDefaultOutput(d) ? [] : composeChunks(d, prompt);
    const timeline = buildTimeline(chunks, d.tools);
    const crashAfter = d.fail === 'crash' ? Math.floor(timeline.length / 2) : undefined;
    for (const [j, event] of timeline.entries()) {
      if (j === crashAfter) break;
      if (!(await sleepUntil(startedAt + (j * d.sleepMs) / timeline.length, io.signal))) return CANCELLED;
      if (event.kind === 'chunk') await say(event.text);
      else await io.toolCall(event.index);
    }
    if (crashAfter !== undefined) {
      await sleepUntil(startedAt + d.sleepMs / 2, io.signal);
      return { kind: 'crash' };
    }
    if (!(await sleepUntil(startedAt + d.sleepMs, io.signal))) return CANCELLED;
    // After the timeline and before `hang`: `#sim spawn="…" yield hang` spawns, then holds the turn.
    if (parent) {
      const outcome = await parentTurn(d.parent, prompt, {
        say,
        signal: io.signal,
        connect: io.connectCrew ?? noCrew,
        awaited,
      });
      if (outcome.kind === 'cancelled') return CANCELLED;
      if (outcome.kind === 'error') return outcome;
    }
    if (d.hang) {
      await untilAborted(io.signal);
      return CANCELLED;
    }
    await io.usage(Math.ceil((prompt.length + saidChars) / 4));
    if (d.exitCode !== undefined) return { kind: 'exit', code: d.exitCode };
    if (d.fail === 'error') return { kind: 'error', message: 'sim: simulated error (#sim fail=error)' };
    if (d.fail === 'refusal') return { kind: 'stop', stopReason: 'refusal' };
    return { kind: 'stop', stopReason: 'end_turn' };
  } finally {
    stopBurn();
    if (grandchild) stopGrandchild(grandchild);
    ballast.length = 0;
  }
}

/** Writes one `write=` file; says `wrote <path>` or `write failed <path>: <why>` (a sandbox refuses some). */
async function writeOne(cwd: string, write: { path: string; content: string }): Promise<string> {
  const path = resolve(cwd, write.path);
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, write.content);
    return `wrote ${write.path}`;
  } catch (error) {
    return `write failed ${write.path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
  }
}

/** Whether the directives leave the answer at its default text (no `echo`, `bytes` or `chunks`). */
function isDefaultOutput(d: SimDirectives): boolean {
  return !d.echo && d.bytes === undefined && d.chunks <= 1;
}

async function noCrew(): Promise<CrewTools> {
  // The simulator's own failure (a test agent, not Crew): it ends up in its run's error.
  throw new Error(
    "#sim spawn needs Crew's MCP server, and one-shot mode has none (run the simulator over ACP)",
  );
}

/** Chunks and tool calls merged so the tool calls are spread evenly between the chunks. */
function buildTimeline(chunks: string[], tools: number): TimelineEvent[] {
  const keyed: Array<{ at: number; event: TimelineEvent }> = [
    ...chunks.map((text, i) => ({ at: i / chunks.length, event: { kind: 'chunk', text } as const })),
    ...Array.from({ length: tools }, (_, k) => ({
      at: (k + 0.5) / tools,
      event: { kind: 'tool', index: k + 1 } as const,
    })),
  ];
  // On a tie the tool call goes first, so one tool call lands between two chunks, not after them.
  const rank = (e: TimelineEvent) => (e.kind === 'tool' ? 0 : 1);
  return keyed.sort((a, b) => a.at - b.at || rank(a.event) - rank(b.event)).map((k) => k.event);
}

/** Waits until the wall-clock time `atMs`; false when the signal aborted first. */
function sleepUntil(atMs: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  const waitMs = atMs - Date.now();
  if (waitMs <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, waitMs);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
