import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const srcOrDist = dirname(fileURLToPath(import.meta.url));

export type EntryCommand =
  | { ok: true; command: string[] }
  | { ok: false; command: string[]; missing: string };

/**
 * How to start one of Crew's own entry points (`sim/main`, `cli/main`) as a process: the built `.js`
 * beside this module when present (`dist/`), else the `.ts` source through tsx (tests, `src/`). tsx is
 * named by its absolute location because `--import` resolves a bare name from the child's cwd.
 */
export function entryCommand(entry: string, baseDir = srcOrDist): EntryCommand {
  const built = join(baseDir, `${entry}.js`);
  const source = join(baseDir, `${entry}.ts`);
  if (existsSync(built)) return { ok: true, command: [process.execPath, built] };
  const tsx = existsSync(source) ? resolveTsxLoader(baseDir) : undefined;
  if (tsx !== undefined) return { ok: true, command: [process.execPath, '--import', tsx, source] };
  return { ok: false, command: [process.execPath, built], missing: existsSync(source) ? 'tsx' : built };
}

function resolveTsxLoader(fromDir: string): string | undefined {
  try {
    return pathToFileURL(createRequire(join(fromDir, 'noop.js')).resolve('tsx')).href;
  } catch {
    return undefined;
  }
}
