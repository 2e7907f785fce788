/**
 * The argument checks of `src/oci`'s public entry points (the names `hermes-plugin-kit/oci` exports): a call
 * from plain JavaScript with a number where a path goes, an options value that is not an object, a misspelt
 * option or a `signal` that is not an AbortSignal is refused at the entry with OciError `OCI_ARGUMENT_INVALID`,
 * naming the call, the argument, what it must be and what was found, never with a TypeError from deep inside
 * nor ignored (docs/oci.md "Arguments"). One function per rule; nothing here reads or writes anything.
 */
import { describeValue, nearestName } from "../contract/grammar.js";
import { isAbortSignal } from "../contract/plain-options.js";
import { OciError } from "./errors.js";

function invalid(message: string): never {
  throw new OciError("OCI_ARGUMENT_INVALID", message);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * `value` is a non-empty string.
 * @param call the entry point and its parameters, e.g. `LayoutTarget.open(dir, options)`.
 * @param name the argument, e.g. `dir`. @param what what it is, e.g. `the layout directory's path`.
 * @throws OciError `OCI_ARGUMENT_INVALID`.
 */
export function requireStringArgument(value: unknown, call: string, name: string, what: string): asserts value is string {
  if (typeof value !== "string" || value === "") invalid(`${call}: ${name} must be ${what} (a non-empty string), found ${value === "" ? "an empty string" : describeValue(value)}`);
}

/**
 * `value` is absent or a string (an optional header value and the like; empty allowed).
 * @throws OciError `OCI_ARGUMENT_INVALID`.
 */
export function requireOptionalString(value: unknown, call: string, name: string, what: string): asserts value is string | undefined {
  if (value !== undefined && typeof value !== "string") invalid(`${call}: ${name} must be ${what} (a string) or absent, found ${describeValue(value)}`);
}

/**
 * `value` is bytes (a Uint8Array, Buffer included).
 * @throws OciError `OCI_ARGUMENT_INVALID`.
 */
export function requireBytesArgument(value: unknown, call: string, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) invalid(`${call}: ${name} must be bytes (a Uint8Array or Buffer), found ${describeValue(value)}`);
}

/**
 * `value` is an array of strings.
 * @throws OciError `OCI_ARGUMENT_INVALID` naming the first element that is not.
 */
export function requireStringArray(value: unknown, call: string, name: string, what: string): asserts value is readonly string[] {
  if (!Array.isArray(value)) invalid(`${call}: ${name} must be ${what} (an array of strings), found ${describeValue(value)}`);
  const at = value.findIndex((item) => typeof item !== "string");
  if (at >= 0) invalid(`${call}: ${name}[${at}] must be a string (${name} is ${what}), found ${describeValue(value[at])}`);
}

/**
 * `value` is absent or an object whose values are all strings (an environment, a set of variables).
 * @throws OciError `OCI_ARGUMENT_INVALID` naming the first key whose value is not a string.
 */
export function requireStringRecord(value: unknown, call: string, name: string, what: string, allowUndefinedValues = false): void {
  if (value === undefined) return;
  if (!isRecord(value)) invalid(`${call}: ${name} must be ${what} (an object of strings), found ${describeValue(value)}`);
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== "string" && !(allowUndefinedValues && item === undefined)) invalid(`${call}: ${name}.${key} must be a string (${name} is ${what}), found ${describeValue(item)}`);
  }
}

/**
 * `value` is absent or an object, and each of its own keys is one of `known`: a misspelt option
 * (`lockTimeoutMS`) would otherwise be ignored. `name` names a nested options object (`options.registry`).
 * @throws OciError `OCI_ARGUMENT_INVALID` naming the key, the nearest known one and the known keys.
 */
export function requireOptions(value: unknown, call: string, known: readonly string[], name = "options"): asserts value is Record<string, unknown> | undefined {
  if (value === undefined) return;
  if (!isRecord(value)) invalid(`${call}: ${name} must be an object { ${known.map((k) => `${k}?`).join(", ")} } or absent, found ${describeValue(value)}`);
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  const first = unknown[0];
  if (first === undefined) return;
  const near = nearestName(first, known);
  invalid(
    `${call}: ${name === "options" ? "option" : `${name} key`}${unknown.length === 1 ? "" : "s"} ${unknown.map((k) => JSON.stringify(k)).join(", ")} ${unknown.length === 1 ? "is" : "are"} not one it reads (it reads ${known.join(", ")})${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}; an ignored option would do less than you asked`,
  );
}

/**
 * `value` is an options object (required: not absent), and each of its own keys is one of `known`. The
 * message gives the shape with the `required` keys unmarked and the others marked optional, e.g.
 * `{ registry, repository, plainHttp?, ... }`, and what was found (`number 5`, `nothing`).
 * @throws OciError `OCI_ARGUMENT_INVALID`, also for an unknown key (as {@link requireOptions}).
 */
export function requireOptionsObject(value: unknown, call: string, known: readonly string[], required: readonly string[]): asserts value is Record<string, unknown> {
  if (!isRecord(value)) invalid(`${call}: options must be an object { ${known.map((k) => (required.includes(k) ? k : `${k}?`)).join(", ")} }, found ${describeValue(value)}`);
  requireOptions(value, call, known);
}

/**
 * `value` is absent or a boolean.
 * @throws OciError `OCI_ARGUMENT_INVALID`.
 */
export function requireOptionalBoolean(value: unknown, call: string, name: string): asserts value is boolean | undefined {
  if (value !== undefined && typeof value !== "boolean") invalid(`${call}: ${name} must be true or false (or absent), found ${describeValue(value)}`);
}

/**
 * `value` is absent or a finite number of at least `min` (`unit` says what it counts, e.g. `milliseconds`).
 * @throws OciError `OCI_ARGUMENT_INVALID`.
 */
export function requireOptionalNumber(value: unknown, call: string, name: string, unit: string, min = 0): asserts value is number | undefined {
  if (value === undefined) return;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min) invalid(`${call}: ${name} must be a number of ${unit} of at least ${min} (or absent), found ${describeValue(value)}`);
}

/**
 * `value` is absent or a function.
 * @throws OciError `OCI_ARGUMENT_INVALID`.
 */
export function requireOptionalFunction(value: unknown, call: string, name: string, shape: string): void {
  if (value !== undefined && typeof value !== "function") invalid(`${call}: ${name} must be a function ${shape} (or absent), found ${describeValue(value)}`);
}

/**
 * `value` is absent or an AbortSignal (an object with a boolean `aborted` and `addEventListener` /
 * `removeEventListener`, as `AbortController.signal` is): anything else would fail later, deep inside, or
 * be ignored and never stop the work.
 * @throws OciError `OCI_ARGUMENT_INVALID`.
 */
export function requireOptionalSignal(value: unknown, call: string, name = "options.signal"): asserts value is AbortSignal | undefined {
  if (value === undefined || isAbortSignal(value)) return;
  invalid(`${call}: ${name} must be an AbortSignal (e.g. new AbortController().signal) or absent, found ${describeValue(value)}`);
}

/**
 * `value` is a readable stream (async iterable of chunks).
 * @throws OciError `OCI_ARGUMENT_INVALID`.
 */
export function requireReadable(value: unknown, call: string, name: string): void {
  const iterable = value !== null && typeof value === "object" && typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function";
  if (!iterable) invalid(`${call}: ${name} must be a readable stream, found ${describeValue(value)}`);
}

/**
 * `value` is an object that has each of `methods` (a Target, for example).
 * @throws OciError `OCI_ARGUMENT_INVALID` naming the first method that is missing.
 */
export function requireObjectWith(value: unknown, call: string, name: string, what: string, methods: readonly string[]): void {
  if (value === null || typeof value !== "object") invalid(`${call}: ${name} must be ${what}, found ${describeValue(value)}`);
  const missing = methods.find((m) => typeof (value as Record<string, unknown>)[m] !== "function");
  if (missing !== undefined) invalid(`${call}: ${name} must be ${what}, found an object without ${missing}()`);
}
