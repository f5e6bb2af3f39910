import type { ChildProcess } from 'node:child_process';

/**
 * What the spawner (spawner.ts) says to its helper process and hears back, whichever helper it is: the
 * native one (spawner-native.ts, C) or the Node one (spawner-script.ts). See spawner-script.ts for each
 * message's meaning.
 */

export type ToSpawner =
  | { t: 'env'; key: string; env: object }
  | { t: 'forget'; key: string }
  | {
      t: 'spawn';
      id: number;
      file: string;
      args: string[];
      check?: string | undefined;
      cwd: string;
      envKey: string;
      oomScoreAdj: number;
      join?: string;
      home?: string;
      wrapper?: string[];
    }
  | { t: 'drop'; id: number };

export type FromSpawner =
  | { t: 'started'; id: number; pid: number; startTime?: number }
  | { t: 'failed'; id: number; error: string }
  | { t: 'out'; id: number; fd: 1 | 2; data: Uint8Array }
  | { t: 'eof'; id: number; fd: 1 | 2 }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { t: 'stuck' };

/** One running helper process. */
export interface SpawnerLink {
  readonly kind: 'native' | 'node';
  readonly pid: number | undefined;
  /** Whether messages still reach it. */
  readonly connected: boolean;
  send(message: ToSpawner): void;
  /** Ends the helper and waits for it to exit (SIGKILL after 2 s). */
  close(): Promise<void>;
}

/** What a link reports: each message, and the helper's exit (once). */
export interface LinkEvents {
  onMessage(message: FromSpawner): void;
  onExit(): void;
}

/**
 * Asks `child` to end with `ask`, kills it after 2 s, and resolves once `gone` has (`settledAt`).
 */
export async function endChild(child: ChildProcess, gone: Promise<void>, ask: () => void): Promise<void> {
  ask();
  const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
  await gone;
  clearTimeout(timer);
}

/**
 * Resolves at `child`'s `event`; made as the child is, so one before anyone asks is not missed. A Node
 * helper's is `exit`: a child whose IPC channel its parent disconnected never emits `close`.
 */
export function settledAt(child: ChildProcess, event: 'exit' | 'close'): Promise<void> {
  return new Promise((resolve) => child.once(event, () => resolve()));
}
