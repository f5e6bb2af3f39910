import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../../helpers/daemon-process.js';
import { type AuthProxy, startAuthProxy } from './auth-proxy.js';
import { ALPHA_VERSION, MODERN_APPLICABLE, MODERN_NOT_APPLICABLE, MODERN_SPEC } from './scenarios-modern.js';
import { type Check, installSuite, type Suite } from './suite-install.js';

/**
 * The alpha conformance suite's MCP 2026-07-28 server scenarios against a real `crew serve` (stateless
 * requests, no session), installed as the 0.1.16 one is (suite-install.ts) and reached through the same
 * token-adding proxy. scenarios-modern.ts says which apply and why the rest do not.
 */

const run = promisify(execFile);

/** Scenarios whose checks give the server under a second per answer: never run beside the others. */
const TIMED_SCENARIOS = new Set(['server-stateless']);

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

function readChecks(dir: string): Check[] {
  const checks: Check[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name === 'checks.json') {
      checks.push(...(JSON.parse(readFileSync(join(entry.parentPath, entry.name), 'utf8')) as Check[]));
    }
  }
  return checks;
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

  // Each scenario is its own suite process sending its own stateless requests, so they run at once
  // (vitest's maxConcurrency, 5): a run mostly waits on Node 22 starting and on loopback round trips.
  // Except server-stateless: it gives a streamed tools/call 600 ms to answer, so it runs alone.
  describe.concurrent('each applicable scenario', () => {
    for (const { scenario, notApplicableChecks } of MODERN_APPLICABLE) {
      const alone = TIMED_SCENARIOS.has(scenario) ? it.sequential : it;
      alone(
        `${scenario}: every applicable check passes`,
        async ({ expect }) => {
          const out = join(scratch, scenario);
          const args = [suite.cli, 'server', '--url', `${proxy.url}/mcp`, '--scenario', scenario];
          await run(suite.node, [...args, '--spec-version', MODERN_SPEC, '-o', out], {
            timeout: 90_000,
          }).catch(() => undefined);
          const checks = readChecks(out);
          expect(checks.length).toBeGreaterThan(0);
          // Warnings count as failures; SKIPPED is the suite's own "not offered" (no subscriptions here).
          const bad = checks.filter(
            (c) => !['SUCCESS', 'INFO', 'SKIPPED'].includes(c.status) && !notApplicableChecks?.has(c.id),
          );
          expect(bad, JSON.stringify(bad, null, 2)).toEqual([]);
          expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThan(0);
        },
        120_000,
      );
    }
  });
});
