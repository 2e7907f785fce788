/**
 * Options given to a library function are plain data, read once. A check that reads an option and a use
 * that reads it again may see two values (a getter), a value inherited through a prototype is missed by a
 * check of own keys yet found by a plain read, and a `Map` or class instance where an object of pins goes
 * holds entries no key check sees: each of these let a pin, a provenance policy or a repository be checked
 * and then not applied, or not checked at all. {@link snapshotOptions} refuses them and returns a copy made
 * of own enumerable data properties only, which the function then reads instead of what it was given.
 * Pure: nothing here reads or writes outside its arguments.
 */

/**
 * True for an AbortSignal: an instance, or an object with a boolean `aborted` and `addEventListener` /
 * `removeEventListener` functions (a signal of another realm or library). The one signal rule of the project:
 * the option checks of `src/oci` (`requireOptionalSignal`) and `src/fetch` use it, so every entry point
 * refuses what this refuses.
 */
export function isAbortSignal(value: unknown): value is AbortSignal {
  if (value instanceof AbortSignal) return true;
  const candidate = value as { aborted?: unknown; addEventListener?: unknown; removeEventListener?: unknown } | null;
  return candidate !== null && typeof candidate === "object" && typeof candidate.aborted === "boolean" && typeof candidate.addEventListener === "function" && typeof candidate.removeEventListener === "function";
}

/** True for an object whose prototype is `Object.prototype` or `null` (an object literal, `JSON.parse`). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * What is wrong with `value` as a plain object of options at `path`, or `undefined`: not a plain object
 * (`what` names what it is), a symbol key, an accessor (getter/setter), a non-enumerable own property, an own
 * `__proto__` key (JSON.parse makes one; no option is named so).
 */
export function plainObjectProblem(value: unknown, path: string): string | undefined {
  if (!isPlainObject(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value !== "object" ? `a ${typeof value}` : describeNonPlainObject(value);
    return `${path} must be a plain object (an object literal or parsed JSON), found ${kind}`;
  }
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key === "symbol") return `${path} has a symbol key ${String(key)}, which no option is`;
    if (key === "__proto__") return `${path} has an own "__proto__" key, which no option is`;
    const descriptor = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
    if (descriptor.get !== undefined || descriptor.set !== undefined) return `${path}.${key} is a getter or setter: give the value itself (an option is read once, as data)`;
    if (descriptor.enumerable !== true) return `${path}.${key} is not enumerable: give it as an ordinary property`;
  }
  return undefined;
}

/**
 * What an object that is not a plain object ({@link isPlainObject} false) is, for the "found ..." of a message:
 * `an instance of Map` for an instance of a named class, else `an object with another prototype (an inherited
 * value is not read)` (`Object.create({...})`, an anonymous class). The one wording of every option check that
 * refuses such a value (this module, `src/fetch/entry-options.ts`, `requireGatePins`).
 */
export function describeNonPlainObject(value: object): string {
  const ctor: unknown = (value as { constructor?: unknown }).constructor;
  return typeof ctor === "function" && ctor !== Object && ctor.name !== "" ? `an instance of ${ctor.name}` : "an object with another prototype (an inherited value is not read)";
}

/**
 * A copy of `given` made of its own enumerable data properties, plain objects and arrays inside it copied the
 * same way (to `depth` levels); any other value (a function, a stream, an AbortSignal, a Buffer) is kept as
 * is, for the function's own kind checks. `given` must be a plain object ({@link plainObjectProblem}); so must
 * every nested object whose name is in `plainKeys` (objects of pins or policies, such as `policy`, `gates`,
 * `provenance`), where a `Map` or class instance would hide entries.
 * @param fail throws the caller's own coded error with the message (never returns).
 * @throws whatever `fail` throws; a getter is never called, and a Proxy whose trap throws (or that was revoked)
 *   is reported through `fail` too, never as the trap's own error.
 */
export function snapshotOptions<T>(given: T, path: string, fail: (message: string) => never, plainKeys: readonly string[] = [], depth = 6): T {
  try {
    return copy(given, path, fail, plainKeys, depth, true) as T;
  } catch (error) {
    if (error instanceof SnapshotFailure) throw error.original;
    return fail(`${path} could not be read as data: ${(error as Error)?.message ?? String(error)}`);
  }
}

/** Carries the caller's own error through the catch above unchanged. */
class SnapshotFailure extends Error {
  constructor(readonly original: unknown) {
    super("snapshot failure");
  }
}

function copy(value: unknown, path: string, fail: (message: string) => never, plainKeys: readonly string[], depth: number, mustBePlain: boolean): unknown {
  if (mustBePlain || isPlainObject(value)) {
    const problem = plainObjectProblem(value, path);
    if (problem !== undefined) {
      try {
        fail(problem);
      } catch (error) {
        throw new SnapshotFailure(error);
      }
    }
    if (depth <= 0) return value;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      out[key] = copy(inner, `${path}.${key}`, fail, plainKeys, depth - 1, plainKeys.includes(key) && inner !== undefined);
    }
    return out;
  }
  if (Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype && depth > 0) {
    return value.map((inner, i) => copy(inner, `${path}[${i}]`, fail, plainKeys, depth - 1, false));
  }
  return value;
}
