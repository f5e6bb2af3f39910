/**
 * The general grep matcher: simulates the NFA from `grep-program.ts` as a set of states (never by
 * backtracking), so time is linear in the line whatever the pattern. The state sets met are cached as
 * DFA states built lazily, so a typical line costs one table lookup per char.
 */
import { type CharSet, isWordChar, setAccepts } from './char-set.js';
import type { GrepProgram } from './grep-program.js';
import type { LineMatcher } from './line-matcher.js';

interface DfaState {
  /** NFA states reached before the closure (sorted), plus the context the closure depends on. */
  pre: Int32Array;
  atLineStart: boolean;
  prevIsWord: boolean;
  /** For chars below 128: `(next << 1) | matchedBefore`, or -1 when not computed yet. */
  ascii: Int32Array;
  other: Map<number, number>;
  /** Whether the line matches if it ends here: undefined until computed. */
  matchesAtEnd?: boolean;
}

/** Fixed cost of a DFA cache miss beyond its state visits (sorting, keying, allocating), in visits. */
const MISS_OVERHEAD_WORK = 40;
/** Cache resets after which a matcher stops building DFA states and simulates the NFA directly. */
const RESETS_BEFORE_NFA = 2;

/**
 * Simulates the NFA one char at a time. While its DFA cache holds, each distinct (state set, char) is
 * computed once and then looked up; a pattern whose state sets keep overflowing the cache switches to
 * plain simulation over typed arrays, which allocates nothing per char.
 */
export class NfaMatcher implements LineMatcher {
  work = 0;
  private states: DfaState[] = [];
  private index = new Map<string, number>();
  private resets = 0;
  private current = 0;
  private matched = false;
  // Plain simulation (after the cache gave up): the current pre-closure set and its context.
  private nfaMode = false;
  private pre: Int32Array;
  private preLength = 0;
  private atLineStart = true;
  private prevIsWord = false;
  // Scratch, sized to the program: a visit stamp per instruction, the DFS stack, the consumers found.
  private readonly visited: Int32Array;
  private readonly queued: Int32Array;
  private readonly stack: Int32Array;
  private readonly consumers: Int32Array;
  private consumerCount = 0;
  private next: Int32Array;
  private nextLength = 0;
  private generation = 0;

  constructor(
    private readonly program: GrepProgram,
    private readonly cacheMaxStates: number,
  ) {
    const size = program.instructions.length;
    this.visited = new Int32Array(size);
    this.queued = new Int32Array(size);
    this.stack = new Int32Array(size * 2 + 2);
    this.consumers = new Int32Array(size);
    this.pre = new Int32Array(size + 1);
    this.next = new Int32Array(size + 1);
    this.begin();
  }

  begin(): void {
    this.matched = false;
    if (this.nfaMode) {
      this.pre[0] = this.program.start;
      this.preLength = 1;
      this.atLineStart = true;
      this.prevIsWord = false;
      return;
    }
    if (this.states.length > this.cacheMaxStates) this.resetCache();
    this.current = this.intern(Int32Array.of(this.program.start), true, false);
  }

  feed(piece: string): boolean {
    if (this.matched) return true;
    if (this.nfaMode) return this.feedNfa(piece, 0);
    let state = this.states[this.current]!;
    for (let i = 0; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      const codePoint = c < 0xd800 || c > 0xdbff ? c : piece.codePointAt(i)!;
      let step = codePoint < 128 ? state.ascii[codePoint]! : (state.other.get(codePoint) ?? -1);
      if (step < 0) {
        step = this.transition(state, codePoint);
        if (this.nfaMode) return this.feedNfa(piece, i + (codePoint > 0xffff ? 2 : 1));
        if (codePoint < 128) state.ascii[codePoint] = step;
        else state.other.set(codePoint, step);
      }
      if (codePoint > 0xffff) i++;
      if (step & 1) {
        this.matched = true;
        return true;
      }
      this.current = step >> 1;
      state = this.states[this.current]!;
    }
    return false;
  }

  end(): boolean {
    if (this.matched) return true;
    if (this.nfaMode) {
      this.matched = this.closure(this.pre, this.preLength, this.atLineStart, this.prevIsWord, true, false);
      return this.matched;
    }
    const state = this.states[this.current]!;
    if (state.matchesAtEnd === undefined) {
      state.matchesAtEnd = this.closure(
        state.pre,
        state.pre.length,
        state.atLineStart,
        state.prevIsWord,
        true,
        false,
      );
    }
    this.matched = state.matchesAtEnd;
    return this.matched;
  }

  /**
   * The cached step from `state` on `codePoint`: `(next << 1) | matchedBefore`. When the cache has
   * overflowed too often, switches to plain simulation instead, carrying the step's result over.
   */
  private transition(state: DfaState, codePoint: number): number {
    this.work += MISS_OVERHEAD_WORK;
    const nextIsWord = isWordChar(codePoint);
    if (this.closure(state.pre, state.pre.length, state.atLineStart, state.prevIsWord, false, nextIsWord))
      return 1;
    this.stepConsumers(codePoint);
    const pre = this.next.slice(0, this.nextLength).sort();
    const prevIsWord = this.program.usesWordBoundary && nextIsWord;
    if (this.states.length > this.cacheMaxStates * 2) {
      if (++this.resets >= RESETS_BEFORE_NFA) {
        this.enterNfaMode(pre, prevIsWord);
        return 0;
      }
      this.resetCache();
    }
    return this.intern(pre, false, prevIsWord) << 1;
  }

  private enterNfaMode(pre: Int32Array, prevIsWord: boolean): void {
    this.nfaMode = true;
    this.states = [];
    this.index = new Map();
    this.pre.set(pre);
    this.preLength = pre.length;
    this.atLineStart = false;
    this.prevIsWord = prevIsWord;
  }

  private feedNfa(piece: string, from: number): boolean {
    for (let i = from; i < piece.length; i++) {
      const codePoint = piece.codePointAt(i)!;
      if (codePoint > 0xffff) i++;
      const nextIsWord = isWordChar(codePoint);
      if (this.closure(this.pre, this.preLength, this.atLineStart, this.prevIsWord, false, nextIsWord)) {
        this.matched = true;
        return true;
      }
      this.stepConsumers(codePoint);
      [this.pre, this.next] = [this.next, this.pre];
      this.preLength = this.nextLength;
      this.atLineStart = false;
      this.prevIsWord = this.program.usesWordBoundary && nextIsWord;
    }
    return false;
  }

  /** From the consumers of the last closure, the states reached on `codePoint` (plus a fresh start). */
  private stepConsumers(codePoint: number): void {
    const { instructions, start, ignoreCase } = this.program;
    const stamp = ++this.generation;
    this.next[0] = start;
    this.queued[start] = stamp;
    this.nextLength = 1;
    for (let k = 0; k < this.consumerCount; k++) {
      const instruction = instructions[this.consumers[k]!] as { set: CharSet; next: number };
      if (this.queued[instruction.next] !== stamp && setAccepts(instruction.set, codePoint, ignoreCase)) {
        this.queued[instruction.next] = stamp;
        this.next[this.nextLength++] = instruction.next;
      }
    }
  }

  /**
   * Follows every non-consuming step from `pre` in the given context; leaves the consuming states in
   * `consumers` and returns whether the match state was reached.
   */
  private closure(
    pre: Int32Array,
    preLength: number,
    atLineStart: boolean,
    prevIsWord: boolean,
    atLineEnd: boolean,
    nextIsWord: boolean,
  ): boolean {
    const { instructions } = this.program;
    const stamp = ++this.generation;
    const { stack, visited, consumers } = this;
    let top = 0;
    for (let k = preLength - 1; k >= 0; k--) stack[top++] = pre[k]!;
    let count = 0;
    let matched = false;
    while (top > 0) {
      const pc = stack[--top]!;
      if (visited[pc] === stamp) continue;
      visited[pc] = stamp;
      this.work++;
      const instruction = instructions[pc]!;
      switch (instruction.op) {
        case 'match':
          matched = true;
          break;
        case 'set':
          consumers[count++] = pc;
          break;
        case 'split':
          stack[top++] = instruction.b;
          stack[top++] = instruction.a;
          break;
        case 'assert':
          if (assertionHolds(instruction.kind, atLineStart, prevIsWord, atLineEnd, nextIsWord)) {
            stack[top++] = instruction.next;
          }
          break;
      }
    }
    this.consumerCount = count;
    return matched;
  }

  private intern(pre: Int32Array, atLineStart: boolean, prevIsWord: boolean): number {
    const key = `${atLineStart ? 's' : ''}${prevIsWord ? 'w' : ''}:${pre.join(',')}`;
    const known = this.index.get(key);
    if (known !== undefined) return known;
    const ascii = new Int32Array(128).fill(-1);
    this.states.push({ pre, atLineStart, prevIsWord, ascii, other: new Map() });
    this.index.set(key, this.states.length - 1);
    return this.states.length - 1;
  }

  private resetCache(): void {
    this.states = [];
    this.index = new Map();
  }
}

function assertionHolds(
  kind: 'line_start' | 'line_end' | 'word_boundary' | 'not_word_boundary',
  atLineStart: boolean,
  prevIsWord: boolean,
  atLineEnd: boolean,
  nextIsWord: boolean,
): boolean {
  switch (kind) {
    case 'line_start':
      return atLineStart;
    case 'line_end':
      return atLineEnd;
    case 'word_boundary':
      return prevIsWord !== nextIsWord;
    case 'not_word_boundary':
      return prevIsWord === nextIsWord;
  }
}
