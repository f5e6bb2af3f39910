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

/** The longest client name kept, in characters (a name is a label, not a message). */
export const CLIENT_NAME_MAX = 64;

/**
 * A client name fit to show: a string, control and format characters (terminal escapes, bidi overrides,
 * zero-width ones) removed, white space collapsed, at most `CLIENT_NAME_MAX` characters; undefined when
 * nothing is left.
 */
export function cleanClientName(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  // Cut first so a huge name costs no more than a short one to clean.
  const cleaned = raw
    .slice(0, CLIENT_NAME_MAX * 4)
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = Array.from(cleaned).slice(0, CLIENT_NAME_MAX).join('').trim();
  return chars === '' ? undefined : chars;
}
