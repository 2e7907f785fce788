/**
 * Hand-written tool schemas carry only the JSON Schema keywords the kit's
 * argument validation enforces (docs/kit.md, "Hand-written schemas: the
 * keywords the kit checks"): each supported keyword is accepted and enforced
 * on a call; every other keyword (a real one the kit does not check, a
 * misspelt one, a property-schema keyword on the parameters object, a value
 * of the wrong type) is refused when the tool is defined with
 * `SCHEMA_INVALID`, at the top and at any depth, naming its path; the
 * helpers' plain-object schemas likewise (`ARG_INVALID`); zod tools are
 * exempt; and `plugin doctor` reports a listed schema holding such a keyword.
 */
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  arg,
  arrayArg,
  buildPluginPackage,
  definePlugin,
  doctorPluginPackage,
  objectArg,
  PluginKitError,
  tool,
  validateFunctionSchema,
  validateParameters,
  type DoctorReport,
  VALIDATOR_META_KEY,
} from "../../src/kit/index.js";
import { captureKitLog, fixtureServerScript, manifestFor, mcpFor, tempDir, writePackage, type FixtureTool } from "./fixtures.js";

captureKitLog();

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const handler = (args: Record<string, unknown>) => args;
const text = (result: { content: Array<{ text: string }> }) => result.content.map((c) => c.text).join("\n");
const SUPPORTED_LIST = "type, enum, const, anyOf, oneOf, minLength, maxLength, pattern, minimum, maximum, exclusiveMinimum, exclusiveMaximum, items, minItems, maxItems, properties, required, additionalProperties";

/** A tool whose one optional argument `a` has the property schema `property`. */
function toolWith(property: Record<string, unknown>, top: Record<string, unknown> = {}) {
  return tool({ name: "t", description: "d", schema: { parameters: { type: "object", properties: { a: property }, ...top } }, handler });
}

/** The refusal of `schema` by tool(); fails the test when it is accepted. */
function refusal(schema: Record<string, unknown>): PluginKitError {
  try {
    tool({ name: "t", description: "d", schema: schema as never, handler });
  } catch (error) {
    return error as PluginKitError;
  }
  throw new Error("the schema was accepted");
}

describe("a hand-written schema may use every keyword the kit checks, and each is enforced", () => {
  it.each([
    ["type", { type: "integer" }, 3, "x", "a must be integer"],
    ["type (a list)", { type: ["string", "null"] }, null, 1, "a must be string or null"],
    ["enum", { enum: ["x", "y"] }, "x", "z", "a must be one of 'x', 'y'"],
    ["const", { const: 7 }, 7, 8, "a must be 7"],
    ["anyOf", { anyOf: [{ type: "string" }, { type: "integer" }] }, 1, true, "a does not match any allowed form"],
    ["oneOf (none matches)", { oneOf: [{ type: "integer" }, { type: "number", minimum: 10 }] }, 3, 2.5, "a does not match any allowed form"],
    ["oneOf (two match)", { oneOf: [{ type: "integer" }, { type: "number", minimum: 10 }] }, 10.5, 12, "a matches more than one allowed form (oneOf: exactly one must match)"],
    ["minLength", { type: "string", minLength: 2 }, "ab", "a", "a must be at least 2 characters"],
    ["maxLength", { type: "string", maxLength: 2 }, "ab", "abc", "a must be at most 2 characters"],
    ["pattern", { type: "string", pattern: "^x" }, "xy", "yx", "a must match the pattern '^x'"],
    ["minimum", { type: "number", minimum: 1 }, 1, 0, "a must be >= 1"],
    ["maximum", { type: "number", maximum: 1 }, 1, 2, "a must be <= 1"],
    ["exclusiveMinimum", { type: "number", exclusiveMinimum: 1 }, 2, 1, "a must be > 1"],
    ["exclusiveMaximum", { type: "number", exclusiveMaximum: 1 }, 0, 1, "a must be < 1"],
    ["items", { type: "array", items: { type: "integer" } }, [1], [1, "x"], "a[1] must be integer"],
    ["minItems", { type: "array", minItems: 1 }, [1], [], "a must have at least 1 items"],
    ["maxItems", { type: "array", maxItems: 1 }, [1], [1, 2], "a must have at most 1 items"],
    ["properties", { type: "object", properties: { b: { type: "integer" } } }, { b: 1 }, { b: "x" }, "a.b must be integer"],
    ["required", { type: "object", properties: { b: {} }, required: ["b"] }, { b: 1 }, {}, "a.b is required"],
    ["additionalProperties", { type: "object", properties: {}, additionalProperties: false }, {}, { c: 1 }, "a.c is not an accepted argument (this takes no arguments)"],
    ["additionalProperties (a schema)", { type: "object", additionalProperties: { type: "integer" } }, { c: 1 }, { c: "x" }, "a.c must be integer"],
  ])("%s", async (_keyword, property, good, bad, message) => {
    const t = toolWith(property);
    expect(t.validator).toBe("kit");
    expect(t.inputSchema.properties["a"]).toEqual(property);
    expect((await t.call({ a: good })).isError).toBeUndefined();
    const refused = await t.call({ a: bad });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe(message);
  });

  it("annotations (title, description, examples, default, $comment, deprecated, readOnly, writeOnly) on the parameters object and at any depth, and $schema on the parameters object", async () => {
    const annotations = { title: "T", description: "D", examples: [1], default: 1, $comment: "c", deprecated: false, readOnly: false, writeOnly: false };
    const property = { type: "object", ...annotations, properties: { b: { type: "array", ...annotations, items: { type: "integer", ...annotations } } } };
    const t = tool({ name: "t", description: "d", schema: { parameters: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", ...annotations, properties: { a: property } } }, handler });
    expect(t.inputSchema).toEqual({ type: "object", properties: { a: property }, additionalProperties: false, ...annotations });
    expect(text(await t.call({ a: { b: ["x"] } }))).toBe("a.b[0] must be integer");
  });

  it("every checked keyword at once, nested in properties, items, additionalProperties and anyOf/oneOf branches, through both schema shapes", () => {
    const deep = {
      type: "object",
      properties: {
        s: { type: "string", minLength: 1, maxLength: 9, pattern: "^[a-z]+$", enum: ["ab"] },
        n: { type: ["number", "null"], minimum: 0, maximum: 9, exclusiveMinimum: -1, exclusiveMaximum: 10 },
        l: { type: "array", items: { anyOf: [{ const: 1 }, { oneOf: [{ type: "string", maxLength: 2 }, { type: "boolean" }] }] }, minItems: 0, maxItems: 3 },
      },
      required: ["s"],
      additionalProperties: { type: "object", additionalProperties: false },
    };
    expect(validateFunctionSchema({ parameters: { type: "object", properties: { deep } } }, "t").parameters.properties["deep"]).toEqual(deep);
    expect(validateFunctionSchema({ type: "object", properties: { deep } }, "t").parameters.properties["deep"]).toEqual(deep);
    expect(validateParameters({ type: "object", properties: { deep } }).parameters.properties["deep"]).toEqual(deep);
  });
});

describe("any other keyword is refused when the tool is defined (SCHEMA_INVALID), naming its path and the keywords the kit checks", () => {
  // Real JSON Schema keywords the kit's argument validation does not check, each with a value that constrains.
  const UNCHECKED: Array<[string, unknown]> = [
    ["format", "email"],
    ["multipleOf", 5],
    ["uniqueItems", true],
    ["minProperties", 1],
    ["maxProperties", 1],
    ["patternProperties", { "^x": { type: "string" } }],
    ["propertyNames", { maxLength: 3 }],
    ["dependentRequired", { a: ["b"] }],
    ["dependentSchemas", { a: { required: ["b"] } }],
    ["contains", { type: "string" }],
    ["prefixItems", [{ type: "string" }]],
    ["unevaluatedProperties", false],
    ["allOf", [{ type: "string" }]],
    ["not", { type: "string" }],
    ["if", { type: "string" }],
    ["then", { minLength: 1 }],
    ["$ref", "#/$defs/x"],
    ["$defs", { x: { type: "string" } }],
    ["contentEncoding", "base64"],
    ["nullable", true],
  ];

  it.each(UNCHECKED)("'%s' in a property schema", (keyword, value) => {
    const error = refusal({ parameters: { type: "object", properties: { a: { type: "string", [keyword]: value } } } });
    expect(error).toBeInstanceOf(PluginKitError);
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain(`schema of tool 't' has keywords the kit's argument validation does not enforce`);
    expect(error.message).toContain(`schema.parameters.properties.a.${keyword}: the kit does not check '${keyword}'; fix: `);
    expect(error.message).toContain(`the kit checks only ${SUPPORTED_LIST} in a property schema`);
  });

  it.each(UNCHECKED)("'%s' on the parameters object", (keyword, value) => {
    const error = refusal({ type: "object", properties: { a: { type: "string" } }, [keyword]: value });
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain(`\n  schema.${keyword}: the kit does not check '${keyword}'; fix: `);
  });

  it.each([
    ["a nested object's property", { type: "object", properties: { b: { type: "object", properties: { c: { type: "string", format: "uuid" } } } } }, "schema.parameters.properties.a.properties.b.properties.c.format"],
    ["array items", { type: "array", items: { type: "number", multipleOf: 2 } }, "schema.parameters.properties.a.items.multipleOf"],
    ["items of items", { type: "array", items: { type: "array", items: { type: "string", format: "date" } } }, "schema.parameters.properties.a.items.items.format"],
    ["an additionalProperties schema", { type: "object", additionalProperties: { type: "array", uniqueItems: true } }, "schema.parameters.properties.a.additionalProperties.uniqueItems"],
    ["an anyOf branch", { anyOf: [{ type: "string" }, { type: "object", patternProperties: { x: {} } }] }, "schema.parameters.properties.a.anyOf[1].patternProperties"],
    ["a oneOf branch", { oneOf: [{ type: "string", $ref: "#/x" }] }, "schema.parameters.properties.a.oneOf[0].$ref"],
    ["a property named oddly", { type: "object", properties: { "my key": { type: "string", format: "uri" } } }, 'schema.parameters.properties.a.properties["my key"].format'],
  ])("nested in %s", (_where, property, at) => {
    const error = refusal({ parameters: { type: "object", properties: { a: property } } });
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain(`\n  ${at}: the kit does not check '`);
  });

  it.each([
    ["a misspelt keyword", { type: "string", minLenght: 2 }, "schema.parameters.properties.a.minLenght: 'minLenght' is not a keyword the kit checks; did you mean 'minLength'?"],
    ["an unknown keyword", { type: "string", "x-secret": true }, `schema.parameters.properties.a["x-secret"]: 'x-secret' is not a keyword the kit checks`],
    ["an unknown type (it would match every value)", { type: "str" }, `schema.parameters.properties.a.type: 'type' must be one of string, integer, number, boolean, array, object, null, or a non-empty list of them without repeats, found "str"`],
    ["an empty type list", { type: [] }, "schema.parameters.properties.a.type: 'type' must be one of string, integer, number, boolean, array, object, null, or a non-empty list of them without repeats, found an empty list"],
    ["an invalid pattern (the validator would skip it)", { type: "string", pattern: "(" }, "schema.parameters.properties.a.pattern: 'pattern' must be a valid regular expression string (JavaScript, u flag), found an invalid regular expression"],
    ["a draft-4 boolean exclusiveMinimum", { type: "number", minimum: 0, exclusiveMinimum: true }, "schema.parameters.properties.a.exclusiveMinimum: 'exclusiveMinimum' must be a finite number, found a boolean (the kit would not check it); the draft-4 boolean form is not supported"],
    ["a string bound", { type: "number", maximum: "9" }, "schema.parameters.properties.a.maximum: 'maximum' must be a finite number, found a string"],
    ["a negative minLength", { type: "string", minLength: -1 }, "schema.parameters.properties.a.minLength: 'minLength' must be an integer >= 0, found -1"],
    ["tuple items", { type: "array", items: [{ type: "string" }] }, "schema.parameters.properties.a.items: 'items' must be a schema object (one schema for every item), found an array"],
    ["an enum that is not a list", { enum: "x" }, "schema.parameters.properties.a.enum: 'enum' must be a list of allowed values, found a string"],
    ["an empty anyOf", { anyOf: [] }, "schema.parameters.properties.a.anyOf: 'anyOf' must be a non-empty list of schema objects, found an empty list"],
    ["a boolean oneOf branch", { oneOf: [true] }, "schema.parameters.properties.a.oneOf: 'oneOf' must be a non-empty list of schema objects, found a list with an item that is not a schema object"],
    ["a nested property that is no schema object", { type: "object", properties: { b: "string" } }, "schema.parameters.properties.a.properties.b: must be a schema object, found a string"],
    ["nested required that is not a list of strings", { type: "object", required: "b" }, "schema.parameters.properties.a.required: 'required' must be a list of strings, found a string"],
    ["a string additionalProperties", { type: "object", additionalProperties: "no" }, "schema.parameters.properties.a.additionalProperties: 'additionalProperties' must be true, false or a schema object, found a string"],
    ["a non-string description", { type: "string", description: 5 }, "schema.parameters.properties.a.description: 'description' must be a string, found 5"],
    ["a nested $schema", { type: "string", $schema: "x" }, "schema.parameters.properties.a.$schema: '$schema' belongs on the parameters object only"],
  ])("%s", (_label, property, message) => {
    const error = refusal({ parameters: { type: "object", properties: { a: property } } });
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain(`\n  ${message}`);
  });

  it.each([["enum", ["x"]], ["const", {}], ["anyOf", [{ type: "object" }]], ["oneOf", [{ type: "object" }]], ["minLength", 1], ["items", {}]])(
    "'%s' on the parameters object (the kit checks it only inside a property's schema)",
    (keyword, value) => {
      const error = refusal({ parameters: { type: "object", properties: {}, [keyword]: value } });
      expect(error.code).toBe("SCHEMA_INVALID");
      expect(error.message).toContain(`\n  schema.parameters.${keyword}: the kit does not check '${keyword}' on the parameters object (only inside a property's schema); fix: move it into the schema of the property it constrains`);
    },
  );

  it("names every problem, one line each, and counts the ones past 20", () => {
    const properties = Object.fromEntries(Array.from({ length: 23 }, (_, i) => [`p${i}`, { type: "string", format: "email" }]));
    const error = refusal({ type: "object", properties });
    const lines = error.message.split("\n");
    expect(lines.filter((line) => line.endsWith("fix: use pattern, or check it in the handler, or declare the tool with zod"))).toHaveLength(20);
    expect(lines).toContain("  ... and 3 more problems");
  });

  it("a schema nested deeper than 32 levels (also a cyclic one) is refused, not followed", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 40; i += 1) deep = { type: "array", items: deep };
    expect(refusal({ type: "object", properties: { a: deep } }).message).toContain("the schema is nested deeper than 32 levels");
    const cyclic: Record<string, unknown> = { type: "array" };
    cyclic["items"] = cyclic;
    expect(refusal({ type: "object", properties: { a: cyclic } }).code).toBe("SCHEMA_INVALID");
  });

  it("validateParameters refuses the same keywords under its label", () => {
    expect(() => validateParameters({ type: "object", properties: { a: { type: "string", format: "email" } } })).toThrowWithCode(PluginKitError, "SCHEMA_INVALID");
    expect(() => validateParameters({ type: "object", properties: { a: { type: "string", format: "email" } } })).toThrow("parameters.properties.a.format: the kit does not check 'format'");
  });
});

describe("the argument helpers' plain-object schemas hold only checked keywords too (ARG_INVALID)", () => {
  it("accepts and enforces checked keywords in a plain-object items, property or branch", async () => {
    const t = tool({
      name: "t",
      description: "d",
      params: {
        ids: arrayArg("ids", { items: { type: "string", pattern: "^[0-9]+$" } }),
        cfg: objectArg("cfg", { properties: { port: { type: "integer", minimum: 1 } } }),
        v: arg("string", "v", { anyOf: [{ type: "string", maxLength: 1 }] }),
      },
      handler,
    });
    expect(text(await t.call({ ids: ["1", "x"], cfg: { port: 0 }, v: "ab" }))).toBe("ids[1] must match the pattern '^[0-9]+$'\ncfg.port must be >= 1\nv does not match any allowed form");
  });

  it.each([
    ["arrayArg items", () => arrayArg("ids", { items: { type: "string", format: "uuid" } }), "argument.items.format: the kit does not check 'format'"],
    ["objectArg property", () => objectArg("cfg", { properties: { port: { type: "integer", multipleOf: 2 } } }), "argument.properties.port.multipleOf: the kit does not check 'multipleOf'"],
    ["objectArg additionalProperties", () => objectArg("cfg", { additionalProperties: { type: "string", format: "uri" } }), "argument.additionalProperties.format: the kit does not check 'format'"],
    ["arg anyOf branch", () => arg("string", "v", { anyOf: [{ $ref: "#/x" }] }), "argument.anyOf[0].$ref: the kit does not check '$ref'"],
    ["arg items, two levels down", () => arg("array", "v", { items: { type: "array", items: { if: {} } } }), "argument.items.items.if: the kit does not check 'if'"],
  ])("%s", (_label, make, message) => {
    expect(make).toThrowWithCode(PluginKitError, "ARG_INVALID");
    expect(make).toThrow(message);
  });
});

describe("a nested required naming a member a closed object does not declare is refused (SCHEMA_INVALID), at every depth", () => {
  const closed = (required: string[], extra: Record<string, unknown> = {}) => ({ type: "object", properties: { b: { type: "string" } }, required, additionalProperties: false, ...extra });
  const unsatisfiable = (at: string, name: string) =>
    `\n  ${at}: requires "${name}", which properties does not declare while additionalProperties is false, so no value can satisfy the schema; fix: declare it in properties or remove it from required`;

  it.each([
    ["a property's object", closed(["b", "c"]), "schema.parameters.properties.a.required[1]", "c"],
    ["array items", { type: "array", items: closed(["c"]) }, "schema.parameters.properties.a.items.required[0]", "c"],
    ["an object in an object", { type: "object", properties: { inner: closed(["zz"]) } }, "schema.parameters.properties.a.properties.inner.required[0]", "zz"],
    ["an anyOf branch", { anyOf: [{ type: "null" }, closed(["c"])] }, "schema.parameters.properties.a.anyOf[1].required[0]", "c"],
    ["an additionalProperties schema", { type: "object", additionalProperties: closed(["c"]) }, "schema.parameters.properties.a.additionalProperties.required[0]", "c"],
    ["a closed object without properties", { type: "object", required: ["c"], additionalProperties: false }, "schema.parameters.properties.a.required[0]", "c"],
  ])("in %s", (_where, property, at, name) => {
    const error = refusal({ parameters: { type: "object", properties: { a: property } } });
    expect(error.code).toBe("SCHEMA_INVALID");
    expect(error.message).toContain(unsatisfiable(at, name));
    expect(error.message.startsWith("schema of tool 't' requires members its closed objects do not declare, so every call would be refused:\n")).toBe(true);
  });

  it("accepted when the member is declared, or the object is open", () => {
    expect(() => tool({ name: "t", description: "d", schema: { type: "object", properties: { a: closed(["b"]) } }, handler })).not.toThrow();
    expect(() => tool({ name: "t", description: "d", schema: { type: "object", properties: { a: { type: "object", properties: {}, required: ["c"] } } }, handler })).not.toThrow();
  });

  it("in an argument helper's plain-object schema: ARG_INVALID with its path", () => {
    expect(() => arrayArg("ids", { items: closed(["b", "c"]) as never })).toThrowWithCode(PluginKitError, "ARG_INVALID");
    expect(() => arrayArg("ids", { items: closed(["b", "c"]) as never })).toThrow(unsatisfiable("argument.items.required[1]", "c"));
    expect(() => arrayArg("ids", { items: closed(["b"]) as never })).not.toThrow();
  });
});

describe("a zod tool may carry any keyword zod checks", () => {
  const zodTool = () =>
    tool({ name: "z", description: "d", zod: z.object({ email: z.string().email(), n: z.number().multipleOf(5) }), examples: { email: "a@b.co", n: 5 }, handler: (args) => args });

  it("is accepted, marked validator zod, and zod enforces format and multipleOf", async () => {
    const t = zodTool();
    expect(t.validator).toBe("zod");
    const email = t.inputSchema.properties["email"] as Record<string, unknown>;
    expect(email["format"]).toBe("email");
    expect((await t.call({ email: "a@b.co", n: 10 })).isError).toBeUndefined();
    expect((await t.call({ email: "nope", n: 10 })).isError).toBe(true);
    expect((await t.call({ email: "a@b.co", n: 7 })).isError).toBe(true);
  });

  it("is listed with _meta hermes-plugin-kit/validator (VALIDATOR_META_KEY, exported): zod; a schema tool: kit", async () => {
    expect(VALIDATOR_META_KEY).toBe("hermes-plugin-kit/validator");
    const plugin = definePlugin({ name: "kw-plugin", version: "1.0.0", description: "d", server: "kw", tools: [zodTool(), toolWith({ type: "string" })] });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await plugin.createServer().connect(serverSide);
    const client = new Client({ name: "in-memory", version: "1" });
    await client.connect(clientSide);
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, t._meta])).toEqual([
      ["z", { "hermes-plugin-kit/examples": { email: "a@b.co", n: 5 }, "hermes-plugin-kit/validator": "zod" }],
      ["t", { "hermes-plugin-kit/validator": "kit" }],
    ]);
    await client.close();
  });
});

describe("plugin doctor reports a listed schema holding a keyword the kit does not check", () => {
  const errorFindings = (report: DoctorReport) => report.findings.filter((f) => f.severity === "error");
  const server = (tools: FixtureTool[]) => {
    const dir = writePackage({ manifest: manifestFor(), mcp: mcpFor("fixture"), serverScript: fixtureServerScript(tools) });
    dirs.push(dir);
    return dir;
  };
  const listed = (properties: Record<string, unknown>, top: Record<string, unknown> = {}) => ({ type: "object", properties, additionalProperties: false, ...top });

  const kitTool = (tool: FixtureTool): FixtureTool => ({ ...tool, _meta: { [VALIDATOR_META_KEY]: "kit" } }) as FixtureTool;

  it("SCHEMA_INVALID per keyword, nested and on the parameters object, with its path and the supported keywords (a tool listed validator: kit)", async () => {
    const report = await doctorPluginPackage(
      server([kitTool({ name: "signup", inputSchema: listed({ email: { type: "string", format: "email" }, tags: { type: "array", items: { type: "string", pattern: "(" } } }, { minProperties: 1 }) })]),
      { callTools: false },
    );
    const findings = errorFindings(report);
    expect(findings.map((f) => f.rule)).toEqual(["SCHEMA_INVALID", "SCHEMA_INVALID", "SCHEMA_INVALID"]);
    expect(findings[0]?.message).toContain("server 'fixture': tool 'signup': inputSchema.properties.email.format: the kit does not check 'format'; fix: use pattern");
    expect(findings[0]?.message).toContain(`the kit checks only ${SUPPORTED_LIST} in a property schema`);
    expect(findings[1]?.message).toContain("inputSchema.properties.tags.items.pattern: 'pattern' must be a valid regular expression string");
    expect(findings[2]?.message).toContain("inputSchema.minProperties: the kit does not check 'minProperties'");
    expect(report.ok).toBe(false);
  });

  it("a server not built with the kit (no validator marker): its schema is JSON Schema, any keyword passes, only invalid values of JSON Schema keywords are SCHEMA_INVALID", async () => {
    const foreign = await doctorPluginPackage(
      server([
        { name: "signup", inputSchema: listed({ email: { type: "string", format: "email" }, pair: { type: "array", items: [{ type: "string" }, { type: "integer" }] }, n: { type: "number", minimum: 0, exclusiveMinimum: true } }, { minProperties: 1, $defs: { x: { type: "string" } } }) },
      ]),
      { callTools: false },
    );
    expect(errorFindings(foreign)).toEqual([]);
    const malformed = await doctorPluginPackage(
      server([
        { name: "broken", inputSchema: listed({ tags: { type: "array", items: { type: "strng", pattern: "(" } }, note: { type: "string", format: "email" } }) },
        { name: "closed", inputSchema: listed({ cfg: { type: "object", properties: {}, required: ["port"], additionalProperties: false } }) },
      ]),
      { callTools: false },
    );
    const findings = errorFindings(malformed);
    expect(findings.map((f) => f.rule)).toEqual(["SCHEMA_INVALID", "SCHEMA_INVALID", "SCHEMA_INVALID"]);
    expect(findings[2]?.message).toBe(
      `server 'fixture': tool 'closed': inputSchema.properties.cfg.required[0]: requires "port", which properties does not declare while additionalProperties is false, so no value can satisfy the schema; fix: declare it in properties or remove it from required`,
    );
    expect(findings[0]?.message).toBe(
      `server 'fixture': tool 'broken': inputSchema.properties.tags.items.type: 'type' must be one of string, integer, number, boolean, array, object, null, or a non-empty list of them without repeats (JSON Schema), found "strng"; fix: correct or remove it (not valid JSON Schema: the model is told a malformed constraint)`,
    );
    expect(findings[1]?.message).toContain("inputSchema.properties.tags.items.pattern: 'pattern' must be a valid regular expression string (JavaScript, u flag) (JSON Schema), found an invalid regular expression");
    expect(findings.some((f) => f.message.includes("format"))).toBe(false);
  });

  it("passes a listed schema that uses only checked keywords and annotations, and a zod tool's schema", async () => {
    const report = await doctorPluginPackage(
      server([
        kitTool({ name: "fine", inputSchema: listed({ q: { type: "string", minLength: 1, pattern: "^a", description: "d", default: "a" }, n: { oneOf: [{ type: "integer", minimum: 0 }, { type: "null" }] } }, { title: "T" }) }),
        { name: "zodded", inputSchema: listed({ email: { type: "string", format: "email" } }), _meta: { "hermes-plugin-kit/validator": "zod" } } as FixtureTool,
      ]),
      { callTools: false },
    );
    expect(errorFindings(report)).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it("a kit plugin with such a schema: plugin build refuses it, and a hand-bundled server refuses to serve (SCHEMA_INVALID)", async () => {
    const dir = tempDir("doctor-keyword");
    dirs.push(dir);
    const entry = path.join(dir, "entry.ts");
    writeFileSync(
      entry,
      `import { definePlugin, tool } from "hermes-plugin-kit";
export default definePlugin({ name: "bad-keyword", version: "1.0.0", description: "d", server: "badkeyword",
  tools: [tool({ name: "signup", description: "Sign up.", schema: { type: "object", properties: { email: { type: "string", format: "email" } } }, handler: () => 1 })] });
`,
    );
    await expect(buildPluginPackage({ entry, outDir: path.join(dir, "out") })).rejects.toThrowWithCode(PluginKitError, "SCHEMA_INVALID");
    // Bypass the builder's check: bundle the same entry with esbuild, as a hand-rolled build (or an older kit) would.
    const { build } = await import("esbuild");
    const { kitIndexPath } = await import("../../src/kit/index.js");
    await build({
      stdin: { contents: `import { servePluginModule } from "hermes-plugin-kit";\nservePluginModule(() => import(${JSON.stringify(entry)}));\n`, resolveDir: dir, loader: "js" },
      bundle: true, platform: "node", format: "esm", target: "node20", alias: { "hermes-plugin-kit": kitIndexPath() }, outfile: path.join(dir, "pkg", "dist", "server.js"), logLevel: "silent",
      banner: { js: 'import { createRequire as __r } from "node:module";\nconst require = __r(import.meta.url);' },
    });
    writeFileSync(path.join(dir, "pkg", "plugin.json"), JSON.stringify(manifestFor("bad-keyword")));
    writeFileSync(path.join(dir, "pkg", "mcp.json"), JSON.stringify(mcpFor("badkeyword", { args: ["${PLUGIN_ROOT}/dist/server.js"] })));
    const report = await doctorPluginPackage(path.join(dir, "pkg"));
    expect(errorFindings(report).map((f) => f.rule)).toEqual(expect.arrayContaining(["SCHEMA_INVALID", "SERVER_START_FAILED"]));
    expect(errorFindings(report).find((f) => f.rule === "SCHEMA_INVALID")?.message).toContain("schema.properties.email.format: the kit does not check 'format'");
  });
});
