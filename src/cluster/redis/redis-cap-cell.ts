import type { CapCell } from '../shared-provider-cap.js';
import { luaScript } from './lua-scripts.js';

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
 * The cluster's provider cap in Redis: one key, beside the BullMQ queue whose concurrency it sets (its
 * scripts: `lua/cap-read.lua`, `lua/cap-swap.lua`).
 */
export class RedisCapCell implements CapCell {
  constructor(
    private readonly client: EvalClient,
    private readonly keys: { state: string; active: string; meta: string; limiter: string; marker: string },
  ) {}

  async read(): Promise<{ raw: string | null; running: number; now: number }> {
    const [raw, running, now] = (await this.client.eval(
      luaScript('cap-read'),
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
      luaScript('cap-swap'),
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
