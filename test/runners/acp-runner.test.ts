import { realClock } from '../../src/clock/real-clock.js';
import { AcpRunner } from '../../src/runners/acp-runner.js';
import { simAgent } from '../helpers/sim.js';
import { runnerConformance } from './runner-conformance.js';

runnerConformance('ACP runner, dedicated runtimes', () => ({
  runner: new AcpRunner({ clock: realClock, killGraceMs: 2000 }),
  agent: simAgent(),
}));

runnerConformance('ACP runner, shared runtime', () => ({
  runner: new AcpRunner({ clock: realClock, killGraceMs: 2000 }),
  agent: simAgent({ shared: true }),
  shared: true,
}));
