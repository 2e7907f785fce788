/**
 * Options objects of the kit's exported functions and factories: each is a
 * plain object whose own keys are all ones the function reads. A misspelt
 * option (`requird`, `validateRequred`, `forse`, `noCal`) would otherwise be
 * ignored and turn a check off silently, so it is refused with the nearest
 * known name (docs/kit.md, "Writing a plugin").
 */
import { nearestName } from "../contract/grammar.js";
import { isRecord, PluginKitError, valueKind, type PluginKitErrorCode } from "./errors.js";

const quoted = (names: readonly string[]) => names.map((name) => `'${name}'`).join(", ");

/**
 * The own keys of `options` that are not in `known`, in the order given.
 */
export function unknownOptionKeys(options: Record<string, unknown>, known: readonly string[]): string[] {
  return Object.keys(options).filter((key) => !known.includes(key));
}

/**
 * The message of an unknown option: `<fn>: unknown option 'x' (it reads a,
 * b, c); did you mean 'y'?; fix: ...`. `hint` (per key) adds why a known
 * word of another vocabulary is not taken here.
 */
export function unknownOptionMessage(fn: string, unknown: readonly string[], known: readonly string[], hint?: (key: string) => string | undefined): string {
  const first = unknown[0] ?? "";
  const near = nearestName(first, known);
  const why = hint?.(first);
  return (
    `${fn}: unknown option${unknown.length === 1 ? "" : "s"} ${quoted(unknown)} (expected only ${quoted(known)})` +
    `${near === undefined ? "" : `; did you mean '${near}'?`}${why === undefined ? "" : `; ${why}`}` +
    `; fix: rename or remove it (an option the kit does not read would be ignored, silently doing less than asked)`
  );
}

/**
 * `options` is a plain object and each of its own keys is in `known`.
 *
 * @throws PluginKitError `code` (default `INPUT_TYPE_INVALID`): `<fn>:
 *   options must be an object, found <kind>`, or an unknown key named with
 *   the nearest known one ({@link unknownOptionMessage}).
 */
export function requireKnownOptions<T>(
  fn: string,
  options: T,
  known: readonly string[],
  code: PluginKitErrorCode = "INPUT_TYPE_INVALID",
  hint?: (key: string) => string | undefined,
): asserts options is NonNullable<T> {
  if (!isRecord(options)) throw new PluginKitError(code, `${fn}: options must be an object, found ${valueKind(options)}`);
  const unknown = unknownOptionKeys(options, known);
  if (unknown.length > 0) throw new PluginKitError(code, unknownOptionMessage(fn, unknown, known, hint));
}

/** What an option's value must be, for {@link requireOptionTypes}. */
export type OptionType = "string" | "boolean" | "object" | "function" | "string-record" | { integer: [min: number, max: number] };

function optionTypeProblem(value: unknown, type: OptionType): string | null {
  if (type === "string") return typeof value === "string" ? null : "a string";
  if (type === "boolean") return typeof value === "boolean" ? null : "true or false";
  if (type === "object") return isRecord(value) ? null : "an object";
  if (type === "function") return typeof value === "function" ? null : "a function";
  if (type === "string-record") return isRecord(value) && Object.values(value).every((item) => typeof item === "string" || item === undefined) ? null : "an object of strings";
  const [min, max] = type.integer;
  return Number.isInteger(value) && (value as number) >= min && (value as number) <= max ? null : `an integer ${min}..${max}`;
}

/**
 * Each option present (not `undefined`) in `options` has its type.
 *
 * @throws PluginKitError `code` (default `INPUT_TYPE_INVALID`): `<fn>:
 *   options.<key> must be <expected>, found <kind>` (a number outside an
 *   integer range names its value).
 */
export function requireOptionTypes(fn: string, options: object, types: Readonly<Record<string, OptionType>>, code: PluginKitErrorCode = "INPUT_TYPE_INVALID"): void {
  for (const [key, type] of Object.entries(types)) {
    const value = (options as Record<string, unknown>)[key];
    if (value === undefined) continue;
    const expected = optionTypeProblem(value, type);
    if (expected === null) continue;
    const found = typeof type === "object" && typeof value === "number" ? `${value}` : valueKind(value);
    throw new PluginKitError(code, `${fn}: options.${key} must be ${expected}, found ${found}`);
  }
}
