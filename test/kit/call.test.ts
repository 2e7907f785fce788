/**
 * `plugin call <dir> <tool> --args JSON`: the built example's server started
 * the way Hermes starts it, one tool called through the MCP SDK client, and
 * what the model sees printed; every failure named by its code.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PluginKitError, buildPluginPackage, doctorPluginPackage } from "../../src/kit/index.js";
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

describe("a real built plugin: answers over the client's read buffer, and thrown secrets", () => {
  const MIB = 1024 * 1024;
  let big: string;
  beforeAll(async () => {
    const source = tempDir("call-big-src");
    dirs.push(source);
    mkdirSync(path.join(source, "src"), { recursive: true });
    writeFileSync(path.join(source, "package.json"), '{"name":"bulky","version":"1.0.0","type":"module"}');
    writeFileSync(
      path.join(source, "src", "entry.js"),
      `import { definePlugin, intArg, tool } from "hermes-plugin-kit";
const sized = (name, description) => tool({ name, description, readOnly: true, params: { mib: intArg("MiB.", { required: true, example: 1 }) }, handler: ({ mib }) => "x".repeat(mib * 1024 * 1024) });
const leaky = tool({ name: "leaky", description: "Throws a secret.", params: {}, handler: () => { throw new Error("upstream said: Authorization: Bearer sk-abcdefghijklmnopqrstuv"); } });
const flood = tool({ name: "flood", description: "Answers 11 MiB.", readOnly: true, params: {}, handler: () => "y".repeat(11 * 1024 * 1024) });
export default definePlugin({ name: "bulky", version: "1.0.0", description: "Big answers.", server: "bulky", tools: [sized("sized", "Answers mib MiB."), leaky, flood] });
`,
    );
    big = path.join(source, "pkg");
    await buildPluginPackage({ entry: path.join(source, "src", "entry.js"), outDir: big });
  });

  it("an answer just under the bound is rendered; one over it is TOOL_RESULT_TOO_LARGE naming the bound and the size, not a closed stdio", async () => {
    const ok = await callPluginTool(big, "sized", { mib: 9 }, { timeoutMs: 60_000 });
    expect(ok.isError).toBe(false);
    expect(ok.modelSees.length).toBeGreaterThan(9 * MIB);
    const over = await callPluginTool(big, "sized", { mib: 12 }, { timeoutMs: 60_000 }).then(() => null, (e: unknown) => e as PluginKitError);
    expect(over?.code).toBe("TOOL_RESULT_TOO_LARGE");
    expect(over?.message).toMatch(/^tools\/call sized on server 'bulky' answered 125829\d\d bytes \(12\.0 MiB\) of JSON, over the 10485760 bytes \(10 MiB\) an MCP client built on the official TypeScript SDK reads /);
    expect(over?.message).toMatch(/; fix: return less per call \(page, filter or summarise the result, or hand back a file path\)$/);
    expect(over?.message).not.toContain("closed its stdio");
  }, 180_000);

  it("an answer past the client's read ceiling: TOOL_RESULT_TOO_LARGE with 'more than' the bytes read", async () => {
    const over = await callPluginTool(big, "sized", { mib: 21 }, { timeoutMs: 120_000 }).then(() => null, (e: unknown) => e as PluginKitError);
    expect(over?.code).toBe("TOOL_RESULT_TOO_LARGE");
    expect(over?.message).toMatch(/^tools\/call sized on server 'bulky' answered more than 20971520 bytes \(20\.0 MiB; the kit's client stops reading there\), over the 10485760 bytes/);
  }, 180_000);

  it("the CLI: exit 1, the code and the fix line", async () => {
    const r = await runCli(["plugin", "call", big, "sized", "--args", '{"mib": 11}', "--timeout", "120000", "--json"]);
    expect(r.code).toBe(1);
    const body = JSON.parse(r.stdout) as { ok: boolean; code: string; message: string };
    expect(body).toMatchObject({ ok: false, code: "TOOL_RESULT_TOO_LARGE" });
    expect(body.message).toContain("; fix: return less per call");
  }, 180_000);

  it("plugin doctor: a read-only tool answering over the bound is a TOOL_RESULT_TOO_LARGE error, not a protocol error", async () => {
    const report = await doctorPluginPackage(big, { timeoutMs: 120_000 });
    const found = report.findings.filter((f) => f.rule === "TOOL_RESULT_TOO_LARGE");
    expect(found.map((f) => f.severity)).toEqual(["error"]);
    expect(found[0]?.message).toMatch(/^server 'bulky': tools\/call flood on server 'bulky' answered 115343\d\d bytes \(11\.0 MiB\) of JSON, over the 10485760 bytes/);
    expect(report.findings.filter((f) => f.rule === "TOOL_CALL_PROTOCOL_ERROR" || f.rule === "STDOUT_NOT_PROTOCOL")).toEqual([]);
    // The other read-only tool answered its example within the bound.
    expect(report.servers[0]?.tools.find((t) => t.name === "sized")?.calls.map((c) => c.isError)).toEqual([true, false]);
  }, 180_000);

  it("a tool that throws a secret: the model sees it redacted", async () => {
    const result = await callPluginTool(big, "leaky", {});
    expect(result.isError).toBe(true);
    expect(result.modelSees).toBe(JSON.stringify({ error: "leaky failed: upstream said: Authorization: Bearer ***" }));
  });
});
