/**
 * Reading a server-sent events stream (the chat's `GET /api/chats/:id/events`) on the client side: the
 * frames of the WHATWG event-stream format, one message per blank-line-terminated block. Comment lines
 * (`: keepalive`) are skipped; `data` lines of one block are joined with newlines.
 */

export interface SseMessage {
  event: string;
  id?: string;
  data: string;
}

export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      // Line endings as `\n`; a trailing `\r` waits, since its `\n` may come with the next chunk.
      buffer += decoder.decode(value, { stream: true });
      const held = buffer.endsWith('\r') ? '\r' : '';
      buffer = buffer.slice(0, buffer.length - held.length).replace(/\r\n?/g, '\n');
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const message = parseBlock(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (message) yield message;
      }
      buffer += held;
    }
  } finally {
    reader.releaseLock();
  }
}

function parseBlock(block: string): SseMessage | undefined {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'id') id = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return undefined;
  return { event, ...(id !== undefined ? { id } : {}), data: data.join('\n') };
}
