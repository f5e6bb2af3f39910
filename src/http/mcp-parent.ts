import { CrewError, refuse } from '../core/errors.js';
import type { Principal } from './tokens.js';

/**
 * What `X-Crew-Parent` may hold: 1-200 letters, digits and `. _ - : @ /`. The parent key is `mcp:<value>`
 * (a value that already starts with `mcp:` is the key itself), so a header can never name a run's or a
 * chat's key, whose scopes and nesting depth come from their tokens.
 */
const PARENT_VALUE = /^[A-Za-z0-9._:@/-]{1,200}$/;

/**
 * The parent key an MCP session speaks for (issue 29). A run or chat token fixes it (`run:<id>`,
 * `chat:<id>`) and may not name another; the operator names one with `X-Crew-Parent` (`crew mcp` sends
 * the project's), else the session is its own parent (`fallback`, `mcp:<session id>`). A malformed
 * header is refused, never ignored: ignoring it would file the runs under a parent the client never sees.
 */
export function mcpParentFor(
  principal: Principal,
  header: string | undefined,
  fallback: () => string,
): () => string {
  if (principal.kind !== 'operator') {
    const fixed = principal.kind === 'run' ? `run:${principal.runId}` : `chat:${principal.chatId}`;
    if (header !== undefined && header !== fixed) {
      throw new CrewError(
        refuse(
          'unauthorized',
          `this token speaks for ${fixed} only; drop the X-Crew-Parent header (it is for the operator token)`,
        ),
      );
    }
    return () => fixed;
  }
  if (header === undefined) return fallback;
  if (!PARENT_VALUE.test(header)) {
    throw new CrewError(
      refuse(
        'invalid_argument',
        'X-Crew-Parent must be 1-200 letters, digits and . _ - : @ / (for example claude-code@my-project); the parent key becomes mcp:<value>',
        { path: 'X-Crew-Parent' },
      ),
    );
  }
  const key = header.startsWith('mcp:') ? header : `mcp:${header}`;
  return () => key;
}
