import { describe, expect, it } from 'vitest';
import {
  directiveScript,
  type ModelRequest,
  minimalValue,
  parseDirectives,
  shellInput,
} from '../../src/fake-provider/script.js';

const request = (over: Partial<ModelRequest>): ModelRequest => ({
  api: 'anthropic',
  model: 'm',
  tools: [],
  userTexts: [],
  toolResults: 0,
  calledTools: [],
  stream: true,
  ...over,
});

describe('the fake provider script', () => {
  it('answers the default reply without a #fake line, and the directive reply with one', () => {
    const script = directiveScript('plain');
    expect(script(request({ userTexts: ['hello'] }))).toEqual({ kind: 'text', text: 'plain' });
    expect(script(request({ userTexts: ['x\n#fake reply="two words"'] }))).toEqual({
      kind: 'text',
      text: 'two words',
    });
  });

  it('calls the offered shell tool once, then answers the then text', () => {
    const script = directiveScript();
    const tools = [
      { name: 'Read' },
      { name: 'Bash', schema: { properties: { command: { type: 'string' } } } },
    ];
    const texts = ['#fake shell="echo hi" then="ran it"'];
    expect(script(request({ tools, userTexts: texts }))).toEqual({
      kind: 'tool',
      name: 'Bash',
      input: { command: 'echo hi' },
    });
    expect(script(request({ tools, userTexts: texts, toolResults: 1, calledTools: ['Bash'] }))).toEqual({
      kind: 'text',
      text: 'ran it',
    });
    // A side call without tools gets text, never a call of a tool it does not have.
    expect(script(request({ userTexts: texts }))).toEqual({ kind: 'text', text: 'ran it' });
  });

  it('finds an MCP tool by its suffix and passes the args', () => {
    const script = directiveScript();
    const reply = script(
      request({
        tools: [{ name: 'mcp__crew__spawn_run' }],
        userTexts: [`#fake tool=spawn_run args='{"task":"#sim echo","agent":"sim"}'`],
      }),
    );
    expect(reply).toEqual({
      kind: 'tool',
      name: 'mcp__crew__spawn_run',
      input: { task: '#sim echo', agent: 'sim' },
    });
  });

  it('waits for MCP servers once when the wanted tool is not offered yet, then calls it', () => {
    const script = directiveScript();
    const texts = ['#fake tool=spawn_sub_agents then="got it"'];
    expect(script(request({ tools: [{ name: 'WaitForMcpServers' }], userTexts: texts }))).toEqual({
      kind: 'tool',
      name: 'WaitForMcpServers',
      input: {},
    });
    const tools = [{ name: 'WaitForMcpServers' }, { name: 'mcp__crew__spawn_sub_agents' }];
    expect(script(request({ tools, userTexts: texts, calledTools: ['WaitForMcpServers'] }))).toMatchObject({
      kind: 'tool',
      name: 'mcp__crew__spawn_sub_agents',
    });
    const done = ['WaitForMcpServers', 'mcp__crew__spawn_sub_agents'];
    expect(script(request({ tools, userTexts: texts, calledTools: done }))).toEqual({
      kind: 'text',
      text: 'got it',
    });
  });

  it('answers errors with retry-after, and hangs', () => {
    const script = directiveScript();
    expect(script(request({ userTexts: ['#fake status=429 retry_after=2'] }))).toMatchObject({
      kind: 'error',
      status: 429,
      retryAfterSecs: 2,
    });
    expect(script(request({ userTexts: ['#fake status=529'] }))).toMatchObject({
      kind: 'error',
      status: 529,
    });
    expect(script(request({ userTexts: ['#fake hang'] }))).toEqual({ kind: 'hang' });
  });

  it('answers a JSON schema side call with a minimal object of it', () => {
    const schema = {
      type: 'object',
      properties: {
        reasoning: { type: 'string' },
        next_speaker: { type: 'string', enum: ['user', 'model'] },
      },
      required: ['reasoning', 'next_speaker'],
    };
    const reply = directiveScript()(request({ api: 'gemini', jsonSchema: schema }));
    expect(reply.kind === 'text' && JSON.parse(reply.text)).toEqual({ reasoning: '', next_speaker: 'user' });
    expect(minimalValue({ type: 'array' })).toEqual([]);
    expect(minimalValue({ anyOf: [{ type: 'integer', minimum: 3 }] })).toBe(3);
  });

  it('shapes shell arguments by the tool schema', () => {
    expect(shellInput({ properties: { command: { type: 'array' } } }, 'ls')).toEqual({
      command: ['bash', '-lc', 'ls'],
    });
    expect(
      shellInput(
        {
          properties: { cmd: { type: 'string' }, description: { type: 'string' } },
          required: ['cmd', 'description'],
        },
        'ls',
      ),
    ).toEqual({ cmd: 'ls', description: 'run a command' });
    expect(parseDirectives(['no directive'])).toBeUndefined();
  });
});
