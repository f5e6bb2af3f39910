import { availableParallelism } from 'node:os';
import { realClock } from '../clock/real-clock.js';
import type { Clock } from '../core/clock.js';
import { hostRootFromEnv } from './host-fs.js';
import type { HostProbe } from './host-probe.js';
import { createDarwinProbe } from './probe-darwin.js';
import { createLinuxProbe } from './probe-linux.js';
import { createWin32Probe } from './probe-win32.js';

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
