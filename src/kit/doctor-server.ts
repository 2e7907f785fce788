/**
 * The doctor's server exercise (Hermes MCP client): start a package's stdio
 * server the way Hermes does (filtered environment; working directory only
 * when mcp.json sets `cwd`, otherwise a fresh empty directory standing in for
 * the host's own), list its tools through the official SDK `Client`, check
 * each listed tool, call read-only tools without arguments and with their
 * examples, and render what the model would see. A server or example call
 * that fails outside the package root but works from it is reported as
 * `SERVER_CWD_DEPENDENT`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { PluginKitError } from "./errors.js";
import { declaredServerCwd, filteredServerEnvironment } from "./host-environment.js";
import { checkHermesToolNames, clampedHermesToolName, validateToolName } from "./naming.js";
import { redactText } from "./redaction.js";
import { EXAMPLES_META_KEY, VALIDATOR_META_KEY } from "./plugin.js";
import { expandPlaceholders, type PackageFinding, type StdioServerEntry } from "./portable.js";
import { renderForModel, type ReceivedToolResult } from "./render.js";
import { jsonSchemaValueProblems, schemaKeywordProblems, supportedKeywordsText } from "./schema-keywords.js";

/** One tool call the doctor made. */
export interface DoctorCall {
  arguments: Record<string, unknown>;
  isError: boolean;
  /** The JSON string Hermes would hand the model. */
  modelSees: string;
}

/** One listed tool. */
export interface DoctorTool {
  name: string;
  /** The name Hermes registers (`mcp__<server>__<tool>`, clamped as new hosts do). */
  hermesName: string;
  description: string;
  readOnly: boolean;
  inputSchema: unknown;
  calls: DoctorCall[];
}

/** One started server. */
export interface DoctorServer {
  name: string;
  started: boolean;
  /** Start to first `tools/list` answer, in ms. */
  startMs?: number;
  /** Working directory the server ran in. */
  cwd: string;
  /** `mcp.json` when the entry sets `cwd`; `host` when the doctor stood in for the host's own working directory. */
  cwdSource: "mcp.json" | "host";
  tools: DoctorTool[];
}

/** Settings of one exercise. */
export interface ServerExerciseOptions {
  timeoutMs: number;
  callTools: boolean;
  environment: NodeJS.ProcessEnv;
}

const STDERR_LIMIT = 256 * 1024;

/**
 * The most bytes of JSON one `tools/call` answer may take: 10 MiB, the stdio
 * read buffer of the official MCP TypeScript SDK's client
 * (`STDIO_DEFAULT_MAX_BUFFER_SIZE`; a client with that default closes the
 * connection on a longer line). `plugin call` and `plugin doctor` report a
 * longer answer as `TOOL_RESULT_TOO_LARGE` with its size.
 */
export const TOOL_RESULT_MAX_BYTES: number = STDIO_DEFAULT_MAX_BUFFER_SIZE;

/**
 * The read buffer of the kit's own client (2 x {@link TOOL_RESULT_MAX_BYTES}):
 * an answer over the bound is still read and measured up to here; past it the
 * client stops reading and reports "more than" this many bytes (the SDK's
 * buffer grows by copying, so a higher ceiling costs seconds per call).
 */
const READ_CEILING_BYTES = 2 * TOOL_RESULT_MAX_BYTES;

/** The SDK transport's message when a line outgrows its read buffer. */
const READ_OVERFLOW = /ReadBuffer exceeded maximum size/;
/** Variables the SDK's stdio transport inherits by default (POSIX). */
const SDK_DEFAULT_ENV_NAMES = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
const messageOf = (problem: unknown) => redactText(problem instanceof Error ? problem.message : String(problem));

/** Race `promise` against a timer of `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A started server with its client and listed tools (also used by `plugin call`). */
export interface Session {
  client: Client;
  tools: Tool[];
  startMs: number;
  stderr(): string;
  protocolErrors: string[];
  /** True once an answer outgrew the client's read buffer: the client closed the connection. */
  overflowed(): boolean;
  close(): Promise<void>;
}

/** Start the server in `cwd`, initialize and list its tools; throws (with `stderr` attached) when it does not answer. */
export async function openSession(root: string, data: string, entry: StdioServerEntry, cwd: string, options: ServerExerciseOptions): Promise<Session> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  // The SDK transport merges its own defaults (HOME, LOGNAME, PATH, SHELL, TERM, USER) under the
  // env it is given; keys set to undefined are dropped by child_process, so the child gets exactly
  // the filtered environment.
  const env: Record<string, string | undefined> = Object.fromEntries(SDK_DEFAULT_ENV_NAMES.map((name) => [name, undefined]));
  Object.assign(env, filteredServerEnvironment(options.environment, entry, root, data));
  const transport = new StdioClientTransport({
    command: entry.command.startsWith("./") ? path.resolve(root, entry.command) : entry.command,
    args: entry.args.map((a) => expandPlaceholders(a, root, data)),
    env: env as Record<string, string>,
    cwd,
    stderr: "pipe",
    maxBufferSize: READ_CEILING_BYTES,
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    if (stderr.length < STDERR_LIMIT) stderr += chunk.toString("utf8");
  });
  const protocolErrors: string[] = [];
  let overflowed = false;
  const client = new Client({ name: "hermes-plugin-kit-doctor", version: "1.0.0" });
  client.onerror = (problem) => {
    const message = problem instanceof Error ? problem.message : String(problem);
    // An oversized answer is reported by its call; the rest of its line, read after the overflow, is no protocol error.
    if (READ_OVERFLOW.test(message)) overflowed = true;
    else if (!overflowed && protocolErrors.length < 5) protocolErrors.push(message);
  };
  const close = () => client.close().catch(() => undefined);
  const started = performance.now();
  try {
    await withTimeout(client.connect(transport), options.timeoutMs, "initialize");
    const listed = await withTimeout(client.listTools(), options.timeoutMs, "tools/list");
    return { client, tools: listed.tools, startMs: Math.round(performance.now() - started), stderr: () => stderr, protocolErrors, overflowed: () => overflowed, close };
  } catch (problem) {
    await close();
    throw Object.assign(new Error(messageOf(problem)), { stderr, protocolErrors });
  }
}

/** Check one listed tool's name and schema; returns the report entry. */
function checkListedTool(server: string, listed: Tool, findings: PackageFinding[]): DoctorTool {
  const error = (rule: string, message: string) => findings.push({ rule, severity: "error", message: `server '${server}': ${message}` });
  const warn = (rule: string, message: string) => findings.push({ rule, severity: "warning", message: `server '${server}': ${message}` });
  try {
    validateToolName(listed.name);
  } catch (problem) {
    if (problem instanceof PluginKitError) error(problem.code, problem.message);
  }
  const schema = listed.inputSchema as Record<string, unknown>;
  if (schema["type"] !== "object") error("SCHEMA_INVALID", `tool '${listed.name}' inputSchema.type must be "object"`);
  if (Object.hasOwn(schema, "parameters") || (Object.hasOwn(schema, "name") && Object.hasOwn(schema, "description"))) {
    error("SCHEMA_TOP_LEVEL_PROPERTIES", `tool '${listed.name}' inputSchema is a whole function schema; list only the parameters object (the model would see no arguments)`);
  }
  const properties = isObject(schema["properties"]) ? schema["properties"] : {};
  const unknown = requiredOf(listed).filter((name) => typeof name !== "string" || !Object.hasOwn(properties, name));
  if (unknown.length > 0) error("SCHEMA_REQUIRED_UNKNOWN", `tool '${listed.name}' requires unknown properties: ${unknown.join(", ")}`);
  checkSchemaKeywords(listed, schema, error);
  if (schema["additionalProperties"] !== false) warn("SCHEMA_OPEN", `tool '${listed.name}' inputSchema lacks additionalProperties: false`);
  if (!listed.description || listed.description.trim() === "") warn("TOOL_DESCRIPTION_REQUIRED", `tool '${listed.name}' has no description (Hermes shows a generic one)`);
  return {
    name: listed.name,
    hermesName: clampedHermesToolName(server, listed.name),
    description: listed.description ?? "",
    readOnly: listed.annotations?.readOnlyHint === true,
    inputSchema: listed.inputSchema,
    calls: [],
  };
}

/** Problems of one listed schema reported at most; the rest are counted in one more finding. */
const MAX_KEYWORD_FINDINGS = 20;

/**
 * The listed `inputSchema` against the rules of whatever validates its
 * arguments, read from `_meta["hermes-plugin-kit/validator"]`
 * ({@link VALIDATOR_META_KEY}): `"kit"` (a kit tool with `params` or
 * `schema`) holds only keywords the kit's argument validation enforces
 * (schema-keywords.ts), as `tool({schema})` requires; `"zod"` is exempt (zod
 * checks its own schema); a tool without the marker (a server not built with
 * the kit) is JSON Schema validated by its own server: any keyword, but each
 * keyword JSON Schema defines must hold a value it allows. Each problem is a
 * `SCHEMA_INVALID` error.
 */
function checkSchemaKeywords(listed: Tool, schema: Record<string, unknown>, error: (rule: string, message: string) => void): void {
  const validator = listed._meta?.[VALIDATOR_META_KEY];
  if (validator === "zod" || !isObject(schema)) return;
  if (validator !== "kit") {
    const problems = jsonSchemaValueProblems(schema, "inputSchema");
    for (const problem of problems.slice(0, MAX_KEYWORD_FINDINGS)) {
      error("SCHEMA_INVALID", `tool '${listed.name}': ${problem.message}${problem.unsatisfiable ? "" : " (not valid JSON Schema: the model is told a malformed constraint)"}`);
    }
    if (problems.length > MAX_KEYWORD_FINDINGS) error("SCHEMA_INVALID", `tool '${listed.name}': ... and ${problems.length - MAX_KEYWORD_FINDINGS} more inputSchema keywords with invalid values`);
    return;
  }
  const problems = schemaKeywordProblems(schema, "inputSchema");
  for (const problem of problems.slice(0, MAX_KEYWORD_FINDINGS)) {
    error("SCHEMA_INVALID", `tool '${listed.name}': ${problem.message}${problem.unsatisfiable ? "" : ` (the model is told a constraint nobody checks); ${supportedKeywordsText()}`}`);
  }
  if (problems.length > MAX_KEYWORD_FINDINGS) error("SCHEMA_INVALID", `tool '${listed.name}': ... and ${problems.length - MAX_KEYWORD_FINDINGS} more inputSchema keywords the kit does not check`);
}

function requiredOf(listed: Tool): unknown[] {
  const required = (listed.inputSchema as Record<string, unknown>)["required"];
  return Array.isArray(required) ? required : [];
}

/** The argument sets the doctor sends a read-only tool: `{}` when something is required, then its examples when they cover every required key. */
function attemptsFor(listed: Tool): Array<Record<string, unknown>> {
  const required = requiredOf(listed);
  const examples = isObject(listed._meta?.[EXAMPLES_META_KEY]) ? (listed._meta?.[EXAMPLES_META_KEY] as Record<string, unknown>) : {};
  const attempts: Array<Record<string, unknown>> = [];
  if (required.length > 0) attempts.push({});
  if (required.every((key) => typeof key === "string" && Object.hasOwn(examples, key))) attempts.push(examples);
  return attempts;
}

/**
 * What one `tools/call` came to: the result; an answer over {@link TOOL_RESULT_MAX_BYTES}
 * (`tooLarge`, with its message); or a failure (the raw error, for the caller's own report).
 */
export type CallOutcome = { ok: true; result: ReceivedToolResult } | { ok: false; tooLarge: true; message: string } | { ok: false; tooLarge: false; problem: unknown };

/** The `TOOL_RESULT_TOO_LARGE` message: the bound, the size seen and the fix. */
function tooLargeMessage(server: string, tool: string, seen: string): string {
  return (
    `tools/call ${tool} on server '${server}' answered ${seen}, over the ${TOOL_RESULT_MAX_BYTES} bytes (${TOOL_RESULT_MAX_BYTES / 1024 / 1024} MiB) ` +
    "an MCP client built on the official TypeScript SDK reads from a stdio server in one line (its stdio read buffer): such a client closes the connection instead of answering, " +
    "and no model context holds that much; fix: return less per call (page, filter or summarise the result, or hand back a file path)"
  );
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/** Call `name` on the session's server; measure the answer against {@link TOOL_RESULT_MAX_BYTES}. */
export async function callSessionTool(session: Session, server: string, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CallOutcome> {
  let result: ReceivedToolResult;
  try {
    result = (await withTimeout(session.client.callTool({ name, arguments: args }), timeoutMs, `tools/call ${name}`)) as ReceivedToolResult;
  } catch (problem) {
    if (session.overflowed()) return { ok: false, tooLarge: true, message: tooLargeMessage(server, name, `more than ${READ_CEILING_BYTES} bytes (${mib(READ_CEILING_BYTES)} MiB; the kit's client stops reading there)`) };
    return { ok: false, tooLarge: false, problem };
  }
  const bytes = Buffer.byteLength(JSON.stringify(result), "utf8");
  if (bytes > TOOL_RESULT_MAX_BYTES) return { ok: false, tooLarge: true, message: tooLargeMessage(server, name, `${bytes} bytes (${mib(bytes)} MiB) of JSON`) };
  return { ok: true, result };
}

/** A call with valid arguments (the examples) that answered isError: maybe a working-directory dependency. */
interface FailedExample {
  tool: string;
  args: Record<string, unknown>;
  modelSees: string;
}

async function callReadOnlyTools(session: Session, server: string, report: DoctorServer, options: ServerExerciseOptions, findings: PackageFinding[]): Promise<FailedExample[]> {
  const failed: FailedExample[] = [];
  for (const listed of session.tools) {
    const tool = report.tools.find((t) => t.name === listed.name);
    if (!tool || !tool.readOnly) continue;
    for (const args of attemptsFor(listed)) {
      // After an oversized answer the client has closed the connection: no later call could be answered.
      if (session.overflowed()) return failed;
      const outcome = await callSessionTool(session, server, listed.name, args, options.timeoutMs);
      if (!outcome.ok && outcome.tooLarge) {
        findings.push({ rule: "TOOL_RESULT_TOO_LARGE", severity: "error", message: `server '${server}': ${outcome.message}` });
        continue;
      }
      if (!outcome.ok) {
        findings.push({
          rule: "TOOL_CALL_PROTOCOL_ERROR",
          severity: "error",
          message: `server '${server}': tools/call ${listed.name} answered a JSON-RPC error instead of an isError result (Hermes shows a generic failure and counts a breaker strike): ${messageOf(outcome.problem)}`,
        });
        continue;
      }
      const isError = outcome.result.isError === true;
      const modelSees = renderForModel(outcome.result);
      tool.calls.push({ arguments: args, isError, modelSees });
      const empty = Object.keys(args).length === 0 && requiredOf(listed).length > 0;
      if (empty && !isError) findings.push({ rule: "TOOL_VALIDATION_MISSING", severity: "warning", message: `server '${server}': tool '${listed.name}' accepted a call without its required arguments` });
      if (!empty && isError) failed.push({ tool: listed.name, args, modelSees });
    }
  }
  return failed;
}

const CWD_HINT =
  "Hermes starts the server in its own working directory unless mcp.json sets cwd; resolve package files with pluginPath(...) (PLUGIN_ROOT) instead of paths relative to process.cwd()";

/** Re-run the failed example calls from the package root: the ones that now work depend on the working directory. */
async function classifyFailedExamples(failed: FailedExample[], root: string, data: string, entry: StdioServerEntry, options: ServerExerciseOptions, findings: PackageFinding[]): Promise<void> {
  let fromRoot: Session | null = null;
  try {
    fromRoot = await openSession(root, data, entry, root, options);
  } catch {
    fromRoot = null;
  }
  try {
    for (const call of failed) {
      const again = fromRoot ? await callSessionTool(fromRoot, entry.name, call.tool, call.args, options.timeoutMs) : null;
      if (again?.ok && again.result.isError !== true) {
        findings.push({
          rule: "SERVER_CWD_DEPENDENT",
          severity: "error",
          message: `server '${entry.name}': tool '${call.tool}' fails with its examples when started outside the package root (${call.modelSees.slice(0, 300)}) and works from the package root. ${CWD_HINT}`,
        });
      } else {
        findings.push({ rule: "TOOL_EXAMPLE_FAILED", severity: "warning", message: `server '${entry.name}': tool '${call.tool}' answered its own examples with an error: ${call.modelSees.slice(0, 300)}` });
      }
    }
  } finally {
    await fromRoot?.close();
  }
}

/** After a failed start outside the package root: does the server start from it? */
async function startsFromRoot(root: string, data: string, entry: StdioServerEntry, options: ServerExerciseOptions): Promise<boolean> {
  try {
    const session = await openSession(root, data, entry, root, options);
    await session.close();
    return true;
  } catch {
    return false;
  }
}

function reportStartFailure(problem: unknown, server: string, findings: PackageFinding[]): void {
  const stderr = (problem as { stderr?: string }).stderr ?? "";
  const error = (rule: string, message: string) => findings.push({ rule, severity: "error", message: `server '${server}': ${message}` });
  const refused = /hermes_plugin_kit: refused to serve; code=([A-Z_]+); message=(.*)/.exec(stderr);
  if (refused) error(refused[1] as string, `the server refused to start: ${refused[2]}`);
  const tail = redactText(stderr.trim().split("\n").slice(-5).join("\n")).slice(-1000);
  error("SERVER_START_FAILED", `${messageOf(problem)}${stderr.trim() ? `; stderr: ${tail}` : ""}`);
}

/**
 * Start, check and call one stdio server (see the module comment). Every
 * problem is a finding; never throws for a server problem.
 */
export async function exerciseServer(root: string, data: string, entry: StdioServerEntry, options: ServerExerciseOptions, findings: PackageFinding[]): Promise<DoctorServer> {
  const declared = declaredServerCwd(entry, root, data);
  const hostCwd = declared === null ? mkdtempSync(path.join(os.tmpdir(), "hpk-doctor-cwd-")) : null;
  const cwd = declared ?? (hostCwd as string);
  const report: DoctorServer = { name: entry.name, started: false, cwd, cwdSource: declared === null ? "host" : "mcp.json", tools: [] };
  const protocolErrors: string[] = [];
  try {
    let session: Session;
    try {
      session = await openSession(root, data, entry, cwd, options);
    } catch (problem) {
      protocolErrors.push(...((problem as { protocolErrors?: string[] }).protocolErrors ?? []));
      reportStartFailure(problem, entry.name, findings);
      if (hostCwd !== null && (await startsFromRoot(root, data, entry, options))) {
        findings.push({ rule: "SERVER_CWD_DEPENDENT", severity: "error", message: `server '${entry.name}': does not start outside the package root but starts from it. ${CWD_HINT}` });
      }
      return report;
    }
    report.started = true;
    report.startMs = session.startMs;
    try {
      for (const listed of session.tools) report.tools.push(checkListedTool(entry.name, listed, findings));
      const failed = options.callTools ? await callReadOnlyTools(session, entry.name, report, options, findings) : [];
      for (const problem of checkHermesToolNames(entry.name, session.tools.map((t) => t.name))) {
        findings.push({ rule: problem.code, severity: "error", message: `server '${entry.name}': ${problem.message}` });
      }
      if (failed.length > 0) {
        if (hostCwd !== null) await classifyFailedExamples(failed, root, data, entry, options, findings);
        else for (const call of failed) findings.push({ rule: "TOOL_EXAMPLE_FAILED", severity: "warning", message: `server '${entry.name}': tool '${call.tool}' answered its own examples with an error: ${call.modelSees.slice(0, 300)}` });
      }
    } finally {
      protocolErrors.push(...session.protocolErrors);
      await session.close();
    }
    return report;
  } finally {
    for (const message of protocolErrors.slice(0, 5)) {
      findings.push({ rule: "STDOUT_NOT_PROTOCOL", severity: "error", message: `server '${entry.name}': wrote something other than JSON-RPC to stdout: ${redactText(message).slice(0, 200)}` });
    }
    if (hostCwd !== null) rmSync(hostCwd, { recursive: true, force: true });
  }
}
