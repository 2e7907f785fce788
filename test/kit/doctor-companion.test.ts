/**
 * plugin doctor on native companions (Hermes plugin.yaml manifest; `hermes plugins doctor`): the built
 * companion passes and every hook, command and middleware is driven once
 * through the Python stand-in; each defect fails with its rule code.
 */
import { rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doctorPluginPackage, formatDoctorReport, type DoctorReport } from "../../src/kit/index.js";
import { buildHookyPackage } from "./companion-fixture.js";
import { fixtureServerScript, manifestFor, mcpFor, tempDir, writePackage } from "./fixtures.js";
import { runCli } from "../support/cli.js";

const dirs: string[] = [];
let hooky: string;
let report: DoctorReport;
/** A PATH holding node (the server's command) and no python3. */
let noPython: string;

beforeAll(async () => {
  const built = await buildHookyPackage();
  dirs.push(built.source);
  hooky = built.pkg;
  report = await doctorPluginPackage(hooky, { timeoutMs: 20_000 });
  noPython = tempDir("no-python");
  dirs.push(noPython);
  symlinkSync(process.execPath, path.join(noPython, "node"));
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const rules = (r: DoctorReport, severity: "error" | "warning") => r.findings.filter((f) => f.severity === severity).map((f) => f.rule);

describe("plugin doctor on a built companion", () => {
  it("passes, and drives every hook, command and middleware once through the stand-in host", () => {
    expect(rules(report, "error")).toEqual([]);
    // The sample payload makes /fail throw: a warning naming the callback, not an error.
    expect(rules(report, "warning")).toEqual(["COMPANION_CALLBACK_RAISED"]);
    expect(report.findings.find((f) => f.rule === "COMPANION_CALLBACK_RAISED")?.message).toBe("companion host/hooky-host: command /fail: the plugin's callback raised RangeError on the doctor's sample payload");
    const [companion] = report.companions;
    expect(companion).toMatchObject({
      dir: "host/hooky-host",
      name: "hooky-host",
      version: "1.2.3",
      checked: true,
      registered: { commands: ["fail", "quiet", "shout"], middleware: ["llm_request", "tool_request"], hooks: ["on_session_start", "post_tool_call", "pre_gateway_dispatch", "pre_llm_call", "pre_tool_call", "transform_llm_output"] },
    });
    const byName = Object.fromEntries((companion?.calls ?? []).map((call) => [`${call.kind}:${call.name}`, call]));
    expect(Object.keys(byName)).toHaveLength(11);
    // pre_tool_call gets the example call of the plugin's own tool: "hi" is short, so it is allowed.
    expect(byName["hook:pre_tool_call"]).toMatchObject({ ok: true, value: "null", failedClosed: false });
    expect(byName["hook:pre_llm_call"]).toMatchObject({ ok: true, value: '{"context": "context for hermes-plugin-kit-doctor"}' });
    expect(byName["hook:transform_llm_output"]?.value).toBe('"DOCTOR"');
    expect(byName["command:shout"]?.value).toBe('"!"');
    expect(byName["command:fail"]).toMatchObject({ ok: false, exception: "PluginCallbackError", errorType: "RangeError" });
    expect(byName["middleware:tool_request"]?.value).toBe('{"args": {"text": "hi", "injected": 1}, "source": "hooky", "reason": "test"}');
    const text = formatDoctorReport(report).join("\n");
    expect(text).toContain("OK: companion host/hooky-host (hooky-host 1.2.3) registered /fail, /quiet, /shout, llm_request middleware, tool_request middleware, hook on_session_start");
    expect(text).toContain('hook pre_llm_call -> host receives {"context": "context for hermes-plugin-kit-doctor"}');
  });

  it("with --no-call runs register(ctx) and the static checks but drives nothing", async () => {
    const quiet = await doctorPluginPackage(hooky, { timeoutMs: 20_000, callTools: false });
    expect(rules(quiet, "error")).toEqual([]);
    expect(quiet.companions[0]).toMatchObject({ checked: true, calls: [] });
    expect(quiet.companions[0]?.registered.commands).toEqual(["fail", "quiet", "shout"]);
  });

  it("a Python the caller named that cannot run fails the doctor (DOCTOR_PYTHON_UNAVAILABLE), never an unchecked pass", async () => {
    await expect(doctorPluginPackage(hooky, { timeoutMs: 20_000, python: "/nonexistent/python3", callTools: false })).rejects.toThrowWithCode("DOCTOR_PYTHON_UNAVAILABLE");
  });

  it("fails closed when python3 is not on PATH (COMPANION_PYTHON_MISSING, with the fix), never an unchecked pass", async () => {
    const unchecked = await doctorPluginPackage(hooky, { timeoutMs: 20_000, environment: { ...process.env, PATH: noPython }, callTools: false });
    expect(unchecked.ok).toBe(false);
    expect(rules(unchecked, "error")).toEqual(["COMPANION_PYTHON_MISSING"]);
    expect(unchecked.findings.find((f) => f.rule === "COMPANION_PYTHON_MISSING")?.message).toMatch(
      /^companion host\/hooky-host: expected a Python 3 interpreter to run the native companion .*found no program python3 on PATH: register\(ctx\) was not run .*; fix: install Python 3 .*or pass --python PATH .*--skip-companion/,
    );
    expect(unchecked.companions[0]?.checked).toBe(false);
  });

  it("--skip-companion (skipCompanion: true) skips on purpose: the warning COMPANION_NOT_CHECKED, no error, nothing run", async () => {
    const skipped = await doctorPluginPackage(hooky, { timeoutMs: 20_000, environment: { ...process.env, PATH: noPython }, callTools: false, skipCompanion: true });
    expect(rules(skipped, "error")).toEqual([]);
    expect(rules(skipped, "warning")).toEqual(["COMPANION_NOT_CHECKED"]);
    expect(skipped.ok).toBe(true);
    expect(skipped.companions[0]).toMatchObject({ checked: false, calls: [] });
    await expect(doctorPluginPackage(hooky, { skipCompanion: "yes" as never })).rejects.toThrowWithCode("INPUT_TYPE_INVALID");
  });

  it("the CLI with a PATH lacking python3: exit 1 and COMPANION_PYTHON_MISSING; with --skip-companion exit 0", async () => {
    const env = { PATH: noPython };
    const failed = await runCli(["plugin", "doctor", hooky, "--no-call", "--timeout", "20000"], { env });
    expect(failed.code, failed.stdout + failed.stderr).toBe(1);
    expect(failed.stdout).toMatch(/^ERROR \[COMPANION_PYTHON_MISSING\] companion host\/hooky-host: expected a Python 3 interpreter/m);
    const skipped = await runCli(["plugin", "doctor", hooky, "--no-call", "--timeout", "20000", "--skip-companion"], { env });
    expect(skipped.code, skipped.stdout + skipped.stderr).toBe(0);
    expect(skipped.stdout).toMatch(/^WARN \[COMPANION_NOT_CHECKED\] companion host\/hooky-host: skipped on request \(--skip-companion\)/m);
  });
});

/** A portable package (fixture server) with one hand-written companion `host/fixture-plugin-host`. */
function withCompanion(init: string | null, yaml: string | null = "name: fixture-plugin-host\nversion: 1.0.0\ndescription: d\nprovides_hooks:\n  - pre_tool_call\n", extra: Record<string, string> = {}, serverScript = fixtureServerScript([{ name: "ping" }])): string {
  const files: Record<string, string> = { ...extra };
  if (yaml !== null) files["host/fixture-plugin-host/plugin.yaml"] = yaml;
  if (init !== null) files["host/fixture-plugin-host/__init__.py"] = init;
  const dir = writePackage({ manifest: manifestFor(), mcp: mcpFor(), serverScript, files });
  dirs.push(dir);
  return dir;
}
const GOOD_INIT = "def _hook(**kwargs):\n    return None\n\n\ndef register(ctx):\n    ctx.register_hook('pre_tool_call', _hook)\n";

describe("plugin doctor names each companion defect", () => {
  it.each([
    ["plugin.yaml missing", withCompanion(GOOD_INIT, null), "COMPANION_MANIFEST_MISSING", "error"],
    ["plugin.yaml not YAML", withCompanion(GOOD_INIT, "name: [x\n"), "COMPANION_MANIFEST_INVALID", "error"],
    ["plugin.yaml a list", withCompanion(GOOD_INIT, "- a\n"), "COMPANION_MANIFEST_INVALID", "error"],
    ["a key Hermes does not read", withCompanion(GOOD_INIT, "name: fixture-plugin-host\nversion: 1.0.0\nprovides_hooks: [pre_tool_call]\nentry: x\n"), "COMPANION_MANIFEST_KEY_UNKNOWN", "warning"],
    ["no name", withCompanion(GOOD_INIT, "version: 1.0.0\nprovides_hooks: [pre_tool_call]\n"), "COMPANION_NAME_INVALID", "error"],
    ["another version", withCompanion(GOOD_INIT, "name: fixture-plugin-host\nversion: 2.0.0\nprovides_hooks: [pre_tool_call]\n"), "COMPANION_VERSION_MISMATCH", "error"],
    ["provides_hooks not a list", withCompanion(GOOD_INIT, "name: fixture-plugin-host\nversion: 1.0.0\nprovides_hooks: pre_tool_call\n"), "COMPANION_PROVIDES_HOOKS_INVALID", "error"],
    ["an unknown declared hook", withCompanion(GOOD_INIT, "name: fixture-plugin-host\nversion: 1.0.0\nprovides_hooks: [pre_tool_call, before_tool]\n"), "COMPANION_HOOK_UNKNOWN", "error"],
    ["__init__.py missing", withCompanion(null), "COMPANION_INIT_MISSING", "error"],
    ["no register", withCompanion("X = 1\n"), "COMPANION_REGISTER_MISSING", "error"],
    ["register raising", withCompanion("def register(ctx):\n    raise RuntimeError('no')\n"), "COMPANION_REGISTER_FAILED", "error"],
    ["an import failing", withCompanion("import hermes_plugin_kit_absent_module\n"), "COMPANION_REGISTER_FAILED", "error"],
    ["a callback without **kwargs", withCompanion("def _hook(tool_name, args):\n    return None\n\n\ndef register(ctx):\n    ctx.register_hook('pre_tool_call', _hook)\n"), "COMPANION_CALLBACK_SIGNATURE", "error"],
    [
      "a third-party import",
      withCompanion("import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\nimport thirdparty\n" + GOOD_INIT, undefined, { "host/fixture-plugin-host/thirdparty.py": "X = 1\n" }),
      "COMPANION_NOT_STDLIB",
      "error",
    ],
    ["a registered unknown hook", withCompanion("def _hook(**kwargs):\n    return None\n\n\ndef register(ctx):\n    ctx.register_hook('pre_tool_call', _hook)\n    ctx.register_hook('before_tool', _hook)\n"), "COMPANION_HOOK_UNKNOWN", "error"],
    ["a registered undeclared hook", withCompanion("def _hook(**kwargs):\n    return None\n\n\ndef register(ctx):\n    ctx.register_hook('pre_tool_call', _hook)\n    ctx.register_hook('on_session_end', _hook)\n"), "COMPANION_HOOK_UNDECLARED", "warning"],
    ["a declared hook not registered", withCompanion("def register(ctx):\n    pass\n"), "COMPANION_HOOK_NOT_REGISTERED", "warning"],
    ["a built-in command", withCompanion(GOOD_INIT + "    ctx.register_command('help', lambda raw='', **kw: 'x', description='d')\n"), "COMMAND_NAME_BUILTIN", "error"],
    ["an execution middleware", withCompanion(GOOD_INIT + "    ctx.register_middleware('tool_execution', _hook)\n"), "MIDDLEWARE_KIND_UNKNOWN", "error"],
    ["a network connection", withCompanion("import socket\n\n\ndef _hook(**kwargs):\n    try:\n        socket.create_connection(('127.0.0.1', 9))\n    except OSError:\n        pass\n\n\ndef register(ctx):\n    ctx.register_hook('pre_tool_call', _hook)\n"), "COMPANION_NETWORK", "error"],
  ])("%s", async (_label, dir, rule, severity) => {
    // Only the network case needs its callback driven; the rest are found by register(ctx) alone (--no-call).
    const checked = await doctorPluginPackage(dir, { timeoutMs: 20_000, callTools: rule === "COMPANION_NETWORK" });
    expect(rules(checked, severity as "error" | "warning")).toContain(rule);
    if (severity === "error") expect(checked.ok).toBe(false);
  });

  it("reports a bridge that cannot reach the server (COMPANION_BRIDGE_FAILED)", async () => {
    // The generated companion of hooky, beside a server without the bridge capability.
    const { cpSync, writeFileSync } = await import("node:fs");
    const { tempDir } = await import("./fixtures.js");
    const dir = tempDir("doctor-nobridge");
    dirs.push(dir);
    cpSync(hooky, dir, { recursive: true });
    writeFileSync(path.join(dir, "fixture.mjs"), fixtureServerScript([{ name: "echo" }]).replace('serverInfo: { name: "fixture"', 'serverInfo: { name: "hooky"'));
    writeFileSync(path.join(dir, "mcp.json"), JSON.stringify(mcpFor("hooky", { args: ["${PLUGIN_ROOT}/fixture.mjs"] })));
    const broken = await doctorPluginPackage(dir, { timeoutMs: 20_000 });
    expect(rules(broken, "error")).toContain("COMPANION_BRIDGE_FAILED");
    expect(broken.findings.find((f) => f.rule === "COMPANION_BRIDGE_FAILED" && f.message.includes("hook pre_tool_call"))?.message).toContain("pre_tool_call blocked every tool call");
  });
});
