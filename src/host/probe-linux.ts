import { BYTES_PER_GIB } from '../core/cap.js';
import { cgroupCpuLimit, cgroupMemoryHeadroomBytes } from './cgroup-limits.js';
import { parseCpusAllowed } from './cpu-list.js';
import { readHostText } from './host-fs.js';
import type { HostProbe, MemoryReading } from './host-probe.js';
import { parseLoadAverage, parseMemAvailableBytes } from './meminfo.js';

export interface LinuxProbeOptions {
  hostRoot: string;
  availableParallelism: () => number;
}

/**
 * Linux: `MemAvailable` clamped by the tightest cgroup headroom, CPUs from the affinity list clamped
 * by every CFS quota, and `/proc/loadavg`. Each call reads afresh (a few small in-memory files).
 */
export function createLinuxProbe(options: LinuxProbeOptions): HostProbe {
  const { hostRoot } = options;
  return {
    memory(): MemoryReading {
      const memAvailableBytes = parseMemAvailableBytes(readHostText(hostRoot, 'proc/meminfo'));
      const headroomBytes = cgroupMemoryHeadroomBytes(hostRoot);
      if (memAvailableBytes === undefined || headroomBytes === undefined) return { availableGb: undefined };
      const effectiveBytes = Math.max(0, Math.min(memAvailableBytes, headroomBytes));
      const reading: MemoryReading = {
        availableGb: effectiveBytes / BYTES_PER_GIB,
        memAvailableGb: memAvailableBytes / BYTES_PER_GIB,
      };
      if (Number.isFinite(headroomBytes))
        reading.cgroupHeadroomGb = Math.max(0, headroomBytes) / BYTES_PER_GIB;
      return reading;
    },
    cpuCount(): number | undefined {
      const allowed =
        parseCpusAllowed(readHostText(hostRoot, 'proc/self/status')) ?? options.availableParallelism();
      const quota = cgroupCpuLimit(hostRoot);
      if (quota === undefined) return undefined;
      return Math.max(1, Math.min(allowed, quota));
    },
    loadAverage() {
      return parseLoadAverage(readHostText(hostRoot, 'proc/loadavg'));
    },
    close: async () => {},
  };
}
