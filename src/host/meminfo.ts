/** `MemAvailable` from `/proc/meminfo` text, in bytes; `undefined` when absent or malformed. */
export function parseMemAvailableBytes(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = /^MemAvailable:\s+(\d+)\s*kB\s*$/m.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 1024;
}

/** The 1, 5 and 15 minute load averages from `/proc/loadavg` text. */
export function parseLoadAverage(text: string | undefined): [number, number, number] | undefined {
  if (text === undefined) return undefined;
  const parts = text.trim().split(/\s+/).slice(0, 3).map(Number);
  if (parts.length < 3 || parts.some((n) => !Number.isFinite(n) || n < 0)) return undefined;
  return parts as [number, number, number];
}
