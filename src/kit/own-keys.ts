/**
 * Records keyed by names that come from outside the kit (tool-call
 * arguments, hand-written schemas, config files, log attributes): a key is
 * read as an own property only and written as an own data property, so
 * `constructor`, `toString`, `hasOwnProperty`, `__proto__`, ... never resolve
 * through `Object.prototype`, and a key `__proto__` never replaces an
 * object's prototype.
 */

/**
 * Keys that reach an object's prototype machinery: `__proto__` (setting it
 * through `Object.assign` or `obj[key] = v` replaces the prototype),
 * `constructor` and `prototype` (the `constructor.prototype` path of deep
 * merges).
 */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** `record[key]` when `record` has `key` as an own property, else `undefined`. */
export function ownValue(record: object, key: string): unknown {
  return Object.hasOwn(record, key) ? (record as Record<string, unknown>)[key] : undefined;
}

/** Set `record[key] = value` as an own, enumerable data property (a `__proto__` key stays a key). */
export function setOwn(record: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}
