import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { infoOf } from '../helpers/sim.js';
import { initialize, newSession, prompt, type SimClient, startSim } from './sim-client.js';

const started: SimClient[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function sim(args: string[]): Promise<{ s: SimClient; init: acp.InitializeResponse }> {
  const s = await startSim(args);
  started.push(s);
  return { s, init: await initialize(s) };
}

describe('crew-sim-agent --sessions DIR: sessions outlive the process (issue 29)', () => {
  it('advertises loadSession; a second process loads the session, replays its prompts, and its turn sees them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crew-sim-sessions-'));
    dirs.push(dir);
    const first = await sim(['--sessions', dir]);
    expect(first.init.agentCapabilities?.loadSession).toBe(true);
    const id = await newSession(first.s);
    await prompt(first.s, id, 'remember the word heron');
    await first.s.close();

    const second = await sim(['--sessions', dir]);
    await second.s.agent.request(acp.methods.agent.session.load, {
      sessionId: id,
      cwd: tmpdir(),
      mcpServers: [],
    });
    const replayed = (second.s.updates.get(id) ?? []).flatMap((u) =>
      u.sessionUpdate === 'user_message_chunk' && u.content.type === 'text' ? [u.content.text] : [],
    );
    expect(replayed).toEqual(['remember the word heron']);
    await prompt(second.s, id, '#sim info');
    expect(infoOf(second.s.text(id))).toMatchObject({ sessionId: id, earlier: ['remember the word heron'] });
  });

  it('an unknown or hostile session id is refused, and without --sessions there is no session/load', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crew-sim-sessions-'));
    dirs.push(dir);
    const { s } = await sim(['--sessions', dir]);
    for (const sessionId of ['sim-1-1', '../../etc/passwd', '']) {
      await expect(
        s.agent.request(acp.methods.agent.session.load, { sessionId, cwd: tmpdir(), mcpServers: [] }),
      ).rejects.toThrow();
    }
    const plain = await sim([]);
    expect(plain.init.agentCapabilities?.loadSession).toBe(false);
    await expect(
      plain.s.agent.request(acp.methods.agent.session.load, {
        sessionId: 'sim-1-1',
        cwd: tmpdir(),
        mcpServers: [],
      }),
    ).rejects.toThrow(/not found/i);
  });
});
