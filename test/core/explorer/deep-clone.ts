/**
 * A structural deep copy that keeps prototypes, so a cloned `Scheduler` (or any class instance made of
 * Maps, Sets, arrays and plain fields) still has its methods. The explorer forks a state by cloning it
 * instead of replaying the path that led there.
 *
 * Shared references stay shared inside one copy (a run object reachable from two places is copied
 * once). Functions and frozen objects are shared, not copied: nothing can change them, and the
 * explorer freezes the records it keeps so that forking a state copies only what can change. JS `#private` fields cannot be reached from outside the
 * class, so a class that moves its state into them can no longer be cloned this way (TypeScript
 * `private` is fine: it is an ordinary property at run time).
 */
export function deepClone<T>(value: T): T {
  return copy(value, new Map()) as T;
}

function copy(value: unknown, seen: Map<object, unknown>): unknown {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (value instanceof Map) {
    const out = new Map();
    seen.set(value, out);
    for (const [k, v] of value) out.set(copy(k, seen), copy(v, seen));
    return out;
  }
  if (value instanceof Set) {
    const out = new Set();
    seen.set(value, out);
    for (const v of value) out.add(copy(v, seen));
    return out;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) out[i] = copy(value[i], seen);
    return out;
  }
  const out = Object.create(Object.getPrototypeOf(value)) as Record<string, unknown>;
  seen.set(value, out);
  for (const key of Object.keys(value)) out[key] = copy((value as Record<string, unknown>)[key], seen);
  return out;
}
