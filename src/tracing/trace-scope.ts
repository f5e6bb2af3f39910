import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The W3C `traceparent` an MCP request carried in its `_meta`, for the duration of the tool call: the
 * gateway admits runs synchronously inside the call, so the run tracer reads it when it first sees a new
 * run. Entered only when a request carries one, so untraced calls pay nothing.
 */
const scope = new AsyncLocalStorage<string>();

/** `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`, ids not all zero (W3C Trace Context). */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The value when it is a well-formed version-00 traceparent; anything else (hostile or not) is dropped. */
export function validTraceparent(value: unknown): string | undefined {
  return typeof value === 'string' && value.length === 55 && TRACEPARENT.test(value) ? value : undefined;
}

export function withTraceparent<T>(traceparent: string | undefined, fn: () => T): T {
  return traceparent === undefined ? fn() : scope.run(traceparent, fn);
}

export function currentTraceparent(): string | undefined {
  return scope.getStore();
}
