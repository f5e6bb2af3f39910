import type { Clock, TimerHandle } from '../core/clock.js';

/**
 * The open MCP sessions of the HTTP endpoint, bounded (issue 12 §6): a client that never closes its
 * session would otherwise keep its server and transport (~47 KB) for the daemon's whole life.
 *
 * - A session nobody used for `idleMs` is closed (`mcp.session_idle_secs`). "Used" means a request
 *   began or ended; a session with a request still open (a blocking tool call, a notification stream)
 *   is in use and never idles out.
 * - Beyond `max` sessions (`mcp.max_sessions`) the least recently used one is closed, an idle one
 *   before any in use; the bound holds even when every session is in use.
 * - Closing a transport is how a session ends: its `onclose` detaches its sink. Undelivered events
 *   belong to the parent key, not to the session, so a parent that initializes again gets them.
 *
 * The map's insertion order is the recency order (a touch moves an entry to the end), so the next
 * session to idle out is always the first, and one timer serves them all.
 */

export interface ClosableTransport {
  close(): Promise<void>;
}

export interface McpSessionsOptions {
  clock: Clock;
  /** Idle time after which a session is closed. @default 3_600_000 */
  idleMs: number;
  /** Sessions kept at most. @default 512 */
  max: number;
}

export interface McpSessionStats {
  open: number;
  /** Closed for idling since start. */
  expired: number;
  /** Closed to make room since start. */
  evicted: number;
}

interface Entry<T> {
  transport: T;
  usedAt: number;
  /** Requests open on it now. */
  active: number;
}

export class McpSessions<T extends ClosableTransport> {
  private readonly entries = new Map<string, Entry<T>>();
  private timer: TimerHandle | undefined;
  private timerAt: number | undefined;
  private expired = 0;
  private evicted = 0;
  private closed = false;

  constructor(private readonly options: McpSessionsOptions) {}

  get size(): number {
    return this.entries.size;
  }

  /** A new session; the least recently used one is closed when this one goes past the bound. */
  add(id: string, transport: T): void {
    if (this.closed) {
      void transport.close().catch(() => undefined);
      return;
    }
    this.entries.delete(id);
    this.entries.set(id, { transport, usedAt: this.options.clock.now(), active: 0 });
    while (this.entries.size > this.options.max) this.evictOne(id);
    this.arm();
  }

  /** The session's transport, marked used now; undefined when there is no such session (any more). */
  get(id: string): T | undefined {
    const entry = this.touch(id);
    return entry?.transport;
  }

  /** A request on the session begins: it is in use until {@link McpSessions.end}. */
  begin(id: string): T | undefined {
    const entry = this.touch(id);
    if (entry) entry.active++;
    return entry?.transport;
  }

  /** A request on the session ended (its response, or its stream, is done). */
  end(id: string): void {
    const entry = this.touch(id);
    if (entry && entry.active > 0) entry.active--;
  }

  /** The session ended by itself (the client deleted it, or its transport closed): forget it. */
  delete(id: string): void {
    this.entries.delete(id);
    if (this.entries.size === 0) this.disarm();
  }

  stats(): McpSessionStats {
    return { open: this.entries.size, expired: this.expired, evicted: this.evicted };
  }

  /** Closes every session; later additions are closed at once. */
  async close(): Promise<void> {
    this.closed = true;
    this.disarm();
    const transports = [...this.entries.values()].map((entry) => entry.transport);
    this.entries.clear();
    await Promise.all(transports.map((t) => t.close().catch(() => undefined)));
  }

  private touch(id: string): Entry<T> | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    entry.usedAt = this.options.clock.now();
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry;
  }

  /** Closes the least recently used session other than `keep`, preferring one with no request open. */
  private evictOne(keep: string): void {
    let victim: string | undefined;
    let busy: string | undefined;
    for (const [id, entry] of this.entries) {
      if (id === keep) continue;
      if (entry.active === 0) {
        victim = id;
        break;
      }
      busy ??= id;
    }
    victim ??= busy;
    if (victim === undefined) return;
    this.evicted++;
    this.drop(victim);
  }

  private drop(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    void entry.transport.close().catch(() => undefined);
  }

  private sweep(): void {
    this.timer = undefined;
    this.timerAt = undefined;
    const now = this.options.clock.now();
    for (;;) {
      const first = this.entries.entries().next().value;
      if (!first) break;
      const [id, entry] = first;
      if (entry.usedAt + this.options.idleMs > now) break;
      if (entry.active > 0) {
        // In use all along: it counts as used now.
        this.touch(id);
        continue;
      }
      this.expired++;
      this.drop(id);
    }
    this.arm();
  }

  /** One timer, at the deadline of the least recently used session. */
  private arm(): void {
    if (this.closed) return;
    const first = this.entries.values().next().value;
    if (!first) {
      this.disarm();
      return;
    }
    const at = first.usedAt + this.options.idleMs;
    if (this.timer !== undefined && this.timerAt !== undefined && this.timerAt <= at) return;
    this.disarm();
    this.timerAt = at;
    this.timer = this.options.clock.setTimer(() => this.sweep(), Math.max(0, at - this.options.clock.now()));
  }

  private disarm(): void {
    if (this.timer !== undefined) this.options.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.timerAt = undefined;
  }
}
