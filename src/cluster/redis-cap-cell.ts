import type { CapCell } from './shared-provider-cap.js';

/** The one command the cell needs (an ioredis client has it; this file imports no Redis package). */
interface EvalClient {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/**
 * The value the rate-limit key holds during a hold, and the `max` of every worker's limiter: BullMQ
 * counts job starts in that key and stops starts while it holds at least `max`; no queue starts a
 * billion jobs within one limiter window, so only a hold reaches it (BullMQ's own `Queue.rateLimit`
 * works the same way, and needs a worker limiter to be honoured).
 */
export const HOLD_MARK = 1_000_000_000;
/** The worker limiter's window: the start counter it keeps expires after this. */
export const LIMITER_WINDOW_MS = 1000;

/**
 * One consistent look: the stored state, the active jobs, the cluster's time (Redis's clock, so every
 * gateway measures windows and holds on one clock).
 * KEYS[1] the cap state, KEYS[2] BullMQ's active list.
 */
const READ_SCRIPT = `
local t = redis.call('TIME')
return {redis.call('GET', KEYS[1]) or '', redis.call('LLEN', KEYS[2]), tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)}`;

/**
 * Compare-and-set of the state, applied to the queue in the same step: BullMQ's global concurrency (the
 * field `Queue.setGlobalConcurrency` sets), the hold (the rate-limit key `Queue.rateLimit` sets, never
 * shortened), and a marker that wakes idle workers when the cap rose.
 * KEYS[1] the cap state, KEYS[2] BullMQ's meta hash, KEYS[3] its rate-limit key, KEYS[4] its marker set.
 * ARGV[1] the expected state ('' = none), ARGV[2] the new state, ARGV[3] the cap, ARGV[4] the hold (ms),
 * ARGV[5] the hold mark. Answers 1 when written, 0 when the state had changed.
 */
const SWAP_SCRIPT = `
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
local before = tonumber(redis.call('HGET', KEYS[2], 'concurrency') or '0')
local cap = tonumber(ARGV[3])
redis.call('HSET', KEYS[2], 'concurrency', cap)
if cap > before then redis.call('ZADD', KEYS[4], 0, '0') end
local hold = tonumber(ARGV[4])
if hold > 0 then
  local held = tonumber(redis.call('GET', KEYS[3]) or '0') >= tonumber(ARGV[5])
  if not held or redis.call('PTTL', KEYS[3]) < hold then
    redis.call('SET', KEYS[3], ARGV[5], 'PX', hold)
  end
end
return 1`;

/** The cluster's provider cap in Redis: one key, beside the BullMQ queue whose concurrency it sets. */
export class RedisCapCell implements CapCell {
  constructor(
    private readonly client: EvalClient,
    private readonly keys: { state: string; active: string; meta: string; limiter: string; marker: string },
  ) {}

  async read(): Promise<{ raw: string | null; running: number; now: number }> {
    const [raw, running, now] = (await this.client.eval(
      READ_SCRIPT,
      2,
      this.keys.state,
      this.keys.active,
    )) as [string, number, number];
    return { raw: raw === '' ? null : raw, running, now };
  }

  async swap(
    expected: string | null,
    next: string,
    apply: { cap: number; holdMs: number },
  ): Promise<boolean> {
    const { state, meta, limiter, marker } = this.keys;
    const written = await this.client.eval(
      SWAP_SCRIPT,
      4,
      state,
      meta,
      limiter,
      marker,
      expected ?? '',
      next,
      apply.cap,
      Math.ceil(apply.holdMs),
      HOLD_MARK,
    );
    return written === 1;
  }
}
