import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CrewError, refuse } from '../core/errors.js';
import { validTraceparent } from '../tracing/trace-scope.js';

/**
 * `tools/call` as Crew reads it: the SDK's `Server.setRequestHandler` checks every call against its own
 * schema first and answers `arguments` that are not an object (an array, a string, a number, null) with a
 * JSON-RPC error, which a parent cannot act on. Crew registers its handler through the protocol layer
 * instead, so such a call reaches Crew and gets an `invalid_argument` refusal with its path like any
 * other wrong argument.
 */
const looseCallSchema = z.object({ method: z.literal('tools/call'), params: z.unknown().optional() });

export interface ToolCall {
  /** The request's W3C `traceparent` (`_meta.traceparent`), when well formed. */
  traceparent?: string;
  name: string;
  /** The arguments object; a call without one gets `{}`. */
  arguments: Record<string, unknown>;
  progressToken?: string | number;
}

export interface ToolCallExtra {
  signal: AbortSignal;
  sendNotification: (notification: ServerNotification) => Promise<void>;
}

/**
 * Installs `handler` for `tools/call`; it gets the call's `params` as they came (read them with
 * {@link readToolCall}, which refuses a malformed call).
 */
export function setToolsCallHandler(
  server: Server,
  handler: (params: unknown, extra: ToolCallExtra) => Promise<CallToolResult>,
): void {
  const install = Protocol.prototype.setRequestHandler as unknown as (
    this: Server,
    schema: typeof looseCallSchema,
    fn: (request: z.output<typeof looseCallSchema>, extra: ToolCallExtra) => Promise<CallToolResult>,
  ) => void;
  install.call(server, looseCallSchema, (request, extra) => handler(request.params, extra));
}

/** The tool name and arguments of a call; anything else is an `invalid_argument` refusal. */
export function readToolCall(params: unknown): ToolCall {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) {
    throw new CrewError(
      refuse('invalid_argument', 'tools/call needs params {name, arguments}', { path: '(params)' }),
    );
  }
  const { name, arguments: args, _meta: meta } = params as Record<string, unknown>;
  if (typeof name !== 'string' || name === '') {
    throw new CrewError(
      refuse('invalid_argument', 'tools/call needs the tool name; call tools/list for the tools', {
        path: 'name',
      }),
    );
  }
  if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
    throw new CrewError(
      refuse(
        'invalid_argument',
        `the arguments of ${name} must be an object of named arguments, got ${kindOf(args)}; see the tool's inputSchema`,
        { path: '(arguments)' },
      ),
    );
  }
  const progressToken = (meta as { progressToken?: unknown } | undefined)?.progressToken;
  // W3C Trace Context in `_meta` (the MCP convention for propagation); a malformed one is ignored.
  const traceparent = validTraceparent((meta as { traceparent?: unknown } | undefined)?.traceparent);
  return {
    name,
    arguments: (args as Record<string, unknown> | undefined) ?? {},
    ...(typeof progressToken === 'string' || typeof progressToken === 'number' ? { progressToken } : {}),
    ...(traceparent !== undefined ? { traceparent } : {}),
  };
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
