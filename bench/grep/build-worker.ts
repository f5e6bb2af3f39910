import { join } from 'node:path';
import { build } from 'esbuild';

/**
 * Bundles the grep worker into `dir` (benchmarks run from `src/` through tsx, where there is no built
 * worker file) and returns its path.
 */
export async function buildGrepWorker(dir: string): Promise<string> {
  const outfile = join(dir, 'grep-worker.mjs');
  await build({
    entryPoints: [join(import.meta.dirname, '..', '..', 'src', 'transcripts', 'grep-worker.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  return outfile;
}
