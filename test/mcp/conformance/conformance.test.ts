import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../../helpers/daemon-process.js';
import { type AuthProxy, startAuthProxy } from './auth-proxy.js';
import { APPLICABLE, CONFORMANCE_VERSION, NOT_APPLICABLE, SPEC_VERSIONS } from './scenarios.js';
import { installSuite, type Suite } from './suite-install.js';
import { runSuite, type SuiteRun } from './suite-run.js';

/**
 * The official MCP conformance suite against a real `crew serve` on loopback, every applicable server
 * scenario on each session-based spec version (scenarios.ts says which and why the rest do not apply).
 * The suite reaches Crew through a loopback proxy that adds the bearer token (auth-proxy.ts); Crew's
 * auth is not relaxed for it.
 *
 * One suite process per spec version runs every scenario the suite lists for it (suite-run.ts); each case
 * reads its own scenario's checks and verdict from that run.
 */

const run = promisify(execFile);

let suite: Suite;
let daemon: DaemonProcess;
let proxy: AuthProxy;
const scratch = mkdtempSync(join(tmpdir(), 'crew-conformance-'));

beforeAll(async () => {
  suite = await installSuite(CONFORMANCE_VERSION);
  daemon = await startDaemonProcess();
  proxy = await startAuthProxy(daemon.url, daemon.token);
  // Both versions' runs start now, beside the listing case.
  for (const version of SPEC_VERSIONS) void suiteRunOf(version);
}, 300_000);

afterAll(async () => {
  await proxy?.close();
  await daemon?.stop();
  daemon?.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});

/** `list --server`: scenario name → the spec versions the suite tags it with. */
async function listed(): Promise<Map<string, string[]>> {
  const { stdout } = await run(suite.node, [suite.cli, 'list', '--server'], { timeout: 60_000 });
  const scenarios = new Map<string, string[]>();
  for (const match of stdout.matchAll(/^\s*- (\S+) \[([^\]]*)\]/gm)) {
    scenarios.set(match[1] as string, (match[2] as string).split(','));
  }
  return scenarios;
}

/** The suite run for each spec version, started by the first case that needs it. */
const runs = new Map<string, Promise<SuiteRun>>();
function suiteRunOf(version: string): Promise<SuiteRun> {
  let started = runs.get(version);
  if (!started) {
    started = runSuite(suite, `${proxy.url}/mcp`, ['--spec-version', version], join(scratch, version));
    runs.set(version, started);
  }
  return started;
}

describe(`MCP conformance suite ${CONFORMANCE_VERSION} against crew serve`, () => {
  it('classifies every server scenario the suite has, and each applicable one is tagged for its versions', async () => {
    const scenarios = await listed();
    expect(scenarios.size).toBeGreaterThan(20);
    const unclassified = [...scenarios.keys()].filter(
      (name) => !NOT_APPLICABLE.has(name) && !APPLICABLE.some((a) => a.scenario === name),
    );
    expect(unclassified).toEqual([]);
    for (const { scenario, versions } of APPLICABLE) {
      expect(scenarios.get(scenario), scenario).toEqual(expect.arrayContaining([...versions]));
      expect(NOT_APPLICABLE.has(scenario), scenario).toBe(false);
    }
  }, 60_000);

  // Each case waits for its version's run (both started in beforeAll).
  describe.concurrent('each applicable scenario', () => {
    for (const version of SPEC_VERSIONS) {
      for (const { scenario, versions } of APPLICABLE.filter((a) => a.versions.includes(version))) {
        it(`${scenario} on ${version}: every check passes`, async ({ expect }) => {
          expect(versions).toContain(version);
          const run = await suiteRunOf(version);
          const checks = run.checks(scenario);
          expect(
            checks.length,
            `${scenario} left no checks; the suite printed:\n${run.output}`,
          ).toBeGreaterThan(0);
          // Warnings count as failures here: SUCCESS or INFO only.
          const bad = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO');
          expect(bad, JSON.stringify(bad, null, 2)).toEqual([]);
          // The suite's own verdict (what the exit code of a run of this scenario alone says).
          expect(run.verdict(scenario)).toMatch(/^✓ /);
        }, 250_000);
      }
    }
  });
});
