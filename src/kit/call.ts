/**
 * `plugin call <dir> <tool> --args JSON`: start a built package's stdio server
 * the way Hermes does (the doctor's session: filtered environment, `mcp.json`
 * `cwd` or a fresh directory standing in for the host's), call one tool
 * through the official MCP SDK client and render the answer as the model
 * would see it (Hermes MCP client, `render.ts`).
 */
import { lstatSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { callSessionTool, openSession } from "./doctor-server.js";
import { expectString, isRecord, PluginKitError, valueKind } from "./errors.js";
import { requireKnownOptions, requireOptionTypes } from "./option-keys.js";
import { parseStrictJson } from "../contract/canonical-json.js";
import { declaredServerCwd } from "./host-environment.js";
import { clampedHermesToolName } from "./naming.js";
import { checkMcpConfig, type StdioServerEntry } from "./portable.js";
import { redactedErrorMessage, redactText } from "./redaction.js";
import { renderForModel, type ReceivedToolResult } from "./render.js";

/** Options of {@link callPluginTool}. */
export interface PluginCallOptions {
  /** The `mcp.json` server to start (required when the package declares more than one). */
  server?: string;
  /** Timeout of start-up and of the call, in ms (default 15 000). */
  timeoutMs?: number;
  /** Environment the filtered server environment is taken from (default `process.env`). */
  environment?: NodeJS.ProcessEnv;
}

/** Every option of {@link PluginCallOptions}; any other key is refused with the nearest name. */
const CALL_OPTION_KEYS: readonly string[] = ["server", "timeoutMs", "environment"];

/** What {@link callPluginTool} returns. */
export interface PluginCallResult {
  server: string;
  tool: string;
  /** The name Hermes registers (`mcp__<server>__<tool>`). */
  hermesName: string;
  arguments: Record<string, unknown>;
  isError: boolean;
  /** The JSON string Hermes hands the model. */
  modelSees: string;
  /** The raw `tools/call` result. */
  result: ReceivedToolResult;
  /** Wall time of the call itself, in ms. */
  callMs: number;
}

/**
 * Parse `--args`: a JSON object (default `{}`), duplicate keys refused. The message says what was
 * expected and the kind found (`found an array`, `found text that is not JSON (...)`), never the text.
 * The CLI answers it as a usage error (exit 2).
 * @throws PluginKitError `CALL_ARGUMENTS_INVALID` (also for a `text` that is not a string).
 */
export function parseCallArguments(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  if (typeof text !== "string") throw new PluginKitError("CALL_ARGUMENTS_INVALID", `parseCallArguments: text must be a string of JSON (or undefined for no arguments), found ${valueKind(text)}`);
  const expected = `--args: expected a JSON object of the tool's arguments by name, e.g. '{"name": "value"}' (plugin doctor shows each tool's example calls)`;
  let value: unknown;
  try {
    // Strict parse: a duplicate key is refused (as in every other JSON input), never last-one-wins.
    value = parseStrictJson(text, { requireObject: false, rejectIntegralFloats: false });
  } catch (problem) {
    throw new PluginKitError("CALL_ARGUMENTS_INVALID", `${expected}, found ${text.trim() === "" ? "an empty string" : `text that is not JSON (${(problem as Error).message.replace(/^invalid JSON: /, "")})`}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "string" ? "a string" : typeof value === "number" ? "a number" : typeof value === "boolean" ? "a boolean" : typeof value;
    throw new PluginKitError("CALL_ARGUMENTS_INVALID", `${expected}, found ${kind}`);
  }
  return value as Record<string, unknown>;
}

/** The stdio server entries of `<root>/mcp.json`. @throws PluginKitError `CALL_PACKAGE_MISSING` (no such directory, no mcp.json), `CALL_PACKAGE_INVALID`. */
function packageServers(root: string): StdioServerEntry[] {
  const file = path.join(root, "mcp.json");
  const built = "expected a built package directory (plugin.json, mcp.json, dist/server.js)";
  const rootState = lstatSync(root, { throwIfNoEntry: false });
  if (rootState === undefined || !rootState.isDirectory()) {
    throw new PluginKitError("CALL_PACKAGE_MISSING", `package directory ${root} ${rootState === undefined ? "does not exist" : "is not a directory"}: ${built}; fix: run \`npm run build\` in the plugin project (plugin build <entry> --out <dir>) and pass that output directory`);
  }
  if (lstatSync(file, { throwIfNoEntry: false }) === undefined) {
    const project = lstatSync(path.join(root, "package.json"), { throwIfNoEntry: false }) !== undefined;
    throw new PluginKitError("CALL_PACKAGE_MISSING", `${root} has no mcp.json: ${built}${project ? "; it looks like an unbuilt plugin project" : ""}; fix: run \`npm run build\` (plugin build <entry> --out <dir>) and pass the built directory`);
  }
  let value: unknown;
  try {
    if (!lstatSync(file).isFile()) throw new Error("not a regular file");
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (problem) {
    throw new PluginKitError("CALL_PACKAGE_INVALID", `${file} is not a readable JSON file (${(problem as Error).message}); build the package first (plugin build <entry> --out ${root})`);
  }
  const { findings, servers } = checkMcpConfig(value, root);
  const error = findings.find((f) => f.severity === "error");
  if (error !== undefined) throw new PluginKitError("CALL_PACKAGE_INVALID", `${file}: ${error.message} [${error.rule}]; run plugin doctor ${root} for every finding`);
  if (servers.length === 0) throw new PluginKitError("CALL_PACKAGE_INVALID", `${file} declares no stdio server`);
  return servers;
}

function chooseServer(servers: StdioServerEntry[], wanted: string | undefined): StdioServerEntry {
  const names = servers.map((s) => s.name).join(", ");
  if (wanted === undefined) {
    if (servers.length === 1) return servers[0] as StdioServerEntry;
    throw new PluginKitError("CALL_SERVER_UNKNOWN", `the package declares servers ${names}: choose one with --server`);
  }
  const found = servers.find((s) => s.name === wanted);
  if (found === undefined) throw new PluginKitError("CALL_SERVER_UNKNOWN", `the package declares no server ${JSON.stringify(wanted)}; it declares ${names}`);
  return found;
}

/**
 * Call `tool` of the package in `dir` with `args` and render what the model sees.
 * A tool error is a result (`isError: true`), not a throw.
 * @throws PluginKitError `CALL_PACKAGE_MISSING`, `CALL_PACKAGE_INVALID`, `CALL_SERVER_UNKNOWN`, `CALL_TOOL_UNKNOWN` (names the
 *   listed tools), `CALL_FAILED` (the server did not start or the call broke the protocol or timed out),
 *   `TOOL_RESULT_TOO_LARGE` (the answer is over `TOOL_RESULT_MAX_BYTES`, 10 MiB of JSON: names the bound and the size seen),
 *   `CALL_ARGUMENTS_INVALID` (`args` not an object), `INPUT_TYPE_INVALID` (before anything starts: `dir` or
 *   `tool` not a string, `options` not an object, a key it does not read named with the nearest known one,
 *   `server` not a string, `timeoutMs` not an integer 100..600,000, `environment` not an object of strings).
 */
export async function callPluginTool(dir: string, tool: string, args: Record<string, unknown>, options: PluginCallOptions = {}): Promise<PluginCallResult> {
  expectString("callPluginTool", "dir", dir);
  expectString("callPluginTool", "tool", tool);
  if (!isRecord(args)) throw new PluginKitError("CALL_ARGUMENTS_INVALID", `callPluginTool: args must be an object of the tool's arguments by name, e.g. {"name": "value"}, found ${valueKind(args)}`);
  requireKnownOptions("callPluginTool", options, CALL_OPTION_KEYS);
  requireOptionTypes("callPluginTool", options, { server: "string", timeoutMs: { integer: [100, 600_000] }, environment: "string-record" });
  const root = path.resolve(dir);
  const entry = chooseServer(packageServers(root), options.server);
  const timeoutMs = options.timeoutMs ?? 15_000;
  const data = mkdtempSync(path.join(os.tmpdir(), "hpk-call-data-"));
  const declared = declaredServerCwd(entry, root, data);
  const hostCwd = declared === null ? mkdtempSync(path.join(os.tmpdir(), "hpk-call-cwd-")) : null;
  try {
    let session;
    try {
      session = await openSession(root, data, entry, declared ?? (hostCwd as string), { timeoutMs, callTools: true, environment: options.environment ?? process.env });
    } catch (problem) {
      // The last lines, each redacted (redactText writes a line break as \n, so lines are split first).
      const stderr = String((problem as { stderr?: string }).stderr ?? "").trim().split("\n").slice(-3).map((line) => redactText(line)).join(" | ").slice(-1000);
      throw new PluginKitError("CALL_FAILED", `server '${entry.name}' did not start: ${redactedErrorMessage(problem)}${stderr === "" ? "" : ` (stderr: ${stderr})`}`);
    }
    try {
      if (!session.tools.some((t) => t.name === tool)) {
        throw new PluginKitError("CALL_TOOL_UNKNOWN", `server '${entry.name}' lists no tool ${JSON.stringify(tool)}; it lists ${session.tools.map((t) => t.name).join(", ") || "none"}`);
      }
      const started = performance.now();
      const outcome = await callSessionTool(session, entry.name, tool, args, timeoutMs);
      if (!outcome.ok && outcome.tooLarge) throw new PluginKitError("TOOL_RESULT_TOO_LARGE", outcome.message);
      if (!outcome.ok) {
        // What the server said last is most of the story of a crash: give its output a moment to arrive.
        const message = redactText(outcome.problem instanceof Error ? outcome.problem.message : String(outcome.problem));
        const closed = /Connection closed/i.test(message);
        if (closed) await new Promise((resolve) => setTimeout(resolve, 100));
        const tail = session.stderr().trim().split("\n").slice(-5).map((line) => redactText(line)).join(" | ").slice(-1000);
        throw new PluginKitError(
          "CALL_FAILED",
          `tools/call ${tool} on server '${entry.name}' failed: ${message}${closed ? " (the server closed its stdio during the call: it exited or crashed)" : ""}; ${tail === "" ? "the server wrote nothing on stderr" : `the server's stderr ends: ${tail}`}`,
        );
      }
      const result = outcome.result;
      return {
        server: entry.name,
        tool,
        hermesName: clampedHermesToolName(entry.name, tool),
        arguments: args,
        isError: result.isError === true,
        modelSees: renderForModel(result),
        result,
        callMs: Math.round(performance.now() - started),
      };
    } finally {
      await session.close();
    }
  } finally {
    rmSync(data, { recursive: true, force: true });
    if (hostCwd !== null) rmSync(hostCwd, { recursive: true, force: true });
  }
}
