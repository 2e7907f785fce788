/**
 * `plugin doctor`: check a built Agent Plugins v1 package the way Hermes
 * would load it (`hermes plugins doctor`; Agent Plugins v1 loader; Hermes MCP client; Hermes install scanner) and exercise its MCP servers through the
 * official SDK `Client` over stdio.
 *
 * Steps: plugin.json, skills/ and mcp.json against the portable rules; each
 * stdio server started the way Hermes starts it (filtered environment: only
 * PATH, HOME, USER, LANG, LC_ALL, TERM, SHELL, TMPDIR, XDG_*, the entry's
 * env, PLUGIN_ROOT, PLUGIN_DATA; working directory only when mcp.json sets
 * `cwd`, see doctor-server.ts); `tools/list` checked (name rules, Hermes
 * names, schemas); read-only tools called without arguments and with their
 * examples, each result rendered as the model would see it; every package
 * text file scanned for install-scanner patterns. Findings are named by rule
 * code; any `error` finding fails the report.
 */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseStrictJson } from "../contract/canonical-json.js";
import { checkCompanions, requirePythonInterpreter, type DoctorCompanion } from "./doctor-companion.js";
import { exerciseServer, type DoctorServer } from "./doctor-server.js";
import { inputTypeError, PluginKitError } from "./errors.js";
import { requireKnownOptions, requireOptionTypes } from "./option-keys.js";
import {
  BINARY_EXTENSIONS,
  checkMcpConfig,
  checkPluginManifest,
  SCAN_LARGE_FILE_BYTES,
  SCANNED_EXTENSIONS,
  scanTextForInstallRisks,
  type PackageFinding,
  type StdioServerEntry,
} from "./portable.js";
import { checkSkillFrontmatter, parseSkillDocument, qualifiedSkillName, SKILL_FILE_MAX_BYTES } from "./skills.js";

/** One skill found under skills/. */
export interface DoctorSkill {
  name: string;
  qualifiedName: string;
  ok: boolean;
}

/** The doctor's report (also the `--json` output). */
export interface DoctorReport {
  ok: boolean;
  root: string;
  plugin: { name?: string; version?: string };
  findings: PackageFinding[];
  skills: DoctorSkill[];
  servers: DoctorServer[];
  /** Native companions under `host/` (hooks, slash commands, middleware). */
  companions: DoctorCompanion[];
}

/** Options of {@link doctorPluginPackage}. */
export interface DoctorOptions {
  /** Timeout of each server step (start, list, call), in ms. Default 15000. */
  timeoutMs?: number;
  /** Call read-only tools (default true). */
  callTools?: boolean;
  /** PLUGIN_DATA given to servers (default: a fresh temp directory, removed afterwards). */
  dataDir?: string;
  /** Environment the filtered server environment is taken from (default `process.env`). */
  environment?: NodeJS.ProcessEnv;
  /**
   * Python 3 interpreter that runs the companion's register(ctx) (default `python3` on PATH). When a
   * package has a native companion and no interpreter is found, the doctor fails with the error
   * finding `COMPANION_PYTHON_MISSING` (the host contract would pass unchecked otherwise).
   */
  python?: string;
  /**
   * Do not run the native companions (the CLI's `--skip-companion`): each is reported as the warning
   * `COMPANION_NOT_CHECKED` instead, so the doctor can pass without Python 3 on purpose. Default false.
   */
  skipCompanion?: boolean;
}

/** Every option of {@link DoctorOptions}; any other key is refused with the nearest name. */
const DOCTOR_OPTION_KEYS: readonly string[] = ["timeoutMs", "callTools", "dataDir", "environment", "python", "skipCompanion"];

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

function regularFileInside(root: string, relative: string): "missing" | "not-regular" | "ok" {
  let stat;
  try {
    stat = lstatSync(path.join(root, relative));
  } catch {
    return "missing";
  }
  return stat.isFile() ? "ok" : "not-regular";
}

function readJsonFile(root: string, relative: string, findings: PackageFinding[], rulePrefix: "PLUGIN_JSON" | "MCP_JSON"): unknown {
  try {
    const bytes = readFileSync(path.join(root, relative));
    const text = bytes.toString("utf8").replace(/^\uFEFF/, "");
    return parseStrictJson(text, { rejectIntegralFloats: false });
  } catch (error) {
    findings.push({ rule: `${rulePrefix}_INVALID`, severity: "error", message: `${relative} is not a valid JSON object: ${error instanceof Error ? error.message : String(error)}`, file: relative });
    return undefined;
  }
}

function checkSkills(root: string, pluginName: string | undefined, findings: PackageFinding[]): DoctorSkill[] {
  const skills: DoctorSkill[] = [];
  let entries;
  try {
    if (!lstatSync(path.join(root, "skills")).isDirectory()) return skills;
    entries = readdirSync(path.join(root, "skills"), { withFileTypes: true });
  } catch {
    return skills;
  }
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!entry.isDirectory()) continue;
    const relative = `skills/${entry.name}/SKILL.md`;
    const state = regularFileInside(root, relative);
    if (state === "missing") continue;
    const before = findings.length;
    const add = (rule: string, message: string) => findings.push({ rule, severity: "error", message: `${relative}: ${message}`, file: relative });
    if (state === "not-regular") add("SKILL_NOT_FOUND", "must be a regular file inside the package (Hermes skips it)");
    else if (lstatSync(path.join(root, relative)).size > SKILL_FILE_MAX_BYTES) add("SKILL_NOT_FOUND", `larger than ${SKILL_FILE_MAX_BYTES} bytes`);
    else {
      try {
        const document = parseSkillDocument(readFileSync(path.join(root, relative), "utf8"), relative);
        for (const problem of checkSkillFrontmatter(document.frontmatter, entry.name)) add(problem.code, problem.message);
      } catch (error) {
        if (error instanceof PluginKitError) findings.push({ rule: error.code, severity: "error", message: error.message, file: relative });
        else throw error;
      }
    }
    skills.push({ name: entry.name, qualifiedName: qualifiedSkillName(pluginName ?? "plugin", entry.name), ok: findings.length === before });
  }
  return skills;
}

/** Most files the package scan visits, and how deep it goes: a plugin package is small (docs/kit.md, doctor). */
export const SCAN_MAX_FILES = 5000;
const SCAN_MAX_DEPTH = 16;

function scanPackage(root: string, findings: PackageFinding[]): void {
  const files: string[] = [];
  let truncated = false;
  const walk = (dir: string, prefix: string, depth: number) => {
    if (depth > SCAN_MAX_DEPTH || files.length >= SCAN_MAX_FILES) {
      truncated = true;
      return;
    }
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      // A directory this user cannot read is a finding about the package, not a crash of the doctor.
      findings.push({ rule: "PACKAGE_UNREADABLE", severity: "error", message: `${prefix || "."} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"}); Hermes could not load it either`, file: prefix || "." });
      return;
    }
    for (const entry of entries) {
      if (files.length >= SCAN_MAX_FILES) {
        truncated = true;
        return;
      }
      const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name === "node_modules" || entry.name === ".git") continue;
        walk(path.join(dir, entry.name), relative, depth + 1);
      } else if (entry.isSymbolicLink()) {
        findings.push({ rule: "PACKAGE_SYMLINK", severity: "warning", message: `${relative} is a symlink; Hermes only loads regular in-package files`, file: relative });
      } else if (entry.isFile()) files.push(relative);
    }
  };
  walk(root, "", 0);
  if (truncated) findings.push({ rule: "SCAN_TRUNCATED", severity: "error", message: `the scan stopped after ${files.length} files or ${SCAN_MAX_DEPTH} levels: this is not one plugin package (a plugin ships a few dozen files); pass the plugin's own directory` });
  if (files.length > 50) findings.push({ rule: "SCAN_MANY_FILES", severity: "info", message: `${files.length} files (the install scanner notes packages over 50 files)` });
  for (const relative of files.sort()) {
    const lower = relative.toLowerCase();
    const ext = path.extname(lower);
    const size = lstatSync(path.join(root, relative)).size;
    if (BINARY_EXTENSIONS.includes(ext)) {
      findings.push({ rule: "SCAN_BINARY", severity: "error", message: `${relative} is a binary (the install scanner blocks it)`, file: relative });
      continue;
    }
    if (size > SCAN_LARGE_FILE_BYTES) findings.push({ rule: "SCAN_LARGE_FILE", severity: "info", message: `${relative} is ${size} bytes (the install scanner notes files over 256 KiB)`, file: relative });
    if ((SCANNED_EXTENSIONS.includes(ext) || path.basename(relative) === "SKILL.md") && size <= 32 * 1024 * 1024) {
      findings.push(...scanTextForInstallRisks(relative, readFileSync(path.join(root, relative), "utf8")));
    }
  }
}

/** True when `root/package.json` is a plugin project's: a `hermesPluginKit` object, or `hermes-plugin-kit` among its dependencies. */
function isPluginProject(root: string): boolean {
  if (regularFileInside(root, "package.json") !== "ok") return false;
  let pkg: unknown;
  try {
    pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  } catch {
    return false;
  }
  if (!isObject(pkg)) return false;
  if (isObject(pkg["hermesPluginKit"])) return true;
  return ["dependencies", "devDependencies", "peerDependencies"].some((field) => {
    const deps = pkg[field];
    return isObject(deps) && typeof deps["hermes-plugin-kit"] === "string";
  });
}

/** For a directory without plugin.json: the hint that it is a plugin project that was not built (it has package.json), or what a package holds. */
function unbuiltHint(root: string): string {
  if (regularFileInside(root, "package.json") === "ok") {
    return `; ${root} looks like an unbuilt plugin project (package.json, no plugin.json): run \`npm run build\` there (plugin build <entry> --out <dir>) and run doctor on the built package directory`;
  }
  return "; expected a built package (plugin.json, mcp.json, dist/server.js): run plugin build <entry> --out <dir> first";
}

/**
 * Check the package at `dir` (see the module comment). Never throws for a
 * package problem: every problem is a finding; `ok` is false when any
 * finding is an error.
 *
 * @throws PluginKitError `DOCTOR_PACKAGE_MISSING` when `dir` is not a directory,
 *   `DOCTOR_NOT_A_PLUGIN` when it is no plugin directory (no plugin.json at its top and no plugin
 *   project's package.json; nothing is walked),
 *   `DOCTOR_PYTHON_UNAVAILABLE` when `options.python` is given and is not a runnable Python 3,
 *   `INPUT_TYPE_INVALID` (before anything is read) when `dir` is not a string, `options` not an
 *   object, holds a key it does not read (named with the nearest known one; `noCall` and the like
 *   with the hint that --no-call is `callTools: false`), or has a value of the wrong type (`timeoutMs` an integer
 *   100..600,000, `callTools`/`skipCompanion` booleans, `dataDir`/`python` strings, `environment` an object of strings).
 */
export async function doctorPluginPackage(dir: string, options: DoctorOptions = {}): Promise<DoctorReport> {
  if (typeof dir !== "string") throw inputTypeError("doctorPluginPackage", "dir", "a string (the package directory)", dir);
  requireKnownOptions("doctorPluginPackage", options, DOCTOR_OPTION_KEYS, "INPUT_TYPE_INVALID", (key) => (/call|^no-?cal/i.test(key) ? "the CLI's --no-call is callTools: false" : undefined));
  requireOptionTypes("doctorPluginPackage", options, { timeoutMs: { integer: [100, 600_000] }, callTools: "boolean", dataDir: "string", environment: "string-record", python: "string", skipCompanion: "boolean" });
  let root: string;
  try {
    root = realpathSync(path.resolve(dir));
    if (!lstatSync(root).isDirectory()) throw new Error("not a directory");
  } catch {
    throw new PluginKitError("DOCTOR_PACKAGE_MISSING", `package directory ${dir} does not exist or is not a directory: expected a built package (plugin.json, mcp.json, dist/server.js); fix: run \`npm run build\` in the plugin project (plugin build <entry> --out <dir>) and pass that output directory`);
  }
  // Only a plugin directory is checked (never a whole tree such as / or /tmp): plugin.json at its top,
  // or the package.json of a plugin project (PLUGIN_JSON_MISSING then says to build it).
  if (regularFileInside(root, "plugin.json") === "missing" && !isPluginProject(root)) {
    throw new PluginKitError(
      "DOCTOR_NOT_A_PLUGIN",
      `${root} is not a plugin directory: it has no plugin.json at its top and no package.json of a plugin project (a hermesPluginKit field or a hermes-plugin-kit dependency), so nothing was checked; ` +
        `fix: pass the plugin's own directory: the built package (plugin.json, mcp.json, dist/server.js; e.g. node_modules/<plugin>), or your plugin project after \`npm run build\``,
    );
  }
  // An interpreter the caller named must run before anything is checked (a requested check never passes unrun).
  if (options.python !== undefined) requirePythonInterpreter(options.python);
  const findings: PackageFinding[] = [];
  const report: DoctorReport = { ok: false, root, plugin: {}, findings, skills: [], servers: [], companions: [] };
  const manifestState = regularFileInside(root, "plugin.json");
  if (manifestState !== "ok") {
    findings.push({ rule: "PLUGIN_JSON_MISSING", severity: "error", message: `plugin.json must be a regular file at the package root${unbuiltHint(root)}`, file: "plugin.json" });
  } else {
    const manifest = readJsonFile(root, "plugin.json", findings, "PLUGIN_JSON");
    if (manifest !== undefined) {
      findings.push(...checkPluginManifest(manifest));
      if (isObject(manifest)) {
        if (typeof manifest["name"] === "string") report.plugin.name = manifest["name"];
        if (typeof manifest["version"] === "string") report.plugin.version = manifest["version"];
      }
    }
  }
  if (report.plugin.version !== undefined && regularFileInside(root, "package.json") === "ok") {
    try {
      const npmVersion = (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { version?: unknown }).version;
      if (typeof npmVersion === "string" && npmVersion !== report.plugin.version) {
        findings.push({ rule: "PLUGIN_VERSION_MISMATCH", severity: "warning", message: `plugin.json version ${report.plugin.version} differs from package.json version ${npmVersion}; rebuild the package`, file: "plugin.json" });
      }
    } catch {
      // package.json is npm's business; an unreadable one is not a portable-package rule.
    }
  }
  for (const native of ["plugin.yaml", "plugin.yml"]) {
    if (regularFileInside(root, native) !== "missing") {
      findings.push({ rule: "PLUGIN_YAML_PRESENT", severity: "error", message: `${native} makes Hermes load a native plugin and ignore mcp.json`, file: native });
    }
  }
  report.skills = checkSkills(root, report.plugin.name, findings);
  let servers: StdioServerEntry[] = [];
  const mcpState = regularFileInside(root, "mcp.json");
  if (mcpState === "missing") findings.push({ rule: "MCP_JSON_MISSING", severity: "warning", message: "no mcp.json: the package ships no tools", file: "mcp.json" });
  else if (mcpState === "not-regular") findings.push({ rule: "MCP_JSON_INVALID", severity: "error", message: "mcp.json must be a regular file", file: "mcp.json" });
  else {
    const mcp = readJsonFile(root, "mcp.json", findings, "MCP_JSON");
    if (mcp !== undefined) {
      const checked = checkMcpConfig(mcp, root);
      findings.push(...checked.findings);
      servers = checked.servers;
    }
  }
  scanPackage(root, findings);
  if (servers.length > 0) {
    const data = options.dataDir ? path.resolve(options.dataDir) : mkdtempSync(path.join(os.tmpdir(), "hpk-doctor-data-"));
    try {
      for (const entry of servers) {
        report.servers.push(
          await exerciseServer(root, data, entry, { timeoutMs: options.timeoutMs ?? 15_000, callTools: options.callTools ?? true, environment: options.environment ?? process.env }, findings),
        );
      }
    } finally {
      if (!options.dataDir) rmSync(data, { recursive: true, force: true });
    }
  }
  report.companions = await checkCompanions(
    root,
    { python: options.python ?? "python3", environment: options.environment ?? process.env, timeoutMs: 60_000 + (options.timeoutMs ?? 15_000), sampleTool: sampleToolCall(report.servers), plugin: report.plugin, drive: options.callTools ?? true, skip: options.skipCompanion ?? false },
    findings,
  );
  report.ok = !findings.some((f) => f.severity === "error");
  return report;
}

/** The tool call the companion's sample `pre_tool_call` describes: the first example call that succeeded, else the first tool without arguments. */
function sampleToolCall(servers: readonly DoctorServer[]): { name: string; args: Record<string, unknown> } | null {
  for (const server of servers) {
    for (const tool of server.tools) {
      const call = tool.calls.find((c) => !c.isError && Object.keys(c.arguments).length > 0);
      if (call) return { name: tool.hermesName, args: call.arguments };
    }
  }
  const first = servers[0]?.tools[0];
  return first ? { name: first.hermesName, args: {} } : null;
}

/** Human-readable lines of a report (the CLI's text output). */
export function formatDoctorReport(report: DoctorReport): string[] {
  const lines = [`plugin doctor: ${report.root}${report.plugin.name ? ` (${report.plugin.name} ${report.plugin.version ?? ""})`.replace(/ \)$/, ")") : ""}`];
  for (const skill of report.skills) lines.push(`${skill.ok ? "OK" : "ERROR"}: skill ${skill.name} -> ${skill.qualifiedName}`);
  for (const server of report.servers) {
    const where = server.cwdSource === "host" ? "outside the package root, as Hermes starts it without mcp.json cwd" : `in mcp.json cwd ${server.cwd}`;
    lines.push(server.started ? `OK: server ${server.name} started ${where}, tools/list answered in ${server.startMs} ms (${server.tools.length} tools)` : `ERROR: server ${server.name} did not start (${where})`);
    for (const tool of server.tools) {
      lines.push(`  tool ${tool.name} -> ${tool.hermesName}${tool.readOnly ? " (read-only)" : ""}`);
      lines.push(`    description: ${tool.description}`);
      for (const call of tool.calls) lines.push(`    call ${JSON.stringify(call.arguments)} -> model sees ${call.modelSees}`);
      if (tool.calls.length === 0 && !tool.readOnly) lines.push("    not called (write-capable)");
    }
  }
  for (const companion of report.companions) {
    const served = [...companion.registered.commands.map((c) => `/${c}`), ...companion.registered.middleware.map((m) => `${m} middleware`), ...companion.registered.hooks.map((h) => `hook ${h}`)];
    lines.push(companion.checked ? `OK: companion ${companion.dir} (${companion.name ?? "?"} ${companion.version ?? "?"}) registered ${served.join(", ") || "nothing"}` : `NOT CHECKED: companion ${companion.dir} not run under Python 3 (its finding says why)`);
    for (const call of companion.calls) {
      const label = call.kind === "command" ? `/${call.name}` : call.kind === "middleware" ? `${call.name} middleware` : `hook ${call.name}`;
      lines.push(`    ${label} -> ${call.ok ? `host receives ${call.value ?? "None"}` : `raised ${call.exception}${call.errorType ? ` (${call.errorType})` : ""}`} in ${call.elapsedMs} ms`);
    }
  }
  const order = { error: 0, warning: 1, info: 2 } as const;
  for (const finding of [...report.findings].sort((a, b) => order[a.severity] - order[b.severity])) {
    lines.push(`${finding.severity === "error" ? "ERROR" : finding.severity === "warning" ? "WARN" : "INFO"} [${finding.rule}] ${finding.message}`);
  }
  const errors = report.findings.filter((f) => f.severity === "error").length;
  const warnings = report.findings.filter((f) => f.severity === "warning").length;
  lines.push(`doctor: ${report.ok ? "ok" : "failed"} (${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"})`);
  return lines;
}
