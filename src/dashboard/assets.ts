import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CrewFault } from '../core/errors.js';

/** The page's static files, with their types. Served from memory after the first read. */
export const ASSETS = {
  'app.js': 'text/javascript; charset=utf-8',
  'state.js': 'text/javascript; charset=utf-8',
  'feed.js': 'text/javascript; charset=utf-8',
  'render-capacity.js': 'text/javascript; charset=utf-8',
  'render-runs.js': 'text/javascript; charset=utf-8',
  'render-detail.js': 'text/javascript; charset=utf-8',
  'actions.js': 'text/javascript; charset=utf-8',
  'view.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'panels.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
} as const;
export type AssetName = keyof typeof ASSETS;

/**
 * Where the assets sit: beside this module (`src/dashboard/assets`, or `dist/dashboard/assets` where
 * `npm run build` copies them), or, for a bundle whose modules were inlined into one entry file, the
 * sibling `dashboard/assets` of that entry's folder and then the repository's `src/dashboard/assets`.
 */
function candidates(): string[] {
  const here = dirname(fileURLToPath(import.meta.url));
  return [
    join(here, 'assets'),
    join(here, '..', 'dashboard', 'assets'),
    join(here, '..', '..', 'src', 'dashboard', 'assets'),
  ];
}

const cache = new Map<AssetName, Buffer>();

export function readAsset(name: AssetName): Buffer {
  const cached = cache.get(name);
  if (cached) return cached;
  for (const dir of candidates()) {
    try {
      const body = readFileSync(join(dir, name));
      cache.set(name, body);
      return body;
    } catch {
      // try the next place
    }
  }
  throw new CrewFault('install_incomplete', `the dashboard asset ${name} is missing; run npm run build`, {
    asset: name,
  });
}
