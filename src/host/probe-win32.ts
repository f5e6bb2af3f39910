import { freemem } from 'node:os';
import { BYTES_PER_GIB } from '../core/cap.js';
import type { HostProbe } from './host-probe.js';

export interface Win32ProbeOptions {
  availableParallelism: () => number;
  /** @default os.freemem */
  freeBytes?: () => number;
}

/**
 * Windows: `os.freemem()` (the available physical memory GlobalMemoryStatusEx reports) and no cgroup
 * clamp. Windows has no load average: Node reports zeros, which would read as "idle", so it is unknown.
 */
export function createWin32Probe(options: Win32ProbeOptions): HostProbe {
  const freeBytes = options.freeBytes ?? freemem;
  return {
    memory() {
      const bytes = freeBytes();
      return { availableGb: Number.isFinite(bytes) && bytes >= 0 ? bytes / BYTES_PER_GIB : undefined };
    },
    cpuCount: () => Math.max(1, options.availableParallelism()),
    loadAverage: () => undefined,
    close: async () => {},
  };
}
