import { parseEntry } from './cluster-status.js';

/**
 * Crew's failure detector in cluster mode (docs/decisions.md, dead-gateway detection in cluster mode): every
 * gateway reads the registry each refresh, and a gateway whose entry has not changed for longer than the
 * stalled interval, or that has no entry, is a suspect when it holds an active job. Its runs are reported
 * `lost` only where BullMQ agrees the gateway is gone (the job is still active, held by it, and its lock has
 * lapsed): `redis/lua/report-lost.lua`. BullMQ's own
 * stalled check stays as the backstop; both report through the same script, so a run is reported once.
 */

/**
 * The gateways alive by the registry (`entries`: gateway name → entry JSON): those whose entries are at most
 * `staleMs` old at `now`, and `self` (a gateway that reads the registry is alive). Every other holder of an
 * active job is a suspect, whether its entry is old or absent: a gateway that dies before its first entry
 * is published (within a refresh of joining, having taken jobs) is in no entry at all. Its runs are found
 * in BullMQ's active list (`redis/lua/lapsed-jobs.lua`), whose locks are the evidence, not in an entry:
 * an entry lags the jobs its gateway took by up to a refresh (more on a busy event loop).
 */
export function aliveOf(
  entries: Record<string, string>,
  self: string,
  now: number,
  staleMs: number,
): string[] {
  const alive = [self];
  for (const [gateway, raw] of Object.entries(entries)) {
    if (gateway !== self && now - (parseEntry(raw)?.at ?? 0) <= staleMs) alive.push(gateway);
  }
  return alive;
}

/**
 * Which registry entries list run `runId` at `now`: whether a fresh one does (a gateway publishing that it
 * executes or holds the run is alive, whatever BullMQ's lock says), and the gateways whose stale entries do
 * (the one presumed dead). BullMQ's `pb` cannot say: a job its stalled check put back is soon taken by some
 * worker (only to be failed), which writes its own name there.
 */
export function listingsOf(
  entries: Record<string, string>,
  runId: string,
  now: number,
  staleMs: number,
): { fresh: boolean; stale: string[] } {
  let fresh = false;
  const stale: string[] = [];
  for (const [gateway, raw] of Object.entries(entries)) {
    const entry = parseEntry(raw);
    if (!entry?.runs?.includes(runId)) continue;
    if (now - (entry.at ?? 0) > staleMs) stale.push(gateway);
    else fresh = true;
  }
  return { fresh, stale };
}

/**
 * Whether this gateway's own reads of the registry have been continuous long enough to trust an old entry
 * as a silent gateway. After a gap in them (Redis was away or paused, or this gateway's event loop stalled)
 * every entry may look old, and every lock may have lapsed, while their gateways are alive: they publish
 * again within one refresh once Redis answers, so the detector waits `settleMs` of reads before it judges.
 */
export class RegistryWatch {
  private lastReadAt: number | undefined;
  private since = 0;

  /**
   * @param maxGapMs reads further apart than this are a gap (half the stalled interval: a pause shorter than
   *   that cannot age a live gateway's entry past the interval, as it publishes every quarter interval).
   * @param settleMs continuous reads needed after a gap (or the first read) before old entries are judged.
   */
  constructor(
    private readonly maxGapMs: number,
    private readonly settleMs: number,
  ) {}

  /** A read of the registry finished at `now`: whether old entries in it may be judged silent. */
  read(now: number): boolean {
    if (this.lastReadAt === undefined || now - this.lastReadAt > this.maxGapMs) this.since = now;
    this.lastReadAt = now;
    return now - this.since >= this.settleMs;
  }
}
