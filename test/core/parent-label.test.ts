import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLIENT_NAME_MAX } from '../../src/core/client-name.js';
import { parentLabel } from '../../src/core/parent-label.js';

// biome-ignore lint/suspicious/noExplicitAny: the page's module is plain JavaScript
const view: any = await import(pathToFileURL(join(process.cwd(), 'src/dashboard/assets/view.js')).href);

const SESSION = 'mcp:bc5b9186-1f2e-4a3b-9c8d-0123456789ab';

/**
 * How a parent key reads to a person on every text surface (`crew list`, `crew status`): the same words
 * the dashboard's page shows (src/dashboard/assets/view.js), with the raw key kept as the title.
 */
describe('parent labels', () => {
  it('an MCP session that is its own parent reads as its client name and short session id, else as a session', () => {
    expect(parentLabel(SESSION, 'claude-code')).toEqual({
      kind: 'agent',
      label: 'claude-code (session bc5b9186)',
      title: SESSION,
    });
    expect(parentLabel(SESSION).label).toBe('MCP session bc5b9186');
    expect(parentLabel(SESSION, '').label).toBe('MCP session bc5b9186');
  });

  it('parents that are not MCP sessions fall back to what they are: bridge, stateless, Slack, chat, CLI, run, cluster', () => {
    const labels = [
      'mcp:claude-code@myproject-1a2b3c4d',
      'mcp:stateless',
      'slack:U0123ABC',
      'chat:c7',
      'cli:log',
      'cli:operator',
      'cli:dashboard',
      'cli:0f1e2d3c-0000-4000-8000-000000000000',
      'run:r42',
      'cluster:gw-b',
      'weird',
      '',
    ].map((key) => parentLabel(key).label);
    expect(labels).toEqual([
      'claude-code@myproject-1a2b3c4d',
      'MCP (stateless)',
      'Slack U0123ABC',
      'chat c7',
      'CLI',
      'CLI',
      'dashboard re-run',
      'CLI --wait (0f1e2d3c)',
      'run r42',
      'gateway gw-b',
      'weird',
      '(none)',
    ]);
    // A run another gateway admitted carries its parent's client name with it.
    expect(parentLabel('cluster:gw-b', 'codex').label).toBe('codex (via gateway gw-b)');
    // A name is only worn by keys that have no readable name of their own.
    expect(parentLabel('slack:U1', 'claude-code').label).toBe('Slack U1');
    expect(parentLabel('run:r1', 'claude-code').label).toBe('run r1');
  });

  it('hostile client names are cleaned the one way (control, escape, bidi and zero-width characters; length)', () => {
    const label = (name: unknown) => parentLabel(SESSION, name).label;
    expect(label('claude\u001b[2J-code\u202e\u200b\u0000\u2028')).toBe('claude[2J-code (session bc5b9186)');
    expect(label('x'.repeat(1_000_000))).toBe(`${'x'.repeat(CLIENT_NAME_MAX)} (session bc5b9186)`);
    expect(label(' \u0000\u202e ')).toBe('MCP session bc5b9186');
    expect(label(42)).toBe('MCP session bc5b9186');
    expect(label({ toString: () => 'x' })).toBe('MCP session bc5b9186');
  });

  it('says what the dashboard says, for every kind of key, with and without a name', () => {
    const keys = [
      SESSION,
      'mcp:BC5B9186-1F2E-4A3B-9C8D-0123456789AB',
      'mcp:bc5b9186',
      'mcp:claude-code@p',
      'mcp:stateless',
      'slack:U1',
      'chat:c1',
      'cli:log',
      'cli:operator',
      'cli:dashboard',
      'cli:0f1e2d3c-0000-4000-8000-000000000000',
      'cli:other',
      'run:r1',
      'cluster:gw-a',
      'nocolon',
      ':x',
      '',
    ];
    for (const key of keys) {
      for (const name of [undefined, 'claude-code']) {
        expect(parentLabel(key, name), `${key} / ${name}`).toEqual(view.parentLabel(key, name));
      }
    }
  });
});
