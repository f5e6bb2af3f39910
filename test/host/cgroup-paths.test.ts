import { describe, expect, it } from 'vitest';
import { findCgroupHierarchies, parseCgroupMounts, parseProcCgroup } from '../../src/host/cgroup-paths.js';
import { fixtureRoot } from './fixture-root.js';

describe('parseProcCgroup', () => {
  it('tells v2 (0::) from v1 controller lists', () => {
    expect(parseProcCgroup('4:memory:/a\n3:cpu,cpuacct:/a/b\n0::/c d\n\n')).toEqual([
      { version: 1, controllers: ['memory'], path: '/a' },
      { version: 1, controllers: ['cpu', 'cpuacct'], path: '/a/b' },
      { version: 2, controllers: [], path: '/c d' },
    ]);
  });
});

describe('parseCgroupMounts', () => {
  it('reads past optional fields and unescapes octal', () => {
    const text =
      '40 31 0:37 / /sys/fs/cgroup/my\\040mount rw,relatime shared:1 master:2 - cgroup cgroup rw,cpu,cpuacct\n' +
      '30 23 0:26 /docker/x /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n' +
      '22 27 0:21 / /proc rw,relatime - proc proc rw\n';
    expect(parseCgroupMounts(text)).toEqual([
      { version: 1, root: '/', mountPoint: '/sys/fs/cgroup/my mount', controllers: ['rw', 'cpu', 'cpuacct'] },
      { version: 2, root: '/docker/x', mountPoint: '/sys/fs/cgroup', controllers: [] },
    ]);
  });
});

describe('findCgroupHierarchies', () => {
  it('walks from the leaf up to the mount root', () => {
    expect(findCgroupHierarchies(fixtureRoot('v2-parent-tighter'), 'memory')).toEqual([
      {
        version: 2,
        levels: [
          '/sys/fs/cgroup/crew.slice/agents.slice/run.scope',
          '/sys/fs/cgroup/crew.slice/agents.slice',
          '/sys/fs/cgroup/crew.slice',
          '/sys/fs/cgroup',
        ],
      },
    ]);
  });

  it('finds the v1 memory hierarchy and the unified one on a hybrid host', () => {
    expect(findCgroupHierarchies(fixtureRoot('hybrid'), 'memory')).toEqual([
      {
        version: 1,
        levels: [
          '/sys/fs/cgroup/memory/user.slice/x.scope',
          '/sys/fs/cgroup/memory/user.slice',
          '/sys/fs/cgroup/memory',
        ],
      },
      {
        version: 2,
        levels: [
          '/sys/fs/cgroup/unified/user.slice/x.scope',
          '/sys/fs/cgroup/unified/user.slice',
          '/sys/fs/cgroup/unified',
        ],
      },
    ]);
  });

  it('maps a host path through the mount root when there is no cgroup namespace', () => {
    expect(findCgroupHierarchies(fixtureRoot('no-cgroupns'), 'memory')).toEqual([
      { version: 2, levels: ['/sys/fs/cgroup'] },
    ]);
  });
});
