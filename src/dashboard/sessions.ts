import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock.js';

/** One logged-in browser: the cookie's id and the token its page sends with every action (CSRF). */
export interface DashboardSession {
  id: string;
  csrf: string;
  lastSeenAt: number;
}

/**
 * Dashboard sessions, made when a login code is redeemed. A session idle for `idleMs` is gone; at most
 * `max` live at once (the least recently seen is dropped first), so logins cannot grow this.
 */
export class DashboardSessions {
  private readonly sessions = new Map<string, DashboardSession>();
  private readonly idleMs: number;
  private readonly max: number;

  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    options: {
      /** @default 43200000 (12 h) */
      idleMs?: number;
      /** @default 32 */
      max?: number;
    } = {},
  ) {
    this.idleMs = options.idleMs ?? 12 * 3600_000;
    this.max = options.max ?? 32;
  }

  create(): DashboardSession {
    while (this.sessions.size >= this.max) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.sessions.delete(oldest);
    }
    const session = {
      id: randomBytes(32).toString('base64url'),
      csrf: randomBytes(24).toString('base64url'),
      lastSeenAt: this.clock.now(),
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id (seen now: it moves to the back of the eviction order). */
  resolve(id: string | undefined): DashboardSession | undefined {
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const now = this.clock.now();
    this.sessions.delete(id);
    if (now - session.lastSeenAt >= this.idleMs) return undefined;
    session.lastSeenAt = now;
    this.sessions.set(id, session);
    return session;
  }

  end(id: string): void {
    this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
  }
}

/** Whether a request's CSRF header matches its session's token (constant time). */
export function isCsrfValid(session: DashboardSession, header: string | undefined): boolean {
  if (!header) return false;
  const a = Buffer.from(header);
  const b = Buffer.from(session.csrf);
  return a.length === b.length && timingSafeEqual(a, b);
}
