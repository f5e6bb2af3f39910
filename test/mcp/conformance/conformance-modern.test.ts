import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../../helpers/daemon-process.js';
import { type AuthProxy, startAuthProxy } from './auth-proxy.js';
import { ALPHA_VERSION, MODERN_APPLICABLE, MODERN_NOT_APPLICABLE, MODERN_SPEC } from './scenarios-modern.js';
import { installSuite, type Suite } from './suite-install.js';
import { runSuite, type SuiteRun } from './suite-run.js';

/**
 * The alpha conformance suite's MCP 2026-07-28 server scenarios against a real `crew serve` (stateless
 * requests, no session), installed as the 0.1.16 one is (suite-install.ts) and reached through the same
 * token-adding proxy. scenarios-modern.ts says which apply and why the rest do not.
 *
 * One suite process runs every 2026-07-28 scenario the suite has (`--suite all`: some are not in its
 * default "active" set), one after the other (suite-run.ts); each case reads its own scenario's checks.
 */

const run = promisify(execFile);

let suite: Suite;
let daemon: DaemonProcess;
let proxy: AuthProxy;
const scratch = mkdtempSync(join(tmpdir(), 'crew-conformance-modern-'));

beforeAll(async () => {
  suite = await installSuite(ALPHA_VERSION);
  daemon = await startDaemonProcess();
  proxy = await startAuthProxy(daemon.url, daemon.token);
}, 300_000);

afterAll(async () => {
  await proxy?.close();
  await daemon?.stop();
  daemon?.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

/** The one suite run, started by the first case that needs it. */
let started: Promise<SuiteRun> | undefined;
function suiteRun(): Promise<SuiteRun> {
  started ??= runSuite(
    suite,
    `${proxy.url}/mcp`,
    ['--suite', 'all', '--spec-version', MODERN_SPEC],
    join(scratch, 'run'),
  );
  return started;
}

describe(`MCP conformance suite ${ALPHA_VERSION}, ${MODERN_SPEC}, against crew serve`, () => {
  it('classifies every 2026-07-28 and extension server scenario the suite has', async () => {
    const { stdout } = await run(suite.node, [suite.cli, 'list', '--server'], { timeout: 60_000 });
    const modern = [...stdout.matchAll(/^\s*- (\S+) \[([^\]]*)\]/gm)]
      .filter((m) => /2026-07-28|extension/.test(m[2] as string))
      .map((m) => m[1] as string);
    expect(modern.length).toBeGreaterThan(30);
    const unclassified = modern.filter(
      (name) => !MODERN_NOT_APPLICABLE.has(name) && !MODERN_APPLICABLE.some((a) => a.scenario === name),
    );
    expect(unclassified).toEqual([]);
    for (const { scenario } of MODERN_APPLICABLE) {
      expect(modern, scenario).toContain(scenario);
      expect(MODERN_NOT_APPLICABLE.has(scenario), scenario).toBe(false);
    }
  }, 60_000);

  // The cases wait for the one run. Its scenarios go one at a time, so server-stateless, which gives a
  // streamed tools/call 600 ms to answer, never runs beside another.
  describe.concurrent('each applicable scenario', () => {
    for (const { scenario, notApplicableChecks } of MODERN_APPLICABLE) {
      it(`${scenario}: every applicable check passes`, async ({ expect }) => {
        const run = await suiteRun();
        const checks = run.checks(scenario);
        expect(
          checks.length,
          `${scenario} left no checks; the suite printed:\n${run.output}`,
        ).toBeGreaterThan(0);
        // Warnings count as failures; SKIPPED is the suite's own "not offered" (no subscriptions here).
        const bad = checks.filter(
          (c) => !['SUCCESS', 'INFO', 'SKIPPED'].includes(c.status) && !notApplicableChecks?.has(c.id),
        );
        expect(bad, JSON.stringify(bad, null, 2)).toEqual([]);
        expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThan(0);
      }, 250_000);
    }
  });
});
