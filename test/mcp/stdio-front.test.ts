import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { initializeResult } from '../../src/mcp/early-answers.js';
import { type FrontConsumer, StdioFront } from '../../src/mcp/stdio-front.js';
import { TOOL_LIST_JSON } from '../../src/mcp/tool-list-json.js';

function frontPair() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const written: unknown[] = [];
  let pending = '';
  stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    for (let at = pending.indexOf('\n'); at >= 0; at = pending.indexOf('\n')) {
      written.push(JSON.parse(pending.slice(0, at)));
      pending = pending.slice(at + 1);
    }
  });
  const front = new StdioFront(stdin, stdout);
  const seen: { lines: string[]; errors: string[]; closed: number } = { lines: [], errors: [], closed: 0 };
  const consumer: FrontConsumer = {
    line: (line) => seen.lines.push(line),
    error: (error) => seen.errors.push(error.message),
    close: () => seen.closed++,
  };
  return { stdin, front, written, seen, consumer };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

const initialize = (id: number | string, protocolVersion = '2025-06-18') =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  });

describe('StdioFront: the bridge’s stdio before the MCP server has loaded', () => {
  it('answers initialize and tools/list at once and keeps every line, in order, for the server', async () => {
    const { stdin, front, written, seen, consumer } = frontPair();
    // Split across chunks, with a CRLF line: framing as the SDK's stdio transport reads it.
    const lines = [
      initialize(1),
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    ];
    const bytes = `${lines[0]}\r\n${lines[1]}\n${lines[2]}\n`;
    stdin.write(bytes.slice(0, 17));
    stdin.write(bytes.slice(17, 140));
    stdin.write(bytes.slice(140));
    await tick();
    expect(written).toEqual([
      { jsonrpc: '2.0', id: 1, result: initializeResult('2025-06-18') },
      { jsonrpc: '2.0', id: 2, result: { tools: JSON.parse(TOOL_LIST_JSON) } },
    ]);

    front.attach(consumer);
    expect(seen.lines).toEqual(lines);
    stdin.write('{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
    await tick();
    expect(seen.lines).toHaveLength(4);
  });

  it('answers server/discover itself, before and after the server attached, and never passes it on', async () => {
    const { stdin, front, written, seen, consumer } = frontPair();
    const discover = (id: number) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'server/discover',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
      });
    stdin.write(`${discover(1)}\n`);
    await tick();
    front.attach(consumer);
    stdin.write(`${discover(2)}\n`);
    await tick();
    expect(written.map((w) => (w as { id: number }).id)).toEqual([1, 2]);
    const result = (written[0] as { result: Record<string, unknown> }).result;
    expect(result.resultType).toBe('complete');
    expect(result.supportedVersions).toEqual([
      '2025-11-25',
      '2025-06-18',
      '2025-03-26',
      '2024-11-05',
      '2024-10-07',
    ]);
    expect(result.capabilities).toEqual({ tools: {}, logging: {} });
    expect((result._meta as Record<string, unknown>)['io.modelcontextprotocol/serverInfo']).toEqual({
      name: 'crew',
      version: '0.1.0',
    });
    expect(result.instructions).toMatch(/initialize first/);
    expect(seen.lines).toEqual([]);
  });

  it('drops the server’s own answer to an initialize it answered, once per request; passes the rest', async () => {
    const { stdin, front, written, consumer } = frontPair();
    stdin.write(`${initialize(1)}\n${initialize('1', '1999-01-01')}\n`);
    await tick();
    front.attach(consumer);
    expect(written).toHaveLength(2);
    expect(written[1]).toMatchObject({ id: '1', result: { protocolVersion: '2025-11-25' } });
    await front.send({ jsonrpc: '2.0', id: 1, result: {} } as never);
    await front.send({ jsonrpc: '2.0', id: '1', result: {} } as never);
    // A later answer with a reused id, and a request the server sends, go out.
    await front.send({ jsonrpc: '2.0', id: 1, result: { later: true } } as never);
    await front.send({ jsonrpc: '2.0', id: 1, method: 'ping' } as never);
    await tick();
    expect(written.slice(2)).toEqual([
      { jsonrpc: '2.0', id: 1, result: { later: true } },
      { jsonrpc: '2.0', id: 1, method: 'ping' },
    ]);
  });

  it('leaves to the server an initialize it cannot vouch for, and lines that are not JSON', async () => {
    const { stdin, front, written, seen, consumer } = frontPair();
    stdin.write(
      `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}\nnot json "initialize"\n`,
    );
    await tick();
    expect(written).toEqual([]);
    front.attach(consumer);
    expect(seen.lines).toHaveLength(2);
  });

  it('after attach, an initialize is the server’s to answer', async () => {
    const { stdin, front, written, seen, consumer } = frontPair();
    front.attach(consumer);
    stdin.write(`${initialize(5)}\n`);
    await tick();
    expect(written).toEqual([]);
    expect(seen.lines).toEqual([initialize(5)]);
  });

  it('stdin ending closes it; a consumer that attaches later still gets the lines, then close', async () => {
    const { stdin, front, seen, consumer } = frontPair();
    stdin.end('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
    await front.closed;
    front.attach(consumer);
    expect(seen).toEqual({ lines: ['{"jsonrpc":"2.0","id":2,"method":"ping"}'], errors: [], closed: 1 });
  });

  it('a line past 10 MiB without its newline is an error, and the front closes', async () => {
    const { stdin, front, seen, consumer } = frontPair();
    front.attach(consumer);
    stdin.write(Buffer.alloc(6 * 1024 * 1024, 0x20));
    stdin.write(Buffer.alloc(5 * 1024 * 1024, 0x20));
    await front.closed;
    expect(seen.errors).toEqual([expect.stringMatching(/exceeded maximum size/)]);
    expect(seen.closed).toBe(1);
    expect(stdin.listenerCount('data')).toBe(0);
  });
});
