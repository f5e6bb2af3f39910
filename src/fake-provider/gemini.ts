import type { ServerResponse } from 'node:http';
import { estimateTokens, type ModelRequest, type OfferedTool, type ScriptReply } from './script.js';
import { chunksOf, sendEvent, sendJson, startSse } from './sse.js';

/**
 * Gemini (`POST /v1beta/models/M:generateContent`, `:streamGenerateContent?alt=sse`, `:countTokens`): the
 * request reduced to a {@link ModelRequest} (a `responseJsonSchema` / `responseSchema` side call asks for
 * JSON), and a reply as one JSON response or as SSE `data:` frames, the last with `finishReason` and
 * `usageMetadata`.
 */

type Json = Record<string, unknown>;

export function geminiRequest(body: Json, model: string, stream: boolean): ModelRequest {
  const userTexts: string[] = [];
  let toolResults = 0;
  const calledTools: string[] = [];
  for (const content of Array.isArray(body.contents) ? (body.contents as Json[]) : []) {
    if (content.role === 'model') {
      for (const part of Array.isArray(content.parts) ? (content.parts as Json[]) : []) {
        const name = (part.functionCall as Json | undefined)?.name;
        if (typeof name === 'string') calledTools.push(name);
      }
      continue;
    }
    if (content.role !== undefined && content.role !== 'user') continue;
    for (const part of Array.isArray(content.parts) ? (content.parts as Json[]) : []) {
      if (typeof part.text === 'string') userTexts.push(part.text);
      if (part.functionResponse !== undefined) toolResults++;
    }
  }
  const tools: OfferedTool[] = [];
  for (const group of Array.isArray(body.tools) ? (body.tools as Json[]) : []) {
    for (const decl of Array.isArray(group.functionDeclarations)
      ? (group.functionDeclarations as Json[])
      : []) {
      if (typeof decl.name === 'string') {
        tools.push({ name: decl.name, schema: decl.parametersJsonSchema ?? decl.parameters });
      }
    }
  }
  const config = (body.generationConfig ?? {}) as Json;
  const jsonSchema = config.responseJsonSchema ?? config.responseSchema;
  return {
    api: 'gemini',
    model,
    tools,
    userTexts,
    toolResults,
    calledTools,
    ...(jsonSchema !== undefined && { jsonSchema }),
    stream,
  };
}

export function geminiCountTokens(res: ServerResponse, body: Json): void {
  sendJson(res, 200, { totalTokens: estimateTokens(JSON.stringify(body)) });
}

export function geminiError(res: ServerResponse, reply: Extract<ScriptReply, { kind: 'error' }>): void {
  const status =
    reply.status === 429
      ? 'RESOURCE_EXHAUSTED'
      : reply.status === 503 || reply.status === 529
        ? 'UNAVAILABLE'
        : 'INTERNAL';
  sendJson(
    res,
    reply.status,
    { error: { code: reply.status, message: reply.message, status } },
    reply.retryAfterSecs === undefined ? {} : { 'retry-after': String(reply.retryAfterSecs) },
  );
}

export function geminiReply(
  res: ServerResponse,
  request: ModelRequest,
  reply: Extract<ScriptReply, { kind: 'text' | 'tool' }>,
  inputChars: number,
): void {
  const promptTokenCount = estimateTokens('x'.repeat(inputChars));
  const candidatesTokenCount = estimateTokens(
    reply.kind === 'text' ? reply.text : JSON.stringify(reply.input),
  );
  const usageMetadata = {
    promptTokenCount,
    candidatesTokenCount,
    totalTokenCount: promptTokenCount + candidatesTokenCount,
  };
  const candidate = (parts: Json[], finishReason?: string) => ({
    content: { role: 'model', parts },
    index: 0,
    ...(finishReason !== undefined && { finishReason }),
  });
  const parts: Json[] =
    reply.kind === 'text'
      ? [{ text: reply.text }]
      : [{ functionCall: { name: reply.name, args: reply.input } }];
  if (!request.stream) {
    sendJson(res, 200, {
      candidates: [candidate(parts, 'STOP')],
      usageMetadata,
      modelVersion: request.model,
    });
    return;
  }
  startSse(res);
  if (reply.kind === 'text') {
    const pieces = chunksOf(reply.text);
    pieces.forEach((text, i) => {
      const last = i === pieces.length - 1;
      sendEvent(res, {
        candidates: [candidate([{ text }], last ? 'STOP' : undefined)],
        ...(last && { usageMetadata }),
        modelVersion: request.model,
      });
    });
  } else {
    sendEvent(res, { candidates: [candidate(parts, 'STOP')], usageMetadata, modelVersion: request.model });
  }
  res.end();
}
