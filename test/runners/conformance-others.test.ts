import { realClock } from '../../src/clock/real-clock.js';
import { CommandRunner } from '../../src/runners/command-runner.js';
import { FakeRunner } from '../../src/runners/fake-runner.js';
import { simCommand } from '../helpers/sim.js';
import { runnerConformance } from './runner-conformance.js';

runnerConformance('command runner (crew-sim-agent --once)', () => ({
  runner: new CommandRunner({ clock: realClock, killGraceMs: 2000 }),
  agent: {
    name: 'sim-once',
    runner: 'command',
    command: [...simCommand(), '--once', '{task}'],
    shared: false,
    skills: [],
  },
}));

runnerConformance('fake runner', () => ({
  runner: new FakeRunner({
    clock: realClock,
    plan: (request) => {
      const text = request.prompt;
      const sleep = /sleep=(\d+)ms/.exec(text);
      return {
        durationMs: sleep ? Number(sleep[1]) : 10,
        ...(/\bhang\b/.test(text) ? { hang: true } : {}),
        ...(/fail=error|exit=3/.test(text) ? { fail: 'scripted failure' } : {}),
        output: /\becho\b/.test(text) ? [text] : chunksOf(text),
      };
    },
  }),
  agent: { name: 'fake', runner: 'acp', command: ['fake'], shared: false, skills: [] },
  spawnsProcesses: false,
}));

/** The simulator's plain answer: `sim: chunk i/K` per chunk, else `sim: done`. */
function chunksOf(text: string): string[] {
  const k = Number(/chunks=(\d+)/.exec(text)?.[1] ?? 0);
  return k > 0 ? Array.from({ length: k }, (_, i) => `sim: chunk ${i + 1}/${k}\n`) : ['sim: done\n'];
}
