/**
 * Reads token usage out of a model provider's response as its bytes stream past, without holding the
 * response: a JSON body is kept only up to {@link MAX_JSON_BYTES} (usage sits in small bodies; a body past
 * that counts no tokens), an SSE stream one line at a time, a line past {@link MAX_LINE_BYTES} skipped
 * (usage events are small; a huge content delta carries none).
 *
 * The three API shapes (issue 17):
 * - Anthropic Messages: `usage {input_tokens, output_tokens, cache_*_input_tokens}`; streamed,
 *   `message_start.message.usage` then `message_delta.usage` (cumulative output).
 * - OpenAI Chat Completions `usage {prompt_tokens, completion_tokens}` (streamed: the final chunk);
 *   Responses `usage {input_tokens, output_tokens}` (streamed: `response.completed`'s `response.usage`).
 * - Gemini `usageMetadata {promptTokenCount, candidatesTokenCount}` (streamed: each chunk, cumulative).
 * Every shape reports cumulative totals, so the last value seen wins, per field.
 */

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export const MAX_JSON_BYTES = 4 * 1024 * 1024;
export const MAX_LINE_BYTES = 256 * 1024;

export class UsageMeter {
  private readonly isSse: boolean;
  private input: number | undefined;
  private output: number | undefined;
  private readonly decoder = new TextDecoder();
  private pending = '';
  private skippingLine = false;
  private readonly jsonChunks: string[] = [];
  private jsonBytes = 0;

  /** `contentType`: the response's `content-type` header; SSE when it names `text/event-stream`. */
  constructor(contentType: string | null | undefined) {
    this.isSse = /text\/event-stream/i.test(contentType ?? '');
  }

  push(chunk: Uint8Array): void {
    if (!this.isSse) {
      if (this.jsonBytes > MAX_JSON_BYTES) return;
      this.jsonBytes += chunk.byteLength;
      if (this.jsonBytes <= MAX_JSON_BYTES)
        this.jsonChunks.push(this.decoder.decode(chunk, { stream: true }));
      return;
    }
    const text = this.decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      this.takeLine(text.slice(start, nl));
      start = nl + 1;
    }
    this.append(text.slice(start));
  }

  /** The totals seen, once the body has ended (or been cut off: what arrived counts). */
  end(): TokenUsage {
    if (this.isSse) {
      this.takeLine('');
    } else if (this.jsonBytes <= MAX_JSON_BYTES) {
      this.jsonChunks.push(this.decoder.decode());
      this.readEvent(this.jsonChunks.join(''));
      this.jsonChunks.length = 0;
    }
    return { inputTokens: this.input ?? 0, outputTokens: this.output ?? 0 };
  }

  private append(part: string): void {
    if (this.skippingLine) return;
    if (this.pending.length + part.length > MAX_LINE_BYTES) {
      this.pending = '';
      this.skippingLine = true;
      return;
    }
    this.pending += part;
  }

  private takeLine(rest: string): void {
    this.append(rest);
    const line = this.skippingLine ? '' : this.pending;
    this.pending = '';
    this.skippingLine = false;
    if (line.startsWith('data:')) this.readEvent(line.slice(5).trim());
  }

  private readEvent(text: string): void {
    // Every shape names its totals `usage…`: an event without the word (a content delta) needs no parse.
    if (!text.includes('usage')) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    this.readUsage(value);
  }

  private readUsage(value: unknown): void {
    if (!isRecord(value)) return;
    // Anthropic's stream nests the first usage in the message; Responses nests it in the response.
    if (isRecord(value.message)) this.readUsage(value.message);
    if (isRecord(value.response)) this.readUsage(value.response);
    const usage = value.usage;
    if (isRecord(usage)) {
      const input = num(usage.input_tokens) ?? num(usage.prompt_tokens) ?? undefined;
      const cache = (num(usage.cache_creation_input_tokens) ?? 0) + (num(usage.cache_read_input_tokens) ?? 0);
      if (input !== undefined) this.input = input + cache;
      const output = num(usage.output_tokens) ?? num(usage.completion_tokens);
      if (output !== undefined) this.output = output;
    }
    const gemini = value.usageMetadata;
    if (isRecord(gemini)) {
      const input = num(gemini.promptTokenCount);
      if (input !== undefined) this.input = input;
      const output = num(gemini.candidatesTokenCount);
      if (output !== undefined) this.output = output + (num(gemini.thoughtsTokenCount) ?? 0);
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
