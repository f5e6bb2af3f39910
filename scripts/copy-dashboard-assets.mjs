// `npm run build`: the dashboard's hand-written assets (no bundling needed) go beside the compiled code.
import { cpSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
cpSync(join(root, 'src', 'dashboard', 'assets'), join(root, 'dist', 'dashboard', 'assets'), {
  recursive: true,
});
