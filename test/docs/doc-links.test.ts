import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((n) => n.endsWith('.md'))
    .map((n) => `docs/${n}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a markdown file offers: its headings' slugs and explicit `<a id="…">` targets. */
function anchors(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) out.add(slug(m[1] ?? ''));
  for (const m of text.matchAll(/<a id="([^"]+)">/g)) out.add(m[1] ?? '');
  return out;
}

/** The relative link targets of a markdown text (inline links and images), outside code spans and blocks. */
function links(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target));
}

describe('links in README.md and docs/*.md', () => {
  it('finds the documents and their links (the checks below would pass vacuously otherwise)', () => {
    expect(docs).toContain('docs/design.md');
    expect(links(readFileSync(join(root, 'README.md'), 'utf8')).length).toBeGreaterThan(5);
  });

  it('every relative link names a file that exists, and an anchor that file has', () => {
    const anchorsOf = new Map<string, Set<string>>();
    const broken: string[] = [];
    for (const doc of docs) {
      const text = readFileSync(join(root, doc), 'utf8');
      for (const target of links(text)) {
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? join(root, doc) : join(root, dirname(doc), decodeURIComponent(path));
        if (!existsSync(file)) {
          broken.push(`${doc}: ${target} (no ${relative(root, file)})`);
          continue;
        }
        if (anchor === undefined || !file.endsWith('.md')) continue;
        if (!anchorsOf.has(file)) anchorsOf.set(file, anchors(readFileSync(file, 'utf8')));
        if (!anchorsOf.get(file)?.has(anchor)) broken.push(`${doc}: ${target} (no anchor #${anchor})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
