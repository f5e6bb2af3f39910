import { posix } from 'node:path';
import { readHostText } from './host-fs.js';

/**
 * Where this process's cgroups live: `/proc/self/cgroup` names each hierarchy's path, and
 * `/proc/self/mountinfo` says where (and from which cgroup root) that hierarchy is mounted. A limit
 * can sit on any ancestor, so a hierarchy yields every level from the process's cgroup up to the mount
 * root, leaf first.
 */

export type CgroupVersion = 1 | 2;

export interface CgroupHierarchy {
  version: CgroupVersion;
  /** Directories relative to the host root, leaf first, ending at the mount point. */
  levels: string[];
}

interface CgroupMembership {
  version: CgroupVersion;
  controllers: string[];
  path: string;
}

interface CgroupMount {
  version: CgroupVersion;
  /** The cgroup path mounted here (not `/` in a container without a cgroup namespace). */
  root: string;
  mountPoint: string;
  /** v1: the controllers of this hierarchy, from the super options. */
  controllers: string[];
}

/** Parses `/proc/self/cgroup`: `hierarchy-id:controller,list:/path`; v2 is `0::/path`. */
export function parseProcCgroup(text: string): CgroupMembership[] {
  const found: CgroupMembership[] = [];
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const id = line.slice(0, first);
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1);
    if (!path.startsWith('/')) continue;
    if (id === '0' && controllers === '') found.push({ version: 2, controllers: [], path });
    else found.push({ version: 1, controllers: controllers.split(',').filter(Boolean), path });
  }
  return found;
}

/** mountinfo escapes space, tab, newline and backslash as `\ooo`. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** Parses the cgroup mounts out of `/proc/self/mountinfo`. */
export function parseCgroupMounts(text: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-');
    if (dash < 6) continue;
    const fsType = fields[dash + 1];
    if (fsType !== 'cgroup' && fsType !== 'cgroup2') continue;
    const superOptions = (fields[dash + 3] ?? '').split(',');
    mounts.push({
      version: fsType === 'cgroup2' ? 2 : 1,
      root: unescapeMountField(fields[3] as string),
      mountPoint: unescapeMountField(fields[4] as string),
      controllers: fsType === 'cgroup' ? superOptions : [],
    });
  }
  return mounts;
}

/** `child` relative to `parent` when it is `parent` or below it, else `undefined`. */
function below(parent: string, child: string): string | undefined {
  if (parent === '/') return child;
  if (child === parent) return '/';
  return child.startsWith(`${parent}/`) ? child.slice(parent.length) : undefined;
}

/** Leaf first: `dir`, its parent, … up to and including `top`. */
function levelsUpTo(dir: string, top: string): string[] {
  const levels: string[] = [];
  let current = dir;
  // A path outside `top` stops at `/`: the walk is bounded either way.
  for (;;) {
    levels.push(current);
    if (current === top || current === '/' || current === '.') break;
    current = posix.dirname(current);
  }
  return levels;
}

function placeMembership(membership: CgroupMembership, mounts: CgroupMount[]): CgroupHierarchy | undefined {
  let fallback: CgroupMount | undefined;
  for (const mount of mounts) {
    if (fallback === undefined) fallback = mount;
    const relative = below(mount.root, membership.path);
    if (relative === undefined) continue;
    const dir = posix.join(mount.mountPoint, relative).replace(/(.)\/+$/, '$1');
    return { version: membership.version, levels: levelsUpTo(dir, mount.mountPoint) };
  }
  // The path is outside every mount's root (a namespace we cannot see through): the mount point is
  // the deepest level this process can read.
  return fallback ? { version: membership.version, levels: [fallback.mountPoint] } : undefined;
}

/**
 * The cgroup hierarchies that can hold `controller` (`memory` or `cpu`) for this process: the v1
 * hierarchy carrying that controller and the v2 unified hierarchy. A hybrid host has both; a level
 * where the controller is not enabled simply has no limit file. `undefined` when `/proc/self/cgroup`
 * cannot be read; an empty list when the process is in no cgroup hierarchy that is mounted.
 */
export function findCgroupHierarchies(hostRoot: string, controller: string): CgroupHierarchy[] | undefined {
  const cgroupText = readHostText(hostRoot, 'proc/self/cgroup');
  if (cgroupText === undefined) return undefined;
  const mounts = parseCgroupMounts(readHostText(hostRoot, 'proc/self/mountinfo') ?? '');
  const hierarchies: CgroupHierarchy[] = [];
  for (const membership of parseProcCgroup(cgroupText)) {
    const candidates =
      membership.version === 2
        ? mounts.filter((m) => m.version === 2)
        : membership.controllers.includes(controller)
          ? mounts.filter((m) => m.version === 1 && m.controllers.includes(controller))
          : [];
    const placed = placeMembership(membership, candidates);
    if (placed) hierarchies.push(placed);
  }
  return hierarchies;
}
