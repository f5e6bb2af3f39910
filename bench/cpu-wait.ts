/**
 * Time this thread spent waiting for a CPU (runnable, but another process had it), from Linux's
 * `/proc/thread-self/schedstat`. On a shared machine the wall clock is on-CPU time + this wait + time
 * blocked (I/O, sleeps); taking the wait out gives what the same work takes on an idle CPU, which is what
 * a wall-clock goal means. Undefined where the file does not exist (not Linux).
 */
import { readFileSync } from 'node:fs';

export function cpuWaitMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/thread-self/schedstat', 'utf8').trim().split(' ');
    const waitNs = Number(fields[1]);
    return Number.isFinite(waitNs) ? waitNs / 1e6 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU time of this thread alone (the first field of the same file), in ms: the process's CPU time less
 * what V8's helper threads (parallel and concurrent collection, compilation) used beside it.
 */
export function threadCpuMs(): number | undefined {
  try {
    const onCpuNs = Number(readFileSync('/proc/thread-self/schedstat', 'utf8').trim().split(' ')[0]);
    return Number.isFinite(onCpuNs) ? onCpuNs / 1e6 : undefined;
  } catch {
    return undefined;
  }
}
