import type { ServerResponse } from 'node:http';

/** Server-sent events on a Node response: headers once, then `event:`/`data:` frames. */

export function startSse(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}

/** One frame; `event` is omitted when undefined (OpenAI chat and Gemini send bare `data:` lines). */
export function sendEvent(res: ServerResponse, data: unknown, event?: string): void {
  const head = event === undefined ? '' : `event: ${event}\n`;
  res.write(`${head}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Splits a text into a few chunks so clients see a real stream of deltas. */
export function chunksOf(text: string, count = 3): string[] {
  if (text.length === 0) return [''];
  const size = Math.max(1, Math.ceil(text.length / count));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
