import { cleanClientName } from '../core/client-name.js';

/**
 * The names MCP clients give themselves (`clientInfo.name` in `initialize`, e.g. "claude-code"), kept
 * per parent key for the sessions that are their own parent (`mcp:<session id>`, no `X-Crew-Parent`),
 * so people read "claude-code (session bc5b9186)" instead of a bare id. Bounded: at most `max` names,
 * the oldest forgotten first, and each is dropped with its session.
 */
export class ClientNames {
  private readonly names = new Map<string, string>();

  constructor(private readonly max = 1024) {}

  get size(): number {
    return this.names.size;
  }

  /** Records a parent's client name (hostile text: cleaned and cut, see `cleanClientName`). */
  set(parent: string, raw: unknown): void {
    const name = cleanClientName(raw);
    this.names.delete(parent);
    if (name === undefined) return;
    while (this.names.size >= this.max) {
      const oldest = this.names.keys().next().value;
      if (oldest === undefined) break;
      this.names.delete(oldest);
    }
    this.names.set(parent, name);
  }

  get(parent: string): string | undefined {
    return this.names.get(parent);
  }

  delete(parent: string): void {
    this.names.delete(parent);
  }
}
