import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Crew's own version, from the nearest `package.json` named `crew` above this module: the same walk finds
 * it from `src/`, `dist/`, an installed package and the test bundle (a few small reads).
 */
export function packageVersion(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === 'crew' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // No package.json here (or not JSON): keep walking up.
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}
