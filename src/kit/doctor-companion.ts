/**
 * The doctor's check of native companions (`host/<dir>/`, companion.ts;
 * Hermes plugin.yaml manifest; `hermes plugins doctor`): plugin.yaml keys Hermes reads, name, version equal to
 * the portable package's, `provides_hooks` a list of `VALID_HOOKS` names,
 * `__init__.py` present; then, under Python 3 with the stand-in host context
 * (companion-standin.ts), `register` present and not raising, only standard
 * library imports, no network, every callback accepting `**kwargs`, every
 * registered name valid and declared, and each hook, command and middleware
 * driven once through the real bridge to the package's server. Without a
 * Python 3 interpreter the companion is reported unchecked, never clean.
 */
import { spawn, spawnSync } from "node:child_process";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { COMPANION_PARENT_DIR } from "./companion.js";
import { companionStandInSource } from "./companion-standin.js";
import { BUILTIN_COMMAND_NAMES, COMMAND_NAME_PATTERN, REQUEST_MIDDLEWARE_KINDS, VALID_HOOKS } from "./hooks.js";
import type { PackageFinding } from "./portable.js";
import { PluginKitError } from "./errors.js";

/** Manifest fields Hermes knows (`_KNOWN_MANIFEST_FIELDS`, Hermes plugin.yaml manifest, v1 and v2); others draw a warning from the host. */
export const NATIVE_MANIFEST_FIELDS: readonly string[] = [
  "name", "version", "description", "author", "requires_env", "provides_tools", "provides_hooks", "kind", "hooks", "label",
  "optional_env", "platforms", "external_dependencies", "pip_dependencies", "provides_browser_providers", "provides_web_providers",
  "requires_hermes", "capabilities", "emits", "listens", "hermes", "depends", "manifest_version", "api_version", "requires_plugins",
  "python_dependencies", "config_schema", "license", "homepage", "tags", "python_runtime",
];

/** One callback the doctor drove. */
export interface DoctorCompanionCall {
  kind: "hook" | "command" | "middleware";
  name: string;
  /** False when the callback raised in the host. */
  ok: boolean;
  /** JSON preview of what the host received (at most 300 characters). */
  value?: string;
  /** Exception class raised in the host. */
  exception?: string;
  /** `error_type` of the callback's WARNING line (TypeScript error class or Bridge*). */
  errorType?: string;
  /** True when `pre_tool_call` blocked because the bridge failed. */
  failedClosed: boolean;
  elapsedMs: number;
}

/** One companion directory. */
export interface DoctorCompanion {
  /** Package-relative directory. */
  dir: string;
  name?: string;
  version?: string;
  /** True when register(ctx) ran under Python 3. */
  checked: boolean;
  registered: { commands: string[]; middleware: string[]; hooks: string[] };
  calls: DoctorCompanionCall[];
}

/** Settings of the companion check. */
export interface CompanionCheckOptions {
  /** Python 3 interpreter (default `python3` on PATH). */
  python: string;
  environment: NodeJS.ProcessEnv;
  /** Bound of the whole stand-in run, ms. */
  timeoutMs: number;
  /** A tool call for the sample `pre_tool_call` / `tool_request` payload (Hermes name and arguments). */
  sampleTool: { name: string; args: Record<string, unknown> } | null;
  plugin: { name?: string; version?: string };
  /** Drive each hook, command and middleware once (false: register(ctx) and the static checks only, like `--no-call`). */
  drive: boolean;
  /** Do not run the companion at all (`--skip-companion`): each companion is the warning `COMPANION_NOT_CHECKED`. Default false. */
  skip?: boolean;
}

const BRIDGE_FAILURES = new Set(["BridgeError", "BridgeTimeout", "BridgeUnavailable", "BridgeProtocolError"]);
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/** Check plugin.yaml; returns the declared hooks (or null when unusable). */
function checkManifest(root: string, dir: string, companion: DoctorCompanion, plugin: CompanionCheckOptions["plugin"], add: (rule: string, severity: PackageFinding["severity"], message: string, file?: string) => void): string[] | null {
  const file = `${dir}/plugin.yaml`;
  let manifest: unknown;
  try {
    if (!lstatSync(path.join(root, file)).isFile()) throw new Error("not a regular file");
    manifest = parseYaml(readFileSync(path.join(root, file), "utf8"), { uniqueKeys: true, maxAliasCount: 0 });
  } catch (error) {
    const missing = (error as { code?: string }).code === "ENOENT";
    add(missing ? "COMPANION_MANIFEST_MISSING" : "COMPANION_MANIFEST_INVALID", "error", missing ? `${file} is missing: Hermes loads no native plugin there` : `${file} is not valid YAML: ${error instanceof Error ? error.message.split("\n", 1)[0] : String(error)}`, file);
    return null;
  }
  if (!isObject(manifest)) {
    add("COMPANION_MANIFEST_INVALID", "error", `${file} must be a YAML mapping`, file);
    return null;
  }
  for (const key of Object.keys(manifest)) {
    if (!NATIVE_MANIFEST_FIELDS.includes(key)) add("COMPANION_MANIFEST_KEY_UNKNOWN", "warning", `${file}: '${key}' is not a manifest field Hermes reads`, file);
  }
  if (typeof manifest["name"] !== "string" || manifest["name"].trim() === "") add("COMPANION_NAME_INVALID", "error", `${file}: name must be a non-empty string`, file);
  else companion.name = manifest["name"];
  if (typeof manifest["version"] === "string") companion.version = manifest["version"];
  if (plugin.version !== undefined && manifest["version"] !== plugin.version) {
    add("COMPANION_VERSION_MISMATCH", "error", `${file}: version ${JSON.stringify(manifest["version"] ?? null)} differs from plugin.json version ${plugin.version}; the companion refuses a package of another version: rebuild both`, file);
  }
  const hooks = manifest["provides_hooks"] ?? [];
  if (!Array.isArray(hooks) || !hooks.every((hook) => typeof hook === "string")) {
    add("COMPANION_PROVIDES_HOOKS_INVALID", "error", `${file}: provides_hooks must be a list of strings`, file);
    return [];
  }
  for (const hook of hooks) if (!(VALID_HOOKS as readonly string[]).includes(hook)) add("COMPANION_HOOK_UNKNOWN", "error", `${file}: provides_hooks names ${JSON.stringify(hook)}, not one of Hermes' VALID_HOOKS`, file);
  return hooks as string[];
}

interface StandInReport {
  loaded: boolean;
  register: string | null;
  non_stdlib: string[];
  registered: Array<{ kind: string; name: string; var_keyword: boolean }>;
  calls: Array<{ kind: "hook" | "command" | "middleware"; name: string; ok: boolean; value?: string; exception?: string; error_type: string | null; failed_closed: boolean; elapsed_ms: number }>;
  network: boolean;
}

/** Sample payloads of the drive: what Hermes passes, minus live objects. */
function samplePlan(options: CompanionCheckOptions): Record<string, unknown> {
  const ids = { session_id: "hermes-plugin-kit-doctor", task_id: "doctor-task" };
  const tool = options.sampleTool ?? { name: "doctor_sample_tool", args: {} };
  const schema = { telemetry_schema_version: "hermes.observer.v1", middleware_schema_version: "hermes.middleware.v1" };
  return {
    name: options.plugin.name ?? "plugin",
    version: options.plugin.version ?? "0.0.0",
    command_args: "",
    drive: options.drive,
    samples: {
      default: ids,
      pre_tool_call: { ...ids, tool_name: tool.name, args: tool.args },
      post_tool_call: { ...ids, tool_name: tool.name, args: tool.args, result: "{}", duration_ms: 1, status: "success" },
      pre_llm_call: { ...ids, user_message: "What does the doctor see?", is_first_turn: true },
      transform_llm_output: { ...ids, response_text: "doctor" },
      tool_request: { ...ids, ...schema, tool_name: tool.name, args: tool.args },
      llm_request: { ...ids, ...schema, request: { model: "doctor", messages: [] } },
    },
  };
}

function runStandIn(companionDir: string, plan: Record<string, unknown>, options: CompanionCheckOptions, home: string): Promise<{ report?: StandInReport; problem?: string }> {
  const env: Record<string, string> = { HERMES_HOME: path.join(home, ".hermes"), HOME: home, PYTHONDONTWRITEBYTECODE: "1", PYTHONIOENCODING: "utf-8" };
  for (const key of ["PATH", "LANG", "LC_ALL", "TMPDIR"]) if (options.environment[key] !== undefined) env[key] = options.environment[key] as string;
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let child;
    try {
      child = spawn(options.python, ["-c", companionStandInSource(), companionDir], { cwd: home, env, stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      return resolve({ problem: `could not start ${options.python}: ${error instanceof Error ? error.message : String(error)}` });
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 64 * 1024) stderr += chunk.toString("utf8");
    });
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ problem: `could not start ${options.python}: ${error.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split("\n").at(-1) ?? "";
      try {
        resolve({ report: JSON.parse(last) as StandInReport });
      } catch {
        resolve({ problem: `the stand-in ended (${signal ?? `exit ${code}`}) without a report; stderr: ${stderr.trim().split("\n").slice(-3).join(" | ").slice(0, 500)}` });
      }
    });
    child.stdin.end(JSON.stringify(plan));
  });
}

function checkRegistrations(report: StandInReport, dir: string, declared: string[], companion: DoctorCompanion, add: (rule: string, severity: PackageFinding["severity"], message: string) => void): void {
  if (report.register !== "ok") {
    add(report.register === "missing" ? "COMPANION_REGISTER_MISSING" : "COMPANION_REGISTER_FAILED", "error", `${dir}/__init__.py: register(ctx) ${report.register === "missing" ? "is missing" : report.register ?? "did not run"}`);
  }
  if (report.non_stdlib.length > 0) add("COMPANION_NOT_STDLIB", "error", `${dir}/__init__.py imports ${report.non_stdlib.join(", ")}: a companion may use the Python standard library only`);
  for (const entry of report.registered) {
    if (!entry.var_keyword) add("COMPANION_CALLBACK_SIGNATURE", "error", `${entry.kind} ${entry.name}: the callback must accept **kwargs (Hermes' doctor requires it)`);
    if (entry.kind === "hook") {
      companion.registered.hooks.push(entry.name);
      if (!(VALID_HOOKS as readonly string[]).includes(entry.name)) add("COMPANION_HOOK_UNKNOWN", "error", `registered hook ${JSON.stringify(entry.name)} is not one of Hermes' VALID_HOOKS`);
      else if (!declared.includes(entry.name)) add("COMPANION_HOOK_UNDECLARED", "warning", `hook ${entry.name} is registered but not in provides_hooks`);
    } else if (entry.kind === "command") {
      companion.registered.commands.push(entry.name);
      if (!COMMAND_NAME_PATTERN.test(entry.name)) add("COMMAND_NAME_INVALID", "error", `command ${JSON.stringify(entry.name)} must be bare lowercase kebab-case`);
      else if (BUILTIN_COMMAND_NAMES.includes(entry.name)) add("COMMAND_NAME_BUILTIN", "error", `command /${entry.name} clashes with a built-in Hermes command; Hermes skips it`);
    } else if (entry.kind === "middleware") {
      companion.registered.middleware.push(entry.name);
      if (!(REQUEST_MIDDLEWARE_KINDS as readonly string[]).includes(entry.name)) add("MIDDLEWARE_KIND_UNKNOWN", "error", `middleware kind ${JSON.stringify(entry.name)} is not tool_request or llm_request`);
    }
  }
  for (const hook of declared) if (!companion.registered.hooks.includes(hook)) add("COMPANION_HOOK_NOT_REGISTERED", "warning", `provides_hooks declares ${hook} but register(ctx) does not register it`);
}

function checkCalls(report: StandInReport, companion: DoctorCompanion, add: (rule: string, severity: PackageFinding["severity"], message: string) => void): void {
  for (const call of report.calls) {
    const entry: DoctorCompanionCall = { kind: call.kind, name: call.name, ok: call.ok, failedClosed: call.failed_closed, elapsedMs: call.elapsed_ms };
    if (call.value !== undefined) entry.value = call.value;
    if (call.exception !== undefined) entry.exception = call.exception;
    if (call.error_type) entry.errorType = call.error_type;
    companion.calls.push(entry);
    const label = call.kind === "command" ? `command /${call.name}` : call.kind === "middleware" ? `${call.name} middleware` : `hook ${call.name}`;
    const type = call.error_type ?? call.exception ?? "";
    if (call.ok && !call.failed_closed) continue;
    if (BRIDGE_FAILURES.has(type)) {
      add("COMPANION_BRIDGE_FAILED", "error", `${label}: the bridge to the server failed (${type})${call.failed_closed ? "; pre_tool_call blocked every tool call" : ""}: ${call.value ?? ""}`.trim());
    } else {
      add("COMPANION_CALLBACK_RAISED", "warning", `${label}: the plugin's callback raised ${type || "an error"} on the doctor's sample payload`);
    }
  }
  if (report.network) add("COMPANION_NETWORK", "error", "the companion tried to open a network connection");
}

/** The companion directories under `<root>/host/` (every subdirectory; Hermes would load each as a native plugin). */
function companionDirs(root: string): string[] {
  try {
    return readdirSync(path.join(root, COMPANION_PARENT_DIR), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${COMPANION_PARENT_DIR}/${entry.name}`)
      .sort();
  } catch {
    return [];
  }
}

/** The `COMPANION_PYTHON_MISSING` message: what was expected, what was found and the fix. */
function pythonMissingMessage(python: string): string {
  return (
    `expected a Python 3 interpreter to run the native companion (Hermes loads it under Python 3: its hooks, slash commands and middleware), found no program ${python}` +
    `${python === "python3" ? " on PATH" : ""}: register(ctx) was not run and no callback was driven, so the host contract is unchecked; ` +
    'fix: install Python 3 (e.g. apt-get install python3) or pass --python PATH (library: python); to skip the companion check on purpose, pass --skip-companion (library: skipCompanion: true), reported as the warning COMPANION_NOT_CHECKED'
  );
}

/**
 * Check every companion of the package at `root` (see the module comment).
 * Every problem is a finding; never throws for a package problem.
 */
export async function checkCompanions(root: string, options: CompanionCheckOptions, findings: PackageFinding[]): Promise<DoctorCompanion[]> {
  const out: DoctorCompanion[] = [];
  for (const dir of companionDirs(root)) {
    const companion: DoctorCompanion = { dir, checked: false, registered: { commands: [], middleware: [], hooks: [] }, calls: [] };
    out.push(companion);
    const add = (rule: string, severity: PackageFinding["severity"], message: string, file = `${dir}/__init__.py`) => findings.push({ rule, severity, message: `companion ${dir}: ${message}`, file });
    const declared = checkManifest(root, dir, companion, options.plugin, add);
    let initState = "missing";
    try {
      initState = lstatSync(path.join(root, dir, "__init__.py")).isFile() ? "ok" : "not-regular";
    } catch {
      initState = "missing";
    }
    if (initState !== "ok") add("COMPANION_INIT_MISSING", "error", `${dir}/__init__.py must be a regular file with register(ctx)`);
    if (declared === null || initState !== "ok") continue;
    if (options.skip === true) {
      add("COMPANION_NOT_CHECKED", "warning", "skipped on request (--skip-companion): register(ctx) was not run and no callback was driven (unchecked, not clean)");
      continue;
    }
    const home = mkdtempSync(path.join(os.tmpdir(), "hpk-doctor-host-"));
    try {
      const { report, problem } = await runStandIn(path.join(root, dir), samplePlan(options), options, home);
      if (!report) {
        // Fail closed: a companion the host would run under Python 3 that was not run leaves the host contract unchecked.
        if (/ENOENT/.test(problem ?? "")) add("COMPANION_PYTHON_MISSING", "error", pythonMissingMessage(options.python));
        else add("COMPANION_STANDIN_FAILED", "error", problem ?? "the stand-in failed");
        continue;
      }
      companion.checked = report.loaded;
      checkRegistrations(report, dir, declared, companion, add);
      checkCalls(report, companion, add);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }
  return out;
}

/**
 * A Python interpreter the user named (`plugin doctor --python P`) must run
 * and be Python 3: a check that was asked for and cannot run fails the
 * doctor instead of passing unchecked. Runs `P -c <print major version>` with
 * a 10 s timeout.
 * @throws PluginKitError `DOCTOR_PYTHON_UNAVAILABLE` naming the path, what was found and the fix.
 */
export function requirePythonInterpreter(python: string): void {
  const run = spawnSync(python, ["-c", "import sys; print(sys.version_info[0])"], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "pipe"] });
  const found =
    run.error !== undefined
      ? `${(run.error as NodeJS.ErrnoException).code === "ENOENT" ? "no such program" : (run.error as NodeJS.ErrnoException).code ?? run.error.message}`
      : run.status !== 0
        ? `it exited ${run.status ?? run.signal}`
        : run.stdout.trim() !== "3"
          ? `Python ${run.stdout.trim() || "?"}`
          : undefined;
  if (found === undefined) return;
  throw new PluginKitError(
    "DOCTOR_PYTHON_UNAVAILABLE",
    `--python ${python}: expected a Python 3 interpreter to run the native companion check, found ${found}; fix: pass a Python 3 interpreter (e.g. --python "$(command -v python3)"), or omit --python to use python3 on PATH`,
  );
}
