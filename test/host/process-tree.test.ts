import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAuxv, readProcUnits } from '../../src/host/auxv.js';
import { parseProcStat } from '../../src/host/proc-stat.js';
import {
  listTree,
  type ProcEntry,
  readProcStat,
  readProcTable,
  treeOf,
} from '../../src/host/process-tree.js';
import { auxvBytes, copyFixture, fixtureRoot, writeAuxv16k250 } from './fixture-root.js';

const TREE = fixtureRoot('proc-tree');

describe('parseProcStat', () => {
  it('splits after the last ) so a comm of `a b)` parses', () => {
    expect(readProcStat(TREE, 101)).toEqual({
      pid: 101,
      comm: 'a b)',
      state: 'S',
      ppid: 100,
      pgrp: 100,
      session: 100,
      utime: 100,
      stime: 50,
      cutime: 0,
      cstime: 0,
      starttime: 5010,
      rssPages: 2000,
    });
  });

  it('parses a comm of `(x)`', () => {
    expect(readProcStat(TREE, 102)).toMatchObject({
      pid: 102,
      comm: '(x)',
      state: 'R',
      ppid: 101,
      utime: 40,
    });
  });

  it('reads a zombie', () => {
    expect(readProcStat(TREE, 103)).toMatchObject({ state: 'Z', rssPages: 0, utime: 30, stime: 20 });
  });

  it('answers undefined for a gone process and for garbage', () => {
    expect(readProcStat(TREE, 999)).toBeUndefined();
    expect(parseProcStat('not a stat line')).toBeUndefined();
    expect(parseProcStat('12 (short) S 1 2 3')).toBeUndefined();
  });

  it('parses this process from the real /proc', () => {
    const stat = readProcStat('/', process.pid);
    expect(stat).toMatchObject({ pid: process.pid, ppid: process.ppid });
    expect(stat?.rssPages).toBeGreaterThan(0);
  });
});

describe('auxv', () => {
  it('reads 16 KiB pages and 250 ticks per second from a binary auxv', () => {
    const copy = copyFixture('proc-tree');
    try {
      writeAuxv16k250(copy.root);
      expect(readProcUnits(copy.root)).toEqual({ pageSizeBytes: 16384, clockTicksPerSec: 250 });
    } finally {
      copy.dispose();
    }
  });

  it('stops at AT_NULL and keeps the defaults for missing keys', () => {
    const bytes = Buffer.concat([auxvBytes([[6, 65536]]), auxvBytes([[17, 1000]])]);
    expect(parseAuxv(bytes)).toEqual({ pageSizeBytes: 65536, clockTicksPerSec: 100 });
  });

  it('matches getconf on this machine', () => {
    expect(readProcUnits('/')).toEqual({ pageSizeBytes: 4096, clockTicksPerSec: 100 });
  });
});

function table(
  entries: Array<Partial<ProcEntry> & { pid: number; ppid: number; session: number }>,
): Map<number, ProcEntry> {
  return new Map(
    entries.map((e) => [e.pid, { startTime: 1000 + e.pid, rssBytes: 0, cpuSecs: 0, state: 'S', ...e }]),
  );
}

describe('treeOf / listTree', () => {
  it('is the ppid walk ∪ the root session, zombies included, the unrelated excluded', () => {
    expect(listTree(TREE, 100, 5000).sort((a, b) => a - b)).toEqual([100, 101, 102, 103, 104]);
  });

  it('puts the root first', () => {
    expect(listTree(TREE, 100)[0]).toBe(100);
  });

  it('is empty when the root pid was reused (start time differs)', () => {
    expect(listTree(TREE, 100, 4999)).toEqual([]);
  });

  it('finds the survivors of a root that exited, by its session', () => {
    const t = table([
      { pid: 300, ppid: 1, session: 250, startTime: 2000 },
      { pid: 301, ppid: 300, session: 250, startTime: 2001 },
      { pid: 400, ppid: 1, session: 400 },
    ]);
    expect(treeOf(t, 250, 1990)).toEqual([300, 301]);
    // Processes older than the root cannot be its descendants.
    expect(treeOf(t, 250, 2002)).toEqual([]);
  });

  it('does not pull in the session when the root does not lead it', () => {
    const t = table([
      { pid: 50, ppid: 1, session: 50 },
      { pid: 60, ppid: 50, session: 50 },
      { pid: 61, ppid: 60, session: 50 },
      { pid: 70, ppid: 50, session: 50 },
    ]);
    expect(treeOf(t, 60)).toEqual([60, 61]);
  });

  it('follows descendants of session members that called setsid', () => {
    const t = table([
      { pid: 10, ppid: 1, session: 10 },
      { pid: 11, ppid: 1, session: 10 },
      { pid: 12, ppid: 11, session: 12 },
    ]);
    expect(treeOf(t, 10)).toEqual([10, 11, 12]);
  });

  it('never roots a tree at pid 0 or 1', () => {
    expect(listTree(TREE, 1)).toEqual([]);
    expect(listTree(TREE, 0)).toEqual([]);
  });

  it('reads a whole /proc table in one pass with the auxv units', () => {
    const copy = copyFixture('proc-tree');
    try {
      writeAuxv16k250(copy.root);
      writeFileSync(join(copy.root, 'proc/105'), 'not a directory');
      const procs = readProcTable(copy.root, readProcUnits(copy.root));
      expect([...procs.keys()].sort((a, b) => a - b)).toEqual([1, 100, 101, 102, 103, 104, 200, 201]);
      expect(procs.get(100)).toEqual({
        pid: 100,
        ppid: 1,
        session: 100,
        startTime: 5000,
        rssBytes: 1000 * 16384,
        cpuSecs: (500 + 250) / 250,
        state: 'S',
      });
    } finally {
      copy.dispose();
    }
  });
});
