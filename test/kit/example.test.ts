/**
 * Acceptance of the built example through the real MCP SDK client over
 * stdio (docs/kit.md, "What a tool call answers"): schemas, augmented descriptions, envelope, instructive
 * validation errors, handler failures, and a clean stdout.
 */
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPluginPackage } from "../../src/kit/index.js";
import { EXAMPLE_ENTRY, tempDir } from "./fixtures.js";
import { hostEnvironment, startHost, type HostStandIn } from "./python-host.js";

let out: string;
let data: string;
let client: Client;
let stderr = "";
const clientErrors: unknown[] = [];

beforeAll(async () => {
  out = tempDir("example");
  data = tempDir("example-data");
  await buildPluginPackage({ entry: EXAMPLE_ENTRY, outDir: out });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(out, "dist", "server.js")],
    env: { PATH: process.env["PATH"] ?? "", PLUGIN_ROOT: out, PLUGIN_DATA: data, CALCULATOR_LOG_LEVEL: "debug" },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  client = new Client({ name: "example-test", version: "1.0.0" });
  client.onerror = (error) => clientErrors.push(error);
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
  rmSync(out, { recursive: true, force: true });
  rmSync(data, { recursive: true, force: true });
});

type Result = { content: Array<{ type: string; text: string }>; structuredContent?: unknown; isError?: boolean };
const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as Result;
const text = (result: Result) => result.content.map((c) => c.text).join("\n");

describe("built example over stdio", () => {
  it("lists both tools with augmented descriptions, closed schemas and readOnlyHint", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["calculate", "unit_convert"]);
    const [calculate, convert] = tools;
    expect(calculate?.description).toBe("Evaluate a math expression (arithmetic, powers with ** or ^, functions like sqrt, sin, log). Required: `expression` (e.g. '2**10').");
    expect(convert?.description).toMatch(/ Required: `value` \(e\.g\. 100\), `from_unit` \(e\.g\. 'F'\), `to_unit` \(e\.g\. 'C'\)\.$/);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.inputSchema["additionalProperties"]).toBe(false);
      expect(tool.annotations?.readOnlyHint).toBe(true);
    }
    expect(calculate?.inputSchema.required).toEqual(["expression"]);
    expect(convert?.inputSchema.required).toEqual(["value", "from_unit", "to_unit"]);
  });

  it("answers 2**16 = 65536 in the envelope", async () => {
    const result = await call("calculate", { expression: "2**16" });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ success: true, data: { expression: "2**16", result: 65536 } });
    expect(JSON.parse(text(result))).toEqual({ success: true, data: { expression: "2**16", result: 65536 } });
    expect((await call("calculate", { expression: "sqrt(16) + 2^3" })).structuredContent).toEqual({ success: true, data: { expression: "sqrt(16) + 2^3", result: 12 } });
  });

  it.each([[{}], [{ expression: "" }], [{ expression: "   " }], [{ expression: null }]])("answers a missing or blank expression %j with the instructive error", async (args) => {
    const result = await call("calculate", args);
    expect(result.isError).toBe(true);
    expect(text(result)).toBe("expression is required (e.g. '2**10')");
  });

  it("converts 100 F to 37.7778 C", async () => {
    const result = await call("unit_convert", { value: 100, from_unit: "F", to_unit: "C" });
    expect(result.structuredContent).toEqual({ success: true, data: { value: 100, from_unit: "F", to_unit: "C", result: 37.7778 } });
    expect((await call("unit_convert", { value: 1, from_unit: "mi", to_unit: "km" })).structuredContent).toMatchObject({ data: { result: 1.6093 } });
  });

  it("answers an unknown unit and handler exceptions with isError naming the tool", async () => {
    const unknown = await call("unit_convert", { value: 1, from_unit: "furlongz", to_unit: "m" });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toBe("unit_convert failed: unknown unit 'furlongz'");
    const mismatch = await call("unit_convert", { value: 1, from_unit: "kg", to_unit: "m" });
    expect(mismatch.isError).toBe(true);
    expect(text(mismatch)).toMatch(/^unit_convert failed: /);
    const syntax = await call("calculate", { expression: "1 +" });
    expect(syntax.isError).toBe(true);
    expect(text(syntax)).toMatch(/^calculate failed: /);
    const disabled = await call("calculate", { expression: 'evaluate("1+1")' });
    expect(disabled.isError).toBe(true);
    expect(text(disabled)).toBe("calculate failed: function evaluate is disabled");
    const huge = await call("calculate", { expression: "zeros(100000, 100000)" });
    expect(text(huge)).toBe("calculate failed: function zeros is disabled");
    const tooLong = await call("calculate", { expression: "1+".repeat(300) + "1" });
    expect(text(tooLong)).toBe("expression must be at most 500 characters");
  });

  it("answers type errors and unknown tools as isError results, not JSON-RPC errors", async () => {
    const wrongType = await call("unit_convert", { value: "100", from_unit: "F", to_unit: "C" });
    expect(wrongType.isError).toBe(true);
    expect(text(wrongType)).toBe("value must be number");
    const unknownTool = await call("nope", {});
    expect(unknownTool.isError).toBe(true);
    expect(text(unknownTool)).toBe("Unknown tool: nope. Available tools: calculate, unit_convert");
  });

  it("kept stdout protocol-only and logged to stderr", () => {
    expect(clientErrors).toEqual([]);
    expect(stderr).toContain("hermes_plugin_kit: registered plugin lifecycle; plugin=hermes-calculator; commands=calc; cli_commands=<none>; tools=calculate,unit_convert; middlewares=<none>; hooks=pre_tool_call;");
    expect(stderr).toMatch(/ DEBUG hermes-calculator calculate: invoked; args=\{"expression":"2\*\*16"\}/);
    expect(stderr).toMatch(/ INFO hermes-calculator calculate: ok; elapsed_ms=\d+\.\d\d; result=object/);
    expect(stderr).toMatch(/ WARNING hermes-calculator calculate: rejected call, missing expression/);
    expect(stderr).toMatch(/ ERROR hermes-calculator unit_convert: handler raised; .*error=unknown unit 'furlongz'; stack=Error/);
  });
});

describe("raw stdout of the built server", () => {
  it("carries only JSON-RPC 2.0 messages, even with DEBUG logging", async () => {
    const child = spawn(process.execPath, [path.join(out, "dist", "server.js")], {
      env: { PATH: process.env["PATH"] ?? "", PLUGIN_ROOT: out, PLUGIN_DATA: data, CALCULATOR_LOG_LEVEL: "debug" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let childStderr = "";
    child.stderr.on("data", (chunk: Buffer) => (childStderr += chunk.toString("utf8")));
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out; stdout so far: ${stdout}`)), 20_000);
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
        if (stdout.split("\n").filter((l) => l.trim() !== "").length >= 5) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const send = (message: unknown) => child.stdin.write(JSON.stringify(message) + "\n");
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "calculate", arguments: { expression: "2**16" } } });
    send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "calculate", arguments: {} } });
    send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "unit_convert", arguments: { value: 1, from_unit: "x", to_unit: "y" } } });
    await done;
    child.stdin.end();
    child.kill();
    const lines = stdout.split("\n").filter((l) => l.trim() !== "");
    expect(lines).toHaveLength(5);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0", id: expect.any(Number) });
    expect(lines.map((l) => JSON.parse(l).id)).toEqual([1, 2, 3, 4, 5]);
    expect(childStderr).toContain("DEBUG");
  });
});

describe("the example's companion: a pre_tool_call size limit and /calc", () => {
  let host: HostStandIn;
  let home: string;
  beforeAll(async () => {
    home = tempDir("example-home");
    host = await startHost(path.join(out, "host", "hermes-calculator-host"), { env: hostEnvironment(home), cwd: home });
  });
  afterAll(async () => {
    await host?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it("registers /calc and the pre_tool_call hook", () => {
    expect(host.registration.calls).toEqual([
      ["register_command", "calc", "Evaluate a math expression and show the result.", "<expression>"],
      ["register_hook", "pre_tool_call"],
    ]);
  });

  it("blocks calculate for an expression over 200 characters and lets shorter ones and other tools through", async () => {
    const long = "1+".repeat(100) + "1";
    const blocked = await host.request({ op: "hook", name: "pre_tool_call", kwargs: { tool_name: "mcp__calculator__calculate", args: { expression: long }, session_id: "s" } });
    expect(blocked.value).toEqual({ action: "block", message: "calculate: the expression is 201 characters; the limit is 200. Split it into smaller calculations." });
    const fine = await host.request({ op: "hook", name: "pre_tool_call", kwargs: { tool_name: "mcp__calculator__calculate", args: { expression: "1+".repeat(99) + "1" } } });
    expect(fine.value).toBeNull();
    const other = await host.request({ op: "hook", name: "pre_tool_call", kwargs: { tool_name: "mcp__calculator__unit_convert", args: { expression: long } } });
    expect(other.value).toBeNull();
    const foreign = await host.request({ op: "hook", name: "pre_tool_call", kwargs: { tool_name: "terminal", args: { expression: long } } });
    expect(foreign.value).toBeNull();
  });

  it("answers /calc with the result, a usage line, or the error", async () => {
    expect((await host.request({ op: "command", name: "calc", raw: "2**10" })).value).toBe("2**10 = 1024");
    expect((await host.request({ op: "command", name: "calc", raw: "  " })).value).toBe("Usage: /calc <expression>, e.g. /calc 2**10");
    expect((await host.request({ op: "command", name: "calc", raw: "evaluate(1)" })).value).toBe("Cannot evaluate evaluate(1): function evaluate is disabled");
  });
});
