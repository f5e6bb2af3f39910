import { type ChildProcess, spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { simCommand } from '../helpers/sim.js';

/** A real `crew-sim-agent` process driven by the SDK's ACP client, for the simulator's own tests. */
export interface SimClient {
  agent: acp.ClientContext;
  child: ChildProcess;
  pid: number;
  /** Every `session/update` received, per session, in order. */
  updates: Map<string, acp.SessionUpdate[]>;
  /** How `session/request_permission` is answered. */
  permission: 'allow' | 'reject';
  /** The `agent_message_chunk` text of a session so far. */
  text(sessionId: string): string;
  /** Resolves with the agent's exit once it is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
  /** Closes stdin and waits for the exit (SIGKILL if it lingers). */
  close(): Promise<void>;
}

export async function startSim(args: string[] = []): Promise<SimClient> {
  const [file, ...rest] = simCommand(...args) as [string, ...string[]];
  const child = spawn(file, rest, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (data: Buffer) => {
    stderr += data.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const updates = new Map<string, acp.SessionUpdate[]>();
  const sim: Partial<SimClient> & { permission: 'allow' | 'reject' } = { permission: 'allow' };
  const app = acp
    .client({ name: 'sim-test' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      const list = updates.get(params.sessionId) ?? [];
      list.push(params.update);
      updates.set(params.sessionId, list);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const wanted = sim.permission === 'allow' ? 'allow_once' : 'reject_once';
      const option = params.options.find((o) => o.kind === wanted);
      return option
        ? { outcome: { outcome: 'selected', optionId: option.optionId } }
        : { outcome: { outcome: 'cancelled' } };
    });
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
  );
  const connection = app.connect(stream);
  return Object.assign(sim, {
    agent: connection.agent,
    child,
    pid: child.pid!,
    updates,
    exited,
    stderr: () => stderr,
    text: (sessionId: string) =>
      (updates.get(sessionId) ?? [])
        .map((u) =>
          u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? u.content.text : '',
        )
        .join(''),
    async close() {
      connection.close();
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  });
}

/** A session in `cwd`, given `mcpServers` (none by default). */
export async function newSession(
  sim: SimClient,
  cwd = process.cwd(),
  mcpServers: acp.McpServer[] = [],
): Promise<string> {
  const { sessionId } = await sim.agent.request(acp.methods.agent.session.new, { cwd, mcpServers });
  return sessionId;
}

export function prompt(sim: SimClient, sessionId: string, text: string): Promise<acp.PromptResponse> {
  return sim.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
}

export async function initialize(sim: SimClient): Promise<acp.InitializeResponse> {
  return sim.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
}
