import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Check, Suite } from './suite-install.js';

/**
 * One run of the conformance suite's `server` command in suite mode (no `--scenario`): a single process
 * runs every scenario the suite lists for the given filter (`--spec-version`, `--suite`) one after the
 * other, each with its own MCP client, and writes each scenario's checks to its own folder. A process per
 * scenario cost about a second of CPU each (Node 22 loading the suite's modules), against milliseconds for
 * the scenario itself; the scenarios that do not apply to Crew also run here, and their results are not
 * read (scenarios.ts says why they do not apply).
 */
export interface SuiteRun {
  /** The checks the scenario wrote; empty when it did not run or did not finish. */
  checks(scenario: string): Check[];
  /** The suite's one-line verdict for the scenario (`✓ name: 3 passed, 0 failed`), if it printed one. */
  verdict(scenario: string): string | undefined;
  /** What the suite printed, for a failure message. */
  output: string;
}

export function runSuite(suite: Suite, serverUrl: string, filter: string[], out: string): Promise<SuiteRun> {
  const args = [suite.cli, 'server', '--url', serverUrl, ...filter, '-o', out];
  return new Promise((resolve) => {
    // The exit code is not the verdict: the scenarios that do not apply fail, by design.
    execFile(suite.node, args, { timeout: 240_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}${error?.killed ? '\n(killed: the run took over 240 s)' : ''}`;
      resolve({
        output,
        checks: (scenario) => readChecks(out, scenario),
        verdict: (scenario) =>
          stdout.split('\n').find((line) => new RegExp(`^[✓✗] ${escapeRegExp(scenario)}: `).test(line)),
      });
    });
  });
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The checks.json of `scenario` under `dir`: the suite names each folder `server-<scenario>-<timestamp>`. */
function readChecks(dir: string, scenario: string): Check[] {
  const folder = new RegExp(`^server-${escapeRegExp(scenario)}-\\d{4}-\\d\\d-\\d\\dT[\\d-]+Z$`);
  const checks: Check[] = [];
  if (!existsSync(dir)) return checks;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || !folder.test(entry.name)) continue;
    const file = join(dir, entry.name, 'checks.json');
    try {
      checks.push(...(JSON.parse(readFileSync(file, 'utf8')) as Check[]));
    } catch {
      // A scenario that threw leaves its folder without checks.json: no checks, which the test reports.
    }
  }
  return checks;
}
