import { CONFIG_KEYS } from '../core/config-schema.js';

export const TABLE_BEGIN =
  '<!-- config-table:begin (generated from src/core/config-schema.ts by `npm run docs:config`) -->';
export const TABLE_END = '<!-- config-table:end -->';

/** The README's table of every configuration key, generated from the schema so the two cannot drift. */
export function configTableMarkdown(): string {
  const rows = Object.entries(CONFIG_KEYS).map(
    ([key, spec]) =>
      `| \`${key}\` | \`${JSON.stringify(spec.default)}\` | ${spec.doc.replaceAll('|', '\\|')} |`,
  );
  return [TABLE_BEGIN, '| key | default | meaning |', '|---|---|---|', ...rows, TABLE_END].join('\n');
}

/** Replaces the generated block in a README's text. */
export function withConfigTable(readme: string): string {
  const start = readme.indexOf(TABLE_BEGIN);
  const end = readme.indexOf(TABLE_END);
  // A developer's tool (scripts/docs-config.ts), run on Crew's own README.
  if (start < 0 || end < 0) throw new Error('README has no config-table markers');
  return readme.slice(0, start) + configTableMarkdown() + readme.slice(end + TABLE_END.length);
}
