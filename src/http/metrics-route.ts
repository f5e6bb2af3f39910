import type { Context } from 'hono';
import { type Refusal, refuse } from '../core/errors.js';
import type { Scrape } from '../metrics/daemon-metrics.js';
import { bearerOf, safeEqual, type Tokens } from './tokens.js';

export interface MetricsRouteOptions {
  scrape(): Promise<Scrape>;
  tokens: Pick<Tokens, 'resolve'>;
  /** `metrics.token`: a bearer that may scrape and do nothing else; empty = none. */
  scrapeToken: string;
}

/**
 * `GET /metrics` (Prometheus text format). Mounted after the Host and Origin checks and before the general
 * bearer check, because it takes a token no other route does: the operator token, or `metrics.token`,
 * which a Prometheus server can hold without being able to spawn, cancel or read transcripts. A run's
 * or chat's token may not scrape: the numbers describe every parent's runs.
 */
export function metricsHandler(
  options: MetricsRouteOptions,
  refused: (c: Context, refusal: Refusal) => Response,
): (c: Context) => Promise<Response> {
  return async (c) => {
    const token = bearerOf(c.req.header('authorization'));
    const allowed =
      token !== undefined &&
      (options.tokens.resolve(token)?.kind === 'operator' ||
        (options.scrapeToken !== '' && safeEqual(token, options.scrapeToken)));
    if (!allowed) {
      return refused(
        c,
        refuse(
          'unauthorized',
          'GET /metrics needs the operator token ($CREW_HOME/token) or the scrape token (crew config set metrics.token …) as a bearer token',
        ),
      );
    }
    const { contentType, text } = await options.scrape();
    return c.body(text, 200, { 'content-type': contentType });
  };
}
