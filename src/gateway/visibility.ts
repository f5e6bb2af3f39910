import { CrewError } from '../core/errors.js';
import * as refusals from '../core/refusals.js';
import { type ParentKey, parentRunId, type RunId } from '../core/types.js';
import type { RunRecord, Store } from '../store/store.js';

/** Who is asking: the operator (CLI, dashboard) sees everything; a parent sees its own subtree. */
export type Scope = { kind: 'operator' } | { kind: 'parent'; parent: ParentKey };

/** Nesting is bounded by `agent.subagent_max_depth`; this bounds a walk over a corrupt chain too. */
const MAX_HOPS = 64;

/**
 * Which runs a scope may see (DESIGN §6): a parent sees its own runs and their descendants, the
 * operator sees all. A run outside the scope reads as `not_found`, never as "exists but not yours".
 */
export class Visibility {
  constructor(private readonly store: Pick<Store, 'run' | 'runs'>) {}

  isVisible(scope: Scope, record: RunRecord): boolean {
    if (scope.kind === 'operator') return true;
    let current: RunRecord | undefined = record;
    for (let hops = 0; current && hops < MAX_HOPS; hops++) {
      if (current.run.parent === scope.parent) return true;
      const up = parentRunId(current.run.parent);
      current = up === undefined ? undefined : this.store.run(up);
    }
    return false;
  }

  /** The record, if this scope may see it; otherwise a `not_found` refusal is thrown. */
  assertVisible(scope: Scope, id: RunId): RunRecord {
    const record = this.store.run(id);
    if (!record || !this.isVisible(scope, record)) throw new CrewError(refusals.notVisible(id));
    return record;
  }

  /** Up to `limit` runs the scope sees, newest first per generation (a parent's own runs, then nested). */
  records(scope: Scope, limit: number): RunRecord[] {
    if (scope.kind === 'operator') return this.store.runs({ limit });
    const out: RunRecord[] = [];
    let frontier: ParentKey[] = [scope.parent];
    for (let depth = 0; frontier.length > 0 && depth < MAX_HOPS && out.length < limit; depth++) {
      const found = this.store.runs({ parents: frontier, limit: limit - out.length });
      out.push(...found);
      frontier = found.map((r) => `run:${r.run.id}`);
    }
    return out;
  }
}
