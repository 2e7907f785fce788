import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  arg,
  arrayArg,
  augmentDescription,
  boolArg,
  buildParameters,
  intArg,
  KitLogger,
  numberArg,
  objectArg,
  PluginKitError,
  pythonRepr,
  strArg,
  tool,
  validateArguments,
  validateFunctionSchema,
  validateParameters,
} from "../../src/kit/index.js";
import { captureKitLog } from "./fixtures.js";


const text = (result: { content: Array<{ text: string }> }) => result.content.map((c) => c.text).join("\n");

const lines = captureKitLog();

describe("argument helpers and parameters (Python kit argument specs; Python kit build_schema)", () => {
  it("emits property schemas without kit metadata", () => {
    expect(strArg("Thread id", { required: true, example: "123", minLength: 1 }).schema).toEqual({ type: "string", description: "Thread id", minLength: 1 });
    expect(intArg("n", { minimum: 0, maximum: 9 }).schema).toEqual({ type: "integer", description: "n", minimum: 0, maximum: 9 });
    expect(numberArg("x").schema).toEqual({ type: "number", description: "x" });
    expect(boolArg("b", { example: true }).schema).toEqual({ type: "boolean", description: "b" });
    expect(arrayArg("l", { items: strArg("item") }).schema).toEqual({ type: "array", description: "l", items: { type: "string", description: "item" } });
    expect(arg("string", "e", { enum: [] }).schema).toEqual({ type: "string", description: "e" });
    expect(arg("string", "e", { enum: ["a", "b"] }).schema).toEqual({ type: "string", description: "e", enum: ["a", "b"] });
    expect(objectArg("o", { properties: { k: strArg("k", { required: true }), v: intArg("v") } }).schema).toEqual({
      type: "object",
      description: "o",
      properties: { k: { type: "string", description: "k" }, v: { type: "integer", description: "v" } },
      additionalProperties: false,
      required: ["k"],
    });
  });
  it("refuses bad helper input with ARG_INVALID", () => {
    expect(() => arg("text", "x")).toThrowWithCode(PluginKitError, "ARG_INVALID");
    expect(() => strArg("x", { required: "yes" as unknown as boolean })).toThrowWithCode(PluginKitError, "ARG_INVALID");
    expect(() => buildParameters({ a: { type: "string" } as never })).toThrowWithCode(PluginKitError, "ARG_INVALID");
  });
  it("builds the parameters object in key order with required in declaration order", () => {
    const built = buildParameters({ b: strArg("b", { required: true, example: "x" }), a: intArg("a"), c: boolArg("c", { required: true }) });
    expect(Object.keys(built.parameters)).toEqual(["type", "properties", "additionalProperties", "required"]);
    expect(built.parameters.required).toEqual(["b", "c"]);
    expect(built.parameters.additionalProperties).toBe(false);
    expect(built.examples).toEqual({ b: "x" });
    expect("required" in buildParameters({ a: intArg("a") }).parameters).toBe(false);
  });
  it("validates hand-written schemas", () => {
    const ok = validateFunctionSchema({ name: "t", description: "d", parameters: { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: true } }, "t");
    expect(ok.parameters).toEqual({ type: "object", properties: { a: { type: "string" } }, additionalProperties: false, required: ["a"] });
    expect(() => validateFunctionSchema({ properties: { a: { type: "string" } } }, "t")).toThrowWithCode(PluginKitError, "SCHEMA_TOP_LEVEL_PROPERTIES");
    expect(() => validateFunctionSchema({ name: "t", description: "d", properties: { a: { type: "string" } } }, "t")).toThrowWithCode(PluginKitError, "SCHEMA_TOP_LEVEL_PROPERTIES");
    expect(() => validateFunctionSchema({ type: "object", description: "d", properties: {} }, "t")).toThrowWithCode(PluginKitError, "SCHEMA_TOP_LEVEL_PROPERTIES");
    expect(() => validateFunctionSchema({ parameters: { type: "object", properties: {} }, properties: {} }, "t")).toThrowWithCode(PluginKitError, "SCHEMA_TOP_LEVEL_PROPERTIES");
    expect(() => validateFunctionSchema({ name: "t" }, "t")).toThrowWithCode(PluginKitError, "SCHEMA_INVALID");
    expect(validateFunctionSchema({ type: "object", properties: { a: { type: "integer" } }, required: ["a"] }, "t").parameters).toEqual({
      type: "object",
      properties: { a: { type: "integer" } },
      additionalProperties: false,
      required: ["a"],
    });
    expect(() => validateFunctionSchema({ name: "other", parameters: { type: "object", properties: {} } }, "t")).toThrowWithCode(PluginKitError, "SCHEMA_NAME_MISMATCH");
    expect(() => validateFunctionSchema({ parameters: { type: "array" } }, "t")).toThrowWithCode(PluginKitError, "SCHEMA_INVALID");
    expect(() => validateFunctionSchema({ parameters: { type: "object", properties: [] } }, "t")).toThrowWithCode(PluginKitError, "SCHEMA_INVALID");
    expect(() => validateFunctionSchema({ parameters: { type: "object", properties: {}, required: ["x"] } }, "t")).toThrowWithCode(PluginKitError, "SCHEMA_REQUIRED_UNKNOWN");
    expect(() => validateParameters({ type: "object", properties: { a: "string" } })).toThrowWithCode(PluginKitError, "SCHEMA_INVALID");
  });
  it("augments descriptions with Python-repr examples (Python kit build_schema)", () => {
    expect(augmentDescription("Read a thread.", ["thread_id"], { thread_id: "123" })).toBe("Read a thread. Required: `thread_id` (e.g. '123').");
    expect(augmentDescription("Do.", ["a", "b", "c"], { a: 5, c: true })).toBe("Do. Required: `a` (e.g. 5), `b`, `c` (e.g. True).");
    expect(augmentDescription("Do. Required: `a`.", ["a"], {})).toBe("Do. Required: `a`.");
    expect(augmentDescription("Do.", [], {})).toBe("Do.");
    expect(pythonRepr("it's")).toBe(`"it's"`);
    expect(pythonRepr("a'b\"c")).toBe(`'a\\'b"c'`);
    expect(pythonRepr({ k: [1, null, false] })).toBe("{'k': [1, None, False]}");
  });
});

describe("tool()", () => {
  const echo = tool({
    name: "echo_text",
    description: "Echo text.",
    params: { text: strArg("Text", { required: true, example: "hi" }), times: intArg("Times", { minimum: 1, maximum: 3 }), mode: strArg("Mode", { enum: ["a", "b"] }) },
    handler: ({ text, times }) => ({ text, times: times ?? 1 }),
  });

  it("lists the parameters object with additionalProperties false and the augmented description", () => {
    expect(echo.inputSchema.additionalProperties).toBe(false);
    expect(echo.description).toBe("Echo text. Required: `text` (e.g. 'hi').");
    expect(echo.readOnly).toBe(false);
  });
  it("refuses definitions that break a rule, with the rule's code", () => {
    const handler = () => 1;
    expect(() => tool({ name: "memory", description: "d", params: {}, handler })).toThrowWithCode(PluginKitError, "TOOL_NAME_RESERVED");
    expect(() => tool({ name: "x", description: "d", handler } as never)).toThrowWithCode(PluginKitError, "TOOL_SCHEMA_SOURCE");
    expect(() => tool({ name: "x", description: "d", params: {}, schema: { parameters: { type: "object", properties: {} } }, handler } as never)).toThrowWithCode(PluginKitError, "TOOL_SCHEMA_SOURCE");
    expect(() => tool({ name: "x", description: " ", params: {}, handler })).toThrowWithCode(PluginKitError, "TOOL_DESCRIPTION_REQUIRED");
    expect(() => tool({ name: "x", description: "d", params: {}, handler: 5 as never })).toThrowWithCode(PluginKitError, "TOOL_OPTION_INVALID");
    expect(() => tool({ name: "x", description: "d", params: {}, readOnly: "yes" as never, handler })).toThrowWithCode(PluginKitError, "TOOL_OPTION_INVALID");
    expect(() => tool({ name: "x", description: "d", params: {}, examples: { nope: 1 }, handler })).toThrowWithCode(PluginKitError, "TOOL_OPTION_INVALID");
    expect(() => tool({ name: "x", description: "d", schema: { properties: {} } as never, handler })).toThrowWithCode(PluginKitError, "SCHEMA_TOP_LEVEL_PROPERTIES");
  });
  it("answers a missing, null or blank required argument with the instructive error and skips the handler", async () => {
    let called = 0;
    const counted = tool({ name: "counted", description: "C.", params: { q: strArg("q", { required: true, example: "2**10" }) }, handler: () => ++called });
    for (const args of [{}, { q: null }, { q: "" }, { q: "   " }, undefined]) {
      const result = await counted.call(args);
      expect(result.isError).toBe(true);
      expect(text(result)).toBe("q is required (e.g. '2**10')");
    }
    expect(called).toBe(0);
    expect(lines.some((line) => line.includes(" WARNING ") && line.includes("counted: rejected call, missing q"))).toBe(true);
  });
  it("does not count 0, false or [] as missing", async () => {
    const t = tool({ name: "t0", description: "T.", params: { n: intArg("n", { required: true }), b: boolArg("b", { required: true }), l: arrayArg("l", { required: true }) }, handler: (a) => a });
    const result = await t.call({ n: 0, b: false, l: [] });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ success: true, data: { n: 0, b: false, l: [] } });
  });
  it("skips the required check when validateRequired is false", async () => {
    const t = tool({ name: "t1", description: "T.", params: { q: strArg("q", { required: true }) }, validateRequired: false, handler: (a) => ({ got: a["q"] ?? null }) });
    expect((await t.call({})).structuredContent).toEqual({ success: true, data: { got: null } });
  });
  it("answers type errors as isError results, never throwing", async () => {
    const cases: Array<[unknown, string]> = [
      [{ text: 5 }, "text must be string"],
      [{ text: "x", times: 1.5 }, "times must be integer"],
      [{ text: "x", times: 7 }, "times must be <= 3"],
      [{ text: "x", mode: "c" }, "mode must be one of 'a', 'b'"],
      [{ text: "x", extra: 1 }, "extra is not an accepted argument (accepted: text, times, mode)"],
      ["nope", "arguments must be an object"],
    ];
    for (const [args, message] of cases) {
      const result = await echo.call(args);
      expect(result.isError).toBe(true);
      expect(text(result)).toBe(message);
    }
  });
  it("checks nested objects and arrays with paths", async () => {
    const t = tool({
      name: "nested",
      description: "N.",
      params: { cfg: objectArg("cfg", { properties: { host: strArg("h", { required: true }), ports: arrayArg("p", { items: intArg("port") }) } }) },
      handler: () => "ok",
    });
    expect(text(await t.call({ cfg: { ports: [1] } }))).toBe("cfg.host is required");
    expect(text(await t.call({ cfg: { host: "h", ports: [1, "2"] } }))).toBe("cfg.ports[1] must be integer");
    expect(text(await t.call({ cfg: { host: "h", x: 1 } }))).toBe("cfg.x is not an accepted argument (accepted: host, ports)");
    expect(text(await t.call({ cfg: { host: "h" } }))).toBe("ok");
  });
  it("drops optional arguments sent as null", () => {
    const checked = validateArguments(echo.inputSchema, { text: "x", times: null });
    expect(checked).toEqual({ ok: true, args: { text: "x" } });
  });
  it("wraps results in the envelope, passes strings through and reports handler errors", async () => {
    const ok = await echo.call({ text: "héllo" });
    expect(text(ok)).toBe('{"success":true,"data":{"text":"héllo","times":1}}');
    expect(ok.structuredContent).toEqual({ success: true, data: { text: "héllo", times: 1 } });
    const raw = tool({ name: "raw", description: "R.", params: {}, handler: () => '{"already":"json"}' });
    const rawResult = await raw.call({});
    expect(rawResult).toEqual({ content: [{ type: "text", text: '{"already":"json"}' }] });
    const none = tool({ name: "none", description: "N.", params: {}, handler: async () => undefined });
    expect(text(await none.call({}))).toBe('{"success":true,"data":null}');
    const boom = tool({ name: "boom", description: "B.", params: {}, handler: () => { throw new Error("kaput"); } });
    const failed = await boom.call({});
    expect(failed.isError).toBe(true);
    expect(text(failed)).toBe("boom failed: kaput");
    expect(lines.some((line) => line.includes(" ERROR ") && line.includes("boom: handler raised") && line.includes("stack="))).toBe(true);
    const cyclic = tool({ name: "cyclic", description: "C.", params: {}, handler: () => { const o: Record<string, unknown> = {}; o["o"] = o; return o; } });
    const cyc = await cyclic.call({});
    expect(cyc.isError).toBe(true);
    expect(text(cyc)).toMatch(/^cyclic failed: result is not JSON-serialisable/);
    expect(lines.some((line) => line.includes(" INFO ") && line.includes("echo_text: ok; elapsed_ms=") && line.includes("result=object"))).toBe(true);
    expect(lines.some((line) => line.includes("raw: ok;") && line.includes("result=encoded_string"))).toBe(true);
  });
  describe("a thrown error's text reaches the model redacted, as the log line is", () => {
    const SECRET = "sk-abcdefghijklmnopqrstuvwx";
    const thrown = `upstream refused: Authorization: Bearer eyJhbGciOi.payload.sig\nretry with api_key=${SECRET}`;
    const expected = "leaky failed: upstream refused: Authorization: Bearer ***\nretry with api_key=***";
    const leaky = (errorMode: "isError" | "envelope") => tool({ name: "leaky", description: "L.", params: {}, errorMode, handler: () => { throw new Error(thrown); } });

    it("isError: the message redacted line by line, its lines kept", async () => {
      const result = await leaky("isError").call({});
      expect(result.isError).toBe(true);
      expect(text(result)).not.toContain(SECRET);
      expect(text(result)).not.toContain("Bearer eyJ");
      expect(text(result)).toBe(expected);
      expect(lines.join("")).not.toContain(SECRET);
    });
    it("envelope: the same redacted message in {success: false, error}", async () => {
      const result = await leaky("envelope").call({});
      expect(JSON.stringify(result)).not.toContain(SECRET);
      expect(result.structuredContent).toEqual({ success: false, error: expected });
    });
    it("a message without secrets passes unchanged", async () => {
      const plain = tool({ name: "plain", description: "P.", params: {}, handler: () => { throw new Error("disk full\non /tmp"); } });
      expect(text(await plain.call({}))).toBe("plain failed: disk full\non /tmp");
    });
    it("a result whose toJSON throws a secret: redacted", async () => {
      const t = tool({ name: "ser", description: "S.", params: {}, handler: () => ({ toJSON: () => { throw new Error(`password=${SECRET}`); } }) });
      const result = await t.call({});
      expect(result.isError).toBe(true);
      expect(text(result)).toBe("ser failed: result is not JSON-serialisable: password=***");
    });
    it("a zod refinement that throws a secret: answered as a failed call, redacted, never a rejection", async () => {
      const t = tool({
        name: "refine",
        description: "R.",
        zod: z.object({ q: z.string().refine(() => { throw new Error(`token: ${SECRET}`); }) }),
        handler: () => "unreached",
      });
      const result = await t.call({ q: "x" });
      expect(result.isError).toBe(true);
      expect(text(result)).toBe("refine failed: token=***");
    });
  });

  it("answers in the Python kit's envelope with errorMode 'envelope'", async () => {
    const t = tool({
      name: "soft",
      description: "S.",
      params: { q: strArg("q", { required: true, example: "x" }) },
      errorMode: "envelope",
      handler: ({ q }) => {
        if (q === "boom") throw new Error("kaput");
        return q;
      },
    });
    const missing = await t.call({});
    expect(missing.isError).toBeUndefined();
    expect(text(missing)).toBe('{"success":false,"error":"q is required (e.g. \'x\')"}');
    expect((await t.call({ q: "boom" })).structuredContent).toEqual({ success: false, error: "soft failed: kaput" });
    expect(() => tool({ name: "x", description: "d", params: {}, errorMode: "loud" as never, handler: () => 1 })).toThrowWithCode(PluginKitError, "TOOL_OPTION_INVALID");
  });

  it("accepts a zod object, infers the handler type and reports refinement failures", async () => {
    const t = tool({
      name: "zod_tool",
      description: "Z.",
      zod: z.object({ city: z.string().min(2), days: z.number().int().optional() }),
      examples: { city: "Oslo" },
      handler: ({ city, days }) => ({ city: city.toUpperCase(), days: days ?? 1 }),
    });
    expect(t.inputSchema.additionalProperties).toBe(false);
    expect(t.inputSchema.required).toEqual(["city"]);
    expect(t.description).toBe("Z. Required: `city` (e.g. 'Oslo').");
    expect(text(await t.call({}))).toBe("city is required (e.g. 'Oslo')");
    expect(text(await t.call({ city: 3 }))).toBe("city must be string");
    expect(text(await t.call({ city: "Oslo", days: 2 }))).toBe('{"success":true,"data":{"city":"OSLO","days":2}}');
  });
  it("uses the schema path's description and applies the Required clause", async () => {
    const t = tool({
      name: "schema_tool",
      description: "",
      schema: { description: "From schema.", parameters: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] } },
      handler: ({ id }) => id,
    });
    expect(t.description).toBe("From schema. Required: `id`.");
    expect(text(await t.call({}))).toBe("id is required");
  });
  it("logs DEBUG invocations with redacted, truncated arguments", async () => {
    await echo.call({ text: "x".repeat(300), auth: { api_key: "s3cr3t" } });
    const debug = lines.find((line) => line.includes(" DEBUG ") && line.includes("echo_text: invoked"));
    expect(debug).toBeDefined();
    expect(debug).toContain("…");
    expect(lines.join("")).not.toContain("s3cr3t");
    expect(new KitLogger("x").isEnabled("DEBUG")).toBe(true);
  });
});
