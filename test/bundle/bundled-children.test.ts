import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveSimCommand } from '../../src/agents/builtin-agents.js';
import { entryCommand } from '../../src/self-command.js';
import { api, crewCommand, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { simCommand } from '../helpers/sim.js';
import { BUNDLE_ENTRIES, type BundleEntry, bundledCommand, TEST_BUNDLE_DIR } from '../helpers/test-bundle.js';
import { hookCommand } from '../hooks/hook-harness.js';

/**
 * Every child a test starts runs from the test bundle with plain node, never through tsx (a start
 * through tsx costs 2.5-3.5x as much): the helpers' commands, Crew's own lookups of its entry points
 * inside the test process, and the processes a real daemon started by a test starts in turn.
 */

type Run = { id: string; status: string };

function argvOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
}

/** Direct children of `pid` (Linux). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

function expectBundled(argv: string[], entry: BundleEntry): void {
  expect(argv.slice(0, 2)).toEqual([process.execPath, join(TEST_BUNDLE_DIR, `${entry}.js`)]);
  expect(argv.filter((arg) => arg.includes('tsx'))).toEqual([]);
}

describe('children of tests start from the test bundle with plain node', () => {
  it.each(Object.keys(BUNDLE_ENTRIES) as BundleEntry[])('bundledCommand(%j)', (entry) => {
    expectBundled(bundledCommand(entry), entry);
  });

  it('the helpers: simCommand, crewCommand, hookCommand', () => {
    expectBundled(simCommand('--once', 'x'), 'sim/main');
    const [node, args] = crewCommand(['serve']);
    expectBundled([node, ...args], 'cli/main');
    expectBundled(hookCommand(), 'hooks/claude-hook-bin');
  });

  it("Crew's own lookups inside the test process (the bridge's daemon, the built-in sim agent)", () => {
    expectBundled(entryCommand('cli/main').command, 'cli/main');
    expectBundled(entryCommand('sim/main').command, 'sim/main');
    expectBundled(resolveSimCommand().command, 'sim/main');
  });

  it.runIf(process.platform === 'linux')(
    'a daemon started by a test runs bundled, and starts the simulator from the bundle',
    async () => {
      const d = await startDaemonProcess({ config: { 'agent.shutdown_grace_secs': 0 } });
      try {
        expectBundled(argvOf(d.proc.pid as number), 'cli/main');
        const spawned = await api(d, 'POST', '/api/spawn', { args: { task: '#sim hang' } });
        const id = (spawned.body.runs as Run[])[0]!.id;
        const sim = await pollFor('the simulator to start', () =>
          childrenOf(d.proc.pid as number).find((pid) => argvOf(pid)[1]?.endsWith('main.js')),
        );
        expectBundled(argvOf(sim), 'sim/main');
        for (const pid of childrenOf(d.proc.pid as number)) {
          expect(argvOf(pid).filter((arg) => arg.includes('tsx'))).toEqual([]);
        }
        await api(d, 'POST', `/api/runs/${id}/cancel`);
      } finally {
        await d.stop();
        d.cleanup();
      }
    },
  );
});
