/**
 * Records keyed by names that come from outside the kit (tool-call
 * arguments, hand-written schemas, config files, log attributes): a key is
 * read as an own property only and written as an own data property, so
 * `constructor`, `toString`, `hasOwnProperty`, `__proto__`, ... never resolve
 * through `Object.prototype`, and a key `__proto__` never replaces an
 * object's prototype.
 */
import { describeNonPlainObject } from "../contract/plain-options.js";

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

/**
 * Why `value` is not a plain map of own entries, or `null` when it is one: an object whose prototype is
 * `Object.prototype` or `null` (an object literal, `Object.create(null)`, `JSON.parse` output), whose own keys are
 * all enumerable string-keyed data properties, none named `__proto__`. A map-like option (`hooks`, `middleware`,
 * `env`, ...) is read with `Object.entries`, which skips inherited and non-enumerable entries: a hook given through
 * a prototype would be dropped silently, a getter would run at an unknown time, an own `__proto__` key (from
 * `JSON.parse`) would become a prototype on the first copy.
 */
export function plainRecordProblem(value: unknown): string | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return `found ${value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`}`;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    const inherited = [];
    for (const key in value) if (!Object.hasOwn(value, key)) inherited.push(key);
    // The project's one wording for such a value (describeNonPlainObject), then what it would have inherited.
    return `found ${describeNonPlainObject(value)}${inherited.length === 0 ? "" : `; it inherits ${inherited.slice(0, 5).map((key) => `'${key.slice(0, 80)}'`).join(", ")}, which would be ignored`}`;
  }
  for (const key of Reflect.ownKeys(value)) {
    const shown = typeof key === "symbol" ? String(key).slice(0, 80) : `'${key.slice(0, 80)}'`;
    if (typeof key === "symbol") return `found a symbol key ${shown} (only string keys are read)`;
    if (key === "__proto__") return "found an own '__proto__' key (it would replace the prototype of a copy)";
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor === undefined) continue;
    if (!("value" in descriptor)) return `found an accessor (getter/setter) for ${shown} (only data properties are read)`;
    if (descriptor.enumerable !== true) return `found a non-enumerable entry ${shown} (it would be ignored)`;
  }
  return null;
}
