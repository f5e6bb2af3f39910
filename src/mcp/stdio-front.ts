import type { Readable, Writable } from 'node:stream';
import { answerDiscover, answerEarly, type RequestId } from './early-answers.js';

/** The longest line kept while waiting for its newline (the MCP SDK's stdio bound). */
const MAX_BUFFER_BYTES = 10 * 1024 * 1024;

/** Who reads the lines once it has loaded: the bridge's MCP server (`bridge-server.ts`). */
export interface FrontConsumer {
  /** One line as it came (without its newline), in order. */
  line(line: string): void;
  /** stdin failed, or a line grew past the bound (the front then closes). */
  error(error: Error): void;
  close(): void;
}

/**
 * The stdio side of `crew mcp`, up before anything heavy loads: it reads newline-delimited JSON-RPC as
 * the MCP SDK's stdio transport does, answers `initialize` and `tools/list` at once (`answerEarly`), and
 * keeps every line, those included, for the MCP server that attaches once the SDK has loaded. The server
 * sees the whole conversation, so its state is what it would be had it read stdin itself; its own
 * answer to a request the front already answered is dropped, so the client gets exactly one.
 *
 * Imports no package, so a parent agent's `initialize` costs little more than starting Node.
 */
export class StdioFront {
  private buffer: Buffer | undefined;
  private readonly waiting: string[] = [];
  private consumer: FrontConsumer | undefined;
  /** Ids of the requests the front answered (with counts): the server's answers to them are dropped. */
  private readonly answered = new Map<string, number>();
  private isClosed = false;
  private markClosed!: () => void;
  /** Settles when stdin ends or the front is closed. */
  readonly closed: Promise<void>;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
  ) {
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
    stdin.on('data', this.onData);
    stdin.on('end', this.onEnd);
    stdin.on('error', this.onError);
  }

  /** Hands every line read so far, then each new one, to `consumer`. */
  attach(consumer: FrontConsumer): void {
    this.consumer = consumer;
    for (const line of this.waiting.splice(0)) consumer.line(line);
    if (this.isClosed) consumer.close();
  }

  /** Writes one message; an answer to a request the front answered itself is dropped. */
  send(message: { id?: RequestId; method?: string }): Promise<void> {
    if (this.isClosed) return Promise.resolve();
    if (message.method === undefined && message.id !== undefined && this.takeAnswered(message.id))
      return Promise.resolve();
    return this.write(message);
  }

  /** Stops reading; the consumer's `close` runs once. */
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('end', this.onEnd);
    this.stdin.off('error', this.onError);
    // Not ours to keep open: a stdin still flowing would hold the process.
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.buffer = undefined;
    this.markClosed();
    this.consumer?.close();
  }

  private readonly onData = (chunk: Buffer): void => {
    const size = (this.buffer?.length ?? 0) + chunk.length;
    if (size > MAX_BUFFER_BYTES) {
      this.buffer = undefined;
      this.consumer?.error(new Error(`ReadBuffer exceeded maximum size of ${MAX_BUFFER_BYTES} bytes`));
      this.close();
      return;
    }
    this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (let at = this.buffer.indexOf('\n'); at >= 0; at = this.buffer.indexOf('\n')) {
      const line = this.buffer.toString('utf8', 0, at).replace(/\r$/, '');
      this.buffer = this.buffer.subarray(at + 1);
      this.read(line);
    }
  };

  private readonly onEnd = (): void => this.close();

  private readonly onError = (error: Error): void => this.consumer?.error(error);

  private read(line: string): void {
    // server/discover is the front's at any time (the SDK's Server does not know it): answered, not passed on.
    if (line.includes('"server/discover"') && this.answerDiscoverLine(line)) return;
    if (this.consumer === undefined) {
      this.answerBeforeServer(line);
      this.waiting.push(line);
    } else {
      this.consumer.line(line);
    }
  }

  /** `initialize` and `tools/list` before the server has loaded: answered now, as the server would. */
  private answerBeforeServer(line: string): void {
    if (!line.includes('"initialize"') && !line.includes('"tools/list"')) return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return; // the server reports it, as it reports any line that is not JSON-RPC
    }
    const answer = answerEarly(message);
    if (answer === undefined) return;
    const key = idKey(answer.id);
    this.answered.set(key, (this.answered.get(key) ?? 0) + 1);
    void this.writeText(answer.text);
  }

  private answerDiscoverLine(line: string): boolean {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return false;
    }
    const answer = answerDiscover(message);
    if (answer === undefined) return false;
    void this.writeText(answer.text);
    return true;
  }

  private takeAnswered(id: RequestId): boolean {
    const key = idKey(id);
    const count = this.answered.get(key);
    if (count === undefined) return false;
    if (count > 1) this.answered.set(key, count - 1);
    else this.answered.delete(key);
    return true;
  }

  private write(message: unknown): Promise<void> {
    return this.writeText(JSON.stringify(message));
  }

  private writeText(text: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${text}\n`)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }
}

function idKey(id: RequestId): string {
  return `${typeof id}:${id}`;
}
