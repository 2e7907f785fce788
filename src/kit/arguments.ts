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
 */
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

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
  if ("const" in schema && !deepEqual(schema["const"], value)) return `${path} must be ${pythonRepr(schema["const"])}`;
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) {
      if (!branches.some((branch) => isPlainObject(branch) && checkArgumentValue(branch, value, path, depth + 1) === null)) return `${path} does not match any allowed form`;
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
  const items = schema["items"];
  if (Array.isArray(value) && isPlainObject(items)) {
    for (let index = 0; index < value.length; index += 1) {
      if (!collectValue(items, value[index], `${path}[${index}]`, sink, depth + 1)) return false;
    }
  }
  if (isPlainObject(value)) return collectObject(schema, value, path, sink, depth, false);
  return true;
}

function collectObject(schema: Record<string, unknown>, value: Record<string, unknown>, path: string, sink: Sink, depth: number, requiredDone: boolean): boolean {
  const properties = isPlainObject(schema["properties"]) ? (schema["properties"] as Record<string, unknown>) : {};
  if (!requiredDone && Array.isArray(schema["required"])) {
    for (const key of schema["required"]) {
      if (typeof key === "string" && value[key] === undefined && !sink(join(path, key), "missing", `${join(path, key)} is required`)) return false;
    }
  }
  for (const [key, property] of Object.entries(properties)) {
    if (value[key] === undefined || !isPlainObject(property)) continue;
    if (!collectValue(property, value[key], join(path, key), sink, depth + 1)) return false;
  }
  const extra = schema["additionalProperties"];
  const accepted = Object.keys(properties);
  for (const [key, item] of Object.entries(value)) {
    if (key in properties) continue;
    if (extra === false) {
      const message = `${join(path, key)} is not an accepted argument${accepted.length > 0 ? ` (accepted: ${accepted.join(", ")})` : " (this takes no arguments)"}`;
      if (!sink(join(path, key), "unknown", message)) return false;
    } else if (isPlainObject(extra)) {
      if (!collectValue(extra, item, join(path, key), sink, depth + 1)) return false;
    }
  }
  return true;
}

/**
 * The first problem of `value` against property schema `schema`, or `null`.
 * Supports `type` (string or list), `enum`, `const`,
 * `minLength`/`maxLength`/`pattern`, `minimum`/`maximum`/`exclusiveMinimum`/
 * `exclusiveMaximum`, `minItems`/`maxItems`/`items`, `properties`/`required`/
 * `additionalProperties`, `anyOf`/`oneOf` (at least one branch matches).
 * {@link argumentValueProblems} gives all of them.
 */
export function checkArgumentValue(schema: Record<string, unknown>, value: unknown, path: string, depth = 0): string | null {
  let first: string | null = null;
  collectValue(schema, value, path, (_path, _kind, message) => {
    first = message;
    return false;
  }, depth);
  return first;
}

/** Every problem of `value` against `schema` (one per bad path; at most 1000), in the order of {@link validateArguments}. */
export function argumentValueProblems(schema: Record<string, unknown>, value: unknown, path: string): string[] {
  const out: string[] = [];
  collectValue(schema, value, path, (_path, _kind, message) => out.push(message) < MAX_COLLECTED, 0);
  return out;
}

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
 */
export function formatArgumentProblems(problems: readonly ArgumentProblem[], capped = false): string {
  const shown = problems.slice(0, MAX_ARGUMENT_PROBLEM_LINES).map((problem) => problem.message);
  const hidden = problems.length - shown.length;
  if (hidden > 0) shown.push(`... and ${capped ? "at least " : ""}${hidden} more problem${hidden === 1 ? "" : "s"}`);
  return shown.join("\n");
}

function topKey(path: string): string {
  return path.split(/[.[]/, 1)[0] ?? "";
}

/**
 * Normalize and validate call arguments against `parameters`. Optional
 * arguments sent as `null` are dropped (models often send `null` for
 * "not given"); required ones count as missing.
 *
 * @returns `{ok: true, args}` with the normalized arguments, or `{ok: false,
 *   problems, message}` with every problem found (see the module comment for
 *   the order) and the text answered to the model.
 */
export function validateArguments(
  parameters: ParametersSchema,
  input: unknown,
  options: ArgumentValidationOptions = {},
): { ok: true; args: Record<string, unknown> } | { ok: false; problems: ArgumentProblem[]; message: string } {
  const required = options.required ?? parameters.required ?? [];
  const examples = options.examples ?? {};
  if (input !== undefined && input !== null && !isPlainObject(input)) {
    const problems: ArgumentProblem[] = [{ key: "", path: "", kind: "invalid", message: "arguments must be an object" }];
    return { ok: false, problems, message: formatArgumentProblems(problems) };
  }
  const args: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input ?? {})) {
    if (value === null && !required.includes(key)) continue;
    args[key] = value;
  }
  const problems: ArgumentProblem[] = [];
  const sink: Sink = (path, kind, message) => problems.push({ key: topKey(path), path, kind, message }) < MAX_COLLECTED;
  const missing = new Set<string>();
  if (options.validateRequired !== false) {
    for (const key of required) {
      if (!isMissingArgument(args[key])) continue;
      missing.add(key);
      const example = key in examples && examples[key] !== undefined ? ` (e.g. ${pythonRepr(examples[key])})` : "";
      sink(key, "missing", `${key} is required${example}`);
    }
  } else {
    for (const key of required) if (args[key] === null) delete args[key];
  }
  // A missing argument is named once; the schema pass sees the others.
  const rest = Object.fromEntries(Object.entries(args).filter(([key]) => !missing.has(key)));
  if (problems.length < MAX_COLLECTED) collectObject(parameters, rest, "", sink, 0, true);
  if (problems.length === 0) return { ok: true, args };
  return { ok: false, problems, message: formatArgumentProblems(problems, problems.length >= MAX_COLLECTED) };
}
