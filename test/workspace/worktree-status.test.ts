import { describe, expect, it } from 'vitest';
import { committedId, parseStatus } from '../../src/workspace/worktree-status.js';

const OID = 'a'.repeat(40);

describe('parseStatus (git status --porcelain=v2 --branch -z)', () => {
  it('reads the head and counts every path left, a rename once (its original path is the next field)', () => {
    const out = [
      `# branch.oid ${OID}`,
      '# branch.head crew/r1',
      '1 .M N... 100644 100644 100644 1111111 1111111 edited.txt',
      `2 R. N... 100644 100644 100644 2222222 2222222 R100 new name.txt`,
      '1 .M N... 100644 100644 100644 3333333 3333333 old name.txt',
      '',
    ].join('\0');
    // "old name.txt" above is the rename's original path, not an entry of its own.
    expect(parseStatus(out)).toEqual({ head: OID, left: 2, trackedOnly: true });
  });

  it('an untracked or unmerged path needs `add --all` before the commit', () => {
    expect(parseStatus([`# branch.oid ${OID}`, '? new.txt', ''].join('\0'))).toEqual({
      head: OID,
      left: 1,
      trackedOnly: false,
    });
    const unmerged = 'u UU N... 100644 100644 100644 100644 1111111 2222222 3333333 both.txt';
    expect(parseStatus([`# branch.oid ${OID}`, unmerged, ''].join('\0'))).toMatchObject({
      left: 1,
      trackedOnly: false,
    });
  });

  it('a clean worktree leaves nothing; an unborn branch has no head', () => {
    expect(parseStatus(`# branch.oid ${OID}\0# branch.head main\0`)).toEqual({
      head: OID,
      left: 0,
      trackedOnly: true,
    });
    expect(parseStatus('# branch.oid (initial)\0# branch.head main\0').head).toBeUndefined();
    expect(parseStatus('')).toEqual({ left: 0, trackedOnly: true });
  });
});

describe('committedId', () => {
  it("takes the full id from commit's summary line, root commit or not, and nothing from another line", () => {
    expect(committedId(`[crew/r1 ${OID}] crew: changes\n 1 file changed\n`)).toBe(OID);
    expect(committedId(`[main (root-commit) ${OID}] init\n`)).toBe(OID);
    expect(committedId('[crew/r1 abc1234] crew: changes\n')).toBeUndefined();
    expect(committedId(`crew: changes [x ${OID}]\n`)).toBeUndefined();
  });
});
