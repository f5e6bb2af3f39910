import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The directory holding the bundled entry points (`cli/main.js`, `sim/main.js`, …), set by the bundler's
 * `define` (the test bundle, see `test/global-setup/build-test-bundle.ts`). Inside a bundle
 * `import.meta.url` names the bundle file, not this module's place in the tree, so sibling entry points
 * cannot be found relative to it. Undefined in `src/` and in the tsc build (`dist/`).
 */
declare const __CREW_ENTRY_ROOT__: string | undefined;

/** Where Crew's own entry points live: the bundle's root, else beside this module (`dist/` or `src/`). */
export const entryRoot: string =
  typeof __CREW_ENTRY_ROOT__ === 'string' ? __CREW_ENTRY_ROOT__ : dirname(fileURLToPath(import.meta.url));

export type EntryCommand =
  | { ok: true; command: string[] }
  | { ok: false; command: string[]; missing: string };

/**
 * How to start one of Crew's own entry points (`sim/main`, `cli/main`) as a process: the built `.js`
 * under `baseDir` when present (`dist/`, a bundle), else the `.ts` source through tsx (`src/`). tsx is
 * named by its absolute location because `--import` resolves a bare name from the child's cwd.
 */
export function entryCommand(entry: string, baseDir = entryRoot): EntryCommand {
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
