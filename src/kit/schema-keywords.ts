/**
 * The JSON Schema vocabulary of hand-written tool schemas (docs/kit.md,
 * "Hand-written schemas: the keywords the kit checks"): the kit validates
 * tool-call arguments itself (arguments.ts), so a schema may carry only the
 * keywords that validation enforces, plus annotations that constrain
 * nothing. Any other keyword, at any depth, would tell the model a
 * constraint nobody enforces, and is refused when the tool is defined
 * (`SCHEMA_INVALID`) and reported by `plugin doctor` for a listed tool.
 * A zod tool is exempt: zod parses the arguments against its own schema.
 */
import { nearestName } from "../contract/grammar.js";
import { isRecord, shortText, valueKind } from "./errors.js";

/** The JSON types the kit's argument validation knows (any other `type` would match every value). */
export const JSON_TYPES: readonly string[] = Object.freeze(["string", "integer", "number", "boolean", "array", "object", "null"]);

/** Keywords that describe and constrain nothing; allowed anywhere in a hand-written schema. */
export const SCHEMA_ANNOTATION_KEYWORDS: readonly string[] = Object.freeze(["title", "description", "examples", "default", "$comment", "deprecated", "readOnly", "writeOnly"]);

/**
 * The keywords the kit's argument validation checks in a property schema, at
 * any depth (properties, items, additionalProperties, anyOf/oneOf branches).
 */
export const CHECKED_SCHEMA_KEYWORDS: readonly string[] = Object.freeze([
  "type",
  "enum",
  "const",
  "anyOf",
  "oneOf",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "items",
  "minItems",
  "maxItems",
  "properties",
  "required",
  "additionalProperties",
]);

/** The keywords of the parameters object itself (its `additionalProperties` is always listed as `false`; `$schema` is dropped). */
export const PARAMETERS_OBJECT_KEYWORDS: readonly string[] = Object.freeze(["type", "properties", "required", "additionalProperties", "$schema"]);

/** Schema nesting the check follows (the argument validation stops at 32 levels of value nesting too). */
export const MAX_SCHEMA_DEPTH = 32;

/** One keyword of a hand-written schema the kit would not enforce. */
export interface SchemaKeywordProblem {
  /** JSON path of the keyword, e.g. `schema.parameters.properties.email.format`. */
  path: string;
  /** The keyword. */
  keyword: string;
  /** `<path>: <what is wrong>; fix: <how>`. */
  message: string;
  /** True for a nested `required` no value can satisfy (a name `properties` lacks under `additionalProperties: false`). */
  unsatisfiable?: true;
}

const HANDLER = "check it in the handler";
const DRAFT4_BOUND = "the draft-4 boolean form is not supported: give the bound itself, e.g. exclusiveMinimum: 0 instead of minimum: 0 with exclusiveMinimum: true";

/** Why a real JSON Schema keyword is not taken, and what to do instead. */
const UNCHECKED_HINTS: Readonly<Record<string, string>> = {
  format: `use pattern, or ${HANDLER}`,
  multipleOf: HANDLER,
  uniqueItems: HANDLER,
  minProperties: HANDLER,
  maxProperties: HANDLER,
  contains: HANDLER,
  minContains: HANDLER,
  maxContains: HANDLER,
  prefixItems: `give items one schema for every item, or ${HANDLER}`,
  additionalItems: `give items one schema for every item, or ${HANDLER}`,
  unevaluatedItems: HANDLER,
  unevaluatedProperties: "declare the members in properties and use additionalProperties",
  patternProperties: "declare the members in properties",
  propertyNames: "declare the members in properties",
  dependentRequired: `list the names in required, or ${HANDLER}`,
  dependentSchemas: HANDLER,
  dependencies: HANDLER,
  allOf: "merge the branches into one schema (the kit checks anyOf and oneOf, not allOf)",
  not: HANDLER,
  if: `conditional schemas are not checked: ${HANDLER}`,
  then: `conditional schemas are not checked: ${HANDLER}`,
  else: `conditional schemas are not checked: ${HANDLER}`,
  $ref: "write the referenced schema out: a tool schema is self-contained",
  $dynamicRef: "write the referenced schema out: a tool schema is self-contained",
  $defs: "write the schema out where it is used ($ref is not supported)",
  definitions: "write the schema out where it is used ($ref is not supported)",
  $id: "remove it: a tool schema is self-contained",
  $anchor: "remove it: a tool schema is self-contained",
  contentEncoding: HANDLER,
  contentMediaType: HANDLER,
  contentSchema: HANDLER,
  nullable: 'list null among the types instead: type: ["string", "null"]',
};

const isCount = (value: unknown) => Number.isInteger(value) && (value as number) >= 0;
const isBound = (value: unknown) => typeof value === "number" && Number.isFinite(value);

/** True for a string that compiles as a JavaScript regular expression with the `u` flag (as `pattern` is matched). */
export function isPattern(value: unknown): boolean {
  if (typeof value !== "string") return false;
  try {
    new RegExp(value, "u");
    return true;
  } catch {
    return false;
  }
}

function isTypeValue(value: unknown): boolean {
  if (typeof value === "string") return JSON_TYPES.includes(value);
  return Array.isArray(value) && value.length > 0 && value.every((t) => typeof t === "string" && JSON_TYPES.includes(t)) && new Set(value).size === value.length;
}

/** What a keyword's value must be (`expected`, the "must be ..." of a message) and the test of it. */
export type KeywordValueRule = readonly [expected: string, ok: (value: unknown) => boolean];

/**
 * What each checked keyword's (and annotation's) value must be, with the test: the one table of these rules,
 * read by the schema checks here and by the argument helpers' option checks (schema.ts). Keywords whose value
 * is a schema are followed separately.
 */
export const KEYWORD_VALUE_RULES: Readonly<Record<string, KeywordValueRule>> = {
  type: [`one of ${JSON_TYPES.join(", ")}, or a non-empty list of them without repeats`, isTypeValue],
  enum: ["a list of allowed values", Array.isArray],
  minLength: ["an integer >= 0", isCount],
  maxLength: ["an integer >= 0", isCount],
  minItems: ["an integer >= 0", isCount],
  maxItems: ["an integer >= 0", isCount],
  minimum: ["a finite number", isBound],
  maximum: ["a finite number", isBound],
  exclusiveMinimum: ["a finite number", isBound],
  exclusiveMaximum: ["a finite number", isBound],
  pattern: ["a valid regular expression string (JavaScript, u flag)", isPattern],
  required: ["a list of strings", (value) => Array.isArray(value) && value.every((name) => typeof name === "string")],
  items: ["a schema object (one schema for every item)", isRecord],
  properties: ["an object of schema objects", isRecord],
  additionalProperties: ["true, false or a schema object", (value) => typeof value === "boolean" || isRecord(value)],
  anyOf: ["a non-empty list of schema objects", (value) => Array.isArray(value) && value.length > 0 && value.every(isRecord)],
  oneOf: ["a non-empty list of schema objects", (value) => Array.isArray(value) && value.length > 0 && value.every(isRecord)],
  title: ["a string", (value) => typeof value === "string"],
  description: ["a string", (value) => typeof value === "string"],
  $comment: ["a string", (value) => typeof value === "string"],
  $schema: ["a string", (value) => typeof value === "string"],
  examples: ["a list of example values", Array.isArray],
  deprecated: ["true or false", (value) => typeof value === "boolean"],
  readOnly: ["true or false", (value) => typeof value === "boolean"],
  writeOnly: ["true or false", (value) => typeof value === "boolean"],
};

/** `path` followed by member `key`: `.key` for an identifier, else `["key"]`. */
export function schemaPath(path: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(shortText(key))}]`;
}

function found(key: string, value: unknown): string {
  if (key === "pattern" && typeof value === "string") return "an invalid regular expression";
  if (key === "type" && typeof value === "string") return JSON.stringify(shortText(value));
  if (key === "type" && Array.isArray(value)) return value.length === 0 ? "an empty list" : "a list with an unknown or repeated type";
  if ((key === "anyOf" || key === "oneOf") && Array.isArray(value)) return value.length === 0 ? "an empty list" : "a list with an item that is not a schema object";
  if (key === "required" && Array.isArray(value)) return "a list with a non-string item";
  if (typeof value === "number") return String(value);
  return valueKind(value);
}

/** The problem of a keyword the node may not carry, or `null` when it may. */
function keywordProblem(key: string, at: string, top: boolean): string | null {
  if (SCHEMA_ANNOTATION_KEYWORDS.includes(key)) return null;
  if (top ? PARAMETERS_OBJECT_KEYWORDS.includes(key) : CHECKED_SCHEMA_KEYWORDS.includes(key)) return null;
  if (top && CHECKED_SCHEMA_KEYWORDS.includes(key)) {
    return `${at}: the kit does not check '${key}' on the parameters object (only inside a property's schema); fix: move it into the schema of the property it constrains, or ${HANDLER}`;
  }
  if (!top && key === "$schema") return `${at}: '$schema' belongs on the parameters object only; fix: remove it`;
  const hint = Object.hasOwn(UNCHECKED_HINTS, key) ? UNCHECKED_HINTS[key] : undefined;
  if (hint !== undefined) return `${at}: the kit does not check '${key}'; fix: ${hint}, or declare the tool with zod`;
  const near = nearestName(key, [...(top ? PARAMETERS_OBJECT_KEYWORDS : CHECKED_SCHEMA_KEYWORDS), ...SCHEMA_ANNOTATION_KEYWORDS]);
  return `${at}: '${shortText(key)}' is not a keyword the kit checks${near === undefined ? "" : `; did you mean '${near}'?`}; fix: rename or remove it`;
}

/**
 * Which rules a walk applies: `kit` (a schema the kit's argument validation checks: only its keywords,
 * each with a value of the right type) or `json-schema` (a schema some other validator checks, e.g. a
 * listed tool of a server not built with the kit: any keyword, but the keywords JSON Schema defines
 * must have values JSON Schema allows).
 */
type WalkMode = "kit" | "json-schema";

/** JSON Schema forms the kit does not take but another validator may (draft-4 boolean bounds, the tuple form of `items`). */
function generalValueAllowed(key: string, value: unknown): boolean {
  if ((key === "exclusiveMinimum" || key === "exclusiveMaximum") && typeof value === "boolean") return true;
  return key === "items" && Array.isArray(value) && value.every(isRecord);
}

/** Collect the problems of one schema node (the parameters object when `top`) into `out`. */
function checkNode(node: Record<string, unknown>, path: string, top: boolean, depth: number, out: SchemaKeywordProblem[], mode: WalkMode = "kit"): void {
  const kit = mode === "kit";
  if (depth > MAX_SCHEMA_DEPTH) {
    // A deep schema is valid JSON Schema; only the kit's validation stops at this depth.
    if (kit) out.push({ path, keyword: "", message: `${path}: the schema is nested deeper than ${MAX_SCHEMA_DEPTH} levels (the kit checks arguments ${MAX_SCHEMA_DEPTH} levels deep); fix: flatten it` });
    return;
  }
  for (const [key, value] of Object.entries(node)) {
    const at = schemaPath(path, key);
    const refused = kit ? keywordProblem(key, at, top) : null;
    if (refused !== null) {
      out.push({ path: at, keyword: key, message: refused });
      continue;
    }
    // The parameters object's own type is checked by its validators ("type must be \"object\"").
    if (top && key === "type") continue;
    if (!kit && generalValueAllowed(key, value)) {
      if (key === "items") (value as Array<Record<string, unknown>>).forEach((item, index) => checkNode(item, `${at}[${index}]`, false, depth + 1, out, mode));
      continue;
    }
    const rule = Object.hasOwn(KEYWORD_VALUE_RULES, key) ? KEYWORD_VALUE_RULES[key] : undefined;
    if (rule !== undefined && !rule[1](value)) {
      const why = kit && (key === "exclusiveMinimum" || key === "exclusiveMaximum") && typeof value === "boolean" ? `; ${DRAFT4_BOUND}` : "";
      const expected = kit ? rule[0] : `${rule[0]} (JSON Schema)`;
      out.push({ path: at, keyword: key, message: `${at}: '${key}' must be ${expected}, found ${found(key, value)}${kit ? " (the kit would not check it)" : ""}${why}; fix: correct or remove it` });
      continue;
    }
    if (key === "items" || (key === "additionalProperties" && isRecord(value))) checkNode(value as Record<string, unknown>, at, false, depth + 1, out, mode);
    else if (key === "properties") {
      for (const [name, member] of Object.entries(value as Record<string, unknown>)) {
        const memberPath = schemaPath(at, name);
        if (kit && name === "__proto__") out.push({ path: memberPath, keyword: "properties", message: `${memberPath}: '__proto__' cannot be an argument name; fix: rename it` });
        else if (!isRecord(member) && !(!kit && typeof member === "boolean")) {
          out.push({ path: memberPath, keyword: "properties", message: `${memberPath}: must be a schema object, found ${valueKind(member)}${kit ? " (the kit would not check it)" : ""}; fix: give the property a schema object such as {"type": "string"}` });
        } else if (isRecord(member)) checkNode(member, memberPath, false, depth + 1, out, mode);
      }
    } else if (key === "anyOf" || key === "oneOf") {
      (value as Array<Record<string, unknown>>).forEach((branch, index) => checkNode(branch, `${at}[${index}]`, false, depth + 1, out, mode));
    } else if (key === "required" && !top) {
      unsatisfiableRequired(node, at, out);
    }
  }
}

/**
 * A nested object schema closed by `additionalProperties: false` whose `required` names a member
 * `properties` does not declare: no value satisfies it (the parameters object's own `required` is
 * checked by its validators, `SCHEMA_REQUIRED_UNKNOWN`).
 */
function unsatisfiableRequired(node: Record<string, unknown>, at: string, out: SchemaKeywordProblem[]): void {
  if (node["additionalProperties"] !== false) return;
  const properties = isRecord(node["properties"]) ? node["properties"] : {};
  (node["required"] as string[]).forEach((name, index) => {
    if (Object.hasOwn(properties, name)) return;
    out.push({
      path: `${at}[${index}]`,
      keyword: "required",
      unsatisfiable: true,
      message: `${at}[${index}]: requires ${JSON.stringify(shortText(name))}, which properties does not declare while additionalProperties is false, so no value can satisfy the schema; fix: declare it in properties or remove it from required`,
    });
  });
}

/**
 * Every keyword of the parameters object `parameters` (a hand-written
 * schema, or a listed `inputSchema`) that the kit's argument validation
 * would not enforce, in schema order: on the parameters object only
 * {@link PARAMETERS_OBJECT_KEYWORDS}, in every property schema below it
 * only {@link CHECKED_SCHEMA_KEYWORDS} (with values of the right type:
 * `type` a known JSON type, `pattern` a valid regular expression, bounds
 * finite numbers, ...), annotations ({@link SCHEMA_ANNOTATION_KEYWORDS})
 * anywhere; nested at most {@link MAX_SCHEMA_DEPTH} levels. `label` is the
 * path of `parameters` itself (`schema.parameters`, `inputSchema`).
 */
export function schemaKeywordProblems(parameters: Record<string, unknown>, label: string): SchemaKeywordProblem[] {
  const out: SchemaKeywordProblem[] = [];
  checkNode(parameters, label, true, 0, out);
  return out;
}

/**
 * The problems of a parameters object some other validator checks (a listed
 * tool of a server not built with the kit): any keyword is allowed, but each
 * keyword JSON Schema defines that the kit knows (`type`, `enum`, `pattern`,
 * bounds, `required`, `items`, `properties`, `additionalProperties`, `anyOf`,
 * `oneOf`, annotations) must hold a value JSON Schema allows, at any depth
 * (draft-4 boolean bounds and the tuple form of `items` included).
 */
export function jsonSchemaValueProblems(parameters: Record<string, unknown>, label: string): SchemaKeywordProblem[] {
  const out: SchemaKeywordProblem[] = [];
  checkNode(parameters, label, true, 0, out, "json-schema");
  return out;
}

/**
 * The property schema `schema` (a helper's nested schema, below the
 * parameters object) checked as {@link schemaKeywordProblems} checks one.
 */
export function propertySchemaKeywordProblems(schema: Record<string, unknown>, label: string): SchemaKeywordProblem[] {
  const out: SchemaKeywordProblem[] = [];
  checkNode(schema, label, false, 0, out);
  return out;
}

/** The supported vocabulary, for the end of a refusal. */
export function supportedKeywordsText(): string {
  return (
    `the kit checks only ${CHECKED_SCHEMA_KEYWORDS.join(", ")} in a property schema (at any depth) and ` +
    `type ("object"), properties, required, additionalProperties on the parameters object; ` +
    `annotations allowed anywhere: ${SCHEMA_ANNOTATION_KEYWORDS.join(", ")}`
  );
}

/** Lines of a refusal shown at most; further problems are counted. */
const MAX_PROBLEM_LINES = 20;

/** The message of a refused schema: a header, one line per problem (at most 20), the supported vocabulary (unless every problem is an unsatisfiable `required`). */
export function schemaKeywordMessage(subject: string, problems: readonly SchemaKeywordProblem[]): string {
  const shown = problems.slice(0, MAX_PROBLEM_LINES).map((problem) => `  ${problem.message}`);
  const hidden = problems.length - shown.length;
  if (hidden > 0) shown.push(`  ... and ${hidden} more problem${hidden === 1 ? "" : "s"}`);
  if (problems.every((problem) => problem.unsatisfiable === true)) return `${subject} requires members its closed objects do not declare, so every call would be refused:\n${shown.join("\n")}`;
  return (
    `${subject} has keywords the kit's argument validation does not enforce, so the model would be told constraints nobody checks:\n` +
    `${shown.join("\n")}\n` +
    `${supportedKeywordsText()}; a zod tool (tool({zod})) may use any keyword zod checks`
  );
}
