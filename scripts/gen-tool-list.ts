/**
 * `npm run gen:tool-list`: writes `src/mcp/tool-list-json.ts`, the `tools/list` answer as JSON text, from
 * `toolList()` (the zod schemas the daemon validates with). The stdio bridge answers `tools/list` from it
 * without loading zod; `test/mcp/tool-list-json.test.ts` fails when the two differ.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toolList } from '../src/mcp/tool-list.js';

const literal = JSON.stringify(toolList()).replaceAll('\\', '\\\\').replaceAll("'", "\\'");
writeFileSync(
  join(import.meta.dirname, '..', 'src', 'mcp', 'tool-list-json.ts'),
  `/**
 * The \`tools/list\` answer as JSON text: \`toolList()\` written out by \`npm run gen:tool-list\`, so the stdio
 * bridge answers \`tools/list\` without loading the tool schemas (zod). A test keeps it equal to \`toolList()\`.
 */
export const TOOL_LIST_JSON =
  '${literal}';
`,
);
