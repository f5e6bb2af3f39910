import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The SDK's id of a session's standalone (GET) notification stream. */
export const STANDALONE_STREAM_ID = '_GET_stream';

export interface EventStoreBounds {
  /** Bytes of messages kept for the notification stream. @default 262144 */
  streamBytes: number;
  /** Messages kept for the notification stream. @default 256 */
  streamEvents: number;
  /** Bytes of messages kept for the call streams (answers to POSTs) together. @default 262144 */
  callBytes: number;
  /** A call-stream message larger than this is sent but not kept for a replay. @default 65536 */
  callEventMaxBytes: number;
}

export const DEFAULT_EVENT_STORE_BOUNDS: EventStoreBounds = {
  streamBytes: 256 * 1024,
  streamEvents: 256,
  callBytes: 256 * 1024,
  callEventMaxBytes: 64 * 1024,
};

interface Entry {
  seq: number;
  streamId: string;
  /** Undefined for a priming event (it carries an id and no message) or a message too large to keep. */
  message: JSONRPCMessage | undefined;
  bytes: number;
}

/**
 * One MCP session's server-sent events, kept so a client that lost its stream resumes it with
 * `Last-Event-ID` and misses nothing (issue 29), bounded: the notification stream (where completion
 * events go) and the call streams each keep their newest messages up to a byte and count bound, oldest
 * dropped first, so a large tool answer never pushes a completion event out.
 *
 * Event ids are `<seq>-<streamId>`, `seq` increasing over the session's life, so an id names its stream
 * even after its event was dropped: a resume from such an id replays everything still kept after it on
 * that stream (what was dropped is counted in {@link BoundedEventStore.dropped}).
 */
export class BoundedEventStore implements EventStore {
  private seq = 0;
  private readonly stream: Entry[] = [];
  private readonly calls: Entry[] = [];
  private streamBytes = 0;
  private callBytes = 0;
  /** Messages dropped to stay within the bounds, since the session began. */
  dropped = 0;

  constructor(private readonly bounds: EventStoreBounds = DEFAULT_EVENT_STORE_BOUNDS) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    return this.store(streamId, isPriming(message) ? undefined : message);
  }

  /** A priming event for a stream: an id the client can resume from, with no message. */
  prime(streamId: string): string {
    return this.store(streamId, undefined);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const parsed = parseEventId(lastEventId);
    // Internal: the SDK's transport catches a failed replay and answers the GET with its own JSON-RPC error.
    if (!parsed) throw new Error(`event id ${lastEventId} was not issued by this session`);
    const ring = parsed.streamId === STANDALONE_STREAM_ID ? this.stream : this.calls;
    for (const entry of [...ring]) {
      if (entry.streamId !== parsed.streamId || entry.seq <= parsed.seq || entry.message === undefined)
        continue;
      await send(idOf(entry), entry.message);
    }
    return parsed.streamId;
  }

  /** Messages kept now, and their bytes (for tests and stats). */
  size(): { events: number; bytes: number } {
    return { events: this.stream.length + this.calls.length, bytes: this.streamBytes + this.callBytes };
  }

  private store(streamId: string, message: JSONRPCMessage | undefined): string {
    const seq = ++this.seq;
    const isStream = streamId === STANDALONE_STREAM_ID;
    let bytes = message === undefined ? 0 : Buffer.byteLength(JSON.stringify(message));
    let kept = message;
    if (!isStream && bytes > this.bounds.callEventMaxBytes) {
      kept = undefined;
      bytes = 0;
      this.dropped++;
    }
    const entry: Entry = { seq, streamId, message: kept, bytes };
    if (isStream) {
      this.stream.push(entry);
      this.streamBytes += bytes;
      while (
        this.stream.length > 1 &&
        (this.stream.length > this.bounds.streamEvents || this.streamBytes > this.bounds.streamBytes)
      ) {
        const old = this.stream.shift() as Entry;
        this.streamBytes -= old.bytes;
        if (old.message !== undefined) this.dropped++;
      }
    } else {
      this.calls.push(entry);
      this.callBytes += bytes;
      while (this.calls.length > 1 && this.callBytes > this.bounds.callBytes) {
        const old = this.calls.shift() as Entry;
        this.callBytes -= old.bytes;
        if (old.message !== undefined) this.dropped++;
      }
      // Priming and oversized entries weigh nothing; their count is bounded too.
      while (this.calls.length > this.bounds.streamEvents * 4) {
        const old = this.calls.shift() as Entry;
        this.callBytes -= old.bytes;
      }
    }
    return idOf(entry);
  }
}

function idOf(entry: Entry): string {
  return `${entry.seq}-${entry.streamId}`;
}

function parseEventId(id: string): { seq: number; streamId: string } | undefined {
  const match = /^(\d{1,15})-(.{1,200})$/.exec(id);
  if (!match) return undefined;
  return { seq: Number(match[1]), streamId: match[2] as string };
}

/** The SDK stores `{}` for its own priming events: an id with no message. */
function isPriming(message: JSONRPCMessage): boolean {
  return typeof message === 'object' && message !== null && Object.keys(message).length === 0;
}
