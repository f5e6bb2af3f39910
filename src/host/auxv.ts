import { readHostBytes } from './host-fs.js';

/** The auxiliary-vector keys the sampler needs (elf.h). */
export const AT_PAGESZ = 6;
export const AT_CLKTCK = 17;

export interface ProcUnits {
  /** Bytes per page: `rss` in `/proc/<pid>/stat` counts these. */
  pageSizeBytes: number;
  /** Clock ticks per second: the unit of utime/stime/starttime. */
  clockTicksPerSec: number;
}

/** What nearly every Linux build uses; only when `/proc/self/auxv` cannot be read. */
export const DEFAULT_PROC_UNITS: ProcUnits = { pageSizeBytes: 4096, clockTicksPerSec: 100 };

/**
 * Parses `/proc/self/auxv` as 64-bit little-endian (key, value) pairs up to AT_NULL, so the units come
 * from the kernel instead of a `getconf` subprocess. Missing keys take the defaults.
 */
export function parseAuxv(bytes: Buffer): ProcUnits {
  const units = { ...DEFAULT_PROC_UNITS };
  for (let offset = 0; offset + 16 <= bytes.length; offset += 16) {
    const key = bytes.readBigUInt64LE(offset);
    const value = Number(bytes.readBigUInt64LE(offset + 8));
    if (key === 0n) break;
    if (key === BigInt(AT_PAGESZ) && value > 0) units.pageSizeBytes = value;
    if (key === BigInt(AT_CLKTCK) && value > 0) units.clockTicksPerSec = value;
  }
  return units;
}

/** The units of `/proc` under the host root. */
export function readProcUnits(hostRoot: string): ProcUnits {
  const bytes = readHostBytes(hostRoot, 'proc/self/auxv');
  return bytes === undefined ? { ...DEFAULT_PROC_UNITS } : parseAuxv(bytes);
}
