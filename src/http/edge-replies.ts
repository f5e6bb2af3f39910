import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { CrewError, type Refusal, refuse } from '../core/errors.js';
import type { Gateway } from '../gateway/gateway.js';
import type { Ctx } from './app-env.js';
import { STATUS } from './http-status.js';
import { principalName } from './principal-scope.js';
import type { Principal } from './tokens.js';

/** Answers a request with a refusal this edge made itself, after writing it to the SEL. */
export type Refused = (
  c: Ctx,
  refusal: Refusal,
  status: ContentfulStatusCode,
  metadata?: Record<string, unknown>,
) => Response;

/** The peer's address as the Node adapter gives it (absent in-process, e.g. `app.request()`). */
function remoteOf(env: unknown): string {
  return (
    (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket
      ?.remoteAddress ?? 'unknown'
  );
}

/**
 * Every refusal this edge makes itself is written to the SEL once, with the peer's address and the
 * route (never a token); the gateway audits the refusals its own methods answer.
 */
export function refusedVia(gateway: Pick<Gateway, 'audit'>): Refused {
  return (c, refusal, status, metadata = {}) => {
    // Unset before the token is checked (auth failures, a bad Host).
    const principal = c.get('principal') as Principal | undefined;
    gateway.audit(refusal, {
      event_type: refusal.code === 'unauthorized' ? 'auth' : 'request',
      source: principal ? principalName(principal) : 'http',
      tool_name: `${c.req.method} ${c.req.path}`,
      metadata: { remote: remoteOf(c.env), route: c.req.path, method: c.req.method, ...metadata },
    });
    return c.json({ ok: false, refusal }, status);
  };
}

/** A gateway answer as JSON: 200 when ok, else the refusal's status. */
export function reply(
  c: { json: (body: unknown, status?: ContentfulStatusCode) => Response },
  body: { ok: boolean; refusal?: Refusal },
): Response {
  return c.json(body, body.ok ? 200 : (STATUS[body.refusal?.code ?? 'invalid_argument'] ?? 400));
}

/** The request's body as a JSON object, or an `invalid_argument` refusal (a list, a number, not JSON). */
export async function readJson(req: { json: () => Promise<unknown> }): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await req.json();
  } catch {
    body = undefined;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new CrewError(refuse('invalid_argument', 'the body must be a JSON object', { path: '(body)' }));
  return body as Record<string, unknown>;
}
