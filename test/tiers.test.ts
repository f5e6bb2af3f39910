import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTEGRATION_TESTS, SLOW_TESTS } from './tiers.js';

/**
 * The tier rule, checked: a test file that starts a process, opens a socket or reaches into state its
 * process shares with other threads is integration (forks), and one that does none of these is unit
 * (threads). Read from each file's own source, so a helper that spawns must be named here when a test
 * starts using it.
 */

const REPO_ROOT = join(import.meta.dirname, '..');

const NEEDS_OWN_PROCESS = [
  /(?<![.\w])(spawn|spawnSync|execFile|execFileSync|execSync|fork)\(/,
  /(?<![.\w])(startDaemonProcess|startTestDaemon|startDaemon|startSim|startHookProcess|runHookProcess|startRedisServer|startCluster)\(/,
  /(?<![.\w])(startFakeCrew|spawnDetached|simAgent|simCommand|crewCommand|bundledCommand|runCrew|startFakeProvider)\(/,
  /new (AcpRunner|CommandRunner|Spawner)\(/,
  // test/workspace/git-rig.ts: a real git repository, agents as processes.
  /(?<![.\w])(makeRepo|makeWorkspaceGateway)\(/,
  /\.listen\(/,
  /'@hono\/node-server'|'node:net'|'node:http'/,
  // Closing descriptors by number, or measuring RSS, is about the whole process.
  /\/proc\/self\/fd|memoryUsage\(\)/,
];

function testFiles(dir = join(REPO_ROOT, 'test')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(REPO_ROOT, path)] : [];
  });
}

/** The two glob forms the tier lists use: a plain path, and a directory, then `**`, then `/*.test.ts`. */
function matches(glob: string, path: string): boolean {
  const pattern = glob
    .split('**/')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*'))
    .join('(?:.*/)?');
  return new RegExp(`^${pattern}$`).test(path);
}

function tierOf(path: string): 'slow' | 'integration' | 'unit' {
  if (SLOW_TESTS.some((glob) => matches(glob, path))) return 'slow';
  if (INTEGRATION_TESTS.some((glob) => matches(glob, path))) return 'integration';
  return 'unit';
}

function needsOwnProcess(path: string): boolean {
  const source = readFileSync(join(REPO_ROOT, path), 'utf8');
  return NEEDS_OWN_PROCESS.some((pattern) => pattern.test(source));
}

describe('test tiers', () => {
  const files = testFiles();
  /** This file's own patterns would match themselves. */
  const scanned = files.filter((file) => file !== 'test/tiers.test.ts');

  it('finds the test files', () => {
    expect(files).toContain('test/tiers.test.ts');
    expect(files.length).toBeGreaterThan(50);
  });

  it('puts every file that starts a process, opens a socket or reaches into its process in integration', () => {
    const misplaced = scanned.filter((file) => tierOf(file) === 'unit' && needsOwnProcess(file));
    expect(misplaced).toEqual([]);
  });

  it('keeps pure files out of integration', () => {
    const misplaced = scanned.filter((file) => tierOf(file) === 'integration' && !needsOwnProcess(file));
    expect(misplaced).toEqual([]);
  });

  it('names only files that exist, so a renamed file cannot drop out of its tier', () => {
    for (const glob of [...INTEGRATION_TESTS, ...SLOW_TESTS]) {
      expect(
        files.some((file) => matches(glob, file)),
        glob,
      ).toBe(true);
    }
  });

  it('reads both glob forms', () => {
    expect(matches('test/daemon/**/*.test.ts', 'test/daemon/daemon-mcp.test.ts')).toBe(true);
    expect(matches('test/daemon/**/*.test.ts', 'test/daemon/a/b.test.ts')).toBe(true);
    expect(matches('test/daemon/**/*.test.ts', 'test/daemonx/b.test.ts')).toBe(false);
    expect(matches('test/sim/once.test.ts', 'test/sim/onceXtest.ts')).toBe(false);
  });
});
