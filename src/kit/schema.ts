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
import { expectString, inputTypeError, isRecord, PluginKitError, shortText, valueKind } from "./errors.js";
import { requireKnownOptions } from "./option-keys.js";
import { ownValue } from "./own-keys.js";
import { JSON_TYPES, KEYWORD_VALUE_RULES, propertySchemaKeywordProblems, schemaKeywordMessage, schemaKeywordProblems, type KeywordValueRule } from "./schema-keywords.js";

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

/**
 * Options common to every argument helper: the kit metadata `required` and
 * `example` (never emitted) and the JSON Schema keywords every type takes.
 * Each helper accepts exactly these plus the keywords of its type (see
 * {@link ARG_KEYWORDS}); any other key is refused (`ARG_INVALID`), so a
 * misspelt `requird` or `minLenght` never turns a check off silently.
 */
export interface ArgOptions {
  /** Kit-validated and listed in `required` (default false). */
  required?: boolean;
  /** Shown in the description and in the missing-argument error. */
  example?: unknown;
  /** Allowed values (emitted only when non-empty). */
  enum?: readonly unknown[];
  /** The one allowed value. */
  const?: unknown;
  /** Short human label (annotation). */
  title?: string;
}

/** Options of {@link strArg}: {@link ArgOptions} plus the string bounds the kit checks. */
export interface StringArgOptions extends ArgOptions {
  /** Fewest characters (code points), an integer >= 0. */
  minLength?: number;
  /** Most characters (code points), an integer >= 0. */
  maxLength?: number;
  /** A regular expression (JavaScript, `u` flag) the whole value is searched with. */
  pattern?: string;
}

/** Options of {@link intArg} and {@link numberArg}: {@link ArgOptions} plus the bounds the kit checks. */
export interface NumberArgOptions extends ArgOptions {
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

/** Options of {@link arrayArg}: {@link ArgOptions} plus `items` and the length bounds. */
export interface ArrayArgOptions extends ArgOptions {
  /** An {@link ArgSpec} or a schema (default `{}`: any item). */
  items?: ArgSpec | PropertySchema;
  minItems?: number;
  maxItems?: number;
}

/** Options of {@link objectArg}: {@link ArgOptions} plus `properties` and `additionalProperties`. */
export interface ObjectArgOptions extends ArgOptions {
  /** Member name -> {@link ArgSpec} or schema; nested `required` comes from the specs. */
  properties?: Record<string, ArgSpec | PropertySchema>;
  /** `false` (default), `true` or a schema for members not in `properties`. */
  additionalProperties?: boolean | PropertySchema;
}

/** Options of {@link arg}: the keywords of each type it is given, plus `anyOf`/`oneOf` (lists of schemas). */
export type AnyArgOptions = StringArgOptions & NumberArgOptions & ArrayArgOptions & ObjectArgOptions & { anyOf?: readonly PropertySchema[]; oneOf?: readonly PropertySchema[] };

/** The kit metadata every helper reads (never emitted into the schema). */
const KIT_ARG_OPTIONS = ["required", "example"] as const;
/** The JSON Schema keywords every helper takes, whatever the type. */
const COMMON_KEYWORDS = ["enum", "const", "title"] as const;

/**
 * The JSON Schema keywords each argument type takes besides
 * {@link ArgOptions}: exactly the ones the kit's argument validation checks
 * (docs/kit.md, "What a tool call answers"), so a schema never promises a
 * check nobody makes.
 */
export const ARG_KEYWORDS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  string: ["minLength", "maxLength", "pattern"],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"],
  boolean: [],
  array: ["items", "minItems", "maxItems"],
  object: ["properties", "additionalProperties"],
  null: [],
});

/** Real JSON Schema keywords an argument helper refuses, and why (the kit would not check or apply them). */
const UNCHECKED_KEYWORDS: Readonly<Record<string, string>> = {
  description: "the description is the helper's first argument",
  type: "the helper sets the type (use arg(type, ...) for another one)",
  default: "the kit does not apply defaults: give the default in the handler (args.x ?? value) and say it in the description",
  format: "the kit does not check format: use pattern, or check it in the handler",
  examples: "the kit's example option is one value, shown in the description and the missing-argument error",
  multipleOf: "the kit does not check it: check it in the handler or declare the tool with zod",
  uniqueItems: "the kit does not check it: check it in the handler or declare the tool with zod",
  minProperties: "the kit does not check it: check it in the handler or declare the tool with zod",
  maxProperties: "the kit does not check it: check it in the handler or declare the tool with zod",
  patternProperties: "the kit does not check it: declare the members in properties",
  propertyNames: "the kit does not check it: declare the members in properties",
  contains: "the kit does not check it: check it in the handler or declare the tool with zod",
  prefixItems: "the kit does not check it: check it in the handler or declare the tool with zod",
  allOf: "the kit checks anyOf and oneOf (arg() only), not allOf",
  not: "the kit does not check it: check it in the handler or declare the tool with zod",
  if: "the kit does not check conditional schemas: check it in the handler or declare the tool with zod",
  $ref: "argument schemas are self-contained: write the schema out",
};

/** Where a keyword of another type lives, for the refusal of `minimum` on a string and the like. */
function keywordHome(key: string): string | undefined {
  const types = Object.entries(ARG_KEYWORDS).filter(([, keywords]) => keywords.includes(key)).map(([type]) => type);
  if (types.length > 0) return `'${key}' applies to ${types.join(" and ")} arguments (${types.map(helperOf).join(", ")})`;
  if (key === "anyOf" || key === "oneOf") return `'${key}' is taken by arg(type, description, options) only`;
  return Object.hasOwn(UNCHECKED_KEYWORDS, key) ? `'${key}' is refused: ${UNCHECKED_KEYWORDS[key]}` : undefined;
}

function helperOf(type: string): string {
  return ({ string: "strArg", integer: "intArg", number: "numberArg", boolean: "boolArg", array: "arrayArg", object: "objectArg" } as Record<string, string>)[type] ?? "arg";
}

/** The options `fn` reads for `types`. */
function knownArgOptions(types: readonly string[], generic: boolean): string[] {
  const keywords = types.flatMap((type) => ARG_KEYWORDS[type] ?? []);
  return [...new Set([...KIT_ARG_OPTIONS, ...COMMON_KEYWORDS, ...keywords, ...(generic ? ["anyOf", "oneOf"] : [])])];
}

/** True when `value` was built by {@link arg} or a typed helper. */
export function isArgSpec(value: unknown): value is ArgSpec {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[ARG_SPEC] === true;
}

function propertyFrom(value: ArgSpec | PropertySchema, label: string): { schema: PropertySchema; required: boolean } {
  if (isArgSpec(value)) return { schema: structuredClone(value.schema), required: value.required };
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new PluginKitError("ARG_INVALID", `${label} must be an argument spec or a schema object, found ${valueKind(value)}`);
  return { schema: structuredClone(value), required: false };
}

/**
 * Declare an argument of JSON type `type` (Python kit argument specs): `{type,
 * description, enum?, ...keywords}`; `required`/`example` are kept as kit
 * metadata. `enum` is emitted only when non-empty. Takes the keywords of
 * every type listed (see {@link ARG_KEYWORDS}) plus `anyOf`/`oneOf`.
 *
 * @throws PluginKitError `ARG_INVALID` for an unknown type, a non-string
 *   description, options that are not an object, an option it does not read
 *   (named with the nearest known one, or with why a real JSON Schema keyword
 *   is refused), or an option of the wrong type (`required` not a boolean,
 *   a bound not a number, `pattern` not a valid regular expression, ...),
 *   or a schema given as a plain object (`items`, `properties`,
 *   `additionalProperties`, `anyOf`/`oneOf` branches) holding a keyword the
 *   kit does not check, at any depth (the vocabulary of
 *   {@link validateParameters}; each named with its path, e.g.
 *   `argument.items.format`).
 */
export function arg(type: string | readonly string[], description: string, options: AnyArgOptions = {}): ArgSpec {
  return makeArg("arg", type, description, options);
}

function makeArg(fn: string, type: string | readonly string[], description: string, options: unknown, generic = fn === "arg"): ArgSpec {
  const types: readonly unknown[] = Array.isArray(type) ? type : [type];
  if (types.length === 0 || !types.every((t) => typeof t === "string" && JSON_TYPES.includes(t))) {
    throw new PluginKitError("ARG_INVALID", `${fn}: argument type must be one of ${JSON_TYPES.join(", ")}, found ${JSON.stringify(type) ?? valueKind(type)}`);
  }
  if (typeof description !== "string") throw new PluginKitError("ARG_INVALID", `${fn}: argument description must be a string, found ${valueKind(description)}`);
  checkArgOptions(fn, options, knownArgOptions(types as string[], generic));
  const { required = false, example, enum: enumValues, ...keywords } = options as Record<string, unknown>;
  const schema: PropertySchema = { type: Array.isArray(type) ? [...types] : type, description };
  if (enumValues !== undefined && (enumValues as unknown[]).length > 0) schema["enum"] = structuredClone([...(enumValues as unknown[])]);
  for (const [key, value] of Object.entries(keywords)) if (value !== undefined) schema[key] = structuredClone(value);
  // Schemas given as plain objects (items, properties, additionalProperties, anyOf/oneOf branches) hold only checked keywords too.
  const problems = propertySchemaKeywordProblems(schema, "argument");
  if (problems.length > 0) throw new PluginKitError("ARG_INVALID", `${fn}: ${schemaKeywordMessage("the argument's schema", problems)}`);
  const spec: ArgSpec = { [ARG_SPEC]: true, schema, required: required as boolean, ...(example !== undefined ? { example: structuredClone(example) } : {}) };
  return Object.freeze(spec);
}

/**
 * What each option keyword's value must be: the schema keywords' table (schema-keywords.ts
 * `KEYWORD_VALUE_RULES`, the single source), with the two options whose meaning differs in a helper:
 * `required` (kit metadata, a boolean) and `properties` (argument specs or schema objects).
 */
const KEYWORD_VALUES: Readonly<Record<string, KeywordValueRule>> = {
  ...KEYWORD_VALUE_RULES,
  required: ["true or false", (value) => typeof value === "boolean"],
  properties: ["an object of argument specs or schema objects", isRecord],
};

/**
 * The options of an argument helper: a plain object, only keys `fn` reads
 * (never `__proto__`, which as a key would replace the schema's prototype),
 * each of the type its keyword needs.
 */
function checkArgOptions<T>(fn: string, value: T, known: readonly string[]): asserts value is NonNullable<T> {
  const options: unknown = value;
  if (!isRecord(options)) throw new PluginKitError("ARG_INVALID", `${fn}: argument options must be an object, found ${valueKind(options)}`);
  if (Object.hasOwn(options, "__proto__")) throw new PluginKitError("ARG_INVALID", `${fn}: argument option '__proto__' is not a schema keyword; fix: remove it`);
  requireKnownOptions(fn, options, known, "ARG_INVALID", keywordHome);
  for (const [key, value] of Object.entries(options)) {
    const rule = Object.hasOwn(KEYWORD_VALUES, key) ? KEYWORD_VALUES[key] : undefined;
    if (value === undefined || rule === undefined || rule[1](value)) continue;
    const found = typeof value === "number" ? String(value) : key === "pattern" && typeof value === "string" ? JSON.stringify(value) : valueKind(value);
    throw new PluginKitError("ARG_INVALID", `${fn}: option '${key}' must be ${rule[0]}, found ${found}`);
  }
}

/** An argument name the kit can validate and hand over: `__proto__` is refused (as a key it would replace the arguments' prototype). */
function checkArgumentName(key: string, label: string): void {
  if (key === "__proto__") throw new PluginKitError("ARG_INVALID", `${label} '__proto__' cannot be an argument name`);
}

/** A `string` argument; takes {@link StringArgOptions} only. @throws PluginKitError `ARG_INVALID` (see {@link arg}). */
export function strArg(description: string, options: StringArgOptions = {}): ArgSpec {
  return makeArg("strArg", "string", description, options);
}

/** An `integer` argument; takes {@link NumberArgOptions} only. @throws PluginKitError `ARG_INVALID` (see {@link arg}). */
export function intArg(description: string, options: NumberArgOptions = {}): ArgSpec {
  return makeArg("intArg", "integer", description, options);
}

/** A `number` argument; takes {@link NumberArgOptions} only. @throws PluginKitError `ARG_INVALID` (see {@link arg}). */
export function numberArg(description: string, options: NumberArgOptions = {}): ArgSpec {
  return makeArg("numberArg", "number", description, options);
}

/** A `boolean` argument; takes {@link ArgOptions} only. @throws PluginKitError `ARG_INVALID` (see {@link arg}). */
export function boolArg(description: string, options: ArgOptions = {}): ArgSpec {
  return makeArg("boolArg", "boolean", description, options);
}

/**
 * An `array` argument; `items` is an {@link ArgSpec} or a schema (default
 * `{}`); takes {@link ArrayArgOptions} only.
 *
 * @throws PluginKitError `ARG_INVALID` (see {@link arg}).
 */
export function arrayArg(description: string, options: ArrayArgOptions = {}): ArgSpec {
  checkArgOptions("arrayArg", options, knownArgOptions(["array"], false));
  const { items, ...rest } = options;
  return makeArg("arrayArg", "array", description, { ...rest, items: items === undefined ? {} : propertyFrom(items, "arrayArg: option 'items'").schema });
}

/**
 * An `object` argument whose `properties` are {@link ArgSpec}s or schemas;
 * nested `required` comes from the specs' `required` flags and
 * `additionalProperties` defaults to `false`; takes {@link ObjectArgOptions} only.
 *
 * @throws PluginKitError `ARG_INVALID` (see {@link arg}; also a property
 *   that is neither a spec nor a schema, or one named `__proto__`).
 */
export function objectArg(description: string, options: ObjectArgOptions = {}): ArgSpec {
  checkArgOptions("objectArg", options, knownArgOptions(["object"], false));
  const { properties = {}, additionalProperties = false, ...rest } = options;
  const props: Record<string, PropertySchema> = {};
  const required: string[] = [];
  for (const [key, value] of Object.entries(properties)) {
    checkArgumentName(key, "property");
    const property = propertyFrom(value, `objectArg: property '${key}'`);
    props[key] = property.schema;
    if (property.required) required.push(key);
  }
  const spec = makeArg("objectArg", "object", description, { ...rest, properties: props, additionalProperties });
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
 * Validate a hand-written `parameters` object (type `object`, `properties` an
 * object of object schemas, `required` a list of strings naming existing
 * properties) and return a deep copy with `additionalProperties: false` and
 * canonical key order. `$schema` is dropped. Required names are matched as
 * own properties (`toString` names no property unless declared); a property
 * named `__proto__` is refused.
 *
 * The schema may carry only keywords the kit's argument validation enforces
 * (docs/kit.md, "Hand-written schemas: the keywords the kit checks"): on the
 * parameters object `type`, `properties`, `required`, `additionalProperties`,
 * `$schema`; in every property schema below it, at any depth (`properties`,
 * `items`, `additionalProperties`, `anyOf`/`oneOf` branches), `type`, `enum`,
 * `const`, `anyOf`, `oneOf`, `minLength`, `maxLength`, `pattern`, `minimum`,
 * `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `items`, `minItems`,
 * `maxItems`, `properties`, `required`, `additionalProperties`, each with a
 * value of its type; and the annotations `title`, `description`, `examples`,
 * `default`, `$comment`, `deprecated`, `readOnly`, `writeOnly` anywhere.
 *
 * @throws PluginKitError `SCHEMA_INVALID` (a wrong shape; or any other
 *   keyword, an unknown `type`, an invalid `pattern`, a bound that is not a
 *   finite number, a schema nested deeper than 32 levels, ...: every one
 *   named on a line of its own with its JSON path, e.g.
 *   `parameters.properties.email.format: the kit does not check 'format'; fix: use pattern, ...`,
 *   followed by the supported keywords), `SCHEMA_REQUIRED_UNKNOWN`.
 */
export function validateParameters(parameters: unknown, label = "parameters"): BuiltParameters {
  return parametersFrom(parameters, label, label);
}

/**
 * The parameters object a zod schema emits (tool.ts): the shape checks of
 * {@link validateParameters} without the keyword vocabulary, because zod
 * parses the arguments against its own schema after the kit's checks.
 */
export function zodParameters(parameters: unknown, label: string): BuiltParameters {
  return parametersFrom(parameters, label, null);
}

/** {@link validateParameters}; `subject` names the schema in a keyword refusal, `null` skips the keyword check (zod). */
function parametersFrom(parameters: unknown, label: string, subject: string | null): BuiltParameters {
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
  if (subject !== null) {
    const problems = schemaKeywordProblems(copy, label);
    if (problems.length > 0) throw new PluginKitError("SCHEMA_INVALID", schemaKeywordMessage(subject, problems));
  }
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
 * see no arguments. Then `parameters` as {@link validateParameters},
 * including its keyword vocabulary (a keyword the kit does not enforce is
 * `SCHEMA_INVALID`, named with its JSON path under `schema.parameters` or
 * `schema`).
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
    const built = parametersFrom(schema["parameters"], "schema.parameters", `schema of tool '${shortText(toolName)}'`);
    const description = typeof schema["description"] === "string" ? schema["description"] : undefined;
    return description === undefined ? built : { ...built, description };
  }
  if (Object.hasOwn(schema, "properties")) {
    if (schema["type"] !== "object" || Object.hasOwn(schema, "name") || Object.hasOwn(schema, "description")) throw topLevel();
    return parametersFrom(schema, "schema", `schema of tool '${shortText(toolName)}'`);
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
