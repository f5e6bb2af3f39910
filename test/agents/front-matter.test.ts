import { describe, expect, it } from 'vitest';
import { parseFrontMatter } from '../../src/agents/front-matter.js';

function parse(header: string, body = 'body') {
  return parseFrontMatter(`---\n${header}\n---\n${body}`);
}

function dataOf(header: string) {
  const result = parse(header);
  if (!result.ok) throw new Error(`line ${result.line}: ${result.message}`);
  return result.value.data;
}

function errorOf(header: string) {
  const result = parse(header);
  if (result.ok) throw new Error(`parsed: ${JSON.stringify(result.value.data)}`);
  return { line: result.line, message: result.message };
}

describe('parseFrontMatter', () => {
  it('reads scalars: plain, quoted, numbers, booleans, null', () => {
    expect(
      dataOf(
        [
          'a: plain words: with a colon',
          'b: "double \\"q\\" \\n # not a comment"',
          "c: 'single ''q'''",
          'd: 42',
          'e: -1.5',
          'f: true',
          'g: False',
          'h: ~',
          'i: value # a comment',
          'j: "7"',
        ].join('\n'),
      ),
    ).toEqual({
      a: 'plain words: with a colon',
      b: 'double "q" \n # not a comment',
      c: "single 'q'",
      d: 42,
      e: -1.5,
      f: true,
      g: false,
      h: null,
      i: 'value',
      j: '7',
    });
  });

  it('reads flow lists and block lists', () => {
    expect(
      dataOf(
        ['a: [x, "y, z", 3, \'w\']', 'b: []', 'c: [one,]', 'd:', '  - p', '  - "q r"', 'e:', '- top'].join(
          '\n',
        ),
      ),
    ).toEqual({ a: ['x', 'y, z', 3, 'w'], b: [], c: ['one'], d: ['p', 'q r'], e: ['top'] });
  });

  it('gives a key with no value and no items null', () => {
    expect(dataOf('a:\nb: 1')).toEqual({ a: null, b: 1 });
  });

  it('returns the body and the line of each key and list item', () => {
    const result = parseFrontMatter('---\n# comment\nname: x\n\nskills:\n  - a\n  - b\n---\nThe body\n');
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.body).toBe('The body\n');
    expect(Object.fromEntries(result.value.lines)).toEqual({
      name: 3,
      skills: 5,
      'skills.0': 6,
      'skills.1': 7,
    });
  });

  it('accepts CRLF line endings and a byte order mark', () => {
    const result = parseFrontMatter('\uFEFF---\r\nname: x\r\n---\r\nbody');
    expect(result.ok && result.value.data).toEqual({ name: 'x' });
  });

  it('reads a one-level block map such as env', () => {
    const result = parseFrontMatter('---\nenv:\n  API_KEY: "$KEY"\n  REGION: eu # here\nname: x\n---\n');
    expect(result.ok && result.value.data).toEqual({ env: { API_KEY: '$KEY', REGION: 'eu' }, name: 'x' });
    expect(result.ok && result.value.lines.get('env.REGION')).toBe(4);
  });

  it.each([
    ['name: x\n  runner: acp', 3, /unexpected indentation/],
    ['name: x\nname: y', 3, /duplicate key "name" \(first on line 2\)/],
    ['- a', 2, /must follow a key with no value/],
    ['a: [x, y', 2, /must end with \]/],
    ['a: [x, [y]]', 2, /nested lists/],
    ['a: [x,, y]', 2, /empty item/],
    ['a: {b: 1}', 2, /nested maps/],
    ['a: |', 2, /block scalars/],
    ['a: "open', 2, /unterminated " quote/],
    ['a: "x" y', 2, /must end the value/],
    ['a: "\\q"', 2, /unknown escape/],
    ['a: &anchor x', 2, /anchors, aliases, tags/],
    ['just words', 2, /expected "key: value"/],
    ['a:b', 2, /expected "key: value"/],
    ['a:\n  -', 3, /empty list item/],
    ['env:\n  A: 1\n  A: 2', 4, /duplicate key "env.A"/],
    ['env:\n  A: [x]', 3, /one level of map/],
    ['env:\n  A: 1\n  - x', 4, /must follow a key with no value/],
  ])('reports %j at line %i', (header, line, message) => {
    const error = errorOf(header);
    expect(error.line).toBe(line);
    expect(error.message).toMatch(message);
  });

  it('reports a file with no front matter, or one never closed, at line 1', () => {
    expect(parseFrontMatter('just a prompt')).toMatchObject({ ok: false, line: 1 });
    expect(parseFrontMatter('---\nname: x\n')).toMatchObject({
      ok: false,
      line: 1,
      message: expect.stringMatching(/never closed/),
    });
  });
});
