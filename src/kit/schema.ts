/**
 * Tool schemas: argument helpers, the `parameters` object (which is the MCP
 * `inputSchema`), validation of hand-written schemas, and the description's
 * `Required:` clause (Python kit argument specs; Python kit build_schema; docs/kit.md).
 *
 * Invariant: arguments always live under `parameters`
 * (`{type: "object", properties, additionalProperties: false, required?}`);
 * a schema with a top-level `properties` is refused, because the model would
 * then see no arguments at all.
 */
import { expectString, inputTypeError, isRecord, PluginKitError, valueKind } from "./errors.js";
import { ownValue } from "./own-keys.js";

const ARG_SPEC = Symbol.for("hermes-plugin-kit.arg");

/** JSON Schema of one property (plain JSON). */
export type PropertySchema = Record<string, unknown>;

/**
 * An argument declared with the helpers: the emitted property schema plus the
 * kit metadata `required` and `example`, which never reach the schema.
 */
export interface ArgSpec {
  readonly [ARG_SPEC]: true;
  /** The property schema as emitted. */
  readonly schema: PropertySchema;
  /** Whether the argument is required (kit-validated, listed in `required`). */
  readonly required: boolean;
  /** Example value shown in the description and in the missing-argument error. */
  readonly example?: unknown;
}

/** Kit options common to every argument helper; other keys pass through to the property schema. */
export interface ArgOptions {
  required?: boolean;
  example?: unknown;
  enum?: readonly unknown[];
  [keyword: string]: unknown;
}

const JSON_TYPES = ["string", "integer", "number", "boolean", "array", "object", "null"];

/** True when `value` was built by {@link arg} or a typed helper. */
export function isArgSpec(value: unknown): value is ArgSpec {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[ARG_SPEC] === true;
}

function propertyFrom(value: ArgSpec | PropertySchema, label: string): { schema: PropertySchema; required: boolean } {
  if (isArgSpec(value)) return { schema: structuredClone(value.schema), required: value.required };
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new PluginKitError("ARG_INVALID", `${label} must be an argument spec or a schema object`);
  return { schema: structuredClone(value), required: false };
}

/**
 * Declare an argument of JSON type `type` (Python kit argument specs): `{type,
 * description, enum?, ...extra}`; `required`/`example` are kept as kit
 * metadata. `enum` is emitted only when non-empty.
 *
 * @throws PluginKitError `ARG_INVALID` for an unknown type, a non-string
 *   description, options that are not an object, an option named
 *   `__proto__` or a non-boolean `required`.
 */
export function arg(type: string | readonly string[], description: string, options: ArgOptions = {}): ArgSpec {
  const types = Array.isArray(type) ? type : [type];
  if (types.length === 0 || !types.every((t) => typeof t === "string" && JSON_TYPES.includes(t))) {
    throw new PluginKitError("ARG_INVALID", `argument type must be one of ${JSON_TYPES.join(", ")}, got ${JSON.stringify(type)}`);
  }
  if (typeof description !== "string") throw new PluginKitError("ARG_INVALID", "argument description must be a string");
  checkArgOptions(options);
  const { required = false, example, enum: enumValues, ...extra } = options;
  if (typeof required !== "boolean") throw new PluginKitError("ARG_INVALID", "argument option 'required' must be a boolean");
  const schema: PropertySchema = { type: Array.isArray(type) ? [...types] : type, description };
  if (enumValues !== undefined) {
    if (!Array.isArray(enumValues)) throw new PluginKitError("ARG_INVALID", "argument option 'enum' must be an array");
    if (enumValues.length > 0) schema["enum"] = structuredClone([...enumValues]);
  }
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) schema[key] = structuredClone(value);
  const spec: ArgSpec = { [ARG_SPEC]: true, schema, required, ...(example !== undefined ? { example: structuredClone(example) } : {}) };
  return Object.freeze(spec);
}

/** Options must be a plain object; `__proto__` is no schema keyword (as a key it would replace the schema's prototype). */
function checkArgOptions(options: unknown): asserts options is ArgOptions {
  if (!isRecord(options)) throw new PluginKitError("ARG_INVALID", `argument options must be an object, found ${valueKind(options)}`);
  if (Object.hasOwn(options, "__proto__")) throw new PluginKitError("ARG_INVALID", "argument option '__proto__' is not a schema keyword");
}

/** An argument name the kit can validate and hand over: `__proto__` is refused (as a key it would replace the arguments' prototype). */
function checkArgumentName(key: string, label: string): void {
  if (key === "__proto__") throw new PluginKitError("ARG_INVALID", `${label} '__proto__' cannot be an argument name`);
}

/** A `string` argument; `minLength`, `maxLength`, `pattern`, `enum` pass through. */
export function strArg(description: string, options: ArgOptions & { minLength?: number; maxLength?: number; pattern?: string } = {}): ArgSpec {
  return arg("string", description, options);
}

/** An `integer` argument; `minimum`, `maximum` pass through. */
export function intArg(description: string, options: ArgOptions & { minimum?: number; maximum?: number } = {}): ArgSpec {
  return arg("integer", description, options);
}

/** A `number` argument; `minimum`, `maximum` pass through. */
export function numberArg(description: string, options: ArgOptions & { minimum?: number; maximum?: number } = {}): ArgSpec {
  return arg("number", description, options);
}

/** A `boolean` argument. */
export function boolArg(description: string, options: ArgOptions = {}): ArgSpec {
  return arg("boolean", description, options);
}

/** An `array` argument; `items` is an {@link ArgSpec} or a schema (default `{}`). */
export function arrayArg(description: string, options: ArgOptions & { items?: ArgSpec | PropertySchema; minItems?: number; maxItems?: number } = {}): ArgSpec {
  checkArgOptions(options);
  const { items, ...rest } = options;
  return arg("array", description, { ...rest, items: items === undefined ? {} : propertyFrom(items, "items").schema });
}

/**
 * An `object` argument whose `properties` are {@link ArgSpec}s or schemas;
 * nested `required` comes from the specs' `required` flags and
 * `additionalProperties` defaults to `false`.
 */
export function objectArg(
  description: string,
  options: ArgOptions & { properties?: Record<string, ArgSpec | PropertySchema>; additionalProperties?: boolean | PropertySchema } = {},
): ArgSpec {
  checkArgOptions(options);
  const { properties = {}, additionalProperties = false, ...rest } = options;
  if (!isRecord(properties)) throw new PluginKitError("ARG_INVALID", `objectArg option 'properties' must be an object of argument specs, found ${valueKind(properties)}`);
  const props: Record<string, PropertySchema> = {};
  const required: string[] = [];
  for (const [key, value] of Object.entries(properties)) {
    checkArgumentName(key, "property");
    const property = propertyFrom(value, `property '${key}'`);
    props[key] = property.schema;
    if (property.required) required.push(key);
  }
  const spec = arg("object", description, { ...rest, properties: props, additionalProperties });
  if (required.length === 0) return spec;
  return Object.freeze({ ...spec, schema: { ...spec.schema, required } });
}

/**
 * The `parameters` object (= MCP `inputSchema`): key order `type`,
 * `properties`, `additionalProperties` (always `false`), `required` (only
 * when non-empty).
 */
export interface ParametersSchema {
  type: "object";
  properties: Record<string, PropertySchema>;
  additionalProperties: false;
  required?: string[];
  [keyword: string]: unknown;
}

/** Result of building or validating a schema. */
export interface BuiltParameters {
  parameters: ParametersSchema;
  /** Required argument names in declaration order. */
  required: string[];
  /** Example per argument (only arguments with an example). */
  examples: Record<string, unknown>;
}

/**
 * Build `parameters` from helper-declared arguments (Python kit build_schema): the
 * properties are the specs' schemas, `required` lists the required ones in
 * declaration order, examples are collected for the description and errors.
 *
 * @throws PluginKitError `ARG_INVALID` when a value is not an {@link ArgSpec}
 *   or a name is `__proto__`.
 */
export function buildParameters(params: Record<string, ArgSpec>): BuiltParameters {
  if (params === null || typeof params !== "object" || Array.isArray(params)) throw new PluginKitError("ARG_INVALID", "params must be an object of argument specs");
  const properties: Record<string, PropertySchema> = {};
  const required: string[] = [];
  const examples: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(params)) {
    checkArgumentName(key, "params");
    if (!isArgSpec(spec)) throw new PluginKitError("ARG_INVALID", `params['${key}'] must be built with arg(), strArg(), intArg(), numberArg(), boolArg(), arrayArg() or objectArg()`);
    properties[key] = structuredClone(spec.schema);
    if (spec.required) required.push(key);
    if (spec.example !== undefined) examples[key] = structuredClone(spec.example);
  }
  return { parameters: orderedParameters(properties, required, {}), required, examples };
}

function orderedParameters(properties: Record<string, PropertySchema>, required: string[], rest: Record<string, unknown>): ParametersSchema {
  const out: ParametersSchema = { type: "object", properties, additionalProperties: false };
  if (required.length > 0) out.required = [...required];
  for (const [key, value] of Object.entries(rest)) if (!(key in out)) out[key] = value;
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Validate a `parameters` object (type `object`, `properties` an object of
 * object schemas, `required` a list of strings naming existing properties)
 * and return a deep copy with `additionalProperties: false` and canonical key
 * order. `$schema` is dropped. Required names are matched as own properties
 * (`toString` names no property unless declared); a property named
 * `__proto__` is refused.
 *
 * @throws PluginKitError `SCHEMA_INVALID`, `SCHEMA_REQUIRED_UNKNOWN`.
 */
export function validateParameters(parameters: unknown, label = "parameters"): BuiltParameters {
  if (!isPlainObject(parameters)) throw new PluginKitError("SCHEMA_INVALID", `${label} must be an object`);
  const copy = structuredClone(parameters);
  if (copy["type"] !== "object") throw new PluginKitError("SCHEMA_INVALID", `${label}.type must be "object", got ${JSON.stringify(copy["type"])}`);
  const properties = copy["properties"] ?? {};
  if (!isPlainObject(properties)) throw new PluginKitError("SCHEMA_INVALID", `${label}.properties must be an object`);
  for (const [key, value] of Object.entries(properties)) {
    if (key === "__proto__") throw new PluginKitError("SCHEMA_INVALID", `${label}.properties['__proto__'] cannot be an argument name`);
    if (!isPlainObject(value)) throw new PluginKitError("SCHEMA_INVALID", `${label}.properties['${key}'] must be a schema object`);
  }
  const required = copy["required"] ?? [];
  if (!Array.isArray(required) || !required.every((name): name is string => typeof name === "string")) {
    throw new PluginKitError("SCHEMA_INVALID", `${label}.required must be a list of strings`);
  }
  const unknown = required.filter((name) => !Object.hasOwn(properties, name));
  if (unknown.length > 0) throw new PluginKitError("SCHEMA_REQUIRED_UNKNOWN", `${label}.required names unknown properties: ${unknown.join(", ")}`);
  const { type: _type, properties: _p, required: _r, additionalProperties: _a, $schema: _s, ...rest } = copy;
  return { parameters: orderedParameters(properties as Record<string, PropertySchema>, required, rest), required: [...required], examples: {} };
}

/**
 * Validate a hand-written schema (Python kit build_schema, supplied-schema path),
 * deep-copied. Two shapes are accepted: a function schema
 * `{name?, description?, parameters}` (`name`, when present, must equal
 * `toolName`), or the `parameters` object itself (`{type: "object",
 * properties, required?}` with no `name`/`description`). A function schema
 * with its arguments in a top-level `properties` (next to `name` /
 * `description`, or without `type: "object"`) is refused: the model would
 * see no arguments. Then `parameters` as {@link validateParameters}.
 *
 * @throws PluginKitError `SCHEMA_TOP_LEVEL_PROPERTIES`, `SCHEMA_NAME_MISMATCH`,
 *   `SCHEMA_INVALID`, `SCHEMA_REQUIRED_UNKNOWN`.
 */
export function validateFunctionSchema(schema: unknown, toolName: string): BuiltParameters & { description?: string } {
  if (!isPlainObject(schema)) throw new PluginKitError("SCHEMA_INVALID", `schema of tool '${toolName}' must be an object`);
  const topLevel = () =>
    new PluginKitError("SCHEMA_TOP_LEVEL_PROPERTIES", `schema arguments of tool '${toolName}' must live under schema.parameters, not top-level properties (the model would see no arguments)`);
  if (Object.hasOwn(schema, "parameters")) {
    if (Object.hasOwn(schema, "properties")) throw topLevel();
    if (schema["name"] !== undefined && schema["name"] !== toolName) {
      throw new PluginKitError("SCHEMA_NAME_MISMATCH", `schema.name ${JSON.stringify(schema["name"])} must equal the tool name '${toolName}'`);
    }
    const built = validateParameters(schema["parameters"], "schema.parameters");
    const description = typeof schema["description"] === "string" ? schema["description"] : undefined;
    return description === undefined ? built : { ...built, description };
  }
  if (Object.hasOwn(schema, "properties")) {
    if (schema["type"] !== "object" || Object.hasOwn(schema, "name") || Object.hasOwn(schema, "description")) throw topLevel();
    return validateParameters(schema, "schema");
  }
  throw new PluginKitError("SCHEMA_INVALID", `schema of tool '${toolName}' must be {parameters: {...}} or a parameters object {type: "object", properties}`);
}

/**
 * Python `repr` of a JSON-like value, as the original kit prints examples:
 * strings single-quoted (double-quoted when they contain `'` but no `"`),
 * `True`/`False`/`None`, lists `[a, b]`, dicts `{'k': v}`.
 */
export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "nan";
    if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
    return String(value);
  }
  if (typeof value === "bigint") return String(value);
  if (typeof value === "string") {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    let out = "";
    for (const ch of value) {
      if (ch === "\\") out += "\\\\";
      else if (ch === quote) out += `\\${ch}`;
      else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (ch === "\t") out += "\\t";
      else if (/[\u0000-\u001f\u007f]/.test(ch)) out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`;
      else out += ch;
    }
    return quote + out + quote;
  }
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(", ")}]`;
  if (typeof value === "object") {
    return `{${Object.entries(value as Record<string, unknown>).map(([k, v]) => `${pythonRepr(k)}: ${pythonRepr(v)}`).join(", ")}}`;
  }
  return pythonRepr(String(value));
}

/**
 * Append the `Required:` clause (Python kit build_schema): `` Required: `k1` (e.g.
 * 'x'), `k2`. `` built from the required names in order and their examples
 * (Python repr). Unchanged when nothing is required or the description
 * already says `Required:`.
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `description` is not a
 *   string, `required` not a list of strings or `examples` not an object.
 */
export function augmentDescription(description: string, required: readonly string[], examples: Record<string, unknown>): string {
  const base = expectString("augmentDescription", "description", description).trim();
  if (!Array.isArray(required) || !required.every((key) => typeof key === "string")) throw inputTypeError("augmentDescription", "required", "a list of strings", required);
  if (!isRecord(examples)) throw inputTypeError("augmentDescription", "examples", "an object", examples);
  if (required.length === 0 || base.includes("Required:")) return base;
  const items = required.map((key) => {
    const example = ownValue(examples, key);
    return example !== undefined ? `\`${key}\` (e.g. ${pythonRepr(example)})` : `\`${key}\``;
  });
  return `${base} Required: ${items.join(", ")}.`;
}
