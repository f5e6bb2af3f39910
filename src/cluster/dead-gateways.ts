import { parseEntry } from './cluster-status.js';

/**
 * Crew's failure detector in cluster mode (docs/decisions.md, dead-gateway detection in cluster mode): every
 * gateway reads the registry each refresh, and a gateway whose entry has not changed for longer than the
 * stalled interval, or that has no entry, is a suspect when it holds an active job. Its runs are reported
 * `lost` only where BullMQ agrees the gateway is gone (the job is still active, held by it, and its lock has
 * lapsed): {@link REPORT_LOST_SCRIPT}. BullMQ's own
 * stalled check stays as the backstop; both report through the same script, so a run is reported once.
 */

/**
 * The gateways alive by the registry (`entries`: gateway name → entry JSON): those whose entries are at most
 * `staleMs` old at `now`, and `self` (a gateway that reads the registry is alive). Every other holder of an
 * active job is a suspect, whether its entry is old or absent: a gateway that dies before its first entry
 * is published (within a refresh of joining, having taken jobs) is in no entry at all. Its runs are found
 * in BullMQ's active list ({@link LAPSED_JOBS_SCRIPT}), whose locks are the evidence, not in an entry:
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
 * The active jobs held by a gateway not in ARGV[3…] (the gateways alive by the registry) whose locks have
 * lapsed and that nobody has reported lost yet: id, holder (BullMQ's `pb`) and data of each, flat. Read-only;
 * reporting one is {@link REPORT_LOST_SCRIPT}'s (which checks the same again, atomically). A job whose lock
 * is held has a live holder (BullMQ renews it every half lock), however old or absent the holder's entry.
 *
 * KEYS: 1 the active list. ARGV: 1 the job key prefix (`crew:<name>:`), 2 the claim prefix, 3… the alive.
 */
export const LAPSED_JOBS_SCRIPT = `
local alive = {}
for i = 3, #ARGV do alive[ARGV[i]] = true end
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local key = ARGV[1] .. id
  local holder = redis.call('HGET', key, 'pb')
  if holder and not alive[holder] and redis.call('EXISTS', key .. ':lock') == 0
    and redis.call('EXISTS', ARGV[2] .. id) == 0 then
    table.insert(out, id)
    table.insert(out, holder)
    table.insert(out, redis.call('HGET', key, 'data') or '')
  end
end
return out`;

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

/**
 * Reports a run `lost` to its origin once, whichever gateway finds it and however (the detector or BullMQ's
 * stalled check): claims the run (`SET NX PX`) and appends the `ended` message to the origin's outcome
 * stream in one step, so a claim is never left without its report. With a holder named (the detector),
 * only while the job is still active, held by that gateway (BullMQ's `pb`) and without its lock: a gateway
 * that still renews its locks is alive, however late its registry entry.
 *
 * KEYS: 1 the claim, 2 the origin's outcome stream, 3 the job's hash, 4 the job's lock, 5 the active list.
 * ARGV: 1 the holder ('' = no conditions), 2 who found it and how (the claim's value), 3 the claim's span (ms),
 * 4 the stream's approximate length bound, 5 the run id (job id), 6… the message's fields.
 * Returns 1 when it reported, 0 when the run was claimed already or the holder still holds it.
 */
export const REPORT_LOST_SCRIPT = `
if ARGV[1] ~= '' then
  if redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
  if redis.call('HGET', KEYS[3], 'pb') ~= ARGV[1] then return 0 end
  if not redis.call('LPOS', KEYS[5], ARGV[5]) then return 0 end
end
if not redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PX', ARGV[3]) then return 0 end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', unpack(ARGV, 6))
return 1`;
