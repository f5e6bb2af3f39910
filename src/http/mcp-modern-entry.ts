import type { Gateway } from '../gateway/gateway.js';
import { CWD_HEADER, PARENT_HEADER } from '../mcp/bridge-headers.js';
import { isModernRequest } from '../mcp/modern-protocol.js';
import type { WaveTasks } from '../mcp/wave-tasks.js';
import { answerModern } from './mcp-modern-route.js';
import { mcpParentFor } from './mcp-parent.js';
import { parentCwdFor } from './principal-scope.js';
import type { Principal } from './tokens.js';

/** The parent of an operator's stateless requests that name none with `X-Crew-Parent`. */
const STATELESS_PARENT = 'mcp:stateless';

/**
 * The answer to a POST without a session when it is a 2026-07-28 request, else `undefined` (the
 * session-based endpoint's). The body is read from a copy, so the other path still gets it whole. The
 * parent is the token's, else `X-Crew-Parent`'s, else `mcp:stateless` (docs/decisions.md, issue 29).
 */
export async function answerIfModern(
  raw: Request,
  principal: Principal,
  tasks: WaveTasks,
  deps: { gateway: Gateway; resources: () => object },
): Promise<Response | undefined> {
  const header = (name: string) => raw.headers.get(name) ?? undefined;
  let body: unknown;
  try {
    body = await raw.clone().json();
  } catch {
    body = undefined;
  }
  if (!isModernRequest(body, header)) return undefined;
  const parent = mcpParentFor(principal, header(PARENT_HEADER), () => STATELESS_PARENT)();
  const cwd = parentCwdFor(principal, header(CWD_HEADER) || undefined, 'X-Crew-Cwd');
  return answerModern(
    body,
    header,
    {
      parent,
      ...(cwd ? { cwd } : {}),
      ...(principal.kind === 'operator' ? { reads: { kind: 'operator' as const } } : {}),
    },
    { gateway: deps.gateway, tasks, resources: deps.resources },
    raw.signal,
  );
}
