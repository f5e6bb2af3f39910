import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CrewError, isCrewError, type Refusal, refuse } from '../core/errors.js';
import { withTraceparent } from '../tracing/trace-scope.js';
import { TOOLS, type ToolBody, type ToolContext, type ToolExtra } from './tools.js';
import { readToolCall, type ToolCall } from './tools-call.js';

/**
 * One `tools/call` as Crew answers it, whichever protocol era asked (the session server in
 * `mcp-server.ts`, the stateless 2026-07-28 route in `src/http/mcp-modern-route.ts`): a malformed call or a
 * wrong argument is an `isError` result with the refusal (audited once), never a protocol error.
 */
export async function callTool(
  params: unknown,
  context: () => ToolContext,
  extra: Omit<ToolExtra, 'progress'> & {
    progress?: (progressToken: string | number) => ToolExtra['progress'];
  },
): Promise<CallToolResult> {
  let request: ToolCall;
  try {
    request = readToolCall(params);
  } catch (error) {
    if (!isCrewError(error)) throw error;
    audit(context, error.refusal, 'tools/call');
    return refusalResult(error.refusal);
  }
  const tool = TOOLS.find((t) => t.name === request.name);
  const progress = request.progressToken !== undefined ? extra.progress?.(request.progressToken) : undefined;
  const toolExtra: ToolExtra = {
    ...(extra.signal ? { signal: extra.signal } : {}),
    ...(progress ? { progress } : {}),
  };
  let body: ToolBody;
  let text: ((b: ToolBody) => string) | undefined;
  try {
    if (!tool) {
      throw new CrewError(
        refuse('invalid_argument', `unknown tool ${request.name}; call tools/list for the tools Crew has`, {
          path: 'name',
        }),
      );
    }
    text = tool.text;
    const run = tool.run as (a: unknown, c: ToolContext, e: ToolExtra) => Promise<ToolBody> | ToolBody;
    // The runs this call admits start under the caller's trace (src/tracing).
    body = await withTraceparent(request.traceparent, () => run(request.arguments, context(), toolExtra));
  } catch (error) {
    if (!isCrewError(error)) throw error;
    // Thrown refusals are this edge's own (argument checks); the gateway answers its refusals as values.
    audit(context, error.refusal, request.name);
    body = { ok: false, refusal: error.refusal };
  }
  return toolResult(body, text);
}

/** A tool's body as a `CallToolResult`: structured, with a text copy for the model. */
export function toolResult(body: ToolBody, text?: (b: ToolBody) => string): CallToolResult {
  const isError = body.ok === false;
  const shown = isError
    ? `refused (${body.refusal?.code}): ${body.refusal?.message}`
    : text
      ? text(body)
      : JSON.stringify(body, null, 2);
  return {
    content: [{ type: 'text', text: shown }],
    structuredContent: body,
    ...(isError ? { isError: true } : {}),
  };
}

/** A refusal Crew's MCP edge made itself (a malformed call, a wrong argument): one SEL line. */
function audit(context: () => ToolContext, refusal: Refusal, toolName: string): void {
  const ctx = context();
  ctx.gateway.audit(refusal, { source: ctx.parent, tool_name: toolName });
}

function refusalResult(refusal: Refusal): CallToolResult {
  return {
    content: [{ type: 'text', text: `refused (${refusal.code}): ${refusal.message}` }],
    structuredContent: { ok: false, refusal },
    isError: true,
  };
}
