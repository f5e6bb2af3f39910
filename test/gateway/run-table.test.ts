import { describe, expect, it } from 'vitest';
import { parentCell, runTable } from '../../src/gateway/run-table.js';
import type { RunView } from '../../src/gateway/run-view.js';

const run = (fields: Partial<RunView>): RunView => ({
  id: 'r1',
  status: 'completed',
  agent: 'sim',
  parent: 'cli:log',
  depth: 0,
  task_preview: 'a task',
  created_at: '2026-01-01T00:00:00.000Z',
  delivery: 'delivered',
  ...fields,
});

/** `crew list`'s table: a PARENT column in the dashboard's words, bounded like the task. */
describe('the run table', () => {
  it('has a PARENT column only when asked (crew list), not in a chat or the demo', () => {
    const runs = [run({ parent: 'mcp:bc5b9186-1f2e-4a3b-9c8d-0123456789ab', parent_name: 'codex' })];
    const [header, row] = runTable(runs, { parents: true }).split('\n');
    expect(header).toMatch(/^ID\s+STATUS\s+AGENT\s+PARENT\s+DURATION/);
    expect(row).toContain('  codex (session bc5b9186)  ');
    expect(runTable(runs)).not.toContain('PARENT');
    expect(runTable(runs)).not.toContain('codex');
  });

  it('a parent cell is cleaned and cut to 48 characters, whatever the daemon sent', () => {
    const session = 'mcp:bc5b9186-1f2e-4a3b-9c8d-0123456789ab';
    expect(parentCell(run({ parent: session, parent_name: 'a\u001b[2J\u202eb' }))).toBe(
      'a[2Jb (session bc5b9186)',
    );
    const long = parentCell(run({ parent: `mcp:${'p'.repeat(200)}` }));
    expect(long).toBe(`${'p'.repeat(47)}…`);
    const emoji = parentCell(run({ parent: session, parent_name: '\u{1F600}'.repeat(60) }));
    expect(Array.from(emoji)).toHaveLength(48);
    expect(emoji.endsWith('…')).toBe(true);
    expect(parentCell(run({ parent: 'slack:U1', parent_name: 'ignored' }))).toBe('Slack U1');
  });
});
