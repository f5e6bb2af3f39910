/**
 * Bounds one line of an agent's newline-delimited JSON-RPC before the ACP SDK buffers it (issue 28): an
 * agent that writes many MB with no newline must end its run `agent_protocol_error`, not grow the gateway.
 * Streaming: counts the bytes since the last newline and holds nothing; past `maxLineBytes` it calls
 * `onOverflow` once and errors the stream, so nothing more is read.
 */
export function protocolLineBoundStream(
  maxLineBytes: number,
  onOverflow: (lineBytes: number) => void,
): TransformStream<Uint8Array, Uint8Array> {
  let sinceNewline = 0;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      const last = chunk.lastIndexOf(0x0a);
      const after = last === -1 ? sinceNewline + chunk.length : chunk.length - last - 1;
      // A line that ends inside this chunk may still have been too long: its start was counted before.
      const first = chunk.indexOf(0x0a);
      const longest =
        first === -1 ? after : Math.max(sinceNewline + first, after, longestInside(chunk, first, last));
      if (longest > maxLineBytes) {
        onOverflow(longest);
        controller.error(new Error(`the agent sent a protocol line over ${maxLineBytes} bytes`));
        return;
      }
      sinceNewline = after;
      controller.enqueue(chunk);
    },
  });
}

/** The longest line between the first and the last newline of a chunk. */
function longestInside(chunk: Uint8Array, first: number, last: number): number {
  let longest = 0;
  let start = first + 1;
  while (start <= last) {
    const end = chunk.indexOf(0x0a, start);
    longest = Math.max(longest, end - start);
    start = end + 1;
  }
  return longest;
}
