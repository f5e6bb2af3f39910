/**
 * The HostProbe port: what the host can give runs right now (DESIGN §5).
 *
 * Contract (checked by `test/host/host-probe-conformance.ts` for every platform's probe):
 * - Every method answers from a fresh or a cached reading without blocking and never throws.
 * - A reading that failed is `undefined` ("unknown"): never a guess and never a configured value. The cap
 *   then falls back to 3 and the memory gate lets spawns through.
 * - Memory is in GiB and never below 0; the CPU count is a whole number, at least 1.
 * - `close()` may be called any number of times; each call resolves once long-lived readers have exited,
 *   and the probe goes on answering from its fallbacks.
 *
 * Left out: per-process usage (the sampler), history, and any decision made from the numbers (the core).
 * Which probe a platform gets is `create-host-probe.ts`.
 */
export interface HostProbe {
  /** Effective available memory now. */
  memory(): MemoryReading;
  /** CPUs this process may use (affinity and quota), at least 1; `undefined` when unknown. */
  cpuCount(): number | undefined;
  /** 1, 5 and 15 minute load averages; `undefined` where the platform has none. */
  loadAverage(): LoadAverage | undefined;
  /** Stops any long-lived reader (macOS `vm_stat`) and resolves once it has exited. */
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
