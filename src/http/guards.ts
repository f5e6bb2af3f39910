import { CrewError, type Refusal, refuse } from '../core/errors.js';
import { isAllowedHost, isAllowedOrigin } from './allowed-host.js';
import type { App, AuthDecision } from './app-env.js';
import { declaredOverLimit, limitBody, MAX_BODY_BYTES } from './body-limit.js';
import type { Refused } from './edge-replies.js';
import { STATUS } from './http-status.js';
import { bearerOf, type Tokens } from './tokens.js';

/**
 * The middleware every route of the daemon's app stands behind, one function per layer; `createApp`
 * mounts them in the order that matters (which checks run before which routes).
 */

/** One error handler (a CrewError keeps its code), a typed 404, and the 401s' `WWW-Authenticate`. */
export function mountErrorHandlers(app: App, refused: Refused): void {
  app.onError((error, c) => {
    const refusal: Refusal =
      error instanceof CrewError
        ? error.refusal
        : refuse('invalid_argument', `request failed: ${error.message}`);
    return refused(c, refusal, STATUS[refusal.code] ?? 500);
  });

  app.notFound((c) =>
    refused(
      c,
      refuse('not_found', `no route ${c.req.method} ${c.req.path}; the API is /mcp and /api/*`),
      404,
    ),
  );

  // Every 401 says how to authenticate (RFC 6750); no OAuth is offered, so a client sends its token.
  app.use('*', async (c, next) => {
    await next();
    if (c.res.status === 401) c.res.headers.set('WWW-Authenticate', 'Bearer realm="crew"');
  });
}

/** The DNS-rebinding guard: a Host (and an Origin, when sent) this daemon answers to. */
export function mountHostGuard(app: App, allowedHosts: () => string[], refused: Refused): void {
  app.use('*', async (c, next) => {
    const host = c.req.header('host') ?? '';
    if (!isAllowedHost(host, allowedHosts())) {
      return refused(c, refuse('unauthorized', `host ${host || '(none)'} is not served here`), 403, {
        reason: 'bad_host',
        host,
      });
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !isAllowedOrigin(origin, allowedHosts())) {
      return refused(c, refuse('unauthorized', `origin ${origin} is not allowed`), 403, {
        reason: 'bad_origin',
        origin,
      });
    }
    await next();
  });
}

/** OAuth discovery answers 404, so an MCP client does not start an OAuth flow Crew does not offer. */
export function mountNoOAuth(app: App, refused: Refused): void {
  app.all('/.well-known/*', (c) =>
    refused(
      c,
      refuse(
        'not_found',
        'Crew offers no OAuth; send the bearer token from $CREW_HOME/token in the Authorization header',
      ),
      404,
    ),
  );
}

export interface AuthGuardOptions {
  tokens: Tokens;
  /** Consulted before the bearer token (see `AppOptions.authenticate`). */
  authenticate?: ((req: Request) => AuthDecision | undefined) | undefined;
}

/**
 * Who asks: the dashboard's decision or the bearer token sets the request's principal, or the request is
 * refused; then the body is bounded by the bytes that arrive.
 */
export function mountAuthGuard(app: App, options: AuthGuardOptions, refused: Refused): void {
  app.use('*', async (c, next) => {
    // A declared length over the bound is refused before the token is even looked at; the bytes that
    // arrive are counted once it is (limitBody, below).
    const declared = declaredOverLimit(c.req.header('content-length'), MAX_BODY_BYTES);
    if (declared) return refused(c, declared, 413);
    const decided = options.authenticate?.(c.req.raw);
    if (decided?.kind === 'refused') return refused(c, decided.refusal, decided.status);
    if (decided?.kind === 'public') return next();
    if (decided?.kind === 'principal') {
      c.set('principal', decided.principal);
      return next();
    }
    const token = bearerOf(c.req.header('authorization'));
    const principal = options.tokens.resolve(token);
    if (!principal) {
      return refused(
        c,
        refuse(
          'unauthorized',
          token === undefined
            ? 'a bearer token is required: the operator token is in $CREW_HOME/token'
            : 'the bearer token is invalid (not the operator token, nor one Crew minted for a live run or chat); the operator token is in $CREW_HOME/token',
        ),
        401,
        { reason: token === undefined ? 'no_token' : 'wrong_token' },
      );
    }
    c.set('principal', principal);
    await next();
  });

  app.use(
    '*',
    limitBody(MAX_BODY_BYTES, (c, refusal) => refused(c, refusal, 413)),
  );
}
