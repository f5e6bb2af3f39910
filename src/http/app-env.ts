import type { Context, Hono } from 'hono';
import type { Refusal } from '../core/errors.js';
import type { Principal } from './tokens.js';

/** What a request carries through the daemon's app once the bearer check (or the dashboard's) passed. */
export type Vars = { principal: Principal };

/** The daemon's Hono app, as every `mountXRoutes` module receives it. */
export type App = Hono<{ Variables: Vars }>;

export type Ctx = Context<{ Variables: Vars }>;

/** What `AppOptions.authenticate` decides for one request. */
export type AuthDecision =
  | { kind: 'public' }
  | { kind: 'principal'; principal: Principal }
  | { kind: 'refused'; status: 401 | 403; refusal: Refusal };
