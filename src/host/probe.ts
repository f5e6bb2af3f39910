import { availableParallelism } from 'node:os';
import { realClock } from '../clock/real-clock.js';
import type { Clock } from '../core/clock.js';
import { hostRootFromEnv } from './host-fs.js';
import { createDarwinProbe } from './probe-darwin.js';
import { createLinuxProbe } from './probe-linux.js';
import { createWin32Probe } from './probe-win32.js';

/**
 * The HostProbe port: what the host can give runs right now. Every method answers from a fresh or
 * a cached reading without blocking; a reading that failed is `undefined` ("unknown"), never a guess and
 * never a configured value, and the cap then falls back to 3.
 *
 * Left out: per-process usage (the sampler), history, and any decision made from the numbers (the core).
 */
export interface HostProbe {
  /** Effective available memory now. */
  memory(): MemoryReading;
  /** CPUs this process may use (affinity and quota), at least 1; `undefined` when unknown. */
  cpuCount(): number | undefined;
  /** 1, 5 and 15 minute load averages; `undefined` where the platform has none. */
  loadAverage(): LoadAverage | undefined;
  /**
   * Stops any long-lived reader (macOS `vm_stat`) and resolves once it has exited; later calls answer
   * from the fallbacks.
   */
  close(): Promise<void>;
}

export type LoadAverage = [number, number, number];

export interface MemoryReading {
  /** Effective available memory in GiB, never below 0; `undefined` when it could not be read. */
  availableGb: number | undefined;
  /** Linux: `MemAvailable`, GiB. */
  memAvailableGb?: number;
  /** Linux: the tightest cgroup headroom, GiB; absent when no cgroup level sets a limit. */
  cgroupHeadroomGb?: number;
}

export interface HostProbeOptions {
  /** Root every host path is read under. @default process.env.CREW_HOST_ROOT ?? '/' */
  hostRoot?: string;
  /** @default process.platform */
  platform?: NodeJS.Platform;
  /** Dates the macOS reader's readings, to notice a stalled one. @default realClock */
  clock?: Clock;
  /** CPUs when `Cpus_allowed_list` cannot be read (tests pin it). @default os.availableParallelism */
  availableParallelism?: () => number;
}

/** The probe for this platform; Linux reads `/proc` and cgroups under the host root. */
export function createHostProbe(options: HostProbeOptions = {}): HostProbe {
  const platform = options.platform ?? process.platform;
  const parallelism = options.availableParallelism ?? availableParallelism;
  switch (platform) {
    case 'darwin':
      return createDarwinProbe({ clock: options.clock ?? realClock, availableParallelism: parallelism });
    case 'win32':
      return createWin32Probe({ availableParallelism: parallelism });
    default:
      // Linux, and the BSD-likes whose /proc (when mounted) reads the same; what they lack reads unknown.
      return createLinuxProbe({
        hostRoot: options.hostRoot ?? hostRootFromEnv(),
        availableParallelism: parallelism,
      });
  }
}
