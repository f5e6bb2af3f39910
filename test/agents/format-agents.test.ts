import { describe, expect, it } from 'vitest';
import { formatAgents } from '../../src/agents/format-agents.js';
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
        }),
      ],
    ]);
    const problems = [
      { path: '/home/u/.crew/agents/broken.md', line: 4, message: 'unexpected indentation' },
      { path: '/home/u/.crew/config.json', message: 'agents.x: bad skill' },
    ];

    expect(formatAgents({ agents, problems })).toBe(
      [
        'NAME      RUNNER   COMMAND                                   SOURCE                            DESCRIPTION',
        "reviewer  command  claude -p {task} 'it'\\''s spaced'         /home/u/.crew/agents/reviewer.md  Reviews code",
        'sim       acp      /usr/bin/node /opt/crew/dist/sim/main.js  builtin                           The simulator',
        '',
        'Problems (2):',
        '  /home/u/.crew/agents/broken.md:4: unexpected indentation',
        '  /home/u/.crew/config.json: agents.x: bad skill',
        '',
      ].join('\n'),
    );
  });

  it('cuts long commands and descriptions to keep a row on one line', () => {
    const agents = new Map([['a', agent('a', { command: ['x'.repeat(100)], description: 'd'.repeat(100) })]]);
    const row = formatAgents({ agents, problems: [] }, { maxCellChars: 10 }).split('\n')[1];
    expect(row).toBe(`a     acp     ${'x'.repeat(9)}…  builtin  ${'d'.repeat(9)}…`);
  });
});
