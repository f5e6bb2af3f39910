import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const text = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'decisions.md'), 'utf8');
const MARKER = '<!-- new entries below this line are folded into their subject by the next session -->';

/** Each top-level entry (a line starting `- `) with the id it opens with, if any. */
function entries(): { line: string; id: number | undefined }[] {
  const regrouped = text.slice(0, text.indexOf(MARKER));
  return regrouped
    .split('\n')
    .filter((line) => line.startsWith('- '))
    .map((line) => {
      const m = /^- <a id="d-(\d+)"><\/a>\*\*D-(\d+)\*\*/.exec(line);
      return { line, id: m && m[1] === m[2] ? Number(m[1]) : undefined };
    });
}

describe('docs/decisions.md, regrouped by subject', () => {
  it('gives every entry a stable id (D-n, anchored) and no id twice', () => {
    const all = entries();
    expect(all.length).toBeGreaterThan(250);
    expect(all.filter((e) => e.id === undefined).map((e) => e.line.slice(0, 80))).toEqual([]);
    const ids = all.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('points every "superseded by" and "supersedes" at an entry that exists', () => {
    const ids = new Set(entries().map((e) => e.id));
    const refs = [
      ...text.matchAll(/[Ss]upersed(?:ed by|es) ((?:\[?D-\d+\]?(?:\(#d-\d+\))?(?:, | and )?)+)/g),
    ].flatMap((m) => [...(m[1] ?? '').matchAll(/D-(\d+)/g)].map((r) => Number(r[1])));
    expect(refs.length).toBeGreaterThan(5);
    expect(refs.filter((id) => !ids.has(id))).toEqual([]);
  });

  it('opens with a table of contents that links every subject', () => {
    // Sections other branches appended below the marker are not subjects yet: the next session folds them in.
    const subjects = [...text.slice(0, text.indexOf(MARKER)).matchAll(/^## (.+)$/gm)].map((m) => m[1] ?? '');
    expect(subjects.length).toBeGreaterThan(10);
    const toc = text.slice(0, text.indexOf('\n## '));
    for (const subject of subjects) expect(toc, subject).toContain(`[${subject}](#`);
  });

  it('ends with the marker below which new sections are appended', () => {
    expect(text.trimEnd().endsWith(MARKER) || text.includes(`\n${MARKER}\n`)).toBe(true);
  });
});
