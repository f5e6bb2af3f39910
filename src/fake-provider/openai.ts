import type { ServerResponse } from 'node:http';
import { estimateTokens, type ModelRequest, type OfferedTool, type ScriptReply } from './script.js';
import { chunksOf, sendEvent, sendJson, startSse } from './sse.js';

/**
 * OpenAI Responses (`POST /v1/responses`, as Codex uses it) and Chat Completions
 * (`POST /v1/chat/completions`, as opencode's OpenAI-compatible provider uses it): requests reduced to a
 * {@link ModelRequest}; replies as JSON or SSE (Responses: typed events ending `response.completed` with
 * usage; Chat: chunks, a final usage chunk, then `[DONE]`).
 */

type Json = Record<string, unknown>;
type Answer = Extract<ScriptReply, { kind: 'text' | 'tool' }>;

function textOf(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return (content as Json[])
    .filter((part) => typeof part.text === 'string' && part.type !== 'output_text')
    .map((part) => part.text as string);
}

export function responsesRequest(body: Json): ModelRequest {
  const userTexts: string[] = [];
  let toolResults = 0;
  const calledTools: string[] = [];
  const input = body.input;
  if (typeof input === 'string') userTexts.push(input);
  else if (Array.isArray(input)) {
    for (const item of input as Json[]) {
      if (
        (item.type === 'function_call' || item.type === 'custom_tool_call') &&
        typeof item.name === 'string'
      ) {
        calledTools.push(
          typeof item.namespace === 'string' ? namespaced(item.namespace, item.name) : item.name,
        );
      }
      if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') toolResults++;
      else if (item.role === 'user') userTexts.push(...textOf(item.content));
    }
  }
  const tools = (Array.isArray(body.tools) ? (body.tools as Json[]) : []).flatMap(responsesTools);
  const format = (body.text as Json | undefined)?.format as Json | undefined;
  return {
    api: 'openai-responses',
    model: String(body.model ?? ''),
    tools,
    userTexts,
    toolResults,
    calledTools,
    ...(format?.type === 'json_schema' && { jsonSchema: format.schema }),
    stream: body.stream === true,
  };
}

/** How a tool in a namespace is named in a {@link ModelRequest}: `<namespace>__<tool>`. */
function namespaced(namespace: string, tool: string): string {
  return `${namespace}__${tool}`;
}

/** One entry of a Responses request's `tools`: a tool, or a namespace's tools, each named `<namespace>__<tool>`. */
function responsesTools(entry: Json): OfferedTool[] {
  if (typeof entry.name !== 'string') return [];
  if (entry.type !== 'namespace') return [{ name: entry.name, schema: entry.parameters }];
  const namespace = entry.name;
  return (Array.isArray(entry.tools) ? (entry.tools as Json[]) : [])
    .filter((t) => typeof t.name === 'string')
    .map((t) => ({
      name: namespaced(namespace, t.name as string),
      schema: t.parameters,
      namespace: { name: namespace, tool: t.name as string },
    }));
}

export function chatRequest(body: Json): ModelRequest {
  const userTexts: string[] = [];
  let toolResults = 0;
  const calledTools: string[] = [];
  for (const message of Array.isArray(body.messages) ? (body.messages as Json[]) : []) {
    if (message.role === 'assistant' && Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls as Json[]) {
        const name = (call.function as Json | undefined)?.name;
        if (typeof name === 'string') calledTools.push(name);
      }
    }
    if (message.role === 'tool') toolResults++;
    else if (message.role === 'user') userTexts.push(...textOf(message.content));
  }
  const tools: OfferedTool[] = (Array.isArray(body.tools) ? (body.tools as Json[]) : [])
    .map((t) => t.function as Json | undefined)
    .filter((f): f is Json => typeof f?.name === 'string')
    .map((f) => ({ name: f.name as string, schema: f.parameters }));
  const format = body.response_format as Json | undefined;
  const schema = (format?.json_schema as Json | undefined)?.schema;
  return {
    api: 'openai-chat',
    model: String(body.model ?? ''),
    tools,
    userTexts,
    toolResults,
    calledTools,
    ...(schema !== undefined && { jsonSchema: schema }),
    stream: body.stream === true,
  };
}

export function openaiError(res: ServerResponse, reply: Extract<ScriptReply, { kind: 'error' }>): void {
  const type =
    reply.status === 429
      ? 'rate_limit_exceeded'
      : reply.status >= 500
        ? 'server_error'
        : 'invalid_request_error';
  sendJson(
    res,
    reply.status,
    { error: { message: reply.message, type, code: type, param: null } },
    reply.retryAfterSecs === undefined ? {} : { 'retry-after': String(reply.retryAfterSecs) },
  );
}

function usageOf(reply: Answer, inputChars: number) {
  const input = estimateTokens('x'.repeat(inputChars));
  const output = estimateTokens(reply.kind === 'text' ? reply.text : JSON.stringify(reply.input));
  return { input, output };
}

/** A call's `name` (and `namespace`, for a tool offered inside one) as the Responses API carries it. */
function callName(request: ModelRequest, name: string): { name: string; namespace?: string } {
  const inside = request.tools.find((t) => t.name === name)?.namespace;
  return inside ? { name: inside.tool, namespace: inside.name } : { name };
}

export function responsesReply(
  res: ServerResponse,
  request: ModelRequest,
  reply: Answer,
  ids: { responseId: string; itemId: string; callId: string },
  inputChars: number,
): void {
  const { input, output } = usageOf(reply, inputChars);
  const usage = {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
  const item =
    reply.kind === 'text'
      ? {
          id: ids.itemId,
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: reply.text, annotations: [] }],
        }
      : {
          id: ids.itemId,
          type: 'function_call',
          status: 'completed',
          call_id: ids.callId,
          ...callName(request, reply.name),
          arguments: JSON.stringify(reply.input),
        };
  const response = {
    id: ids.responseId,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model: request.model,
    output: [item],
    usage,
  };
  if (!request.stream) {
    sendJson(res, 200, response);
    return;
  }
  startSse(res);
  let seq = 0;
  const send = (type: string, data: Json) => sendEvent(res, { type, sequence_number: seq++, ...data }, type);
  send('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } });
  send('response.in_progress', { response: { ...response, status: 'in_progress', output: [], usage: null } });
  if (reply.kind === 'text') {
    send('response.output_item.added', {
      output_index: 0,
      item: { ...item, status: 'in_progress', content: [] },
    });
    const part = { type: 'output_text', text: '', annotations: [] };
    send('response.content_part.added', { item_id: ids.itemId, output_index: 0, content_index: 0, part });
    for (const delta of chunksOf(reply.text)) {
      send('response.output_text.delta', { item_id: ids.itemId, output_index: 0, content_index: 0, delta });
    }
    send('response.output_text.done', {
      item_id: ids.itemId,
      output_index: 0,
      content_index: 0,
      text: reply.text,
    });
    send('response.content_part.done', {
      item_id: ids.itemId,
      output_index: 0,
      content_index: 0,
      part: { ...part, text: reply.text },
    });
  } else {
    send('response.output_item.added', {
      output_index: 0,
      item: { ...item, arguments: '', status: 'in_progress' },
    });
    send('response.function_call_arguments.delta', {
      item_id: ids.itemId,
      output_index: 0,
      delta: JSON.stringify(reply.input),
    });
    send('response.function_call_arguments.done', {
      item_id: ids.itemId,
      output_index: 0,
      arguments: JSON.stringify(reply.input),
    });
  }
  send('response.output_item.done', { output_index: 0, item });
  send('response.completed', { response });
  res.end();
}

export function chatReply(
  res: ServerResponse,
  request: ModelRequest,
  reply: Answer,
  ids: { completionId: string; callId: string },
  inputChars: number,
): void {
  const { input, output } = usageOf(reply, inputChars);
  const usage = { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
  const created = Math.floor(Date.now() / 1000);
  const finish = reply.kind === 'tool' ? 'tool_calls' : 'stop';
  const toolCall = (args: string) => ({
    index: 0,
    id: ids.callId,
    type: 'function',
    function: { name: reply.kind === 'tool' ? reply.name : '', arguments: args },
  });
  if (!request.stream) {
    const message =
      reply.kind === 'text'
        ? { role: 'assistant', content: reply.text }
        : { role: 'assistant', content: null, tool_calls: [toolCall(JSON.stringify(reply.input))] };
    sendJson(res, 200, {
      id: ids.completionId,
      object: 'chat.completion',
      created,
      model: request.model,
      choices: [{ index: 0, message, finish_reason: finish }],
      usage,
    });
    return;
  }
  startSse(res);
  const chunk = (delta: Json, finishReason: string | null) =>
    sendEvent(res, {
      id: ids.completionId,
      object: 'chat.completion.chunk',
      created,
      model: request.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
  chunk({ role: 'assistant', content: '' }, null);
  if (reply.kind === 'text') for (const content of chunksOf(reply.text)) chunk({ content }, null);
  else chunk({ tool_calls: [toolCall(JSON.stringify(reply.input))] }, null);
  chunk({}, finish);
  sendEvent(res, {
    id: ids.completionId,
    object: 'chat.completion.chunk',
    created,
    model: request.model,
    choices: [],
    usage,
  });
  sendEvent(res, '[DONE]');
  res.end();
}
