/**
 * Lookups keyed by text from outside (a request path, a header, a tool argument, an agent file, a config
 * key): a plain object answers `constructor`, `toString` or `__proto__` from Object.prototype, so a read
 * must take only the object's own properties, and a write must make an own property whatever the key.
 */

/** `record[key]` when `key` is the record's own property, else undefined. */
export function ownValue<T>(
  record: Readonly<Record<string, T>> | undefined,
  key: PropertyKey,
): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key as string] : undefined;
}

/** Sets `record[key]` as an own data property, `__proto__` included (an assignment would set the prototype). */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true });
}
