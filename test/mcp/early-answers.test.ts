import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ListToolsRequestSchema,
  LATEST_PROTOCOL_VERSION as SDK_LATEST,
  SUPPORTED_PROTOCOL_VERSIONS as SDK_SUPPORTED,
} from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answerEarly,
  answerInitialize,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../../src/mcp/early-answers.js';
import { SERVER_CAPABILITIES, SERVER_INFO, SERVER_INSTRUCTIONS } from '../../src/mcp/server-info.js';
import { toolList } from '../../src/mcp/tool-list.js';
import { TOOL_LIST_JSON } from '../../src/mcp/tool-list-json.js';
import { numRuns } from '../helpers/fc-runs.js';

/** A real SDK server built as the bridge builds it (`bridge-server.ts`), and a raw JSON-RPC line into it. */
class SdkServer {
  private readonly server = new Server(SERVER_INFO, {
    capabilities: SERVER_CAPABILITIES,
    instructions: SERVER_INSTRUCTIONS,
  });
  private readonly client: Transport;
  private next: ((message: unknown) => void) | undefined;

  constructor() {
    const tools = JSON.parse(TOOL_LIST_JSON);
    this.server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
    const [client, server] = InMemoryTransport.createLinkedPair();
    this.client = client;
    client.onmessage = (message) => this.next?.(message);
    void this.server.connect(server);
  }

  async start(): Promise<void> {
    await this.client.start();
  }

  /**
   * What the SDK's stdio server answers this line: nothing when its stdio transport rejects the line
   * (or it is a notification), else its one answer.
   */
  async answer(line: string): Promise<unknown> {
    let message: ReturnType<typeof deserializeMessage>;
    try {
      message = deserializeMessage(line);
    } catch {
      return undefined;
    }
    if (!('id' in message) || !('method' in message)) return undefined;
    const answered = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${line}`)), 2000);
      this.next = (m) => {
        clearTimeout(timer);
        resolve(m);
      };
    });
    await this.client.send(message);
    return answered;
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

describe('the bridge answers initialize and tools/list before the SDK loads, as the SDK server would', () => {
  const sdk = new SdkServer();
  beforeAll(() => sdk.start());
  afterAll(() => sdk.close());

  it('its tool list is the daemon’s (else run `npm run gen:tool-list`)', () => {
    expect(JSON.parse(TOOL_LIST_JSON)).toEqual(toolList());
  });

  it('speaks the SDK’s protocol versions', () => {
    expect([...SUPPORTED_PROTOCOL_VERSIONS]).toEqual(SDK_SUPPORTED);
    expect(LATEST_PROTOCOL_VERSION).toBe(SDK_LATEST);
  });

  it('answers the client’s version when supported, else the latest', async () => {
    for (const requested of [...SDK_SUPPORTED, '2099-01-01', '2024-01-01', '']) {
      const request = {
        jsonrpc: '2.0',
        id: 7,
        method: 'initialize',
        params: { protocolVersion: requested, capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      };
      const answer = answerInitialize(request);
      expect(answer?.result.protocolVersion).toBe(SDK_SUPPORTED.includes(requested) ? requested : SDK_LATEST);
      expect(answer).toEqual(await sdk.answer(JSON.stringify(request)));
    }
  });

  it('answers at once what real clients send: the SDK client’s own initialize, Claude Code’s, Codex’s', async () => {
    // The SDK client's request, caught on its way out.
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const sent = new Promise<unknown>((resolve) => {
      serverSide.onmessage = resolve;
    });
    await serverSide.start();
    const client = new Client({ name: 'sdk-client', version: '1.2.3' }, { capabilities: { roots: {} } });
    void client.connect(clientSide).catch(() => undefined);
    const requests = [
      await sent,
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: { roots: {}, elicitation: {} },
          clientInfo: { name: 'claude-code', version: '2.1.0' },
        },
      },
      {
        jsonrpc: '2.0',
        id: 'init-1',
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: { elicitation: { form: {} }, roots: { listChanged: true } },
          clientInfo: { name: 'codex-mcp-client', title: 'Codex', version: '0.80.0' },
        },
      },
    ];
    for (const request of requests) {
      const answer = answerInitialize(request);
      expect(answer, JSON.stringify(request)).toBeDefined();
      expect(answer).toEqual(await sdk.answer(JSON.stringify(request)));
    }
    await clientSide.close();
  });

  it('answers tools/list with the daemon’s tools, whatever the cursor', async () => {
    for (const params of [undefined, {}, { cursor: 'next' }]) {
      const line = JSON.stringify({ jsonrpc: '2.0', id: 'l', method: 'tools/list', params });
      const ours = answerEarly(JSON.parse(line));
      expect(JSON.parse(ours?.text ?? 'null')).toEqual({
        jsonrpc: '2.0',
        id: 'l',
        result: { tools: toolList() },
      });
      expect(await sdk.answer(line)).toEqual(JSON.parse(ours?.text ?? 'null'));
    }
  });

  it('whatever it answers, the SDK answers the same; the rest it leaves to the SDK', async () => {
    // Mostly well-formed, with a wrong piece here and there: both sides of the property get samples.
    const rarely = <T>(arb: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: fc.constant(undefined), weight: 5 }, { arbitrary: arb, weight: 1 });
    const leaf = fc.oneof(
      fc.boolean(),
      fc.string({ maxLength: 3 }),
      fc.integer(),
      fc.constant(null),
      fc.constant([]),
    );
    const capabilityAt = (depth: number): fc.Arbitrary<unknown> =>
      depth === 0
        ? fc.oneof({ arbitrary: fc.constant({}), weight: 6 }, { arbitrary: leaf, weight: 1 })
        : fc.oneof(
            {
              arbitrary: fc.dictionary(
                fc.constantFrom('listChanged', 'applyDefaults', 'form', 'url', 'context', 'tools', 'x'),
                capabilityAt(depth - 1),
                { maxKeys: 2 },
              ),
              weight: 12,
            },
            { arbitrary: leaf, weight: 1 },
          );
    const capability = capabilityAt(3);
    const capabilities = fc.oneof(
      {
        arbitrary: fc.dictionary(
          fc.constantFrom('roots', 'sampling', 'elicitation', 'experimental', 'tasks', 'extensions', 'other'),
          capability,
          { maxKeys: 3 },
        ),
        weight: 6,
      },
      { arbitrary: leaf, weight: 1 },
    );
    const text = fc.oneof(
      { arbitrary: fc.string({ maxLength: 4 }), weight: 12 },
      { arbitrary: leaf, weight: 1 },
    );
    const clientInfo = fc.oneof(
      {
        arbitrary: fc.record({
          name: text,
          version: text,
          title: rarely(text),
          websiteUrl: rarely(text),
          description: rarely(text),
          icons: rarely(fc.anything()),
        }),
        weight: 6,
      },
      { arbitrary: leaf, weight: 1 },
    );
    const listParams = fc.oneof(
      fc.constant(undefined),
      fc.record({ cursor: rarely(text), _meta: rarely(fc.constant({})), other: rarely(leaf) }),
      leaf,
    );
    const params = fc.oneof(
      { arbitrary: listParams, weight: 2 },
      {
        arbitrary: fc.record({
          protocolVersion: fc.oneof(
            { arbitrary: fc.constantFrom(...SDK_SUPPORTED, '2099-01-01', ''), weight: 6 },
            { arbitrary: fc.integer(), weight: 1 },
          ),
          capabilities,
          clientInfo,
          _meta: rarely(fc.constantFrom({}, { progressToken: 1 })),
          other: rarely(leaf),
        }),
        weight: 6,
      },
      { arbitrary: leaf, weight: 1 },
    );
    const request = fc.record({
      jsonrpc: fc.constantFrom('2.0', '2.0', '2.0', '2.0', '1.0'),
      id: fc.oneof(
        { arbitrary: fc.nat(), weight: 3 },
        { arbitrary: fc.string({ maxLength: 3 }), weight: 3 },
        { arbitrary: fc.double(), weight: 1 },
        { arbitrary: fc.constant(null), weight: 1 },
      ),
      method: fc.constantFrom('initialize', 'initialize', 'initialize', 'tools/list', 'tools/list', 'ping'),
      params,
      extra: rarely(leaf),
    });
    let answered = 0;
    let deferred = 0;
    await fc.assert(
      fc.asyncProperty(request, async (message) => {
        // Through JSON, as the line arrives (undefined fields vanish).
        const line = JSON.stringify(message);
        const ours = answerEarly(JSON.parse(line));
        if (ours === undefined) {
          deferred++;
          return;
        }
        answered++;
        expect(await sdk.answer(line)).toEqual(JSON.parse(ours.text));
      }),
      { numRuns: numRuns(2000) },
    );
    // Neither side of the property is empty.
    expect(answered, `answered ${answered}, deferred ${deferred}`).toBeGreaterThan(numRuns(2000) / 40);
    expect(deferred, `answered ${answered}, deferred ${deferred}`).toBeGreaterThan(numRuns(2000) / 40);
  });
});
