/**
 * An option a kit function does not read is refused, never ignored (docs/kit.md, "Writing a plugin"):
 * a misspelt `requird`, `minLenght`, `maximun`, `validateRequred`, `forse` or `noCal` used to turn a
 * check off silently. Each row: the right spelling passes, the wrong one is refused with its code and
 * the nearest known name; a real JSON Schema keyword the kit would not check is refused with why; an
 * option of the wrong type is refused with a code, never a TypeError.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  arg,
  arrayArg,
  boolArg,
  buildPluginPackage,
  callPluginTool,
  checkHostSurface,
  configureStderrLogging,
  definePlugin,
  doctorPluginPackage,
  intArg,
  KitLogger,
  logObservabilityEvent,
  numberArg,
  objectArg,
  ObservabilityEvent,
  parseCallArguments,
  pluginSkill,
  PluginKitError,
  referenceTool,
  resolveCapabilitySelection,
  setStderrLogLevel,
  strArg,
  tool,
  validateArguments,
  validateToolName,
  type PluginKitErrorCode,
} from "../../src/kit/index.js";
import { tempDir } from "./fixtures.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Call `fn` as plain JavaScript would, with any values. */
const loose = <F extends (...args: never[]) => unknown>(fn: F) => fn as unknown as (...args: unknown[]) => ReturnType<F>;

async function thrown(fn: () => unknown): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

/** `fn` fails with `code` and a message matching every pattern. */
async function expectRefused(fn: () => unknown, code: PluginKitErrorCode, ...patterns: Array<string | RegExp>): Promise<void> {
  const error = await thrown(fn);
  expect(error).toThrowWithCode(PluginKitError, code);
  for (const pattern of patterns) {
    if (typeof pattern === "string") expect(error.message).toContain(pattern);
    else expect(error.message).toMatch(pattern);
  }
}

const handler = (args: Record<string, unknown>) => args;

describe("argument helpers take only the options they know (ARG_INVALID)", () => {
  it("strArg: the trial's misspellings are refused with the nearest names, in full", async () => {
    await expectRefused(
      () => strArg("n", { requird: true, minLenght: 3 } as never),
      "ARG_INVALID",
      "strArg: unknown options 'requird', 'minLenght' (expected only 'required', 'example', 'enum', 'const', 'title', 'minLength', 'maxLength', 'pattern'); did you mean 'required'?; fix: rename or remove it (an option the kit does not read would be ignored, silently doing less than asked)",
    );
    const error = await thrown(() => strArg("n", { required: true, minLenght: 3 } as never));
    expect(error.message).toMatch(/^strArg: unknown option 'minLenght' .*; did you mean 'minLength'\?/);
  });

  it("the right spelling emits the schema and the kit enforces it", async () => {
    const spec = strArg("n", { required: true, minLength: 3, maxLength: 5, pattern: "^[a-z]+$", title: "Name", example: "abc" });
    expect(spec.schema).toEqual({ type: "string", description: "n", minLength: 3, maxLength: 5, pattern: "^[a-z]+$", title: "Name" });
    const greet = tool({ name: "greet", description: "Greet.", params: { n: spec }, handler });
    expect(await greet.call({})).toEqual({ content: [{ type: "text", text: "n is required (e.g. 'abc')" }], isError: true });
    expect((await greet.call({ n: "ab" })).isError).toBe(true);
    expect((await greet.call({ n: "abc" })).isError).toBeUndefined();
  });

  it.each([
    ["intArg maximun", () => intArg("n", { maximun: 3 } as never), "intArg: unknown option 'maximun'", "did you mean 'maximum'?"],
    ["numberArg minimun", () => numberArg("n", { minimun: 0 } as never), "numberArg: unknown option 'minimun'", "did you mean 'minimum'?"],
    ["numberArg exclusiveMaximun", () => numberArg("n", { exclusiveMaximun: 1 } as never), "did you mean 'exclusiveMaximum'?"],
    ["boolArg requried", () => boolArg("b", { requried: true } as never), "boolArg: unknown option 'requried'", "did you mean 'required'?"],
    ["arrayArg minItem", () => arrayArg("a", { minItem: 1 } as never), "arrayArg: unknown option 'minItem'", "did you mean 'minItems'?"],
    ["objectArg additionalProperites", () => objectArg("o", { additionalProperites: true } as never), "objectArg: unknown option 'additionalProperites'", "did you mean 'additionalProperties'?"],
    ["arg patern", () => arg("string", "s", { patern: "x" } as never), "arg: unknown option 'patern'", "did you mean 'pattern'?"],
    ["strArg examples (the kit's option is example)", () => strArg("s", { examples: ["x"] } as never), "did you mean 'example'?", "'examples' is refused"],
  ] as Array<[string, () => unknown, ...string[]]>)("%s", async (_label, fail, ...patterns) => {
    await expectRefused(fail, "ARG_INVALID", ...patterns);
  });

  it.each([
    ["format (not checked)", () => strArg("s", { format: "email" } as never), "'format' is refused: the kit does not check format: use pattern"],
    ["default (not applied)", () => intArg("n", { default: 3 } as never), "'default' is refused: the kit does not apply defaults"],
    ["multipleOf (not checked)", () => intArg("n", { multipleOf: 2 } as never), "'multipleOf' is refused: the kit does not check it"],
    ["type (set by the helper)", () => strArg("s", { type: "integer" } as never), "'type' is refused: the helper sets the type"],
    ["a number bound on a string", () => strArg("s", { minimum: 1 } as never), "'minimum' applies to integer and number arguments (intArg, numberArg)"],
    ["a string bound on an integer", () => intArg("n", { maxLength: 3 } as never), "'maxLength' applies to string arguments (strArg)"],
    ["anyOf outside arg()", () => strArg("s", { anyOf: [{ type: "string" }] } as never), "'anyOf' is taken by arg(type, description, options) only"],
  ])("a real JSON Schema keyword the kit would not check or apply is refused with why: %s", async (_label, fail, pattern) => {
    await expectRefused(fail, "ARG_INVALID", pattern);
  });

  it("arg() takes the keywords of every type it is given, and anyOf/oneOf", () => {
    expect(arg(["string", "integer"], "x", { minLength: 1, minimum: 0 }).schema).toEqual({ type: ["string", "integer"], description: "x", minLength: 1, minimum: 0 });
    expect(arg("string", "x", { anyOf: [{ pattern: "^a" }, { pattern: "^b" }] }).schema["anyOf"]).toHaveLength(2);
    expect(arrayArg("a", { items: intArg("i"), minItems: 1, maxItems: 3 }).schema).toEqual({ type: "array", description: "a", items: { type: "integer", description: "i" }, minItems: 1, maxItems: 3 });
    expect(objectArg("o", { properties: { k: strArg("k", { required: true }) }, additionalProperties: false }).schema["required"]).toEqual(["k"]);
  });

  it.each([
    ["minLength a string", () => strArg("s", { minLength: "3" } as never), "strArg: option 'minLength' must be an integer >= 0, found a string"],
    ["minLength negative", () => strArg("s", { minLength: -1 }), "strArg: option 'minLength' must be an integer >= 0, found -1"],
    ["maximum not finite", () => intArg("n", { maximum: Number.POSITIVE_INFINITY }), "intArg: option 'maximum' must be a finite number, found Infinity"],
    ["pattern not a regular expression (it matched everything before)", () => strArg("s", { pattern: "(" }), `strArg: option 'pattern' must be a valid regular expression string (JavaScript, u flag), found "("`],
    ["required not a boolean", () => boolArg("b", { required: "yes" } as never), "boolArg: option 'required' must be true or false, found a string"],
    ["enum not a list", () => strArg("s", { enum: "a" } as never), "strArg: option 'enum' must be a list of allowed values, found a string"],
    ["additionalProperties a string", () => objectArg("o", { additionalProperties: "no" } as never), "objectArg: option 'additionalProperties' must be true, false or a schema object, found a string"],
    ["items not a schema", () => arrayArg("a", { items: "string" } as never), "arrayArg: option 'items' must be a schema object (one schema for every item), found a string"],
  ])("an option of the wrong type is refused: %s", async (_label, fail, message) => {
    const error = await thrown(fail);
    expect(error).toThrowWithCode(PluginKitError, "ARG_INVALID");
    expect(error.message).toBe(message);
  });

  it("plugin build refuses an entry with a misspelt helper option (the trial built it, exit 0)", async () => {
    const dir = tempDir("unknown-options-build");
    dirs.push(dir);
    writeFileSync(path.join(dir, "package.json"), '{"name":"typo","version":"1.0.0","type":"module"}');
    mkdirSync(path.join(dir, "src"));
    writeFileSync(
      path.join(dir, "src/index.ts"),
      `import { definePlugin, strArg, tool } from "hermes-plugin-kit";
const greet = tool({ name: "greet", description: "Greet.", params: { name: strArg("Who.", { requird: true, minLenght: 3 }) }, handler: ({ name }) => name });
export default definePlugin({ name: "typo", description: "d", tools: [greet] });
`,
    );
    const out = path.join(dir, "out");
    await expectRefused(() => buildPluginPackage({ entry: path.join(dir, "src/index.ts"), outDir: out }), "ARG_INVALID", "strArg: unknown options 'requird', 'minLenght'", "did you mean 'required'?");
    expect(existsSync(path.join(out, "plugin.json"))).toBe(false);
  }, 120_000);
});

describe("author-facing factories refuse unknown options as definePlugin does", () => {
  const params = { n: strArg("n", { required: true }) };

  it("tool(): readonly and validateRequred are named with the right spelling (TOOL_OPTION_INVALID)", async () => {
    expect(tool({ name: "greet", description: "G.", params, readOnly: true, validateRequired: false, handler }).readOnly).toBe(true);
    await expectRefused(() => tool({ name: "greet", description: "G.", params, readonly: true, handler } as never), "TOOL_OPTION_INVALID", "tool 'greet': unknown option 'readonly'", "did you mean 'readOnly'?");
    await expectRefused(() => tool({ name: "greet", description: "G.", params, validateRequred: false, handler } as never), "TOOL_OPTION_INVALID", "did you mean 'validateRequired'?");
    await expectRefused(() => tool({ name: "greet", description: "G.", params, handler, title: 5 } as never), "TOOL_OPTION_INVALID", "tool 'greet': title must be a string, found a number");
    await expectRefused(() => loose(tool)(null), "TOOL_OPTION_INVALID", "tool() needs an options object");
  });

  it("a tool's call context takes signal, requestId, logger, meta (INPUT_TYPE_INVALID)", async () => {
    const echo = tool({ name: "echo_tool", description: "E.", params: {}, handler: () => "ok" });
    expect(await echo.call({}, { requestId: 1 })).toEqual({ content: [{ type: "text", text: "ok" }] });
    await expectRefused(() => echo.call({}, { signl: AbortSignal.abort() } as never), "INPUT_TYPE_INVALID", "tool 'echo_tool' call context: unknown option 'signl'", "did you mean 'signal'?");
  });

  it("a tool's call context values are checked before the handler runs: signal by the project's one signal rule (INPUT_TYPE_INVALID)", async () => {
    let seen: unknown;
    const probe = tool({ name: "probe", description: "P.", params: {}, handler: (_args, context) => { seen = context.signal; return "ok"; } });
    const signal = new AbortController().signal;
    expect(await probe.call({}, { signal })).toEqual({ content: [{ type: "text", text: "ok" }] });
    expect(seen).toBe(signal);
    // A signal of another realm or library (the isAbortSignal shape) is accepted too.
    const foreign = { aborted: false, addEventListener: () => undefined, removeEventListener: () => undefined };
    expect((await probe.call({}, { signal: foreign as never })).isError).toBeUndefined();
    seen = undefined;
    await expectRefused(() => probe.call({}, { signal: { aborted: "no" } as never }), "INPUT_TYPE_INVALID", "tool 'probe' call: context.signal must be an AbortSignal (e.g. new AbortController().signal), found an object");
    await expectRefused(() => probe.call({}, { signal: true as never }), "INPUT_TYPE_INVALID", "context.signal must be an AbortSignal", "found a boolean");
    expect(seen).toBeUndefined();
    await expectRefused(() => probe.call({}, { requestId: {} as never }), "INPUT_TYPE_INVALID", "tool 'probe' call: context.requestId must be a string or a finite number, found an object");
    await expectRefused(() => probe.call({}, { logger: { info: () => undefined } as never }), "INPUT_TYPE_INVALID", "tool 'probe' call: context.logger must be a KitLogger, found an object");
    await expectRefused(() => probe.call({}, { meta: "m" as never }), "INPUT_TYPE_INVALID", "tool 'probe' call: context.meta must be an object, found a string");
  });

  it("definePlugin: a misspelt section key is named (hoks, capabilities.enabeld)", async () => {
    const ping = tool({ name: "ping", description: "P.", params: {}, handler: () => "pong" });
    expect(definePlugin({ name: "p", version: "1.0.0", description: "d", tools: [ping], capabilities: { groups: { all: ["ping"] }, enabled: ["all"] } }).name).toBe("p");
    await expectRefused(() => definePlugin({ name: "p", version: "1.0.0", description: "d", tools: [ping], hoks: {} } as never), "PLUGIN_DEFINITION_INVALID", "unknown option 'hoks'; did you mean 'hooks'?");
  });

  it("a plugin's serve() takes only transport (INPUT_TYPE_INVALID)", async () => {
    const ping = tool({ name: "ping", description: "P.", params: {}, handler: () => "pong" });
    const plugin = definePlugin({ name: "p", version: "1.0.0", description: "d", tools: [ping] });
    await expectRefused(() => plugin.serve({ transprt: {} } as never), "INPUT_TYPE_INVALID", "plugin 'p' serve: unknown option 'transprt'", "did you mean 'transport'?");
    await expectRefused(() => loose(plugin.serve)(null), "INPUT_TYPE_INVALID", "plugin 'p' serve: options must be an object, found null");
  });

  it("hooks and middleware kinds are named with the nearest (HOOK_NAME_UNKNOWN, MIDDLEWARE_KIND_UNKNOWN), checkHostSurface takes its four keys", async () => {
    expect(checkHostSurface({ hooks: { pre_tool_call: () => undefined } }).hooks.size).toBe(1);
    await expectRefused(() => checkHostSurface({ hooks: { pre_tool_cal: () => undefined } }), "HOOK_NAME_UNKNOWN", "did you mean 'pre_tool_call'?");
    await expectRefused(() => checkHostSurface({ middleware: { tool_requst: () => undefined } }), "MIDDLEWARE_KIND_UNKNOWN", "did you mean 'tool_request'?");
    await expectRefused(() => checkHostSurface({ hoks: {} } as never), "INPUT_TYPE_INVALID", "checkHostSurface: unknown option 'hoks'", "did you mean 'hooks'?");
  });

  it("pluginSkill, referenceTool, validateToolName (INPUT_TYPE_INVALID)", async () => {
    await expectRefused(() => pluginSkill("none", { root: "/nonexistent" }), "SKILL_NOT_FOUND");
    await expectRefused(() => pluginSkill("none", { rot: "/nonexistent" } as never), "INPUT_TYPE_INVALID", "pluginSkill: unknown option 'rot'", "did you mean 'root'?");
    const skill = { name: "notes", relativeDir: "skills/notes", referencesDir: "/nonexistent" } as never;
    expect(referenceTool(skill, { name: "notes_read" }).name).toBe("notes_read");
    await expectRefused(() => referenceTool(skill, { nmae: "x" } as never), "INPUT_TYPE_INVALID", "referenceTool: unknown option 'nmae'", "did you mean 'name'?");
    await expectRefused(() => referenceTool(skill, { description: 5 } as never), "INPUT_TYPE_INVALID", "referenceTool: options.description must be a string, found a number");
    expect(validateToolName("calc_add", { namespace: "calc" })).toBe("calc_add");
    await expectRefused(() => validateToolName("calc_add", { namspace: "calc" } as never), "INPUT_TYPE_INVALID", "validateToolName: unknown option 'namspace'", "did you mean 'namespace'?");
  });

  it("resolveCapabilitySelection (CAPABILITY_INVALID), configureStderrLogging (LOGGING_INVALID)", async () => {
    expect(resolveCapabilitySelection(["a", "b"], { capabilityGroups: {}, enabledNames: ["a"] }).names).toEqual(["a"]);
    await expectRefused(() => resolveCapabilitySelection(["a", "b"], { capabilityGroups: {}, enabledNmaes: ["a"] } as never), "CAPABILITY_INVALID", "resolveCapabilitySelection: unknown option 'enabledNmaes'", "did you mean 'enabledNames'?");
    try {
      expect(configureStderrLogging({ envVar: "HPK_TEST_UNSET_LEVEL", default: "error" })).toBe("ERROR");
      await expectRefused(() => configureStderrLogging({ envVar: "HPK_TEST_UNSET_LEVEL", defualt: "debug" } as never), "LOGGING_INVALID", "configureStderrLogging: unknown option 'defualt'", "did you mean 'default'?");
      await expectRefused(() => loose(configureStderrLogging)(null), "LOGGING_INVALID", "configureStderrLogging: options must be an object, found null");
      await expectRefused(() => configureStderrLogging({ envVar: "X", default: 1 } as never), "LOGGING_INVALID", "default log level must be debug, info, warning or error, found a number");
    } finally {
      setStderrLogLevel("WARNING");
    }
  });

  it("observability events and their logging (OBSERVABILITY_INVALID)", async () => {
    const lines: string[] = [];
    const logger = { log: (_level: string, line: string) => lines.push(line) } as unknown as KitLogger;
    const event = new ObservabilityEvent({ plugin: "p", event: "e", status: "ok" });
    expect(logObservabilityEvent(logger, event, { level: "INFO" })["status"]).toBe("ok");
    await expectRefused(() => new ObservabilityEvent({ plugin: "p", event: "e", stauts: "ok" } as never), "OBSERVABILITY_INVALID", "new ObservabilityEvent: unknown option 'stauts'", "did you mean 'status'?");
    await expectRefused(() => logObservabilityEvent(logger, event, { levl: "INFO" } as never), "OBSERVABILITY_INVALID", "logObservabilityEvent: unknown option 'levl'", "did you mean 'level'?");
    await expectRefused(() => logObservabilityEvent(logger, event, { level: "info" } as never), "OBSERVABILITY_INVALID", 'logObservabilityEvent: options.level must be one of DEBUG, INFO, WARNING, ERROR, found "info"');
  });

  it("validateArguments answers an unknown option as a refusal result naming the nearest", () => {
    const parameters = { type: "object" as const, properties: { n: { type: "string" } }, additionalProperties: false as const, required: ["n"] };
    expect(validateArguments(parameters, {}, { validateRequired: false })).toEqual({ ok: true, args: {} });
    const refused = validateArguments(parameters, {}, { validateRequred: false } as never);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.message).toMatch(/^validateArguments: unknown option 'validateRequred' .*; did you mean 'validateRequired'\?/);
  });
});

describe("the library's build, doctor and call check their options before any work (INPUT_TYPE_INVALID)", () => {
  it("buildPluginPackage: forse, and wrongly typed flags, before anything is created", async () => {
    const dir = tempDir("unknown-options-lib");
    dirs.push(dir);
    const outDir = path.join(dir, "out");
    await expectRefused(() => buildPluginPackage({ entry: path.join(dir, "none.ts"), outDir }), "BUILD_ENTRY_INVALID");
    await expectRefused(() => buildPluginPackage({ entry: path.join(dir, "none.ts"), outDir, forse: true } as never), "INPUT_TYPE_INVALID", "buildPluginPackage: unknown option 'forse'", "did you mean 'force'?");
    await expectRefused(() => buildPluginPackage({ entry: path.join(dir, "none.ts"), outDir, minify: "no" } as never), "INPUT_TYPE_INVALID", "buildPluginPackage: options.minify must be true or false, found a string");
    await expectRefused(() => buildPluginPackage({ entry: path.join(dir, "none.ts"), outDir, entryTimeoutMs: 0 }), "INPUT_TYPE_INVALID", "buildPluginPackage: options.entryTimeoutMs must be an integer 1..3600000, found 0");
    await expectRefused(() => buildPluginPackage({ entry: path.join(dir, "none.ts"), outDir, alias: { x: 1 } } as never), "INPUT_TYPE_INVALID", "buildPluginPackage: options.alias must be an object of strings, found an object");
    expect(existsSync(outDir)).toBe(false);
  });

  it("doctorPluginPackage: null options, noCal, a wrong type and a non-string dir are coded, never a TypeError", async () => {
    await expectRefused(() => doctorPluginPackage("/nonexistent/pkg", { callTools: false, timeoutMs: 1000 }), "DOCTOR_PACKAGE_MISSING");
    await expectRefused(() => loose(doctorPluginPackage)("/nonexistent/pkg", null), "INPUT_TYPE_INVALID", "doctorPluginPackage: options must be an object, found null");
    await expectRefused(
      () => doctorPluginPackage("/nonexistent/pkg", { noCal: true } as never),
      "INPUT_TYPE_INVALID",
      "doctorPluginPackage: unknown option 'noCal' (expected only 'timeoutMs', 'callTools', 'dataDir', 'environment', 'python', 'skipCompanion'); the CLI's --no-call is callTools: false",
    );
    await expectRefused(() => doctorPluginPackage("/nonexistent/pkg", { timeoutMs: "5000" } as never), "INPUT_TYPE_INVALID", "doctorPluginPackage: options.timeoutMs must be an integer 100..600000, found a string");
    await expectRefused(() => loose(doctorPluginPackage)(undefined), "INPUT_TYPE_INVALID", "doctorPluginPackage: dir must be a string (the package directory), found undefined");
  });

  it("callPluginTool and parseCallArguments", async () => {
    await expectRefused(() => callPluginTool("/nonexistent/pkg", "t", {}, { server: "s", timeoutMs: 1000 }), "CALL_PACKAGE_MISSING");
    await expectRefused(() => callPluginTool("/nonexistent/pkg", "t", {}, { servr: "s" } as never), "INPUT_TYPE_INVALID", "callPluginTool: unknown option 'servr'", "did you mean 'server'?");
    await expectRefused(() => callPluginTool("/nonexistent/pkg", "t", {}, { timeoutMs: 50 }), "INPUT_TYPE_INVALID", "callPluginTool: options.timeoutMs must be an integer 100..600000, found 50");
    await expectRefused(() => loose(callPluginTool)("/nonexistent/pkg", "t", null), "CALL_ARGUMENTS_INVALID", "callPluginTool: args must be an object of the tool's arguments by name");
    await expectRefused(() => loose(callPluginTool)("/nonexistent/pkg", 5, {}), "INPUT_TYPE_INVALID", "callPluginTool: tool must be a string, found a number");
    expect(parseCallArguments('{"n": "x"}')).toEqual({ n: "x" });
    await expectRefused(() => loose(parseCallArguments)(5), "CALL_ARGUMENTS_INVALID", "parseCallArguments: text must be a string of JSON (or undefined for no arguments), found a number");
  });
});
