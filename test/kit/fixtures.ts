/**
 * Test fixtures of the kit tests: temp package directories, a dependency-free
 * JSON-RPC stdio server script (so the doctor can be pointed at servers that
 * break rules the kit itself refuses), and a built copy of the example.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach } from "vitest";
import { MCP_SCHEMA_URL, PLUGIN_SCHEMA_URL, setLogSink, setStderrLogLevel, type LogSink } from "../../src/kit/index.js";

/** Repository root. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The example's entry module. */
export const EXAMPLE_ENTRY = path.join(REPO_ROOT, "examples", "calculator", "src", "server.ts");

/** A fresh temp directory. */
export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `hpk-${prefix}-`));
}

/** A tool as the fixture server lists it. */
export interface FixtureTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/**
 * A dependency-free MCP stdio server (newline-delimited JSON-RPC) listing
 * `tools`; every call answers an isError result naming the tool.
 */
export function fixtureServerScript(tools: FixtureTool[], options: { stdoutNoise?: string } = {}): string {
  const listed = tools.map((t) => ({ description: "Fixture tool.", inputSchema: { type: "object", properties: {}, additionalProperties: false }, ...t }));
  return `import { createInterface } from "node:readline";
const tools = ${JSON.stringify(listed)};
const send = (message) => process.stdout.write(JSON.stringify(message) + "\\n");
${options.stdoutNoise !== undefined ? `process.stdout.write(${JSON.stringify(options.stdoutNoise + "\n")});` : ""}
createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  if (message.method === "initialize") send({ jsonrpc: "2.0", id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "fixture", version: "1.0.0" } } });
  else if (message.method === "tools/list") send({ jsonrpc: "2.0", id: message.id, result: { tools } });
  else if (message.method === "tools/call") send({ jsonrpc: "2.0", id: message.id, result: { isError: true, content: [{ type: "text", text: message.params.name + " failed: fixture" }] } });
  else send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "method not found" } });
});
`;
}

/** Files of a fixture package. */
export interface FixturePackage {
  manifest?: unknown;
  mcp?: unknown;
  serverScript?: string;
  skills?: Record<string, string>;
  files?: Record<string, string>;
}

/** A valid plugin.json for `name`. */
export function manifestFor(name = "fixture-plugin"): Record<string, unknown> {
  return { $schema: PLUGIN_SCHEMA_URL, name, version: "1.0.0", description: "Fixture." };
}

/** A valid stdio mcp.json for `server` running `${PLUGIN_ROOT}/server.mjs`. */
export function mcpFor(server = "fixture", entry: Record<string, unknown> = {}): Record<string, unknown> {
  return { $schema: MCP_SCHEMA_URL, mcpServers: { [server]: { type: "stdio", command: "node", args: ["${PLUGIN_ROOT}/server.mjs"], ...entry } } };
}

/** Write a fixture package into a new temp directory; returns it. */
export function writePackage(contents: FixturePackage): string {
  const dir = tempDir("pkg");
  if (contents.manifest !== undefined) writeFileSync(path.join(dir, "plugin.json"), JSON.stringify(contents.manifest, null, 2));
  if (contents.mcp !== undefined) writeFileSync(path.join(dir, "mcp.json"), JSON.stringify(contents.mcp, null, 2));
  if (contents.serverScript !== undefined) writeFileSync(path.join(dir, "server.mjs"), contents.serverScript);
  for (const [name, text] of Object.entries(contents.skills ?? {})) {
    mkdirSync(path.join(dir, "skills", name), { recursive: true });
    writeFileSync(path.join(dir, "skills", name, "SKILL.md"), text);
  }
  for (const [relative, text] of Object.entries(contents.files ?? {})) {
    mkdirSync(path.dirname(path.join(dir, relative)), { recursive: true });
    writeFileSync(path.join(dir, relative), text);
  }
  return dir;
}

/** The compiled CLI (`npm test` builds it in `pretest`; `npx tsc -p tsconfig.build.json` otherwise). */
export const COMPILED_CLI = path.join(REPO_ROOT, "dist", "src", "cli", "main.js");

/** Run the compiled CLI with `args`; resolves to its exit code and output. */
export function runCompiledCli(args: string[], options: { cwd?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  if (!existsSync(COMPILED_CLI)) throw new Error(`${COMPILED_CLI} is missing: run npx tsc -p tsconfig.build.json first`);
  return new Promise((resolve) => {
    execFile(process.execPath, [COMPILED_CLI, ...args], { cwd: options.cwd ?? REPO_ROOT, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === "number" ? ((error as { code: number }).code) : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Capture the kit's log lines at DEBUG for every test of the enclosing
 * suite: returns the array they are appended to (emptied before each test);
 * the previous sink and the WARNING level come back after each test.
 */
export function captureKitLog(): string[] {
  const lines: string[] = [];
  let previous: LogSink | undefined;
  beforeEach(() => {
    lines.length = 0;
    previous = setLogSink((line) => lines.push(line));
    setStderrLogLevel("DEBUG");
  });
  afterEach(() => {
    if (previous !== undefined) setLogSink(previous);
    setStderrLogLevel("WARNING");
  });
  return lines;
}

