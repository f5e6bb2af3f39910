import { readFileSync, writeFileSync } from 'node:fs';

/**
 * The kernel's out-of-memory killer, when a host runs out despite the gates, ends the process with the
 * highest score: roughly its share of memory, plus its `oom_score_adj` (−1000..1000). A run's agent is
 * often smaller than the parent agent beside it or than Crew itself, so left alone the kernel may end the
 * parent, or the daemon and every run with it. Raising the adjustment of each process Crew starts for a
 * run (`host.oom_score_adj`) makes the kernel end a sub-agent first; Crew then reports that run ended and
 * the parent lives. What the run's process starts after this inherits the value.
 *
 * Set right after the spawn, before Crew yields to the event loop: an agent CLI takes far longer to boot
 * than that before it starts children of its own. Linux only (`/proc/<pid>/oom_score_adj`); elsewhere, or
 * when the process is already gone, nothing happens. Only raised, never lowered: lowering needs privilege,
 * and a process that already inherited more from Crew's own setting keeps it.
 *
 * @returns the value the process has afterwards, or undefined when it could not be read.
 */
export function raiseOomScoreAdj(pid: number, adj: number): number | undefined {
  const file = `/proc/${pid}/oom_score_adj`;
  let current: number;
  try {
    current = Number(readFileSync(file, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!(adj > current)) return current;
  try {
    writeFileSync(file, String(Math.min(1000, Math.round(adj))));
    return Number(readFileSync(file, 'utf8').trim());
  } catch {
    // Gone since the read, or a kernel that refuses: the run goes on with the score it has.
    return current;
  }
}
