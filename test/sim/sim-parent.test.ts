import * as acp from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_ANSWER } from '../../src/sim/answer.js';
import { isAlive, waitUntil } from '../helpers/sim.js';
import { type FakeCrew, type FakeCrewOptions, startFakeCrew } from './fake-crew.js';
import { initialize, newSession, prompt, type SimClient, startSim } from './sim-client.js';

/**
 * The simulator as a parent: a real `crew-sim-agent` process calling a real MCP server (a stand-in for
 * Crew's, in this process) with the URL and bearer token it was given in `session/new`.
 */

const sims: SimClient[] = [];
const crews: FakeCrew[] = [];

afterEach(async () => {
  const clients = sims.splice(0);
  await Promise.all(clients.map((s) => s.close()));
  for (const s of clients) expect(isAlive(s.pid)).toBe(false);
  await Promise.all(crews.splice(0).map((crew) => crew.close()));
});

async function setup(options: FakeCrewOptions = {}) {
  const crew = await startFakeCrew(options);
  crews.push(crew);
  const sim = await startSim();
  sims.push(sim);
  await initialize(sim);
  const sessionId = await newSession(sim, process.cwd(), [crew.mcpServer]);
  /** Sends `text` as one turn; its stop reason and the text this turn said. */
  const turn = async (text: string) => {
    const before = sim.text(sessionId).length;
    const { stopReason } = await prompt(sim, sessionId, text);
    return { stopReason, text: sim.text(sessionId).slice(before) };
  };
  return { crew, sim, sessionId, turn };
}

const names = (crew: FakeCrew) => crew.calls.map((c) => c.name);

describe('crew-sim-agent as a parent: wait', () => {
  it('spawns each task with its own spawn_run, waits for every event and sums up', async () => {
    const { crew, turn } = await setup();
    const answer = await turn('#sim spawn="#sim sleep=50ms" spawn="second task" wait');
    expect(answer).toEqual({
      stopReason: 'end_turn',
      text: 'spawned r1\nspawned r2\nsummary: r1=completed r2=completed\n',
    });
    const spawns = crew.calls.filter((c) => c.name === 'spawn_run');
    expect(spawns.map((c) => c.args)).toEqual([{ task: '#sim sleep=50ms' }, { task: 'second task' }]);
    expect(
      names(crew)
        .slice(2)
        .every((n) => n === 'spawn_wait'),
    ).toBe(true);
    expect(crew.calls.find((c) => c.name === 'spawn_wait')?.args).toEqual({ timeout_secs: 30 });
    expect(crew.unauthorized).toBe(0);
  });

  it('sends a wave as one spawn_run with tasks=[...] and reports every member of its digest', async () => {
    const { crew, turn } = await setup({ durationMs: (task) => (task === 'slow' ? 300 : 20) });
    const answer = await turn('#sim spawn="a" spawn="slow" spawn="#sim fail=error" wave wait');
    expect(answer.text).toBe(
      'spawned r1\nspawned r2\nspawned r3\nsummary: r1=completed r2=completed r3=failed\n',
    );
    expect(crew.calls.filter((c) => c.name === 'spawn_run').map((c) => c.args)).toEqual([
      { tasks: ['a', 'slow', '#sim fail=error'] },
    ]);
  });

  it('reports a refused spawn in its answer and sums up only the admitted runs', async () => {
    const refusal = {
      code: 'depth_exceeded',
      message: 'nesting is limited to 2 levels;\ndo the work yourself',
    };
    const { crew, turn } = await setup({
      refuse: (tasks) => (tasks.includes('too deep') ? refusal : undefined),
    });
    expect((await turn('#sim spawn="fine" spawn="too deep" wait')).text).toBe(
      'spawned r1\nrefused depth_exceeded: nesting is limited to 2 levels; do the work yourself\nsummary: r1=completed\n',
    );
    const wave = await turn('#sim spawn="x" spawn="too deep" wave wait');
    expect(wave).toEqual({
      stopReason: 'end_turn',
      text: 'refused depth_exceeded: nesting is limited to 2 levels; do the work yourself\nsummary: none\n',
    });
    // With nothing admitted no event will come, so a yield sums up at once too.
    expect((await turn('#sim spawn="too deep" yield')).text).toBe(
      'refused depth_exceeded: nesting is limited to 2 levels; do the work yourself\nsummary: none\n',
    );
    expect(names(crew).filter((n) => n === 'spawn_run')).toHaveLength(4);
  });

  it('ends a waiting turn with `cancelled` on session/cancel and lets go of its spawn_wait', async () => {
    const { crew, sim, sessionId, turn } = await setup({ durationMs: () => undefined });
    const waiting = turn('#sim spawn="never ends" wait');
    await waitUntil(() => crew.waiting() === 1, 10_000, 'the simulator in spawn_wait');
    await sim.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await waiting).stopReason).toBe('cancelled');
    // The MCP client was closed with the turn, so the server's pending spawn_wait ended with it.
    await waitUntil(() => crew.waiting() === 0, 5000, 'the server-side spawn_wait released');
    expect(await turn('hello')).toEqual({ stopReason: 'end_turn', text: DEFAULT_ANSWER });
  });
});

describe('crew-sim-agent as a parent: yield (hosted chat)', () => {
  it('ends the turn after spawning, then acks events injected as one prompt and sums up', async () => {
    const { crew, turn } = await setup();
    expect(await turn('#sim spawn="a" spawn="b" yield')).toEqual({
      stopReason: 'end_turn',
      text: 'spawned r1\nspawned r2\n',
    });
    expect(names(crew)).toEqual(['spawn_run', 'spawn_run']);
    expect((await turn('are they done?')).text).toBe('waiting for 2 completion events\n');
    const events = `${crew.eventText('r2', 'failed')}\n\n${crew.eventText('r1', 'completed')}`;
    expect(await turn(events)).toEqual({
      stopReason: 'end_turn',
      text: 'ack r2=failed\nack r1=completed\nsummary: r1=completed r2=failed\n',
    });
    // The summary closes the wait: the session answers plainly again.
    expect((await turn('thanks')).text).toBe(DEFAULT_ANSWER);
    expect(names(crew)).toEqual(['spawn_run', 'spawn_run']);
  });

  it('gives the summary with the prompt that brings the last awaited event', async () => {
    const { crew, turn } = await setup();
    await turn('#sim spawn="a" spawn="b"');
    expect((await turn(crew.eventText('r1', 'completed'))).text).toBe(
      'ack r1=completed\nwaiting for 1 completion event\n',
    );
    expect((await turn(crew.eventText('r2', 'timed_out'))).text).toBe(
      'ack r2=timed_out\nsummary: r1=completed r2=timed_out\n',
    );
  });

  it('reads a wave digest: every member is acked and summed up', async () => {
    const { crew, turn } = await setup();
    expect((await turn('#sim spawn="a" spawn="b" wave yield')).text).toBe('spawned r1\nspawned r2\n');
    const digest = crew.digestText('b1', [
      ['r1', 'completed'],
      ['r2', 'cancelled'],
    ]);
    expect((await turn(digest)).text).toBe(
      'ack r1=completed\nack r2=cancelled\nsummary: r1=completed r2=cancelled\n',
    );
  });
});

describe('crew-sim-agent as a parent: without Crew', () => {
  it('fails the turn with a clear error when session/new gave no MCP server, and lives on', async () => {
    const sim = await startSim();
    sims.push(sim);
    await initialize(sim);
    const sessionId = await newSession(sim);
    await expect(prompt(sim, sessionId, '#sim spawn="a" wait')).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('no HTTP MCP server named "crew"'),
    });
    expect((await prompt(sim, sessionId, 'hello')).stopReason).toBe('end_turn');
  });

  it('fails the turn when Crew turns its token away', async () => {
    const crew = await startFakeCrew();
    crews.push(crew);
    const sim = await startSim();
    sims.push(sim);
    await initialize(sim);
    const wrongToken = { ...crew.mcpServer, headers: [{ name: 'Authorization', value: 'Bearer nope' }] };
    const sessionId = await newSession(sim, process.cwd(), [wrongToken as acp.McpServer]);
    await expect(prompt(sim, sessionId, '#sim spawn="a" wait')).rejects.toMatchObject({
      message: expect.stringContaining("cannot connect to Crew's MCP server"),
    });
    expect(crew.unauthorized).toBeGreaterThan(0);
    expect(crew.calls).toEqual([]);
  });
});
