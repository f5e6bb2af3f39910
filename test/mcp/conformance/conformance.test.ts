import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemonProcess } from '../../helpers/daemon-process.js';
import { type AuthProxy, startAuthProxy } from './auth-proxy.js';
import { APPLICABLE, CONFORMANCE_VERSION, NOT_APPLICABLE, SPEC_VERSIONS } from './scenarios.js';
import { type Check, installSuite, type Suite } from './suite-install.js';

/**
 * The official MCP conformance suite against a real `crew serve` on loopback, every applicable server
 * scenario on each session-based spec version (scenarios.ts says which and why the rest do not apply).
 * The suite reaches Crew through a loopback proxy that adds the bearer token (auth-proxy.ts); Crew's
 * auth is not relaxed for it.
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

/** Every checks.json under `dir` (the suite nests one folder per scenario run). */
function readChecks(dir: string): Check[] {
  const checks: Check[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name === 'checks.json') {
      checks.push(...(JSON.parse(readFileSync(join(entry.parentPath, entry.name), 'utf8')) as Check[]));
    }
  }
  return checks;
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

  // Each scenario is its own suite process with its own MCP session, so they run at once (vitest's
  // maxConcurrency, 5): a run mostly waits on Node 22 starting and on loopback round trips.
  describe.concurrent('each applicable scenario', () => {
    for (const version of SPEC_VERSIONS) {
      for (const { scenario, versions } of APPLICABLE.filter((a) => a.versions.includes(version))) {
        it(`${scenario} on ${version}: every check passes`, async ({ expect }) => {
          expect(versions).toContain(version);
          const out = join(scratch, `${scenario}-${version}`);
          const args = [suite.cli, 'server', '--url', `${proxy.url}/mcp`, '--scenario', scenario];
          const result = await run(suite.node, [...args, '--spec-version', version, '-o', out], {
            timeout: 90_000,
          }).then(
            () => 0,
            (error: { code?: number; stdout?: string }) => ({ code: error.code, stdout: error.stdout }),
          );
          const checks = readChecks(out);
          expect(checks.length).toBeGreaterThan(0);
          // Warnings count as failures here: SUCCESS or INFO only.
          const bad = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO');
          expect(bad, JSON.stringify(bad, null, 2)).toEqual([]);
          expect(result).toBe(0);
        }, 120_000);
      }
    }
  });
});
