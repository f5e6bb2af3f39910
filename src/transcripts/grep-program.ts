/**
 * Compiles a parsed grep pattern to a Thompson NFA: a flat list of instructions where a state either
 * consumes one char of a set, splits in two, checks an assertion, or accepts. Matching simulates every
 * path at once (`nfa-matcher.ts`), so time is linear in the line length whatever the pattern.
 */
import { CrewError, refuse } from '../core/errors.js';
import type { AssertKind, CharSet, PatternNode } from './grep-pattern.js';

export type Instruction =
  | { op: 'set'; set: CharSet; next: number }
  | { op: 'split'; a: number; b: number }
  | { op: 'assert'; kind: AssertKind; next: number }
  | { op: 'match' };

export interface GrepProgram {
  instructions: Instruction[];
  start: number;
  ignoreCase: boolean;
  /** Whether `\b`/`\B` occur: only then does a matcher track whether the previous char was a word char. */
  usesWordBoundary: boolean;
}

/**
 * Most instructions a pattern may compile to. Matching costs up to this much work per char when the
 * matcher's state cache misses, so it bounds the worst case (`a{1000}` fits; `(a{1000}){5}` does not).
 * @default 4000
 */
export const GREP_PROGRAM_MAX_INSTRUCTIONS = 4000;

export function compileGrepProgram(root: PatternNode, ignoreCase: boolean): GrepProgram {
  const instructions: Instruction[] = [];
  let usesWordBoundary = false;

  const emit = (instruction: Instruction): number => {
    if (instructions.length >= GREP_PROGRAM_MAX_INSTRUCTIONS) {
      throw new CrewError(
        refuse(
          'invalid_argument',
          `Expected \`grep\` to be a smaller pattern: it needs more than ${GREP_PROGRAM_MAX_INSTRUCTIONS} states (lower the {} counts)`,
          { path: 'grep' },
        ),
      );
    }
    instructions.push(instruction);
    return instructions.length - 1;
  };

  // Built back to front: `compile(node, next)` returns the state that matches `node` and then goes on to
  // `next`, so no fragment needs patching except a loop's own entry.
  const compile = (node: PatternNode, next: number): number => {
    switch (node.type) {
      case 'empty':
        return next;
      case 'set':
        return emit({ op: 'set', set: node.set, next });
      case 'assert':
        if (node.kind === 'word_boundary' || node.kind === 'not_word_boundary') usesWordBoundary = true;
        return emit({ op: 'assert', kind: node.kind, next });
      case 'cat': {
        let entry = next;
        for (let i = node.items.length - 1; i >= 0; i--) entry = compile(node.items[i]!, entry);
        return entry;
      }
      case 'alt': {
        const entries = node.items.map((item) => compile(item, next));
        let entry = entries[entries.length - 1]!;
        for (let i = entries.length - 2; i >= 0; i--) entry = emit({ op: 'split', a: entries[i]!, b: entry });
        return entry;
      }
      case 'repeat':
        return compileRepeat(node.item, node.min, node.max, next);
    }
  };

  const compileRepeat = (item: PatternNode, min: number, max: number, next: number): number => {
    let entry = next;
    if (max === Number.POSITIVE_INFINITY) {
      const loop = emit({ op: 'split', a: -1, b: next });
      (instructions[loop] as { a: number }).a = compile(item, loop);
      entry = loop;
    } else {
      for (let i = 0; i < max - min; i++) entry = emit({ op: 'split', a: compile(item, entry), b: next });
    }
    for (let i = 0; i < min; i++) entry = compile(item, entry);
    return entry;
  };

  const accept = emit({ op: 'match' });
  const start = compile(root, accept);
  return { instructions, start, ignoreCase, usesWordBoundary };
}
