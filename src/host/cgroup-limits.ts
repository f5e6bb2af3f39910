import { posix } from 'node:path';
import { type CgroupHierarchy, findCgroupHierarchies } from './cgroup-paths.js';
import { readHostText } from './host-fs.js';

/**
 * Memory headroom and CPU quota from every cgroup level above this process (v1 and v2). Each function
 * answers a number, `Infinity` when no level sets a limit, or `undefined` when a limit exists but its
 * companion files cannot be read or parsed (unknown: the cap then falls back to 3).
 */

/** cgroup v1 writes "no limit" as a huge page-aligned number (9223372036854771712); 2^62 and up is none. */
export const V1_NO_LIMIT_BYTES = 2 ** 62;

class UnknownReading extends Error {}

function readNumber(hostRoot: string, path: string): number {
  const text = readHostText(hostRoot, path)?.trim();
  if (text === undefined || !/^\d+$/.test(text)) throw new UnknownReading(path);
  return Number(text);
}

function statField(hostRoot: string, path: string, names: readonly string[]): number {
  const text = readHostText(hostRoot, path);
  if (text === undefined) throw new UnknownReading(path);
  for (const name of names) {
    const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
    if (match) return Number(match[1]);
  }
  throw new UnknownReading(`${path}: ${names.join('/')}`);
}

/** headroom = limit − (usage − inactive_file): page cache that can be dropped is not pressure. */
function levelHeadroomBytes(hostRoot: string, version: 1 | 2, dir: string): number {
  const file = (name: string) => posix.join(dir, name);
  if (version === 2) {
    const limitText = readHostText(hostRoot, file('memory.max'))?.trim();
    // No file: the root cgroup, or the memory controller is not enabled at this level.
    if (limitText === undefined || limitText === 'max') return Number.POSITIVE_INFINITY;
    if (!/^\d+$/.test(limitText)) throw new UnknownReading(file('memory.max'));
    const usage = readNumber(hostRoot, file('memory.current'));
    const inactive = statField(hostRoot, file('memory.stat'), ['inactive_file']);
    return Number(limitText) - Math.max(0, usage - inactive);
  }
  const limitText = readHostText(hostRoot, file('memory.limit_in_bytes'))?.trim();
  if (limitText === undefined) return Number.POSITIVE_INFINITY;
  if (!/^\d+$/.test(limitText)) throw new UnknownReading(file('memory.limit_in_bytes'));
  const limit = Number(limitText);
  if (limit >= V1_NO_LIMIT_BYTES) return Number.POSITIVE_INFINITY;
  const usage = readNumber(hostRoot, file('memory.usage_in_bytes'));
  // v1 usage is hierarchical, so the hierarchical total_ counter matches it when the kernel has one.
  const inactive = statField(hostRoot, file('memory.stat'), ['total_inactive_file', 'inactive_file']);
  return limit - Math.max(0, usage - inactive);
}

/** floor(quota / period) at one level; `Infinity` when the level sets no quota. */
function levelCpuLimit(hostRoot: string, version: 1 | 2, dir: string): number {
  if (version === 2) {
    const text = readHostText(hostRoot, posix.join(dir, 'cpu.max'))?.trim();
    if (text === undefined) return Number.POSITIVE_INFINITY;
    const match = /^(max|\d+)\s+(\d+)$/.exec(text);
    if (!match) throw new UnknownReading(posix.join(dir, 'cpu.max'));
    if (match[1] === 'max') return Number.POSITIVE_INFINITY;
    return quotaCpus(Number(match[1]), Number(match[2]));
  }
  const quotaText = readHostText(hostRoot, posix.join(dir, 'cpu.cfs_quota_us'))?.trim();
  if (quotaText === undefined || quotaText === '-1') return Number.POSITIVE_INFINITY;
  if (!/^\d+$/.test(quotaText)) throw new UnknownReading(posix.join(dir, 'cpu.cfs_quota_us'));
  return quotaCpus(Number(quotaText), readNumber(hostRoot, posix.join(dir, 'cpu.cfs_period_us')));
}

function quotaCpus(quotaUs: number, periodUs: number): number {
  if (periodUs <= 0) throw new UnknownReading('cpu period of 0');
  return Math.floor(quotaUs / periodUs);
}

function smallestOverLevels(
  hierarchies: CgroupHierarchy[] | undefined,
  read: (version: 1 | 2, dir: string) => number,
): number | undefined {
  if (hierarchies === undefined) return undefined;
  let smallest = Number.POSITIVE_INFINITY;
  try {
    for (const hierarchy of hierarchies) {
      for (const dir of hierarchy.levels) smallest = Math.min(smallest, read(hierarchy.version, dir));
    }
  } catch (error) {
    if (error instanceof UnknownReading) return undefined;
    throw error;
  }
  return smallest;
}

/** The smallest headroom (bytes) over every limited memory level, v1 and v2; may be negative. */
export function cgroupMemoryHeadroomBytes(hostRoot: string): number | undefined {
  return smallestOverLevels(findCgroupHierarchies(hostRoot, 'memory'), (version, dir) =>
    levelHeadroomBytes(hostRoot, version, dir),
  );
}

/** The smallest floor(quota/period) over every CPU level; weights and shares are ignored. */
export function cgroupCpuLimit(hostRoot: string): number | undefined {
  return smallestOverLevels(findCgroupHierarchies(hostRoot, 'cpu'), (version, dir) =>
    levelCpuLimit(hostRoot, version, dir),
  );
}
