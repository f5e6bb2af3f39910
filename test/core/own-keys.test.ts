import { describe, expect, it } from 'vitest';
import { parseAgentFile } from '../../src/agents/agent-file.js';
import { applyAgentEnv } from '../../src/core/agent-env.js';
import { ownValue, setOwn } from '../../src/core/own.js';

/**
 * Text from outside names keys (issue 28): `constructor`, `toString`, `__proto__` must never be answered
 * from Object.prototype, nor set an object's prototype.
 */

/** `${NAME}` without a template literal. */
const ref = (name: string) => `\${${name}}`;

const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];

describe('own-key lookups', () => {
  it('ownValue answers only own properties', () => {
    const record: Record<string, number> = { a: 1 };
    for (const name of PROTOTYPE_NAMES) expect(ownValue(record, name)).toBeUndefined();
    expect(ownValue(record, 'a')).toBe(1);
    expect(ownValue(undefined, 'a')).toBeUndefined();
  });

  it('setOwn makes __proto__ an own key and leaves the prototype alone', () => {
    const record: Record<string, unknown> = {};
    setOwn(record, '__proto__', ['x']);
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(Object.keys(record)).toEqual(['__proto__']);
  });

  it('an agent env reference to a prototype name is unset, not a function’s source', () => {
    const { env, missing } = applyAgentEnv(
      { PATH: '/bin' },
      { A: ref('constructor'), B: ref('toString'), C: `${ref('valueOf')}x`, D: ref('PATH') },
    );
    expect(env).toMatchObject({ A: '', B: '', C: 'x', D: '/bin' });
    expect(missing.sort()).toEqual(['constructor', 'toString', 'valueOf']);
  });

  it('an agent file with a __proto__ key is refused as an unknown key, not taken as a prototype', () => {
    for (const line of ['__proto__: polluted', '__proto__:\n  - polluted']) {
      const text = ['---', 'command: ["true"]', line, '---', 'prompt'].join('\n');
      const parsed = parseAgentFile('/x/agent.md', text);
      expect({ line, ok: parsed.ok }).toEqual({ line, ok: false });
      if (!parsed.ok) expect(parsed.problems[0]?.message).toContain('unknown key "__proto__"');
    }
  });
});
