import { describe, expect, it } from 'vitest';
import { agentDefSchema } from '../../src/core/agent-def.js';
import { applyAgentEnv, envKeys } from '../../src/core/agent-env.js';

/** `${NAME}` without a template literal. */
const ref = (name: string) => `\${${name}}`;

describe('an agent env', () => {
  it('adds its variables over the base and takes $-brace references from the base', () => {
    const { env, missing } = applyAgentEnv(
      { PATH: '/bin', SECRET: 's3', OTHER: 'o' },
      { API_KEY: ref('SECRET'), URL: `http://x/${ref('OTHER')}/${ref('NOPE')}`, PATH: '/opt/bin' },
    );
    expect(env).toEqual({ PATH: '/opt/bin', SECRET: 's3', OTHER: 'o', API_KEY: 's3', URL: 'http://x/o/' });
    expect(missing).toEqual(['NOPE']);
    expect(applyAgentEnv({ A: '1' }, undefined)).toEqual({ env: { A: '1' }, missing: [] });
  });

  it('lists keys only, and the schema refuses a key that is no variable name', () => {
    expect(envKeys({ B: 'x', A: 'y' })).toEqual(['A', 'B']);
    expect(agentDefSchema.safeParse({ command: 'x', env: { 'BAD-KEY': 'v' } }).success).toBe(false);
    expect(agentDefSchema.safeParse({ command: 'x', env: { GOOD_KEY: 'v' } }).success).toBe(true);
  });
});
