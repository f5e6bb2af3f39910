/**
 * One line of `/proc/<pid>/stat`. The command name sits in parentheses and may itself hold spaces and
 * parentheses (`a b)`, `(x)`), so the line is split after the last `)`; field numbers follow proc(5).
 */
export interface ProcStat {
  pid: number;
  /** The command name, parentheses stripped. */
  comm: string;
  /** R, S, D, Z (zombie), T, t, X, I … */
  state: string;
  ppid: number;
  pgrp: number;
  /** Session id: the pid of the session leader. */
  session: number;
  /** CPU time of the process, clock ticks. */
  utime: number;
  stime: number;
  /** CPU time of waited-for children, clock ticks. */
  cutime: number;
  cstime: number;
  /** Start time after boot, clock ticks: with the pid, the process's identity. */
  starttime: number;
  /** Resident set size, pages. */
  rssPages: number;
}

/** Parses a stat line; `undefined` when it is not one. */
export function parseProcStat(line: string): ProcStat | undefined {
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const pid = Number(line.slice(0, open).trim());
  // rest[0] is field 3 (state); rest[i] is field i + 3.
  // The kernel separates fields with single spaces.
  const rest = line
    .slice(close + 2)
    .trimEnd()
    .split(' ');
  if (rest.length < 22) return undefined;
  const num = (index: number) => Number(rest[index]);
  const stat: ProcStat = {
    pid,
    comm: line.slice(open + 1, close),
    state: rest[0] as string,
    ppid: num(1),
    pgrp: num(2),
    session: num(3),
    utime: num(11),
    stime: num(12),
    cutime: num(13),
    cstime: num(14),
    starttime: num(19),
    rssPages: num(21),
  };
  const numbers = [pid, stat.ppid, stat.session, stat.utime, stat.stime, stat.cutime, stat.cstime];
  if (![...numbers, stat.starttime, stat.rssPages].every(Number.isFinite)) return undefined;
  return stat;
}
