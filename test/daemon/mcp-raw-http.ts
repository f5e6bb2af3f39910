import type { DaemonProcess } from '../helpers/daemon-process.js';

/**
 * MCP over Streamable HTTP with plain fetch, as curl or a hand-written client speaks it: no SDK, no
 * notification stream unless a test opens one. For the cases the SDK client hides (it always holds a GET
 * stream, and resumes it by itself).
 */

export interface SseEvent {
  id?: string;
  retry?: number;
  data: string;
}

/** Parses a whole server-sent event body (or the part read so far) into its events. */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === '') continue;
    const event: SseEvent = { data: '' };
    const data: string[] = [];
    let any = false;
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') event.id = value;
      else if (field === 'retry') event.retry = Number(value);
      else if (field === 'data') data.push(value);
      else continue;
      any = true;
    }
    if (!any) continue;
    event.data = data.join('\n');
    events.push(event);
  }
  return events;
}

export class RawMcp {
  sessionId: string | undefined;
  private nextId = 1;

  constructor(
    private readonly d: Pick<DaemonProcess, 'url' | 'token'>,
    private readonly extraHeaders: Record<string, string> = {},
    readonly protocolVersion = '2025-11-25',
  ) {}

  get url(): string {
    return `${this.d.url}/mcp`;
  }

  headers(more: Record<string, string> = {}): Record<string, string> {
    return {
      authorization: `Bearer ${this.d.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': this.protocolVersion,
      ...(this.sessionId ? { 'mcp-session-id': this.sessionId } : {}),
      ...this.extraHeaders,
      ...more,
    };
  }

  /** One POST; the answer's JSON-RPC messages (from JSON or from the SSE body) and the raw response. */
  async post(
    message: Record<string, unknown>,
  ): Promise<{ status: number; messages: Record<string, unknown>[]; text: string }> {
    const response = await fetch(`${this.d.url}/mcp`, {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify(message),
    });
    const sid = response.headers.get('mcp-session-id');
    if (sid) this.sessionId = sid;
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    let messages: Record<string, unknown>[] = [];
    if (type.includes('text/event-stream')) {
      messages = parseSse(text)
        .filter((e) => e.data !== '')
        .map((e) => JSON.parse(e.data) as Record<string, unknown>);
    } else if (text !== '') {
      const parsed = JSON.parse(text) as Record<string, unknown> | Record<string, unknown>[];
      messages = Array.isArray(parsed) ? parsed : [parsed];
    }
    return { status: response.status, messages, text };
  }

  /** A request; resolves with its result (throws on a JSON-RPC error). */
  async request(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const { status, messages, text } = await this.post({ jsonrpc: '2.0', id, method, params });
    const answer = messages.find((m) => m.id === id);
    if (!answer) throw new Error(`no answer to ${method} (HTTP ${status}): ${text}`);
    if (answer.error) throw new Error(`${method} failed: ${JSON.stringify(answer.error)}`);
    return answer.result as Record<string, unknown>;
  }

  async initialize(clientName = 'raw-http'): Promise<Record<string, unknown>> {
    const result = await this.request('initialize', {
      protocolVersion: this.protocolVersion,
      capabilities: {},
      clientInfo: { name: clientName, version: '1' },
    });
    await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return result;
  }

  /** A tool call's structuredContent. */
  async call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const result = await this.request('tools/call', { name, arguments: args });
    return result.structuredContent as Record<string, unknown>;
  }
}
