// `npm run build`: the files tsc does not emit go beside the compiled code: the dashboard's hand-written
// assets (no bundling needed) and cluster mode's Lua scripts (read at a cluster link's start).
import { cpSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
for (const dir of [join('dashboard', 'assets'), join('cluster', 'redis', 'lua')]) {
  cpSync(join(root, 'src', dir), join(root, 'dist', dir), { recursive: true });
}
