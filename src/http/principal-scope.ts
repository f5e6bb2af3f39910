import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { CrewError } from '../core/errors.js';
import { parentCwdInvalid, parentCwdNotAllowed } from '../core/refusals.js';
import type { Scope } from '../gateway/gateway.js';
import type { Principal } from './tokens.js';

/**
 * The directory a request's spawns start in when they name no `cwd` argument. Only the operator token
 * may name one (`crew mcp` and `crew spawn` send their own), and it must be an absolute path to a
 * directory; a run- or chat-scoped token's directory is the one Crew bound to it when minting it.
 */
export function parentCwdFor(
  principal: Principal,
  requested: string | undefined,
  field: string,
): string | undefined {
  if (principal.kind !== 'operator') {
    if (requested !== undefined && requested !== principal.cwd)
      throw new CrewError(parentCwdNotAllowed(field));
    return principal.cwd;
  }
  if (requested === undefined) return undefined;
  if (!isAbsolute(requested) || !isDirectory(requested))
    throw new CrewError(parentCwdInvalid(field, requested));
  return requested;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A principal as the SEL names it (never its token). */
export function principalName(principal: Principal): string {
  if (principal.kind === 'run') return `run:${principal.runId}`;
  if (principal.kind === 'chat') return `chat:${principal.chatId}`;
  return 'operator';
}

/**
 * The parent key a request speaks for: a run or chat token fixes it (`run:<id>`, `chat:<id>`); the
 * operator may name one (`crew mcp` sends its own), else `fallback`.
 */
export function parentFor(principal: Principal, requested: unknown, fallback: string): string {
  if (principal.kind === 'run') return `run:${principal.runId}`;
  if (principal.kind === 'chat') return `chat:${principal.chatId}`;
  return typeof requested === 'string' && /^[a-z]+:[\w.:@-]{1,200}$/.test(requested) ? requested : fallback;
}

/** What a principal may see: the operator everything, a run or chat token its own subtree. */
export function scopeOf(principal: Principal): Scope {
  return principal.kind === 'operator'
    ? { kind: 'operator' }
    : { kind: 'parent', parent: parentFor(principal, undefined, '') };
}
