import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configTableMarkdown, TABLE_BEGIN, TABLE_END } from '../../src/config/config-table.js';
import { CONFIG_KEYS } from '../../src/core/config-schema.js';

const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

describe('README', () => {
  it('opens with the two commands', () => {
    const head = readme.slice(0, 600);
    expect(head).toContain('npm install && npm start');
    expect(head).toContain('npm test');
  });

  it('says what Crew is before anything else, and keeps the test tiers further down', () => {
    const whatItIs = readme.indexOf('Crew is a **subagent gateway**');
    expect(whatItIs).toBeGreaterThan(0);
    expect(whatItIs).toBeLessThan(readme.indexOf('npm install && npm start'));
    expect(readme.slice(0, readme.indexOf('\n## '))).not.toMatch(/tier/i);
    const testing = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'testing.md'), 'utf8');
    expect(testing).toMatch(/three tiers/);
    expect(readme).toContain('(docs/testing.md)');
  });

  it('the package carries an MIT LICENSE matching package.json', () => {
    const root = join(import.meta.dirname, '..', '..');
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license: string };
    expect(pkg.license).toBe('MIT');
    const license = readFileSync(join(root, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
    expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
  });

  it('has the configuration table exactly as the schema generates it (run npm run docs:config after a schema change)', () => {
    const start = readme.indexOf(TABLE_BEGIN);
    const end = readme.indexOf(TABLE_END);
    expect(start).toBeGreaterThan(0);
    expect(readme.slice(start, end + TABLE_END.length)).toBe(configTableMarkdown());
    for (const key of Object.keys(CONFIG_KEYS)) expect(readme).toContain(`\`${key}\``);
  });

  it('makes Crew a required MCP server in the Codex snippet, so codex exec never starts without its tools', () => {
    const block = /\[mcp_servers\.crew\]\n((?:[ \t]*[a-z_]+ = [^\n]+\n)+)/.exec(readme);
    expect(block).not.toBeNull();
    const lines = (block?.[1] ?? '').split('\n').map((l) => l.trim());
    expect(lines).toContain('command = "crew"');
    // The daemon's home goes in the args: Codex passes the bridge only a few variables (issue 29).
    expect(lines.find((l) => l.startsWith('args = '))).toMatch(/^args = \["mcp", "--home", "[^"]+"\]$/);
    expect(lines).toContain('required = true');
  });

  it('gives every client a crew mcp config that survives a stripped environment (--home in the args)', () => {
    const start = readme.indexOf('## Connect a parent agent');
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
    for (const client of ['Claude Code', 'Codex', 'Gemini CLI', 'opencode', 'Kiro', 'Cursor'])
      expect(section, client).toContain(client);
    // Codex's args, the mcpServers JSON (Gemini CLI, Kiro, Cursor) and opencode's command array.
    const argLists = section.match(/\[(?:"crew", )?"mcp"[^\]\n]*\]/g) ?? [];
    expect(argLists.length).toBeGreaterThanOrEqual(3);
    for (const list of argLists) expect(list).toContain('"--home"');
    expect(section).toMatch(/claude mcp add crew -- crew mcp --home/);
  });
});
