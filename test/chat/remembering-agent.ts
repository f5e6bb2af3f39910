import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';

/**
 * A tiny ACP agent for the chat tests that the simulator cannot stand in for: it advertises
 * `loadSession` and keeps each session's prompts in a file under the directory given as its argument, so
 * a fresh process can `session/load` what a killed one held (replaying the history as updates first).
 * Every answer is `turn N: <prompt> (remembers: <earlier prompts>)`.
 */

const stateDir = process.argv[2];
if (!stateDir) {
  process.stderr.write('usage: remembering-agent <state dir>\n');
  process.exit(2);
}
const historyPath = (sessionId: string) => join(stateDir, `${sessionId.replace(/[^\w-]/g, '_')}.json`);
const historyOf = (sessionId: string): string[] =>
  existsSync(historyPath(sessionId))
    ? (JSON.parse(readFileSync(historyPath(sessionId), 'utf8')) as string[])
    : [];

const app = acp
  .agent({ name: 'remembering-agent' })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: true, promptCapabilities: {}, mcpCapabilities: { http: true } },
    agentInfo: { name: 'remembering-agent', version: '0.0.0' },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, () => {
    const sessionId = `mem-${process.pid}-${Date.now()}`;
    writeFileSync(historyPath(sessionId), '[]');
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
    if (!existsSync(historyPath(params.sessionId))) throw acp.RequestError.sessionNotFound(params.sessionId);
    for (const prompt of historyOf(params.sessionId)) {
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: prompt } },
      });
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: {
          sessionUpdate: 'agent_message_chunk',
          content: { type: 'text', text: `(replayed) ${prompt}\n` },
        },
      });
    }
    return {};
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const text = params.prompt.map((block) => (block.type === 'text' ? block.text : '')).join('');
    const history = historyOf(params.sessionId);
    const answer = `turn ${history.length + 1}: ${text} (remembers: ${history.join(', ') || 'nothing'})\n`;
    writeFileSync(historyPath(params.sessionId), JSON.stringify([...history, text]));
    await client.notify(acp.methods.client.session.update, {
      sessionId: params.sessionId,
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: answer } },
    });
    return { stopReason: 'end_turn' as const };
  })
  .onNotification(acp.methods.agent.session.cancel, () => {});

process.stdout.on('error', () => process.exit(0));
const connection = app.connect(
  acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  ),
);
void connection.closed.then(() => process.exit(0));
