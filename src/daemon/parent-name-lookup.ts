import { cleanClientName } from '../core/client-name.js';
import { isNamedByClient } from '../core/parent-label.js';
import type { ParentKey } from '../core/types.js';
import type { Store } from '../store/store.js';

/**
 * A parent's client name for the dashboard: the live one (`ClientNames`, while its session is open),
 * else the one kept with its newest run (`spec.parentName`), so a closed session or a restarted daemon
 * still reads as "claude-code (session bc5b9186)". Only keys that can carry a name ask the store: one
 * indexed read of one row (`runs_by_parent`), for at most the parents on one page.
 */
export function parentNameLookup(
  live: (parent: ParentKey) => string | undefined,
  store: Pick<Store, 'runs'>,
): (parent: ParentKey) => string | undefined {
  return (parent) => {
    const name = live(parent);
    if (name !== undefined || !isNamedByClient(parent)) return name;
    return cleanClientName(store.runs({ parents: [parent], limit: 1 })[0]?.spec.parentName);
  };
}
