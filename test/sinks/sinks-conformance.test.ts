import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { type ChatGateway, ChatHost } from '../../src/chat/chat-host.js';
import type { ParentRuntimes } from '../../src/chat/parent-session.js';
import { FakeClock } from '../../src/clock/fake-clock.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import { EventsLogSink } from '../../src/daemon/events-log-sink.js';
import type { DeliveredEvent, Sink } from '../../src/gateway/sink.js';
import { createMcpServer } from '../../src/mcp/mcp-server.js';
import type { AcpRuntime, SessionSink } from '../../src/runners/acp-runtime.js';
import { MemorySelSink } from '../../src/sel/memory-sel-sink.js';
import { SlackLedger } from '../../src/slack/slack-ledger.js';
import { SlackResults } from '../../src/slack/slack-results.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { MemorySlackApi } from '../slack/memory-slack-api.js';
import { idsIn, sinkConformance } from './sink-conformance.js';

/** Every sink the relay pushes to passes the one suite (issue 30). */

const settleNow = <T>(delivery: Promise<T>) => delivery;

sinkConformance('the events.log sink', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'crew-sink-'));
  const path = join(dir, 'events.log');
  return {
    sink: new EventsLogSink(path),
    settle: settleNow,
    received: async () => {
      let text = '';
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        // nothing written yet
      }
      return [...text.matchAll(/^\[event (\S+)\]$/gm)].map((m) => m[1] as string);
    },
    close: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

sinkConformance('an MCP session (logging notifications)', async () => {
  let push: ((event: DeliveredEvent) => Promise<void>) | undefined;
  const server = createMcpServer(
    () => {
      throw new Error('no tool is called here');
    },
    { onLoggingEnabled: (p) => (push = p) },
  );
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'conformance', version: '1.0.0' });
  const seen: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    seen.push((notification.params.data as DeliveredEvent).id);
  });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  await client.setLoggingLevel('info');
  const sink: Sink = { deliver: (event) => (push as NonNullable<typeof push>)(event) };
  return {
    sink,
    // The in-memory transport hands a notification over in a microtask; one turn of the loop settles it.
    settle: async (delivery) => {
      const value = await delivery;
      await new Promise((resolve) => setImmediate(resolve));
      return value;
    },
    received: async () => [...seen],
    close: async () => {
      await client.close();
      await server.close();
    },
  };
});

sinkConformance('a Slack user (direct messages)', async () => {
  const clock = new FakeClock();
  const api = new MemorySlackApi();
  const ledger = new SlackLedger(':memory:');
  const results = new SlackResults({
    clock,
    api,
    ledger,
    sel: new MemorySelSink(clock),
    runView: () => undefined,
    ackedAt: () => undefined,
    reannounceMs: 3_600_000,
    log: () => undefined,
  });
  return {
    sink: results.sinkFor('U1'),
    settle: settleNow,
    // A result's first part carries its header; later parts (long texts) are the same result.
    received: async () =>
      api.messages
        .filter((m) => Number(m.metadata?.event_payload.part) === 0)
        .map((m) => String(m.metadata?.event_payload.event_id)),
    close: async () => {
      await results.close();
      ledger.close();
    },
  };
});

/** A hosted chat's parent agent in memory: records each prompt (an injection turn carries the events). */
class PromptRecorder implements ParentRuntimes {
  readonly prompts: string[] = [];

  async openHosted(): Promise<AcpRuntime> {
    let sink: SessionSink | undefined;
    const runtime = {
      pid: 4242,
      startTime: 1,
      isDown: false,
      supportsHttpMcp: true,
      supportsLoadSession: false,
      newSession: async (_params: unknown, s: SessionSink) => {
        sink = s;
        return { sessionId: 'session-1' };
      },
      prompt: async (_sessionId: string, text: string) => {
        this.prompts.push(text);
        sink?.onUpdate({
          sessionUpdate: 'agent_message_chunk',
          content: { type: 'text', text: 'noted' },
        } as never);
        return { stopReason: 'end_turn' };
      },
      cancel: async () => undefined,
      onDeath: () => () => undefined,
      deathReason: async () => undefined,
      reasonFor: async (error: unknown) => String(error),
    };
    return runtime as unknown as AcpRuntime;
  }

  async closeHosted(): Promise<void> {}
}

sinkConformance('a hosted chat (injection turns)', async () => {
  const clock = new FakeClock();
  const runtimes = new PromptRecorder();
  const gateway = {
    attachSink: () => () => undefined,
    list: () => ({ runs: [] }),
    cancel: () => ({ ok: true }),
  } as unknown as ChatGateway;
  const host = new ChatHost({
    clock,
    gateway,
    runtimes,
    agents: new Map([['sim', { name: 'sim', runner: 'acp', command: ['sim'] } as unknown as AgentDef]]),
    parentAgent: 'sim',
    defaultCwd: '/work',
    mcpServersFor: () => [],
    permissionPolicy: 'allow',
    attemptTimeoutMs: 60_000,
    store: new MemoryStore(),
  });
  /** The chat pumps on the fake clock: advance it until the delivery settles. */
  const settle = async <T>(delivery: Promise<T>): Promise<T> => {
    let done = false;
    void delivery.then(
      () => {
        done = true;
      },
      () => {
        done = true;
      },
    );
    for (let i = 0; i < 100 && !done; i++) await clock.advance(10);
    return delivery;
  };
  const chat = await settle(host.create());
  return {
    sink: chat,
    settle,
    received: async () => runtimes.prompts.flatMap(idsIn),
    close: async () => {
      await settle(host.close(chat.id));
    },
  };
});
