#!/usr/bin/env node
/**
 * `npm run test:soak [-- COUNT]`: runs the integration tier COUNT times in a row (default 20, or
 * `SOAK_RUNS`) and prints each run's pass/fail counts and failed tests, then the totals and every file
 * that failed at least once. Exit 1 on any failure. A flaky test shows up here long before it shows up
 * on CI.
 *
 * Extra vitest arguments go after the count: `npm run test:soak -- 5 test/daemon` soaks one folder.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const REPO_ROOT = join(import.meta.dirname, '..');
const VITEST = join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs');

const [countArg, ...vitestArgs] = process.argv.slice(2);
const runs = Number(countArg ?? process.env.SOAK_RUNS ?? 20);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`Expected the run count to be a positive integer, got ${JSON.stringify(countArg)}`);
  process.exit(2);
}

/** One vitest run of the integration tier; its JSON report, or the reason there is none. */
function runOnce(outputFile) {
  const started = Date.now();
  const child = spawnSync(
    process.execPath,
    [
      VITEST,
      'run',
      '--project',
      'integration',
      '--reporter=dot',
      '--reporter=json',
      `--outputFile.json=${outputFile}`,
      ...vitestArgs,
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const seconds = (Date.now() - started) / 1000;
  try {
    return { seconds, report: JSON.parse(readFileSync(outputFile, 'utf8')) };
  } catch {
    return { seconds, report: undefined, exit: child.status ?? child.signal };
  }
}

/** The first line of a failure, which names what was expected and what came. */
function firstLine(messages) {
  return (messages[0] ?? '').split('\n')[0].slice(0, 300);
}

const dir = mkdtempSync(join(tmpdir(), 'crew-soak-'));
const totals = { passed: 0, failed: 0, failedRuns: 0 };
/** file → how many runs it failed in, and the failing test names seen. */
const failures = new Map();
try {
  for (let i = 1; i <= runs; i++) {
    const { seconds, report, exit } = runOnce(join(dir, `run-${i}.json`));
    if (report === undefined) {
      totals.failedRuns++;
      console.log(`soak run ${i}/${runs}: no report (vitest exited ${exit}) in ${seconds.toFixed(0)} s`);
      continue;
    }
    const failedTests = [];
    for (const file of report.testResults) {
      const name = relative(REPO_ROOT, file.name);
      const failed = file.assertionResults.filter((t) => t.status === 'failed');
      // A file can fail with no failed test (an error in a hook or at import).
      if (failed.length === 0 && file.status !== 'failed') continue;
      const entry = failures.get(name) ?? { runs: 0, tests: new Set() };
      entry.runs++;
      for (const t of failed) entry.tests.add(t.fullName);
      if (failed.length === 0) entry.tests.add(`(file failed: ${file.message ?? 'no message'})`);
      failures.set(name, entry);
      for (const t of failed)
        failedTests.push(`${name} > ${t.fullName}\n    ${firstLine(t.failureMessages)}`);
      if (failed.length === 0) failedTests.push(`${name}\n    ${firstLine([file.message ?? ''])}`);
    }
    totals.passed += report.numPassedTests;
    totals.failed += report.numFailedTests;
    const runFailed = report.numFailedTests > 0 || report.numFailedTestSuites > 0 || !report.success;
    if (runFailed) totals.failedRuns++;
    console.log(
      `soak run ${i}/${runs}: ${report.numPassedTests} passed, ${report.numFailedTests} failed ` +
        `(${report.testResults.length} files) in ${seconds.toFixed(0)} s`,
    );
    for (const name of failedTests) console.log(`  failed: ${name}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log(
  `\nsoak: ${runs} runs, ${runs - totals.failedRuns} clean; tests ${totals.passed} passed, ${totals.failed} failed`,
);
for (const [name, { runs: count, tests }] of failures) {
  console.log(`  ${name}: failed in ${count} of ${runs} runs`);
  for (const test of tests) console.log(`    ${test}`);
}
process.exit(totals.failedRuns > 0 ? 1 : 0);
