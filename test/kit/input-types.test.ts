/**
 * Exported helpers called from plain JavaScript with a value of the wrong
 * type answer with the kit's coded error, never a bare `TypeError`
 * (docs/kit.md, "Writing a plugin": `INPUT_TYPE_INVALID` with `<function>:
 * <what> must be <expected>, found <kind>`), or, where the contract is a
 * result, with that result. Each rule: the right type passes, the wrong one
 * is refused with its code and message.
 */
import { describe, expect, it } from "vitest";
import {
  arg,
  argumentValueProblems,
  arrayArg,
  augmentDescription,
  buildParameters,
  buildPluginPackage,
  checkArgumentValue,
  checkHermesToolNames,
  checkHostSurface,
  checkMcpConfig,
  checkSkillFrontmatter,
  clampedHermesToolName,
  expandPlaceholders,
  formatArgumentProblems,
  hermesToolName,
  KitLogger,
  logObservabilityEvent,
  MCP_SCHEMA_URL,
  ObservabilityEvent,
  objectArg,
  parseSkillDocument,
  pluginSkill,
  PluginKitError,
  portableServerName,
  qualifiedSkillName,
  redactText,
  referenceTool,
  referenceToolName,
  renderForModel,
  resolveCapabilitySelection,
  resolveReferenceFile,
  safeContext,
  sanitizeNameComponent,
  scanTextForInstallRisks,
  serverNameShadowProblem,
  skillNamespace,
  strArg,
  tool,
  toolName,
  validateArguments,
  validateToolName,
  type PluginKitErrorCode,
} from "../../src/kit/index.js";

/** Call `fn` as plain JavaScript would, with any values. */
const loose = <F extends (...args: never[]) => unknown>(fn: F) => fn as unknown as (...args: unknown[]) => ReturnType<F>;

/** The error `fn` throws (or its promise rejects with). */
async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

async function expectRefused(fn: () => unknown, code: PluginKitErrorCode, message: string): Promise<void> {
  const error = await thrown(fn);
  expect(error).toThrowWithCode(PluginKitError, code);
  expect((error as Error).message).toBe(message);
}

const MCP = { $schema: MCP_SCHEMA_URL, mcpServers: { calc: { type: "stdio", command: "node", args: ["x.js"] } } };
const SKILL = "---\nname: notes\ndescription: Notes.\n---\nbody\n";

describe("INPUT_TYPE_INVALID: the right type passes, a wrong one names what was expected and found", () => {
  const rows: Array<[label: string, pass: () => unknown, fail: () => unknown, message: string]> = [
    ["parseSkillDocument text", () => parseSkillDocument(SKILL).frontmatter["name"], () => loose(parseSkillDocument)(undefined), "parseSkillDocument: text must be a string, found undefined"],
    ["parseSkillDocument label", () => parseSkillDocument(SKILL, "x/SKILL.md").body, () => loose(parseSkillDocument)(SKILL, 5), "parseSkillDocument: label must be a string, found a number"],
    ["checkSkillFrontmatter dirName", () => checkSkillFrontmatter({ name: "notes", description: "N." }, "notes"), () => loose(checkSkillFrontmatter)({ name: "notes" }, null), "checkSkillFrontmatter: dirName must be a string, found null"],
    ["pluginSkill options", () => pluginSkill("none", { root: "/nonexistent" }), () => loose(pluginSkill)("notes", null), "pluginSkill: options must be an object, found null"],
    ["pluginSkill options.root", () => pluginSkill("none", { root: "/nonexistent" }), () => loose(pluginSkill)("notes", { root: 5 }), "pluginSkill: options.root must be a string, found a number"],
    ["qualifiedSkillName", () => qualifiedSkillName("example-rules", "notes"), () => loose(qualifiedSkillName)(undefined, "notes"), "qualifiedSkillName: pluginKey must be a string, found undefined"],
    ["qualifiedSkillName skill", () => qualifiedSkillName("example-rules", "notes"), () => loose(qualifiedSkillName)("example-rules", ["notes"]), "qualifiedSkillName: skill must be a string, found an array"],
    ["skillNamespace", () => skillNamespace("example-rules"), () => loose(skillNamespace)({}), "skillNamespace: pluginKey must be a string, found an object"],
    ["referenceToolName", () => referenceToolName("notes"), () => loose(referenceToolName)(5), "referenceToolName: skill must be a string, found a number"],
    ["referenceTool", () => referenceTool({ name: "notes", relativeDir: "skills/notes" } as never), () => loose(referenceTool)(undefined), "referenceTool: skill must be a skill from pluginSkill(), found undefined"],
    ["resolveReferenceFile", () => resolveReferenceFile("/nonexistent", "../x"), () => loose(resolveReferenceFile)(undefined, "a.md"), "resolveReferenceFile: referencesDir must be a string, found undefined"],
    ["redactText", () => redactText("token=abc"), () => loose(redactText)(null), "redactText: text must be a string, found null"],
    ["safeContext", () => safeContext({ session_id: "s", payload: "p" }), () => loose(safeContext)(undefined), "safeContext: kwargs must be an object of keyword arguments, found undefined"],
    ["scanTextForInstallRisks file", () => scanTextForInstallRisks("a.js", "process.env[name]"), () => loose(scanTextForInstallRisks)(5), "scanTextForInstallRisks: file must be a string, found a number"],
    ["scanTextForInstallRisks text", () => scanTextForInstallRisks("a.js", ""), () => loose(scanTextForInstallRisks)("a.js", Buffer.from("x")), "scanTextForInstallRisks: text must be a string, found an object"],
    ["expandPlaceholders", () => expandPlaceholders("${PLUGIN_ROOT}/x", "/r", "/d"), () => loose(expandPlaceholders)(undefined, "/r", "/d"), "expandPlaceholders: value must be a string, found undefined"],
    ["checkMcpConfig root", () => checkMcpConfig(MCP, "/r").servers.length, () => loose(checkMcpConfig)(MCP, undefined), "checkMcpConfig: root must be a string, found undefined"],
    ["toolName", () => toolName("calc", "add", "numbers"), () => loose(toolName)(undefined, "read", "x"), "toolName: namespace must be a string, found undefined"],
    ["validateToolName options", () => validateToolName("calc_add", { namespace: "calc" }), () => loose(validateToolName)("calc_add", null), "validateToolName: options must be an object, found null"],
    ["sanitizeNameComponent", () => sanitizeNameComponent("a-b"), () => loose(sanitizeNameComponent)(null), "sanitizeNameComponent: value must be a string, found null"],
    ["portableServerName", () => portableServerName("Calc"), () => loose(portableServerName)(5), "portableServerName: server must be a string, found a number"],
    ["hermesToolName", () => hermesToolName("calc", "add"), () => loose(hermesToolName)("calc", undefined), "hermesToolName: tool must be a string, found undefined"],
    ["clampedHermesToolName", () => clampedHermesToolName("calc", "add"), () => loose(clampedHermesToolName)(undefined, "add"), "clampedHermesToolName: server must be a string, found undefined"],
    ["serverNameShadowProblem", () => serverNameShadowProblem("calc"), () => loose(serverNameShadowProblem)([]), "serverNameShadowProblem: server must be a string, found an array"],
    ["checkHermesToolNames", () => checkHermesToolNames("calc", ["add"]), () => loose(checkHermesToolNames)("calc", "add"), "checkHermesToolNames: names must be a list of strings, found a string"],
    ["augmentDescription description", () => augmentDescription("D.", ["a"], { a: 1 }), () => loose(augmentDescription)(undefined, [], {}), "augmentDescription: description must be a string, found undefined"],
    ["augmentDescription required", () => augmentDescription("D.", [], {}), () => loose(augmentDescription)("D.", "a", {}), "augmentDescription: required must be a list of strings, found a string"],
    ["augmentDescription examples", () => augmentDescription("D.", ["a"], {}), () => loose(augmentDescription)("D.", ["a"], null), "augmentDescription: examples must be an object, found null"],
    ["formatArgumentProblems", () => formatArgumentProblems([{ key: "a", path: "a", kind: "missing", message: "a is required" }]), () => loose(formatArgumentProblems)(undefined), "formatArgumentProblems: problems must be a list of argument problems, found undefined"],
    ["formatArgumentProblems items", () => formatArgumentProblems([]), () => loose(formatArgumentProblems)([{ key: "a" }]), "formatArgumentProblems: each problem must be an object with a string message, found an object"],
    ["renderForModel", () => renderForModel({ content: [{ type: "text", text: "hi" }] }), () => loose(renderForModel)(undefined), "renderForModel: result must be a tools/call result object, found undefined"],
    ["renderForModel content", () => renderForModel({}), () => loose(renderForModel)({ content: "hi" }), "renderForModel: result.content must be a list of content blocks, found a string"],
    ["renderForModel blocks", () => renderForModel({ content: [] }), () => loose(renderForModel)({ content: [null] }), "renderForModel: each content block must be an object, found null"],
    ["checkHostSurface", () => checkHostSurface({}).empty, () => loose(checkHostSurface)(undefined), "checkHostSurface: options must be an object, found undefined"],
  ];

  it.each(rows)("%s", async (_label, pass, fail, message) => {
    // The right type never throws INPUT_TYPE_INVALID (it may fail another rule).
    const passed = await thrown(pass).catch(() => null);
    if (passed !== null) expect((passed as { code?: unknown }).code).not.toBe("INPUT_TYPE_INVALID");
    await expectRefused(fail, "INPUT_TYPE_INVALID", message);
  });

  it("the passing cases answer as before", () => {
    expect(redactText("token=abc")).toBe("token=***");
    expect(safeContext({ session_id: "s", payload: "p" })).toBe('{"session_id":"s"}');
    expect(scanTextForInstallRisks("a.js", "process.env[name]").map((finding) => finding.rule)).toEqual(["SCAN_PROCESS_ENV_BRACKET"]);
    expect(toolName("calc", "add", "numbers")).toBe("calc_add_numbers");
    expect(hermesToolName("calc", "add")).toBe("mcp__calc__add");
    expect(augmentDescription("D.", ["a"], { a: 1 })).toBe("D. Required: `a` (e.g. 1).");
    expect(renderForModel({ content: [{ type: "text", text: "hi" }] })).toBe('{"result":"hi"}');
  });

  it.each([undefined, null, 5, true, 10n, Symbol("s"), [], {}, () => "x"])("a string helper refuses %s by its kind, never a TypeError", async (value) => {
    for (const fn of [redactText, sanitizeNameComponent, portableServerName, skillNamespace, referenceToolName, serverNameShadowProblem]) {
      const error = await thrown(() => loose(fn)(value));
      expect(error).toThrowWithCode(PluginKitError, "INPUT_TYPE_INVALID");
      expect((error as Error).message).toMatch(/must be a string, found (undefined|null|a number|a boolean|a bigint|a symbol|an array|an object|a function)$/);
    }
  });

  it("buildPluginPackage refuses options of the wrong type before touching the disk", async () => {
    await expectRefused(() => loose(buildPluginPackage)(undefined), "INPUT_TYPE_INVALID", "buildPluginPackage: options must be an object {entry, outDir}, found undefined");
    await expectRefused(() => loose(buildPluginPackage)({ entry: 5, outDir: "/tmp/x" }), "INPUT_TYPE_INVALID", "buildPluginPackage: options.entry must be a string, found a number");
    await expectRefused(() => loose(buildPluginPackage)({ entry: "/nonexistent/entry.ts", outDir: "/tmp/x" }), "BUILD_ENTRY_INVALID", "entry /nonexistent/entry.ts does not exist (resolved to /nonexistent/entry.ts); fix: pass the plugin's entry module, e.g. src/index.ts");
  });

  it("a tool's call refuses a context that is not an object (the promise rejects)", async () => {
    const echo = tool({ name: "echo_tool", description: "E.", params: {}, handler: () => "ok" });
    expect(await echo.call({}, {})).toEqual({ content: [{ type: "text", text: "ok" }] });
    await expectRefused(() => loose(echo.call)({}, null), "INPUT_TYPE_INVALID", "tool 'echo_tool' call: context must be an object, found null");
  });
});

describe("family codes where one already covers the input", () => {
  it("argument helpers: options must be an object (ARG_INVALID)", async () => {
    expect(arg("string", "S.", {}).schema).toEqual({ type: "string", description: "S." });
    await expectRefused(() => loose(arg)("string", "S.", null), "ARG_INVALID", "arg: argument options must be an object, found null");
    await expectRefused(() => loose(arrayArg)("A.", null), "ARG_INVALID", "arrayArg: argument options must be an object, found null");
    await expectRefused(() => loose(objectArg)("O.", 5), "ARG_INVALID", "objectArg: argument options must be an object, found a number");
    await expectRefused(() => loose(objectArg)("O.", { properties: [strArg("x")] }), "ARG_INVALID", "objectArg: option 'properties' must be an object of argument specs or schema objects, found an array");
  });

  it("resolveCapabilitySelection (CAPABILITY_INVALID)", async () => {
    expect(resolveCapabilitySelection(["a"], { capabilityGroups: { read: ["a"] } }).names).toEqual(["a"]);
    await expectRefused(() => loose(resolveCapabilitySelection)(undefined, { capabilityGroups: {} }), "CAPABILITY_INVALID", "available names must be a list, found undefined");
    await expectRefused(() => loose(resolveCapabilitySelection)(["a"], undefined), "CAPABILITY_INVALID", "capability selection options must be an object, found undefined");
    await expectRefused(() => loose(resolveCapabilitySelection)(["a"], { capabilityGroups: ["a"] }), "CAPABILITY_INVALID", "capability groups must be an object, found an array");
  });

  it("observability events (OBSERVABILITY_INVALID)", async () => {
    const lines: string[] = [];
    const logger = new KitLogger("p");
    const event = new ObservabilityEvent({ plugin: "p", event: "e" });
    expect(logObservabilityEvent({ log: (_level: string, line: string) => lines.push(line) } as unknown as KitLogger, event)["event"]).toBe("e");
    expect(lines).toHaveLength(1);
    await expectRefused(() => new (ObservabilityEvent as unknown as new (init: unknown) => ObservabilityEvent)(undefined), "OBSERVABILITY_INVALID", "the event init must be an object, found undefined");
    await expectRefused(() => loose(logObservabilityEvent)(undefined, event), "OBSERVABILITY_INVALID", "logObservabilityEvent: logger must be a KitLogger, found undefined");
    await expectRefused(() => loose(logObservabilityEvent)(logger, { plugin: "p" }), "OBSERVABILITY_INVALID", "logObservabilityEvent: event must be an ObservabilityEvent, found an object");
    await expectRefused(() => loose(logObservabilityEvent)(logger, event, null), "OBSERVABILITY_INVALID", "logObservabilityEvent: options must be an object, found null");
  });
});

describe("checks that answer with a result answer wrong types with it", () => {
  const { parameters } = buildParameters({ name: strArg("Name.", { required: true }) });
  const refusal = (message: string) => ({ ok: false, problems: [{ key: "", path: "", kind: "invalid", message }], message });

  it("validateArguments: {ok: false} naming the parameters or options problem", () => {
    expect(validateArguments(parameters, { name: "Ada" })).toEqual({ ok: true, args: { name: "Ada" } });
    expect(loose(validateArguments)(undefined, {})).toEqual(refusal('parameters must be a parameters object {type: "object", properties}, found undefined'));
    expect(loose(validateArguments)({ type: "object", properties: [] }, {})).toEqual(refusal("parameters.properties must be an object, found an array"));
    expect(loose(validateArguments)({ ...parameters, required: "name" }, {})).toEqual(refusal("parameters.required must be a list of strings, found a string"));
    expect(loose(validateArguments)(parameters, {}, null)).toEqual(refusal("validateArguments options must be an object, found null"));
    expect(loose(validateArguments)(parameters, {}, { required: [1] })).toEqual(refusal("options.required must be a list of strings, found a list with a non-string item"));
    expect(loose(validateArguments)(parameters, {}, { examples: "x" })).toEqual(refusal("options.examples must be an object, found a string"));
    expect(loose(validateArguments)(parameters, {}, { validateRequired: "no" })).toEqual(refusal("options.validateRequired must be a boolean, found a string"));
    expect(validateArguments(parameters, 5)).toEqual(refusal("arguments must be an object"));
  });

  it("checkArgumentValue and argumentValueProblems: the wrong-typed schema or path is the problem", () => {
    expect(checkArgumentValue({ type: "string" }, "x", "v")).toBeNull();
    expect(loose(checkArgumentValue)(null, "x", "v")).toBe("the schema of v must be a schema object, found null");
    expect(loose(checkArgumentValue)({ type: "string" }, "x", 5)).toBe("the path must be a string, found a number");
    expect(argumentValueProblems({ type: "string" }, "x", "v")).toEqual([]);
    expect(loose(argumentValueProblems)(undefined, "x", "")).toEqual(["the schema of the value must be a schema object, found undefined"]);
  });

  it("checkSkillFrontmatter: frontmatter that is not a mapping is SKILL_FRONTMATTER_NOT_MAPPING", () => {
    expect(checkSkillFrontmatter({ name: "notes", description: "N." }, "notes")).toEqual([]);
    expect(loose(checkSkillFrontmatter)(undefined, "notes")).toEqual([{ code: "SKILL_FRONTMATTER_NOT_MAPPING", message: "skill 'notes' frontmatter must be a mapping, found undefined" }]);
  });
});
