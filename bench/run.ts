/**
 * `npm run bench`: runs every benchmark in `bench/` (or those named on the command line) one after the
 * other, each in its own process so one cannot disturb the next. Each prints its table and writes
 * `bench/results/<name>.md`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = import.meta.dirname;
const wanted = process.argv.slice(2);
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.replace(/\.bench\.ts$/, ''))
  .sort();
const names = wanted.length > 0 ? wanted : all;
let failed = 0;
for (const name of names) {
  if (!all.includes(name)) {
    console.error(`unknown benchmark ${name}; known: ${all.join(', ')}`);
    process.exitCode = 2;
    continue;
  }
  console.log(`\n=== bench/${name} ===`);
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--expose-gc', join(dir, `${name}.bench.ts`)],
    {
      stdio: 'inherit',
    },
  );
  if (result.status !== 0) failed++;
}
if (failed > 0) process.exitCode = 1;
