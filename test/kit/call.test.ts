/**
 * `plugin call <dir> <tool> --args JSON`: the built example's server started
 * the way Hermes starts it, one tool called through the MCP SDK client, and
 * what the model sees printed; every failure named by its code.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PluginKitError, buildPluginPackage } from "../../src/kit/index.js";
import { callPluginTool, parseCallArguments } from "../../src/kit/call.js";
import { runCli } from "../support/cli.js";
import { EXAMPLE_ENTRY, fixtureServerScript, manifestFor, mcpFor, tempDir, writePackage } from "./fixtures.js";

const dirs: string[] = [];
let example: string;

beforeAll(async () => {
  example = tempDir("call-example");
  dirs.push(example);
  await buildPluginPackage({ entry: EXAMPLE_ENTRY, outDir: example });
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("plugin call (CLI)", () => {
  it("prints what the model sees on stdout, the Hermes name and time on stderr", async () => {
    const r = await runCli(["plugin", "call", example, "calculate", "--args", '{"expression": "2**10"}']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ result: JSON.stringify({ success: true, data: { expression: "2**10", result: 1024 } }) });
    expect(r.stderr).toMatch(/^mcp__calculator__calculate \(server calculator\) answered in [0-9]+ ms; the model sees:\n$/);
    const quiet = await runCli(["plugin", "call", example, "calculate", "--args", '{"expression": "1+1"}', "--quiet"]);
    expect(quiet.stderr).toBe("");
  });

  it("a tool error is what the model sees too, with exit 1; --json gives the whole result", async () => {
    const r = await runCli(["plugin", "call", example, "calculate", "--json"]);
    expect(r.code).toBe(1);
    const body = JSON.parse(r.stdout) as { ok: boolean; isError: boolean; modelSees: string; hermesName: string; arguments: unknown };
    expect(body).toMatchObject({ ok: false, isError: true, hermesName: "mcp__calculator__calculate", arguments: {} });
    expect(JSON.parse(body.modelSees).error).toContain("expression is required");
  });

  it.each([
    [["no_such_tool"], "CALL_TOOL_UNKNOWN"],
    [["calculate", "--server", "other"], "CALL_SERVER_UNKNOWN"],
  ])("plugin call %j fails with %s", async (args, code) => {
    const r = await runCli(["plugin", "call", example, ...args, "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code });
  });

  it("usage errors exit 2", async () => {
    expect((await runCli(["plugin", "call", example])).code).toBe(2);
    expect((await runCli(["plugin", "call", example, "calculate", "--timeout", "5"])).code).toBe(2);
    // An empty tool name (a quoting slip) is a usage error too, not an unknown tool.
    const empty = await runCli(["plugin", "call", example, ""]);
    expect([empty.code, empty.stderr]).toEqual([2, `hermes-plugin-kit: <tool> must not be empty, found "" (see 'hermes-plugin-kit plugin call --help')\n`]);
  });

  it.each([
    ["not json", "text that is not JSON (bad literal at offset 0)"],
    ["{nope", "text that is not JSON"],
    ["[]", "an array"],
    ["[1]", "an array"],
    ["1", "a number"],
    ['"x"', "a string"],
    ["null", "null"],
    ["true", "a boolean"],
    ['{"a":1,"a":2}', "text that is not JSON"],
  ])("--args %j is a usage error: exit 2, one line 'expected a JSON object, found %s' (it was exit 1)", async (value, found) => {
    const r = await runCli(["plugin", "call", example, "calculate", "--args", value]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.split("\n")).toHaveLength(2);
    expect(r.stderr.startsWith(`hermes-plugin-kit: --args: expected a JSON object of the tool's arguments by name, e.g. '{"name": "value"}' (plugin doctor shows each tool's example calls), found `)).toBe(true);
    expect(r.stderr).toContain(`found ${found}`);
    expect(r.stderr).toContain("(see 'hermes-plugin-kit plugin call --help')");
    const json = await runCli(["plugin", "call", example, "calculate", "--args", value, "--json"]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: "USAGE" });
  });

  it("--timeout that is not an integer in range: exit 2 naming what was found", async () => {
    const r = await runCli(["plugin", "call", example, "calculate", "--timeout", "soon"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`hermes-plugin-kit: --timeout: expected an integer between 100 and 600000, found "soon" (see 'hermes-plugin-kit plugin call --help')\n`);
    expect((await runCli(["plugin", "doctor", example, "--timeout", "1e4"])).code).toBe(2);
  });
});

describe("callPluginTool", () => {
  it("names the listed tools when the tool is unknown", async () => {
    await expect(callPluginTool(example, "calc", {})).rejects.toThrowWithCode(PluginKitError, "CALL_TOOL_UNKNOWN");
    await expect(callPluginTool(example, "calc", {})).rejects.toThrow("calculate, unit_convert");
  });

  it("refuses a directory without a built package, and a server that does not start", async () => {
    const empty = tempDir("call-empty");
    dirs.push(empty);
    await expect(callPluginTool(empty, "x", {})).rejects.toThrowWithCode(PluginKitError, "CALL_PACKAGE_MISSING");
    const broken = writePackage({ manifest: manifestFor(), mcp: mcpFor("fixture"), serverScript: 'for (let i = 1; i <= 50; i++) process.stderr.write(`line ${i}\\n`);\nprocess.exit(3);\n' });
    dirs.push(broken);
    await expect(callPluginTool(broken, "x", {}, { timeoutMs: 5000 })).rejects.toThrowWithCode(PluginKitError, "CALL_FAILED");
    // Its last three stderr lines, not all fifty run together.
    await expect(callPluginTool(broken, "x", {}, { timeoutMs: 5000 })).rejects.toThrow(/ \(stderr: line 48 \| line 49 \| line 50\)$/);
    // A server that crashes during the call: the message says it closed its stdio and quotes its last stderr lines.
    const crashing = writePackage({
      manifest: manifestFor(),
      mcp: mcpFor("fixture"),
      serverScript: fixtureServerScript([{ name: "t" }]).replace('else if (message.method === "tools/call")', 'else if (message.method === "tools/call") { process.stderr.write("boom: out of cheese\\n"); process.exit(3); }\n  else if (false)'),
    });
    dirs.push(crashing);
    const crash = await callPluginTool(crashing, "t", {}, { timeoutMs: 5000 }).then(() => null, (e: unknown) => e as PluginKitError);
    expect(crash?.code).toBe("CALL_FAILED");
    expect(crash?.message).toMatch(/^tools\/call t on server 'fixture' failed: .*Connection closed \(the server closed its stdio during the call: it exited or crashed\); the server's stderr ends: boom: out of cheese$/);
    const two = writePackage({ manifest: manifestFor(), mcp: { ...mcpFor("one"), mcpServers: { ...(mcpFor("one").mcpServers as object), ...(mcpFor("two").mcpServers as object) } }, serverScript: fixtureServerScript([{ name: "t" }]) });
    dirs.push(two);
    await expect(callPluginTool(two, "t", {})).rejects.toThrowWithCode(PluginKitError, "CALL_SERVER_UNKNOWN");
    expect((await callPluginTool(two, "t", {}, { server: "two" })).modelSees).toBe(JSON.stringify({ error: "t failed: fixture" }));
  });

  it("parseCallArguments takes a JSON object only", () => {
    expect(parseCallArguments(undefined)).toEqual({});
    expect(parseCallArguments('{"a": 1}')).toEqual({ a: 1 });
    for (const bad of ["null", "3", '"x"', "[]", ""]) expect(() => parseCallArguments(bad)).toThrowWithCode(PluginKitError, "CALL_ARGUMENTS_INVALID");
    expect(() => parseCallArguments("[]")).toThrow(`--args: expected a JSON object of the tool's arguments by name, e.g. '{"name": "value"}' (plugin doctor shows each tool's example calls), found an array`);
    expect(() => parseCallArguments("")).toThrow("found an empty string");
    expect(() => parseCallArguments("secret-ish text")).not.toThrow("secret-ish");
    // Duplicate keys are refused as in every other JSON input; non-integral numbers stay accepted.
    expect(() => parseCallArguments('{"name":"a","name":"b"}')).toThrowWithCode(PluginKitError, "CALL_ARGUMENTS_INVALID");
    expect(() => parseCallArguments('{"x":{"k":1,"k":2}}')).toThrowWithCode(PluginKitError, "CALL_ARGUMENTS_INVALID");
    expect(parseCallArguments('{"x": 2.5, "y": 1.0}')).toEqual({ x: 2.5, y: 1 });
  });
});
