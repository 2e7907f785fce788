/**
 * Kit-owned validation of tool-call arguments (Python kit @tool; docs/kit.md): runs
 * before the handler and before any SDK validation, and answers with an
 * instructive message the model can act on instead of a JSON-RPC error.
 *
 * Every bad argument is named, one short line each, so the model fixes all
 * of them in one retry: first every required argument that is absent, `null`
 * or a blank string (`<key> is required (e.g. <example>)`, in `required`
 * order), then each declared argument that breaks its schema (types, enum,
 * string/number/array bounds, nested objects and array items, each at its own
 * path, in schema order), then each key the schema does not accept (in the
 * order sent). Messages name paths and expectations, never argument values.
 *
 * Keys are matched as own properties, never through `Object.prototype`:
 * `constructor`, `toString`, `__proto__`, ... are unknown keys unless the
 * schema declares them, `__proto__` is refused everywhere (also inside open
 * objects and free-form arrays), and `constructor`/`prototype` wherever they
 * are not declared, so a handler never receives a prototype-changing key.
 */
import { inputTypeError, isRecord, valueKind } from "./errors.js";
import { unknownOptionKeys, unknownOptionMessage } from "./option-keys.js";
import { ownValue, PROTOTYPE_KEYS, setOwn } from "./own-keys.js";
import { pythonRepr, type ParametersSchema } from "./schema.js";

/** What is wrong with one argument. */
export type ArgumentProblemKind = "missing" | "invalid" | "unknown";

/** One rejected argument: its path (`a`, `a.b`, `a[2]`), the kind of problem and the line shown to the model. */
export interface ArgumentProblem {
  /** Top-level argument name the problem belongs to (`""` when the arguments are not an object). */
  key: string;
  /** Full path of the bad value. */
  path: string;
  kind: ArgumentProblemKind;
  message: string;
}

/** Lines shown in one answer; further problems are summarised in one last line. */
export const MAX_ARGUMENT_PROBLEM_LINES = 20;

/** Problems collected per call at most (bounds the work on huge inputs). */
const MAX_COLLECTED = 1000;
/** Nesting followed at most. */
const MAX_DEPTH = 32;

const isPlainObject = isRecord;

/** True when `value` counts as missing for a required argument: absent, `null` or a blank string. */
export function isMissingArgument(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === "string" && value.trim() === "");
}

function matchesType(type: string, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return isPlainObject(value);
    case "null":
      return value === null;
    default:
      return true;
  }
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

/** Receives each problem; returns false to stop collecting. */
type Sink = (path: string, kind: ArgumentProblemKind, message: string) => boolean;

function stringProblem(schema: Record<string, unknown>, value: string, path: string): string | null {
  const length = Array.from(value).length;
  if (typeof schema["minLength"] === "number" && length < schema["minLength"]) return `${path} must be at least ${schema["minLength"]} characters`;
  if (typeof schema["maxLength"] === "number" && length > schema["maxLength"]) return `${path} must be at most ${schema["maxLength"]} characters`;
  if (typeof schema["pattern"] === "string") {
    let pattern: RegExp | null = null;
    try {
      pattern = new RegExp(schema["pattern"], "u");
    } catch {
      pattern = null;
    }
    if (pattern && !pattern.test(value)) return `${path} must match the pattern ${pythonRepr(schema["pattern"])}`;
  }
  return null;
}

function numberProblem(schema: Record<string, unknown>, value: number, path: string): string | null {
  if (typeof schema["minimum"] === "number" && value < schema["minimum"]) return `${path} must be >= ${schema["minimum"]}`;
  if (typeof schema["maximum"] === "number" && value > schema["maximum"]) return `${path} must be <= ${schema["maximum"]}`;
  if (typeof schema["exclusiveMinimum"] === "number" && value <= schema["exclusiveMinimum"]) return `${path} must be > ${schema["exclusiveMinimum"]}`;
  if (typeof schema["exclusiveMaximum"] === "number" && value >= schema["exclusiveMaximum"]) return `${path} must be < ${schema["exclusiveMaximum"]}`;
  return null;
}

/** The one problem of `value` itself (type, enum, const, anyOf/oneOf, bounds), not of its members. */
function ownProblem(schema: Record<string, unknown>, value: unknown, path: string, depth: number): string | null {
  const type = schema["type"];
  const types = typeof type === "string" ? [type] : Array.isArray(type) ? type.filter((t): t is string => typeof t === "string") : [];
  if (types.length > 0 && !types.some((t) => matchesType(t, value))) return `${path} must be ${types.join(" or ")}`;
  if (Array.isArray(schema["enum"]) && !schema["enum"].some((option) => deepEqual(option, value))) {
    return `${path} must be one of ${schema["enum"].map(pythonRepr).join(", ")}`;
  }
  if (Object.hasOwn(schema, "const") && !deepEqual(schema["const"], value)) return `${path} must be ${pythonRepr(schema["const"])}`;
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) {
      const matches = (branch: unknown) => isPlainObject(branch) && checkArgumentValue(branch, value, path, depth + 1) === null;
      // anyOf: at least one branch; oneOf: exactly one (JSON Schema), so a value two branches accept is refused.
      const matched = key === "anyOf" ? (branches.some(matches) ? 1 : 0) : branches.filter(matches).length;
      if (matched === 0) return `${path} does not match any allowed form`;
      if (matched > 1) return `${path} matches more than one allowed form (oneOf: exactly one must match)`;
    }
  }
  if (typeof value === "string") return stringProblem(schema, value, path);
  if (typeof value === "number") return numberProblem(schema, value, path);
  if (Array.isArray(value)) {
    if (typeof schema["minItems"] === "number" && value.length < schema["minItems"]) return `${path} must have at least ${schema["minItems"]} items`;
    if (typeof schema["maxItems"] === "number" && value.length > schema["maxItems"]) return `${path} must have at most ${schema["maxItems"]} items`;
  }
  return null;
}

function collectValue(schema: Record<string, unknown>, value: unknown, path: string, sink: Sink, depth: number): boolean {
  if (depth > MAX_DEPTH) return sink(path, "invalid", `${path} is nested too deeply`);
  const own = ownProblem(schema, value, path, depth);
  if (own) return sink(path, "invalid", own);
  if (Array.isArray(value)) {
    const items = schema["items"];
    for (let index = 0; index < value.length; index += 1) {
      if (!collectChild(items, value[index], `${path}[${index}]`, sink, depth)) return false;
    }
    return true;
  }
  if (isPlainObject(value)) return collectObject(schema, value, path, sink, depth, false);
  return true;
}

/** A member of an object or array: against its schema when it has one, else as free-form data. */
function collectChild(schema: unknown, value: unknown, path: string, sink: Sink, depth: number): boolean {
  return isPlainObject(schema) ? collectValue(schema, value, path, sink, depth + 1) : collectFreeForm(value, path, sink);
}

/**
 * True when a parser replaced `value`'s prototype with data (it assigned a
 * `__proto__` key, as a plain `{}` copy does): the prototype is neither
 * `Object.prototype`, `null` nor a class's prototype (those own
 * `constructor`). Such an object carries a `__proto__` key the model sent.
 */
function hasInjectedPrototype(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype !== null && prototype !== Object.prototype && !Object.hasOwn(prototype as object, "constructor");
}

function notAccepted(path: string, accepted: readonly string[], closed: boolean): string {
  const detail = accepted.length > 0 ? ` (accepted: ${accepted.join(", ")})` : closed ? " (this takes no arguments)" : "";
  return `${path} is not an accepted argument${detail}`;
}

/**
 * An object against `properties`/`required`/`additionalProperties`. Keys are
 * matched as own properties only (`constructor`, `toString`, `__proto__`
 * are not "declared" through `Object.prototype`); `__proto__` is never
 * accepted, `constructor` and `prototype` only when declared by name, even
 * where `additionalProperties` lets other keys through.
 */
function collectObject(schema: Record<string, unknown>, value: Record<string, unknown>, path: string, sink: Sink, depth: number, requiredDone: boolean): boolean {
  const declared = schema["properties"];
  const properties: Record<string, unknown> = isPlainObject(declared) ? declared : {};
  const accepts = (key: string) => key !== "__proto__" && Object.hasOwn(properties, key);
  const required = schema["required"];
  if (!requiredDone && Array.isArray(required)) {
    for (const key of required) {
      if (typeof key === "string" && ownValue(value, key) === undefined && !sink(join(path, key), "missing", `${join(path, key)} is required`)) return false;
    }
  }
  for (const [key, property] of Object.entries(properties)) {
    const item = ownValue(value, key);
    if (item === undefined || !accepts(key)) continue;
    if (!collectChild(property, item, join(path, key), sink, depth)) return false;
  }
  const extra = schema["additionalProperties"];
  const accepted = Object.keys(properties).filter(accepts);
  for (const [key, item] of Object.entries(value)) {
    if (accepts(key)) continue;
    if (extra === false || PROTOTYPE_KEYS.has(key)) {
      if (!sink(join(path, key), "unknown", notAccepted(join(path, key), accepted, extra === false))) return false;
    } else if (!collectChild(extra, item, join(path, key), sink, depth)) {
      return false;
    }
  }
  if (hasInjectedPrototype(value) && !Object.hasOwn(value, "__proto__")) return sink(join(path, "__proto__"), "unknown", notAccepted(join(path, "__proto__"), accepted, extra === false));
  return true;
}

/**
 * Data no schema describes (members of an open object, items of an array
 * without `items`): any depth, each object once; only the
 * {@link PROTOTYPE_KEYS} are refused, so a handler never receives a key
 * that `Object.assign` or a deep merge turns into a prototype change.
 */
function collectFreeForm(value: unknown, path: string, sink: Sink): boolean {
  const pending: Array<[unknown, string]> = [[value, path]];
  const seen = new WeakSet<object>();
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, at] = next;
    if (node === null || typeof node !== "object" || seen.has(node)) continue;
    seen.add(node);
    const children: Array<[unknown, string]> = [];
    if (Array.isArray(node)) {
      for (let index = 0; index < node.length; index += 1) children.push([node[index], `${at}[${index}]`]);
    } else {
      for (const [key, item] of Object.entries(node)) {
        if (!PROTOTYPE_KEYS.has(key)) children.push([item, join(at, key)]);
        else if (!sink(join(at, key), "unknown", `${join(at, key)} is not an accepted argument`)) return false;
      }
      if (hasInjectedPrototype(node) && !Object.hasOwn(node, "__proto__") && !sink(join(at, "__proto__"), "unknown", `${join(at, "__proto__")} is not an accepted argument`)) return false;
    }
    for (let index = children.length - 1; index >= 0; index -= 1) pending.push(children[index] as [unknown, string]);
  }
  return true;
}

/** The problem of a call of the schema checks whose schema or path has the wrong type, else `null`. */
function schemaInputProblem(schema: unknown, path: unknown): string | null {
  if (typeof path !== "string") return `the path must be a string, found ${valueKind(path)}`;
  if (!isPlainObject(schema)) return `the schema of ${path === "" ? "the value" : path} must be a schema object, found ${valueKind(schema)}`;
  return null;
}

/**
 * The first problem of `value` against property schema `schema`, or `null`.
 * Supports `type` (string or list), `enum`, `const`,
 * `minLength`/`maxLength`/`pattern`, `minimum`/`maximum`/`exclusiveMinimum`/
 * `exclusiveMaximum`, `minItems`/`maxItems`/`items`, `properties`/`required`/
 * `additionalProperties`, `anyOf` (at least one branch matches), `oneOf`
 * (exactly one branch matches).
 * Object keys are matched as own properties; `__proto__` is never accepted,
 * `constructor` and `prototype` only where `properties` declares them (also
 * inside open objects and arrays). A `schema` that is not an object or a
 * `path` that is not a string is itself the problem (nothing passes).
 * {@link argumentValueProblems} gives all of them.
 */
export function checkArgumentValue(schema: Record<string, unknown>, value: unknown, path: string, depth = 0): string | null {
  const input = schemaInputProblem(schema, path);
  if (input !== null) return input;
  let first: string | null = null;
  collectValue(schema, value, path, (_path, _kind, message) => {
    first = message;
    return false;
  }, Number.isInteger(depth) && depth > 0 ? depth : 0);
  return first;
}

/** Every problem of `value` against `schema` (one per bad path; at most 1000), in the order of {@link validateArguments}; a wrong-typed `schema` or `path` as in {@link checkArgumentValue}. */
export function argumentValueProblems(schema: Record<string, unknown>, value: unknown, path: string): string[] {
  const input = schemaInputProblem(schema, path);
  if (input !== null) return [input];
  const out: string[] = [];
  collectValue(schema, value, path, (_path, _kind, message) => out.push(message) < MAX_COLLECTED, 0);
  return out;
}

/** Every option of {@link ArgumentValidationOptions}. */
const VALIDATION_OPTION_KEYS: readonly string[] = ["required", "examples", "validateRequired"];

/** Options of {@link validateArguments}. */
export interface ArgumentValidationOptions {
  /** Required names in order (default: `parameters.required`). */
  required?: readonly string[];
  /** Examples per argument, shown in the missing-argument message. */
  examples?: Record<string, unknown>;
  /** When false, the required check is skipped (type checks still run). Default true. */
  validateRequired?: boolean;
}

/**
 * The answer for `problems`: one line each, at most
 * {@link MAX_ARGUMENT_PROBLEM_LINES}, then `... and <n> more problems`.
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `problems` is not a list of
 *   `{message: string}` objects.
 */
export function formatArgumentProblems(problems: readonly ArgumentProblem[], capped = false): string {
  if (!Array.isArray(problems)) throw inputTypeError("formatArgumentProblems", "problems", "a list of argument problems", problems);
  const bad = problems.find((problem) => !isPlainObject(problem) || typeof problem.message !== "string");
  if (bad !== undefined) throw inputTypeError("formatArgumentProblems", "each problem", "an object with a string message", bad);
  const shown = problems.slice(0, MAX_ARGUMENT_PROBLEM_LINES).map((problem) => problem.message);
  const hidden = problems.length - shown.length;
  if (hidden > 0) shown.push(`... and ${capped ? "at least " : ""}${hidden} more problem${hidden === 1 ? "" : "s"}`);
  return shown.join("\n");
}

function topKey(path: string): string {
  return path.split(/[.[]/, 1)[0] ?? "";
}

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === "string");

function foundList(value: unknown): string {
  return Array.isArray(value) ? "a list with a non-string item" : valueKind(value);
}

/** What is wrong with `parameters` and `options` themselves (wrong types from plain JavaScript), else `null`. */
function validationInputProblem(parameters: unknown, options: unknown): string | null {
  if (!isPlainObject(parameters)) return `parameters must be a parameters object {type: "object", properties}, found ${valueKind(parameters)}`;
  if (parameters["properties"] !== undefined && !isPlainObject(parameters["properties"])) return `parameters.properties must be an object, found ${valueKind(parameters["properties"])}`;
  if (parameters["required"] !== undefined && !isStringList(parameters["required"])) return `parameters.required must be a list of strings, found ${foundList(parameters["required"])}`;
  if (!isPlainObject(options)) return `validateArguments options must be an object, found ${valueKind(options)}`;
  const unknown = unknownOptionKeys(options, VALIDATION_OPTION_KEYS);
  if (unknown.length > 0) return unknownOptionMessage("validateArguments", unknown, VALIDATION_OPTION_KEYS);
  if (options["required"] !== undefined && !isStringList(options["required"])) return `options.required must be a list of strings, found ${foundList(options["required"])}`;
  if (options["examples"] !== undefined && !isPlainObject(options["examples"])) return `options.examples must be an object, found ${valueKind(options["examples"])}`;
  if (options["validateRequired"] !== undefined && typeof options["validateRequired"] !== "boolean") return `options.validateRequired must be a boolean, found ${valueKind(options["validateRequired"])}`;
  return null;
}

function refused(message: string): { ok: false; problems: ArgumentProblem[]; message: string } {
  const problems: ArgumentProblem[] = [{ key: "", path: "", kind: "invalid", message }];
  return { ok: false, problems, message: formatArgumentProblems(problems) };
}

/**
 * Normalize and validate call arguments against `parameters`. Optional
 * arguments sent as `null` are dropped (models often send `null` for
 * "not given"); required ones count as missing. Keys are own properties
 * only: a key named after an `Object.prototype` member (`constructor`,
 * `toString`, `__proto__`, ...) is an unknown argument unless declared, and
 * `__proto__` is never accepted at any depth, so `args` never carries a
 * prototype-changing key.
 *
 * @returns `{ok: true, args}` with the normalized arguments, or `{ok: false,
 *   problems, message}` with every problem found (see the module comment for
 *   the order) and the text answered to the model. `parameters` or `options`
 *   of the wrong type (plain JavaScript callers), or an option it does not
 *   read (named with the nearest known one), are refused the same way,
 *   with one problem at path `""` naming what was expected and found.
 */
export function validateArguments(
  parameters: ParametersSchema,
  input: unknown,
  options: ArgumentValidationOptions = {},
): { ok: true; args: Record<string, unknown> } | { ok: false; problems: ArgumentProblem[]; message: string } {
  const inputProblem = validationInputProblem(parameters, options);
  if (inputProblem !== null) return refused(inputProblem);
  const required = options.required ?? parameters.required ?? [];
  const examples = options.examples ?? {};
  if (input !== undefined && input !== null && !isPlainObject(input)) return refused("arguments must be an object");
  const args: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input ?? {})) {
    if (value === null && !required.includes(key)) continue;
    setOwn(args, key, value);
  }
  // A `__proto__` key a parser already turned into the prototype (the SDK's request parsing does) is refused as sent.
  if (isPlainObject(input) && hasInjectedPrototype(input) && !Object.hasOwn(input, "__proto__")) setOwn(args, "__proto__", Object.getPrototypeOf(input));
  const problems: ArgumentProblem[] = [];
  const sink: Sink = (path, kind, message) => problems.push({ key: topKey(path), path, kind, message }) < MAX_COLLECTED;
  const missing = new Set<string>();
  if (options.validateRequired !== false) {
    for (const key of required) {
      if (!isMissingArgument(ownValue(args, key))) continue;
      missing.add(key);
      const example = ownValue(examples, key);
      sink(key, "missing", `${key} is required${example !== undefined ? ` (e.g. ${pythonRepr(example)})` : ""}`);
    }
  } else {
    for (const key of required) if (ownValue(args, key) === null) delete args[key];
  }
  // A missing argument is named once; the schema pass sees the others.
  const rest = Object.fromEntries(Object.entries(args).filter(([key]) => !missing.has(key)));
  if (problems.length < MAX_COLLECTED) collectObject(parameters, rest, "", sink, 0, true);
  if (problems.length === 0) return { ok: true, args };
  return { ok: false, problems, message: formatArgumentProblems(problems, problems.length >= MAX_COLLECTED) };
}
