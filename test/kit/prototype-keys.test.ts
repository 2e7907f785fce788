/**
 * Closed schemas stay closed for keys named after `Object.prototype` members
 * (docs/kit.md, "What a tool call answers"): `constructor`, `toString`,
 * `hasOwnProperty`, `__proto__`, ... are unknown arguments unless declared;
 * `__proto__` is refused at any depth (nested objects, free-form arrays, open
 * objects, enum matches), so a handler never receives a key that
 * `Object.assign` turns into a prototype change. Checked through
 * `validateArguments`, `tool().call` and a built server over stdio.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  arg,
  arrayArg,
  buildParameters,
  buildPluginPackage,
  checkArgumentValue,
  doctorPluginPackage,
  intArg,
  loadPluginConfig,
  normalizeHookResult,
  objectArg,
  PluginKitError,
  safeArguments,
  strArg,
  tool,
  validateArguments,
  validateParameters,
} from "../../src/kit/index.js";
import { fixtureServerScript, manifestFor, mcpFor, tempDir, writePackage } from "./fixtures.js";
import { rawSession, resultText, type RawSession } from "./rpc.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const { parameters } = buildParameters({ name: strArg("Name.", { required: true }), count: intArg("Count.") });
const messages = (checked: ReturnType<typeof validateArguments>) => (checked.ok ? [] : checked.problems.map((problem) => problem.message));

/** Names every plain object "has" through its prototype. */
const PROTOTYPE_MEMBERS = ["constructor", "toString", "hasOwnProperty", "valueOf", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString", "__defineGetter__", "__lookupSetter__", "__proto__"];

describe("validateArguments: keys are own properties", () => {
  it("accepts the declared arguments", () => {
    expect(validateArguments(parameters, { name: "Ada", count: 2 })).toEqual({ ok: true, args: { name: "Ada", count: 2 } });
  });

  it.each(PROTOTYPE_MEMBERS)("refuses %s exactly as an unknown key 'bogus'", (key) => {
    const bogus = messages(validateArguments(parameters, { name: "Ada", bogus: 1 }));
    expect(bogus).toEqual(["bogus is not an accepted argument (accepted: name, count)"]);
    // A computed key is an own property, as JSON.parse makes it (also for __proto__).
    expect(messages(validateArguments(parameters, { name: "Ada", [key]: 1 }))).toEqual([`${key} is not an accepted argument (accepted: name, count)`]);
  });

  it("refuses the reviewed call {name, constructor, toString, hasOwnProperty}, naming each", () => {
    const checked = validateArguments(parameters, JSON.parse('{"name":"Ada","constructor":"x","toString":1,"hasOwnProperty":[]}'));
    expect(messages(checked)).toEqual([
      "constructor is not an accepted argument (accepted: name, count)",
      "toString is not an accepted argument (accepted: name, count)",
      "hasOwnProperty is not an accepted argument (accepted: name, count)",
    ]);
  });

  it("a JSON-parsed own __proto__ key neither satisfies required nor skips the type checks", () => {
    const checked = validateArguments(parameters, JSON.parse('{"__proto__":{"name":"Ada","count":"two","isAdmin":true}}'));
    expect(checked.ok).toBe(false);
    expect(messages(checked)).toEqual(["name is required", "__proto__ is not an accepted argument (accepted: name, count)"]);
    expect(checked.ok || checked.problems.map((problem) => problem.kind)).toEqual(["missing", "unknown"]);
    // Beside valid arguments it is refused too, and the valid ones are not read from it.
    expect(messages(validateArguments(parameters, JSON.parse('{"name":"Ada","__proto__":{"count":"two"}}')))).toEqual(["__proto__ is not an accepted argument (accepted: name, count)"]);
  });

  it("a required argument named after a prototype member is missing until sent, and accepted when declared", () => {
    const declared = buildParameters({ constructor: strArg("C.", { required: true }), toString: intArg("T.") }).parameters;
    expect(messages(validateArguments(declared, {}))).toEqual(["constructor is required"]);
    expect(messages(validateArguments(declared, { constructor: "x", toString: "y" }))).toEqual(["toString must be integer"]);
    const ok = validateArguments(declared, JSON.parse('{"constructor":"x","toString":3}'));
    expect(ok).toEqual({ ok: true, args: { constructor: "x", toString: 3 } });
  });

  it("examples are read as own properties: no example for a required 'constructor' comes from Object", () => {
    const declared = buildParameters({ constructor: strArg("C.", { required: true }) }).parameters;
    expect(messages(validateArguments(declared, {}, { examples: {} }))).toEqual(["constructor is required"]);
    expect(messages(validateArguments(declared, {}, { examples: { constructor: "c" } }))).toEqual(["constructor is required (e.g. 'c')"]);
  });
});

describe("nested, free-form and enum values", () => {
  const nested = buildParameters({
    opts: objectArg("Options.", { properties: { color: strArg("Color.") } }),
    tags: arrayArg("Tags."),
    meta: objectArg("Open metadata.", { additionalProperties: true }),
    choice: arg("object", "A preset.", { enum: [JSON.parse('{"preset":1,"__proto__":{"isAdmin":true}}'), { preset: 2 }] }),
  }).parameters;

  it("accepts nested data without prototype keys", () => {
    const input = JSON.parse('{"opts":{"color":"red"},"tags":[{"a":[1,{"b":2}]}],"meta":{"x":{"y":[{"z":null}]}},"choice":{"preset":2}}');
    expect(validateArguments(nested, input)).toEqual({ ok: true, args: input });
  });

  it("refuses __proto__ and prototype members in a closed nested object", () => {
    expect(messages(validateArguments(nested, JSON.parse('{"opts":{"color":"red","__proto__":{"isAdmin":true}}}')))).toEqual(["opts.__proto__ is not an accepted argument (accepted: color)"]);
    expect(messages(validateArguments(nested, JSON.parse('{"opts":{"color":"red","toString":"x"}}')))).toEqual(["opts.toString is not an accepted argument (accepted: color)"]);
  });

  it("refuses __proto__, constructor and prototype inside free-form array items and open objects, at any depth", () => {
    expect(messages(validateArguments(nested, JSON.parse('{"tags":[{"a":1},{"__proto__":{"isAdmin":true}}]}')))).toEqual(["tags[1].__proto__ is not an accepted argument"]);
    expect(messages(validateArguments(nested, JSON.parse('{"meta":{"x":1,"constructor":{"prototype":{"isAdmin":true}}}}')))).toEqual(["meta.constructor is not an accepted argument"]);
    expect(messages(validateArguments(nested, JSON.parse('{"meta":{"x":[[{"y":{"prototype":1}}]]}}')))).toEqual(["meta.x[0][0].y.prototype is not an accepted argument"]);
    // Other keys an open object accepts stay accepted, whatever their name.
    expect(validateArguments(nested, JSON.parse('{"meta":{"toString":"fine","hasOwnProperty":1}}')).ok).toBe(true);
  });

  it("a value equal to an enum option is still refused when it carries __proto__", () => {
    expect(messages(validateArguments(nested, JSON.parse('{"choice":{"preset":1,"__proto__":{"isAdmin":true}}}')))).toEqual(["choice.__proto__ is not an accepted argument"]);
  });

  it("hand-written schemas: arrays without items, additionalProperties schemas and anyOf branches", () => {
    const schema = { type: "object", properties: { list: { type: "array" }, map: { type: "object", additionalProperties: { type: "object" } }, any: { anyOf: [{ type: "object" }] } }, additionalProperties: false };
    expect(checkArgumentValue(schema, JSON.parse('{"list":[1,[{"k":1}]],"map":{"a":{}},"any":{"k":1}}'), "v")).toBeNull();
    expect(checkArgumentValue(schema, JSON.parse('{"list":[1,[{"__proto__":{}}]]}'), "v")).toBe("v.list[1][0].__proto__ is not an accepted argument");
    expect(checkArgumentValue(schema, JSON.parse('{"map":{"a":{"__proto__":{}}}}'), "v")).toBe("v.map.a.__proto__ is not an accepted argument");
    expect(checkArgumentValue(schema, JSON.parse('{"map":{"__proto__":{}}}'), "v")).toBe("v.map.__proto__ is not an accepted argument");
    // Every branch refuses it, so the value matches none.
    expect(checkArgumentValue(schema, JSON.parse('{"any":{"__proto__":{}}}'), "v")).toBe("v.any does not match any allowed form");
  });

  it("a schema that declares __proto__ by hand does not make it accepted", () => {
    const schema = { type: "object", properties: JSON.parse('{"__proto__":{"type":"object"},"ok":{"type":"string"}}'), additionalProperties: false };
    expect(checkArgumentValue(schema, JSON.parse('{"ok":"x"}'), "v")).toBeNull();
    expect(checkArgumentValue(schema, JSON.parse('{"__proto__":{}}'), "v")).toBe("v.__proto__ is not an accepted argument (accepted: ok)");
  });

  it("an object whose prototype a parser replaced with data counts as carrying __proto__; class instances and null-prototype objects do not", () => {
    const injected = (data: object, own: Record<string, unknown>) => Object.assign(Object.create(data) as object, own);
    expect(messages(validateArguments(parameters, injected({ isAdmin: true }, { name: "Ada" })))).toEqual(["__proto__ is not an accepted argument (accepted: name, count)"]);
    expect(messages(validateArguments(nested, { opts: injected({ isAdmin: true }, { color: "red" }) }))).toEqual(["opts.__proto__ is not an accepted argument (accepted: color)"]);
    expect(messages(validateArguments(nested, { tags: [injected({ isAdmin: true }, {})] }))).toEqual(["tags[0].__proto__ is not an accepted argument"]);
    class Options {
      color = "red";
    }
    expect(validateArguments(nested, { opts: new Options(), meta: Object.assign(Object.create(null) as object, { x: 1 }) }).ok).toBe(true);
  });

  it("walks cyclic free-form data once, without hanging", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    expect(checkArgumentValue({ type: "object" }, cyclic, "v")).toBeNull();
  });

  it("property: an open argument is accepted exactly when no key anywhere is __proto__, constructor or prototype", () => {
    const open = buildParameters({ data: arg(["object", "array"], "Anything.") }).parameters;
    const key = fc.constantFrom("a", "b", "toString", "valueOf", "__proto__", "constructor", "prototype");
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: "small", withCrossShrink: true }, fc.integer().map(String), tie("object"), tie("array")),
      object: fc.array(fc.tuple(key, tie("tree")), { maxLength: 4 }).map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`),
      array: fc.array(tie("tree"), { maxLength: 4 }).map((items) => `[${items.join(",")}]`),
    }));
    const hasPrototypeKey = (value: unknown): boolean =>
      Array.isArray(value) ? value.some(hasPrototypeKey) : value !== null && typeof value === "object" ? Object.entries(value).some(([k, v]) => ["__proto__", "constructor", "prototype"].includes(k) || hasPrototypeKey(v)) : false;
    fc.assert(
      fc.property((tree as fc.Arbitrary<string>).filter((json) => json.startsWith("{") || json.startsWith("[")), (json) => {
        const data: unknown = JSON.parse(json);
        const checked = validateArguments(open, { data });
        expect(checked.ok).toBe(!hasPrototypeKey(data));
        if (checked.ok) expect(Object.getPrototypeOf(Object.assign({}, checked.args, checked.args["data"]))).toBe(Object.prototype);
      }),
      { numRuns: 300 },
    );
  });
});

describe("declaring arguments: prototype names are matched as own properties", () => {
  it("a required name must be a declared property, not an Object.prototype member (SCHEMA_REQUIRED_UNKNOWN)", () => {
    expect(validateParameters({ type: "object", properties: { toString: { type: "string" } }, required: ["toString"] }).required).toEqual(["toString"]);
    expect(() => validateParameters({ type: "object", properties: { a: { type: "string" } }, required: ["toString"] })).toThrowWithCode(PluginKitError, "SCHEMA_REQUIRED_UNKNOWN");
  });

  it("an argument named __proto__ is refused when the tool is defined (ARG_INVALID, SCHEMA_INVALID)", () => {
    expect(Object.keys(buildParameters({ proto: strArg("P.") }).parameters.properties)).toEqual(["proto"]);
    expect(() => buildParameters(JSON.parse('{"__proto__":1}') as never)).toThrowWithCode(PluginKitError, "ARG_INVALID");
    expect(() => buildParameters({ ["__proto__"]: strArg("P.") })).toThrowWithCode(PluginKitError, "ARG_INVALID");
    expect(() => objectArg("O.", { properties: JSON.parse('{"__proto__":{"type":"string"}}') })).toThrowWithCode(PluginKitError, "ARG_INVALID");
    expect(() => arg("string", "S.", JSON.parse('{"__proto__":{"minLength":3}}'))).toThrowWithCode(PluginKitError, "ARG_INVALID");
    expect(() => validateParameters({ type: "object", properties: JSON.parse('{"__proto__":{"type":"string"}}') })).toThrowWithCode(PluginKitError, "SCHEMA_INVALID");
  });

  it("an example must name a declared argument, not a prototype member (TOOL_OPTION_INVALID)", () => {
    const base = { name: "ex_tool", description: "E.", params: { toString: strArg("T.", { required: true }) }, handler: () => 1 };
    expect(tool({ ...base, examples: { toString: "t" } }).examples).toEqual({ toString: "t" });
    expect(() => tool({ ...base, params: { a: strArg("A.") }, examples: { constructor: "x" } })).toThrowWithCode(PluginKitError, "TOOL_OPTION_INVALID");
  });
});

describe("other maps keyed by outside names", () => {
  it("a hook result's keys are its own (HOOK_RESULT_INVALID for inherited ones)", () => {
    expect(normalizeHookResult("pre_llm_call", { context: "x" })).toEqual({ context: "x" });
    expect(() => normalizeHookResult("pre_llm_call", Object.create({ context: "x" }))).toThrowWithCode(PluginKitError, "HOOK_RESULT_INVALID");
  });

  it("redacted log arguments keep a __proto__ key as a key, and redact under it", () => {
    expect(safeArguments({ a: { api_key: "S3CRET" } })).toBe('{"a":{"api_key":"***"}}');
    expect(safeArguments(JSON.parse('{"__proto__":{"api_key":"S3CRET","x":1}}'))).toBe('{"__proto__":{"api_key":"***","x":1}}');
  });

  describe("config.json", () => {
    const saved = { root: process.env["PLUGIN_ROOT"], data: process.env["PLUGIN_DATA"] };
    afterEach(() => {
      for (const [key, value] of [["PLUGIN_ROOT", saved.root], ["PLUGIN_DATA", saved.data]] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    });
    function withConfig(text: string): void {
      const root = tempDir("proto-root");
      const data = tempDir("proto-data");
      dirs.push(root, data);
      writeFileSync(path.join(data, "config.json"), text);
      process.env["PLUGIN_ROOT"] = root;
      process.env["PLUGIN_DATA"] = data;
    }

    it("loads settings without a __proto__ key", () => {
      withConfig('{"tools":["a"],"nested":{"constructor":"fine"}}');
      expect(loadPluginConfig().settings).toEqual({ tools: ["a"], nested: { constructor: "fine" } });
    });

    it("refuses a __proto__ key at any depth (CONFIG_INVALID)", () => {
      withConfig('{"__proto__":{"tools":["a"]}}');
      expect(() => loadPluginConfig()).toThrowWithCode(PluginKitError, "CONFIG_INVALID");
      withConfig('{"tools":["a"],"nested":[{"__proto__":{"x":1}}]}');
      const error = (() => {
        try {
          loadPluginConfig();
        } catch (problem) {
          return problem as Error;
        }
        return null;
      })();
      expect(error).toThrowWithCode(PluginKitError, "CONFIG_INVALID");
      expect(error?.message).toContain("found at nested[0].__proto__");
    });
  });

  it("plugin doctor: a listed schema requiring 'toString' requires an unknown property unless it declares it", async () => {
    const listed = (properties: Record<string, unknown>) => ({ name: "probe_tool", inputSchema: { type: "object", properties, required: ["toString"], additionalProperties: false } });
    const rules = async (properties: Record<string, unknown>) => {
      const dir = writePackage({ manifest: manifestFor(), mcp: mcpFor(), serverScript: fixtureServerScript([listed(properties)]) });
      dirs.push(dir);
      return (await doctorPluginPackage(dir)).findings.map((finding) => finding.rule);
    };
    expect(await rules({ toString: { type: "string" } })).not.toContain("SCHEMA_REQUIRED_UNKNOWN");
    expect(await rules({})).toContain("SCHEMA_REQUIRED_UNKNOWN");
  });
});

describe("a built server over stdio refuses prototype keys before the handler", () => {
  let session: RawSession;
  let callId = 0;

  beforeAll(async () => {
    const src = tempDir("proto-src");
    const out = tempDir("proto-out");
    const cwd = tempDir("proto-cwd");
    dirs.push(src, out, cwd);
    mkdirSync(path.join(src, "src"));
    writeFileSync(path.join(src, "package.json"), '{"name":"protokeys","version":"1.0.0","type":"module"}');
    writeFileSync(
      path.join(src, "src", "entry.js"),
      `import { definePlugin, objectArg, strArg, tool } from "hermes-plugin-kit";
const greet = tool({
  name: "greet", description: "Greet someone.",
  params: { name: strArg("Name.", { required: true, example: "Ada" }), opts: objectArg("Options.", { properties: { color: strArg("Color.") } }) },
  handler: (args) => ({ keys: Object.keys(args), isAdmin: Object.assign({}, args, args.opts).isAdmin ?? null }),
});
export default definePlugin({ name: "protokeys", version: "1.0.0", description: "Prototype keys.", server: "protokeys", tools: [greet] });
`,
    );
    await buildPluginPackage({ entry: path.join(src, "src", "entry.js"), outDir: out });
    session = rawSession(path.join(out, "dist", "server.js"), { PATH: process.env["PATH"] ?? "", PLUGIN_ROOT: out, PLUGIN_DATA: cwd }, cwd);
    await session.initialize();
  });
  afterAll(async () => {
    await session?.close();
  });

  /** `tools/call greet` with `argumentsJson` sent as written (JSON.parse keeps __proto__ an own key, JSON.stringify writes it back). */
  async function call(argumentsJson: string): Promise<{ isError: boolean; text: string }> {
    callId += 1;
    const answer = await session.request("tools/call", { name: "greet", arguments: JSON.parse(argumentsJson) });
    const result = answer["result"] as { isError?: boolean } | undefined;
    expect(answer["error"], `call ${callId} must answer a result, not a JSON-RPC error`).toBeUndefined();
    return { isError: result?.isError === true, text: resultText(answer) };
  }

  it("answers a valid call through the handler", async () => {
    expect(await call('{"name":"Ada","opts":{"color":"red"}}')).toEqual({ isError: false, text: '{"success":true,"data":{"keys":["name","opts"],"isAdmin":null}}' });
  });

  it("refuses constructor, toString and hasOwnProperty as it refuses bogus", async () => {
    expect(await call('{"name":"Ada","bogus":1}')).toEqual({ isError: true, text: "bogus is not an accepted argument (accepted: name, opts)" });
    expect(await call('{"name":"Ada","constructor":"x","toString":1,"hasOwnProperty":[]}')).toEqual({
      isError: true,
      text: ["constructor", "toString", "hasOwnProperty"].map((key) => `${key} is not an accepted argument (accepted: name, opts)`).join("\n"),
    });
  });

  it("refuses a nested __proto__ (the handler would have seen isAdmin === true)", async () => {
    expect(await call('{"name":"Ada","opts":{"color":"red","__proto__":{"isAdmin":true}}}')).toEqual({ isError: true, text: "opts.__proto__ is not an accepted argument (accepted: color)" });
  });

  it("a top-level __proto__ never reaches the handler: the SDK's request parsing drops it, and the required name is not read from it", async () => {
    expect(await call('{"name":"Ada","__proto__":{"isAdmin":true}}')).toEqual({ isError: false, text: '{"success":true,"data":{"keys":["name"],"isAdmin":null}}' });
    expect(await call('{"__proto__":{"name":"Ada","isAdmin":true}}')).toEqual({ isError: true, text: "name is required (e.g. 'Ada')" });
  });
});
