import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCrewError } from '../../src/core/errors.js';
import { parseArgs, plainSpawnArgs, spawnArgsSchema } from '../../src/gateway/spawn-args.js';
import { numRuns } from '../helpers/fc-runs.js';

/** Values near every bound the schema sets, and of every wrong type. */
const edgyString = fc.oneof(
  fc.string({ maxLength: 3 }),
  fc.constantFrom('', 'x', 'a'.repeat(128), 'a'.repeat(129), 'a'.repeat(256), 'a'.repeat(257)),
  fc.constantFrom('a'.repeat(4096), 'a'.repeat(4097)),
);
const anyValue = fc.oneof(
  edgyString,
  fc.boolean(),
  fc.constantFrom(0, 1, -1, 1.5, 200, 201, 1e9, 1e9 + 1, Number.NaN, Number.POSITIVE_INFINITY, -0),
  fc.integer(),
  fc.double(),
  fc.constant(undefined),
  fc.constant(null),
  fc.array(edgyString, { maxLength: 3 }),
  fc.array(fc.oneof(edgyString, fc.integer(), fc.constant(undefined)), { maxLength: 3 }),
  fc.constantFrom('low', 'medium', 'high', 'xhigh', 'max', 'LOW'),
  fc.object({ maxDepth: 1 }),
);
const KEYS = [
  'task',
  'tasks',
  'agent',
  'agents',
  'include_memory',
  'include_lessons',
  'include_project',
  'max_turns',
  'max_tokens',
  'model',
  'reasoning_effort',
  'keep',
  'cwd',
  'command_id',
  'unknown',
  '__proto__',
  'constructor',
  'toString',
] as const;
/** Objects with a few of the schema's keys (and some it does not know), each given any value. */
const argsLike = fc.dictionary(fc.constantFrom(...KEYS), anyValue, { maxKeys: 4 });
/** One argument at a value on or just past one of the schema's bounds, beside a valid task. */
const BOUND_LENGTHS = [0, 1, 127, 128, 129, 255, 256, 257, 4095, 4096, 4097];
const BOUND_NUMBERS = [-1, 0, 0.5, 200, 201, 1e9, 1e9 + 1, Number.NaN, Number.MAX_SAFE_INTEGER + 2];
const atBounds = fc
  .record({
    key: fc.constantFrom(...KEYS),
    value: fc.oneof(
      fc.constantFrom(...BOUND_LENGTHS).map((n) => 'a'.repeat(n)),
      fc.constantFrom(...BOUND_LENGTHS).map((n) => ['x', 'a'.repeat(n)]),
      fc.constantFrom(...BOUND_NUMBERS),
    ),
  })
  .map(({ key, value }) => ({ task: 'x', [key]: value }));
/** Arguments the schema accepts, so the plain path is exercised, not only its refusals. */
const validArgs = fc.record(
  {
    task: fc.string({ maxLength: 20 }),
    tasks: fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    agent: fc.string({ minLength: 1, maxLength: 128 }),
    agents: fc.array(fc.string({ minLength: 1, maxLength: 10 }), { maxLength: 3 }),
    keep: fc.boolean(),
    max_turns: fc.integer({ min: 0, max: 200 }),
    max_tokens: fc.integer({ min: 0, max: 1e9 }),
    reasoning_effort: fc.constantFrom('low', 'medium', 'high', 'xhigh', 'max'),
    command_id: fc.string({ minLength: 1, maxLength: 256 }),
  },
  { requiredKeys: [] },
);

describe('the plain spawn-argument check agrees with the schema', () => {
  it('whatever it accepts, zod accepts with the same value; whatever zod refuses, it leaves to zod', () => {
    let plain = 0;
    fc.assert(
      fc.property(fc.oneof(argsLike, atBounds, validArgs, fc.anything()), (raw) => {
        const fast = plainSpawnArgs(raw);
        const parsed = spawnArgsSchema.safeParse(raw);
        if (fast === undefined) return;
        plain++;
        expect(parsed.success).toBe(true);
        expect(fast).toEqual(parsed.data);
      }),
      { numRuns: numRuns(3000) },
    );
    // The check is worth having only if it takes the common case.
    expect(plain).toBeGreaterThan(numRuns(3000) / 10);
  });

  it('takes the common spawn, copies its lists, and leaves hostile or odd shapes to zod', () => {
    const tasks = ['a', 'b'];
    const args = plainSpawnArgs({ tasks, agent: 'sim', max_turns: 3, keep: false });
    expect(args).toEqual({ tasks: ['a', 'b'], agent: 'sim', max_turns: 3, keep: false });
    expect(args?.tasks).not.toBe(tasks);
    expect(plainSpawnArgs({ task: 'x' })).toEqual({ task: 'x' });
    expect(plainSpawnArgs(JSON.parse('{"task":"x","__proto__":{"admin":true}}'))).toBeUndefined();
    expect(plainSpawnArgs({ task: 'x', toString: 'y' })).toBeUndefined();
    expect(plainSpawnArgs({ task: undefined })).toBeUndefined();
    expect(plainSpawnArgs({ max_turns: 2.5 })).toBeUndefined();
    expect(plainSpawnArgs({ max_turns: 201 })).toBeUndefined();
    const holey: string[] = [];
    holey[1] = 'a'; // a hole at 0
    expect(plainSpawnArgs({ agents: holey })).toBeUndefined();
    expect(
      plainSpawnArgs(
        new (class Args {
          task = 'x';
        })(),
      ),
    ).toBeUndefined();
    expect(plainSpawnArgs([])).toBeUndefined();
  });

  it('a refusal still comes from zod and names the argument', () => {
    try {
      parseArgs(spawnArgsSchema, { task: 'x', max_turns: 500 });
      expect.unreachable();
    } catch (error) {
      expect(isCrewError(error) && error.refusal).toMatchObject({
        code: 'invalid_argument',
        path: 'max_turns',
        limit: 200,
        current: 500,
      });
    }
    expect(parseArgs(spawnArgsSchema, undefined)).toEqual({});
  });
});
