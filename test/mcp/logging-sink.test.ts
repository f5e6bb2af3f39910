import { describe, expect, it } from 'vitest';
import type { DeliveredEvent } from '../../src/gateway/sink.js';
import { LoggingSink } from '../../src/mcp/logging-sink.js';

const event = (id: string): DeliveredEvent => ({
  id,
  parent: 'mcp:p',
  kind: 'completion',
  run_ids: [id],
  text: id,
});

describe("an MCP session's logging sink", () => {
  it('remembers a bounded number of ids, the oldest forgotten first', async () => {
    const sent: string[] = [];
    const sink = new LoggingSink(async (e) => {
      sent.push(e.id);
    }, 3);
    for (const id of ['a', 'b', 'c', 'd']) await sink.deliver(event(id));
    expect(sink.remembered()).toBe(3);
    await sink.deliver(event('d'));
    await sink.deliver(event('a')); // forgotten: sent again
    expect(sent).toEqual(['a', 'b', 'c', 'd', 'a']);
  });

  it('remembers no id whose send failed, so the relay retry sends it', async () => {
    let fail = true;
    const sent: string[] = [];
    const sink = new LoggingSink(async (e) => {
      if (fail) throw new Error('transport closed');
      sent.push(e.id);
    });
    await expect(sink.deliver(event('a'))).rejects.toThrow('transport closed');
    fail = false;
    await sink.deliver(event('a'));
    expect(sent).toEqual(['a']);
  });
});
