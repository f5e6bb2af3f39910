import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { freemem, loadavg } from 'node:os';
import { BYTES_PER_GIB } from '../core/cap.js';
import type { Clock } from '../core/clock.js';
import type { HostProbe } from './host-probe.js';
import { VmStatParser } from './vm-stat.js';

export interface DarwinProbeOptions {
  clock: Clock;
  availableParallelism: () => number;
  /** The reader's argv. Tests substitute a script printing `vm_stat` text. @default ['vm_stat', '1'] */
  command?: readonly string[];
  /** Seconds between `vm_stat` rows; a reading older than 3 intervals counts as stalled. @default 1 */
  intervalSecs?: number;
  /** @default os.freemem */
  freeBytes?: () => number;
}

/**
 * macOS: one long-lived `vm_stat` child (one process for the gateway's life, not one per reading), so
 * reads never block the event loop. Until its first row arrives, and whenever it has stalled or died,
 * memory reads `os.freemem()`, which counts only free pages and so errs low (the safe side).
 */
export function createDarwinProbe(options: DarwinProbeOptions): HostProbe {
  const intervalSecs = options.intervalSecs ?? 1;
  const [command, ...args] = options.command ?? ['vm_stat', String(intervalSecs)];
  const freeBytes = options.freeBytes ?? freemem;
  const parser = new VmStatParser();
  let latest: { bytes: number; atMs: number } | undefined;
  let child: ChildProcess | undefined;
  try {
    child = spawn(command as string, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    child.on('error', () => {
      child = undefined;
    });
    child.on('exit', () => {
      child = undefined;
    });
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      const bytes = parser.feed(chunk);
      if (bytes !== undefined) latest = { bytes, atMs: options.clock.now() };
    });
    // The reader must never keep the process alive on its own.
    child.unref();
    (child.stdout as Socket | null)?.unref();
  } catch {
    child = undefined;
  }
  const staleMs = 3 * intervalSecs * 1000;
  let closing: Promise<void> | undefined;
  const stopReader = (): Promise<void> => {
    const running = child;
    child = undefined;
    latest = undefined;
    // No pid: the spawn failed (its 'error' is still to come) and there is no process to wait for.
    if (running?.pid === undefined || running.exitCode !== null || running.signalCode !== null) {
      return Promise.resolve();
    }
    running.stdout?.removeAllListeners('data');
    const exited = new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.once('error', () => resolve()); // the kill itself failed: nothing left to wait for
    });
    running.kill();
    return exited;
  };
  return {
    memory() {
      if (latest !== undefined && options.clock.now() - latest.atMs <= staleMs) {
        return { availableGb: latest.bytes / BYTES_PER_GIB };
      }
      const bytes = freeBytes();
      return { availableGb: Number.isFinite(bytes) && bytes >= 0 ? bytes / BYTES_PER_GIB : undefined };
    },
    cpuCount: () => Math.max(1, options.availableParallelism()),
    loadAverage: () => loadavg() as [number, number, number],
    close() {
      // Every call, the first or a later one, resolves once the reader has exited.
      closing ??= stopReader();
      return closing;
    },
  };
}
