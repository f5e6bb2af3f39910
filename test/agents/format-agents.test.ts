import { describe, expect, it } from 'vitest';
import { formatAgents, publicAgent } from '../../src/agents/format-agents.js';
import type { LoadedAgent } from '../../src/agents/loaded-agent.js';

function agent(name: string, extra: Partial<LoadedAgent> = {}): LoadedAgent {
  return { name, runner: 'acp', command: ['x'], shared: false, skills: [], source: 'builtin', ...extra };
}

describe('formatAgents', () => {
  it('prints a table in name order, then the problems with path:line', () => {
    const agents = new Map([
      [
        'sim',
        agent('sim', {
          command: ['/usr/bin/node', '/opt/crew/dist/sim/main.js'],
          description: 'The simulator',
        }),
      ],
      [
        'reviewer',
        agent('reviewer', {
          runner: 'command',
          command: ['claude', '-p', '{task}', "it's spaced"],
          source: '/home/u/.crew/agents/reviewer.md',
          description: 'Reviews\ncode',
          env: { REGION: 'eu', API_KEY: 'sk-secret-value' },
        }),
      ],
    ]);
    const problems = [
      { path: '/home/u/.crew/agents/broken.md', line: 4, message: 'unexpected indentation' },
      { path: '/home/u/.crew/config.json', message: 'agents.x: bad skill' },
    ];

    expect(formatAgents({ agents, problems })).toBe(
      [
        'NAME      RUNNER   COMMAND                                   SOURCE                            ENV             DESCRIPTION',
        "reviewer  command  claude -p {task} 'it'\\''s spaced'         /home/u/.crew/agents/reviewer.md  API_KEY,REGION  Reviews code",
        'sim       acp      /usr/bin/node /opt/crew/dist/sim/main.js  builtin                           -               The simulator',
        '',
        'Problems (2):',
        '  /home/u/.crew/agents/broken.md:4: unexpected indentation',
        '  /home/u/.crew/config.json: agents.x: bad skill',
        '',
      ].join('\n'),
    );
  });

  it('never shows an env value, in the table or the JSON shape', () => {
    const secret = agent('s', { env: { ANTHROPIC_API_KEY: 'sk-ant-very-secret' } });
    const text = formatAgents({ agents: new Map([['s', secret]]), problems: [] });
    expect(text).toContain('ANTHROPIC_API_KEY');
    expect(text).not.toContain('sk-ant-very-secret');
    const shown = JSON.stringify(publicAgent(secret));
    expect(shown).not.toContain('sk-ant-very-secret');
    expect(publicAgent(secret)).toMatchObject({ env_keys: ['ANTHROPIC_API_KEY'] });
  });

  it('lists presets not enabled, installed or not, each with its enable line', () => {
    const text = formatAgents(
      { agents: new Map(), problems: [] },
      {
        presets: [
          {
            name: 'claude',
            command: ['claude-agent-acp'],
            description: '',
            installed: true,
            path: '/bin/claude-agent-acp',
            enabled: false,
            enable: 'crew config set agents.claude x',
          },
          {
            name: 'kiro',
            command: ['kiro-cli', 'acp'],
            description: '',
            installed: false,
            enabled: false,
            enable: 'crew config set agents.kiro y',
          },
          {
            name: 'codex',
            command: ['codex-acp'],
            description: '',
            installed: true,
            enabled: true,
            enable: 'z',
          },
        ],
      },
    );
    expect(text).toContain('claude  available (/bin/claude-agent-acp)');
    expect(text).toContain('kiro    not installed (kiro-cli)');
    expect(text).toContain('crew config set agents.kiro y');
    expect(text).not.toContain('codex');
  });

  it('cuts long commands and descriptions to keep a row on one line', () => {
    const agents = new Map([['a', agent('a', { command: ['x'.repeat(100)], description: 'd'.repeat(100) })]]);
    const row = formatAgents({ agents, problems: [] }, { maxCellChars: 10 }).split('\n')[1];
    expect(row).toBe(`a     acp     ${'x'.repeat(9)}…  builtin  -    ${'d'.repeat(9)}…`);
  });
});
