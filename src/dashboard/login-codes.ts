import { randomBytes } from 'node:crypto';
import type { Clock } from '../core/clock.js';

/**
 * Single-use login codes for the dashboard (`crew dashboard`): each is valid for `ttlMs` and redeemed at
 * most once. At most `max` are outstanding; issuing one more forgets the oldest, so a loop that asks for
 * codes cannot grow this.
 */
export class LoginCodes {
  private readonly codes = new Map<string, number>();
  private readonly ttlMs: number;
  private readonly max: number;

  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    options: {
      /** @default 60000 */
      ttlMs?: number;
      /** @default 16 */
      max?: number;
    } = {},
  ) {
    this.ttlMs = options.ttlMs ?? 60_000;
    this.max = options.max ?? 16;
  }

  /** A fresh code and when it expires (epoch ms). */
  issue(): { code: string; expiresAt: number } {
    this.sweep();
    while (this.codes.size >= this.max) {
      const oldest = this.codes.keys().next().value;
      if (oldest === undefined) break;
      this.codes.delete(oldest);
    }
    const code = randomBytes(24).toString('base64url');
    const expiresAt = this.clock.now() + this.ttlMs;
    this.codes.set(code, expiresAt);
    return { code, expiresAt };
  }

  /** True once per issued, unexpired code; a second use, an expired or unknown code is false. */
  redeem(code: string): boolean {
    const expiresAt = this.codes.get(code);
    if (expiresAt === undefined) return false;
    this.codes.delete(code);
    return this.clock.now() < expiresAt;
  }

  get size(): number {
    return this.codes.size;
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [code, expiresAt] of this.codes) if (expiresAt <= now) this.codes.delete(code);
  }
}
