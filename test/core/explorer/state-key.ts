import { isTerminal } from '../../../src/core/types.js';
import { canonical } from './canonical.js';
import type { World } from './world.js';

/** `lastNow` is the clock's last reading, a copy of the world's own time, not state. */
const SKIP = new Set(['limits', 'commands', 'nextPermit', 'lastNow']);
/** Permit tokens are identities: which run holds one matters, never its number. */
const TOKENS = new Set(['held']);

/**
 * The identity of a state for merging: the scheduler's private state (abstracted by `canonical`) and
 * the part of the model that can change what later steps do or how they are judged. An ended run is
 * only "ended" here: its exact terminal status and its announcement were checked when it was
 * recorded, and change nothing afterwards (a conversation's fate is kept in its own entry, a wave's
 * digest in its). The text itself is the key: a few hundred bytes a state, and no hash to collide.
 */
export function stateKey(world: World, symmetry: ParentSymmetry): string {
  const scheduler = schedulerKey(world);
  let model = `n${world.nextRun}b${world.nextBatch}x${world.restarts}|`;
  for (const run of world.records.values()) {
    if (isTerminal(run.status)) {
      // Its parent still matters to a nested run: the cascade and subtree checks walk ancestors.
      model += `${run.id}:E${run.depth > 1 ? run.parent : ''};`;
      continue;
    }
    const runner = `${world.launched.has(run.id) ? 'L' : ''}${world.toolCalls.get(run.id) ?? ''}`;
    model += `${run.id}:${run.status}${runner}${world.stopping.get(run.id) ?? ''}/${run.parent}/${run.batchId ?? ''}/${run.conversationId ?? ''}${run.keep ? 'k' : ''};`;
  }
  model += `|q${world.queue.join(',')}|`;
  for (const [id, c] of world.conversations) model += `${id}:${c.state}>${c.latest};`;
  for (const [id, w] of world.waves) model += `${id}${w.digested ? 'd' : ''}:${w.members};`;
  for (const [id, c] of world.storedConversations) model += `${id}=${c.state};`;
  return symmetry.rename(`${scheduler}#${model}`);
}

/** The scheduler's private state alone, abstracted as for merging. */
export function schedulerKey(world: World): string {
  const nodes = (
    world.scheduler as unknown as {
      parts: { table: { nodes: Map<string, { deadlineAt?: number; stopping?: string }> } };
    }
  ).parts.table.nodes;
  return canonical(world.scheduler, world.now, {
    staggerMs: world.limits.staggerMs,
    skip: SKIP,
    tokens: TOKENS,
    // As the scheduler's own dropStaleDeadlines judges an entry when it reaches the top.
    heapEntryLive: (key, value) => {
      const node = nodes.get(value as string);
      return node !== undefined && node.deadlineAt === key && node.stopping === undefined;
    },
  });
}

/**
 * Top-level parents are interchangeable (the core compares keys, it never orders them, and the moves
 * try every parent), so states that differ only by a permutation of them are one state: each parent
 * key is renamed by where it first appears in the state's text.
 */
export class ParentSymmetry {
  private readonly pattern: RegExp | undefined;

  constructor(parents: readonly string[]) {
    const escaped = parents.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    // Longest first, so a key that another one prefixes is matched whole.
    if (parents.length > 1)
      this.pattern = new RegExp(escaped.sort((a, b) => b.length - a.length).join('|'), 'g');
  }

  rename(text: string): string {
    if (!this.pattern) return text;
    const names = new Map<string, string>();
    return text.replace(this.pattern, (parent) => {
      let name = names.get(parent);
      if (name === undefined) {
        name = `P${names.size}`;
        names.set(parent, name);
      }
      return name;
    });
  }
}
