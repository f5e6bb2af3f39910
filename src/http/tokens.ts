import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Who a bearer token speaks for (DESIGN §7). A run- or chat-scoped token carries the directory its
 * spawns start in (the run's own, the chat's), fixed when Crew minted it: such a token cannot name
 * another parent directory.
 */
export type Principal =
  | { kind: 'operator' }
  | { kind: 'run'; runId: string; cwd?: string }
  | { kind: 'chat'; chatId: string; cwd?: string };

/**
 * The operator token (`$CREW_HOME/token`, 0600, made on first start) and the run- and chat-scoped
 * tokens Crew mints; minted tokens live only as long as this process, like the runs they speak for.
 */
export class Tokens {
  private readonly minted = new Map<string, Principal>();
  private readonly byScope = new Map<string, string>();

  constructor(readonly operatorToken: string) {}

  mint(principal: Exclude<Principal, { kind: 'operator' }>): string {
    const key = principal.kind === 'run' ? `run:${principal.runId}` : `chat:${principal.chatId}`;
    const existing = this.byScope.get(key);
    if (existing) return existing;
    const token = `crew_${principal.kind}_${randomBytes(24).toString('base64url')}`;
    this.minted.set(token, principal);
    this.byScope.set(key, token);
    return token;
  }

  revoke(principal: Exclude<Principal, { kind: 'operator' }>): void {
    const key = principal.kind === 'run' ? `run:${principal.runId}` : `chat:${principal.chatId}`;
    const token = this.byScope.get(key);
    if (token) this.minted.delete(token);
    this.byScope.delete(key);
  }

  resolve(token: string | undefined): Principal | undefined {
    if (!token) return undefined;
    if (safeEqual(token, this.operatorToken)) return { kind: 'operator' };
    return this.minted.get(token);
  }
}

/** Constant-time string equality (tokens). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Reads `$CREW_HOME/token`, creating it (0600) on first start. */
export function loadOperatorToken(crewHome: string): string {
  const path = join(crewHome, 'token');
  try {
    const token = readFileSync(path, 'utf8').trim();
    if (token.length >= 16) return token;
  } catch {
    // first start
  }
  mkdirSync(crewHome, { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('base64url');
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return token;
}

/** `Authorization: Bearer <token>` → the token. */
export function bearerOf(header: string | undefined | null): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}
