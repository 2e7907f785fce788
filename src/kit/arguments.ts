/**
 * Kit-owned validation of tool-call arguments (reference A.5, C.1): runs
 * before the handler and before any SDK validation, and answers with an
 * instructive message the model can act on instead of a JSON-RPC error.
 *
 * Order: the first required argument that is absent, `null` or a blank
 * string -> `<key> is required (e.g. <example>)`; then the arguments are
 * checked against the `parameters` schema (types, enum, string/number/array
 * bounds, nested objects, unknown keys) -> `<path> must be <type>` and
 * similar. Messages name paths and expectations, never argument values.
 */
import { pythonRepr, type ParametersSchema } from "./schema.js";

/** A rejected call: the argument path and the message returned to the model. */
export interface ArgumentProblem {
  key: string;
  message: string;
}

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

/**
 * Check `value` against property schema `schema`; returns the first problem
 * message or `null`. Supports `type` (string or list), `enum`, `const`,
 * `minLength`/`maxLength`/`pattern`, `minimum`/`maximum`/`exclusiveMinimum`/
 * `exclusiveMaximum`, `minItems`/`maxItems`/`items`, `properties`/`required`/
 * `additionalProperties`, `anyOf`/`oneOf` (at least one branch matches).
 */
export function checkValue(schema: Record<string, unknown>, value: unknown, path: string): string | null {
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
      if (!branches.some((branch) => isPlainObject(branch) && checkValue(branch, value, path) === null)) return `${path} does not match any allowed form`;
    }
  }
  if (typeof value === "string") {
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
  }
  if (typeof value === "number") {
    if (typeof schema["minimum"] === "number" && value < schema["minimum"]) return `${path} must be >= ${schema["minimum"]}`;
    if (typeof schema["maximum"] === "number" && value > schema["maximum"]) return `${path} must be <= ${schema["maximum"]}`;
    if (typeof schema["exclusiveMinimum"] === "number" && value <= schema["exclusiveMinimum"]) return `${path} must be > ${schema["exclusiveMinimum"]}`;
    if (typeof schema["exclusiveMaximum"] === "number" && value >= schema["exclusiveMaximum"]) return `${path} must be < ${schema["exclusiveMaximum"]}`;
  }
  if (Array.isArray(value)) {
    if (typeof schema["minItems"] === "number" && value.length < schema["minItems"]) return `${path} must have at least ${schema["minItems"]} items`;
    if (typeof schema["maxItems"] === "number" && value.length > schema["maxItems"]) return `${path} must have at most ${schema["maxItems"]} items`;
    const items = schema["items"];
    if (isPlainObject(items)) {
      for (let index = 0; index < value.length; index += 1) {
        const problem = checkValue(items, value[index], `${path}[${index}]`);
        if (problem) return problem;
      }
    }
  }
  if (isPlainObject(value)) return checkObject(schema, value, path, false);
  return null;
}

function checkObject(schema: Record<string, unknown>, value: Record<string, unknown>, path: string, requiredDone: boolean): string | null {
  const properties = isPlainObject(schema["properties"]) ? (schema["properties"] as Record<string, unknown>) : {};
  if (!requiredDone && Array.isArray(schema["required"])) {
    for (const key of schema["required"]) {
      if (typeof key === "string" && value[key] === undefined) return `${join(path, key)} is required`;
    }
  }
  for (const [key, item] of Object.entries(value)) {
    const property = properties[key];
    if (isPlainObject(property)) {
      const problem = checkValue(property, item, join(path, key));
      if (problem) return problem;
    } else if (schema["additionalProperties"] === false) {
      const accepted = Object.keys(properties);
      return `${join(path, key)} is not an accepted argument${accepted.length > 0 ? ` (accepted: ${accepted.join(", ")})` : " (this takes no arguments)"}`;
    } else if (isPlainObject(schema["additionalProperties"])) {
      const problem = checkValue(schema["additionalProperties"] as Record<string, unknown>, item, join(path, key));
      if (problem) return problem;
    }
  }
  return null;
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
 * Normalize and validate call arguments against `parameters`. Optional
 * arguments sent as `null` are dropped (models often send `null` for
 * "not given"); required ones count as missing.
 *
 * @returns `{ok: true, args}` with the normalized arguments, or `{ok: false,
 *   problem}` for the first problem found.
 */
export function validateArguments(
  parameters: ParametersSchema,
  input: unknown,
  options: ArgumentValidationOptions = {},
): { ok: true; args: Record<string, unknown> } | { ok: false; problem: ArgumentProblem } {
  const required = options.required ?? parameters.required ?? [];
  const examples = options.examples ?? {};
  if (input !== undefined && input !== null && !isPlainObject(input)) {
    return { ok: false, problem: { key: "", message: "arguments must be an object" } };
  }
  const args: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input ?? {})) {
    if (value === null && !required.includes(key)) continue;
    args[key] = value;
  }
  if (options.validateRequired !== false) {
    for (const key of required) {
      if (isMissingArgument(args[key])) {
        const example = key in examples && examples[key] !== undefined ? ` (e.g. ${pythonRepr(examples[key])})` : "";
        return { ok: false, problem: { key, message: `${key} is required${example}` } };
      }
    }
  } else {
    for (const key of required) if (args[key] === null) delete args[key];
  }
  const problem = checkObject(parameters, args, "", true);
  if (problem) {
    const key = problem.split(/[ .[]/, 1)[0] ?? "";
    return { ok: false, problem: { key, message: problem } };
  }
  return { ok: true, args };
}
