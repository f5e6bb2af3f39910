/**
 * How many CPUs a kernel CPU list names (`0-3,8,10-11` → 7), as in `Cpus_allowed_list` of
 * `/proc/<pid>/status`; `undefined` when the text is not a CPU list.
 */
export function countCpuList(list: string): number | undefined {
  const trimmed = list.trim();
  if (trimmed === '') return undefined;
  let count = 0;
  for (const part of trimmed.split(',')) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!match) return undefined;
    const first = Number(match[1]);
    const last = match[2] === undefined ? first : Number(match[2]);
    if (last < first) return undefined;
    count += last - first + 1;
  }
  return count;
}

/** `Cpus_allowed_list` from `/proc/self/status` text, counted. */
export function parseCpusAllowed(statusText: string | undefined): number | undefined {
  if (statusText === undefined) return undefined;
  const match = /^Cpus_allowed_list:\s*(\S+)\s*$/m.exec(statusText);
  return match ? countCpuList(match[1] as string) : undefined;
}
