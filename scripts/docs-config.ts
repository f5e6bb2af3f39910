/** `npm run docs:config`: rewrites the configuration table in README.md from the schema. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withConfigTable } from '../src/config/config-table.js';

const path = join(import.meta.dirname, '..', 'README.md');
writeFileSync(path, withConfigTable(readFileSync(path, 'utf8')));
