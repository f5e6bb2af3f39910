import type { ServerResponse } from 'node:http';
import { estimateTokens, type ModelRequest, type OfferedTool, type ScriptReply } from './script.js';
import { chunksOf, sendEvent, sendJson, startSse } from './sse.js';

/**
 * Anthropic Messages (`POST /v1/messages`, `POST /v1/messages/count_tokens`): the request reduced to a
 * {@link ModelRequest}, and a reply as a message (JSON) or as the SSE stream Claude Code reads:
 * message_start, content_block_start/delta/stop, message_delta (stop_reason, usage), message_stop.
 */

type Json = Record<string, unknown>;

export function anthropicRequest(body: Json): ModelRequest {
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  const userTexts: string[] = [];
  let toolResults = 0;
  const calledTools: string[] = [];
  for (const message of messages) {
    if (message.role === 'assistant' && Array.isArray(message.content)) {
      for (const block of message.content as Json[]) {
        if (block.type === 'tool_use' && typeof block.name === 'string') calledTools.push(block.name);
      }
    }
    if (message.role !== 'user') continue;
    const content = message.content;
    if (typeof content === 'string') userTexts.push(content);
    else if (Array.isArray(content)) {
      for (const block of content as Json[]) {
        if (block.type === 'text' && typeof block.text === 'string') userTexts.push(block.text);
        if (block.type === 'tool_result') toolResults++;
      }
    }
  }
  const tools: OfferedTool[] = (Array.isArray(body.tools) ? (body.tools as Json[]) : [])
    .filter((t) => typeof t.name === 'string')
    .map((t) => ({ name: t.name as string, schema: t.input_schema }));
  return {
    api: 'anthropic',
    model: String(body.model ?? ''),
    tools,
    userTexts,
    toolResults,
    calledTools,
    stream: body.stream === true,
  };
}

export function anthropicCountTokens(res: ServerResponse, body: Json): void {
  sendJson(res, 200, { input_tokens: estimateTokens(JSON.stringify(body)) });
}

export function anthropicError(res: ServerResponse, reply: Extract<ScriptReply, { kind: 'error' }>): void {
  const type =
    reply.status === 429
      ? 'rate_limit_error'
      : reply.status === 529
        ? 'overloaded_error'
        : reply.status >= 500
          ? 'api_error'
          : 'invalid_request_error';
  sendJson(
    res,
    reply.status,
    { type: 'error', error: { type, message: reply.message } },
    reply.retryAfterSecs === undefined ? {} : { 'retry-after': String(reply.retryAfterSecs) },
  );
}

export function anthropicReply(
  res: ServerResponse,
  request: ModelRequest,
  reply: Extract<ScriptReply, { kind: 'text' | 'tool' }>,
  ids: { messageId: string; toolId: string },
  inputChars: number,
): void {
  const usage = { input_tokens: estimateTokens('x'.repeat(inputChars)), output_tokens: 0 };
  const outputText = reply.kind === 'text' ? reply.text : JSON.stringify(reply.input);
  usage.output_tokens = estimateTokens(outputText);
  const stopReason = reply.kind === 'tool' ? 'tool_use' : 'end_turn';
  const block =
    reply.kind === 'text'
      ? { type: 'text', text: reply.text }
      : { type: 'tool_use', id: ids.toolId, name: reply.name, input: reply.input };
  const message = {
    id: ids.messageId,
    type: 'message',
    role: 'assistant',
    model: request.model,
    content: [block],
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
  if (!request.stream) {
    sendJson(res, 200, message);
    return;
  }
  startSse(res);
  sendEvent(
    res,
    {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    },
    'message_start',
  );
  if (reply.kind === 'text') {
    sendEvent(
      res,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      'content_block_start',
    );
    for (const text of chunksOf(reply.text)) {
      sendEvent(
        res,
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
        'content_block_delta',
      );
    }
  } else {
    sendEvent(
      res,
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: ids.toolId, name: reply.name, input: {} },
      },
      'content_block_start',
    );
    sendEvent(
      res,
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.input) },
      },
      'content_block_delta',
    );
  }
  sendEvent(res, { type: 'content_block_stop', index: 0 }, 'content_block_stop');
  sendEvent(
    res,
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    },
    'message_delta',
  );
  sendEvent(res, { type: 'message_stop' }, 'message_stop');
  res.end();
}
