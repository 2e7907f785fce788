/**
 * Agent Plugins v1 ("portable") package rules as Hermes applies them
 * (Agent Plugins v1 loader; Hermes install scanner): the literal `$schema` values, plugin.json and mcp.json
 * field rules, and the install scanner's patterns. Pure: every check takes a
 * parsed value (or file text) and returns findings; the doctor does the I/O.
 * A root, file name or text of the wrong type (plain JavaScript callers) is
 * no finding: it throws PluginKitError `INPUT_TYPE_INVALID`.
 */
import path from "node:path";
import { expectString } from "./errors.js";
import { serverNameShadowProblem } from "./naming.js";

/** plugin.json `$schema` (Agent Plugins 1.0.0). */
export const PLUGIN_SCHEMA_URL = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json";
/** mcp.json `$schema` (Agent Plugins 1.0.0). */
export const MCP_SCHEMA_URL = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json";
/** Path of the bundled server inside a built package. */
export const SERVER_SCRIPT = "dist/server.js";
/** plugin.json `name` grammar (1-64 characters). */
export const PLUGIN_NAME_PATTERN = /^(?!.*(?:--|\.\.))[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$/;
/** {@link PLUGIN_NAME_PATTERN} in words, for error messages (never the raw pattern). */
export const PLUGIN_NAME_RULE =
  "1-64 characters: lowercase letters a-z, digits 0-9, '-' and '.', starting and ending with a letter or digit, with no '--' or '..' (e.g. my-plugin or acme.weather)";
/** Top-level plugin.json fields Hermes keeps (others are dropped with a diagnostic). */
export const PLUGIN_MANIFEST_FIELDS: readonly string[] = ["$schema", "name", "version", "description", "author", "homepage", "repository", "license", "keywords", "extensions"];
/** Keys of a stdio mcp.json entry. */
export const STDIO_ENTRY_KEYS: readonly string[] = ["type", "command", "args", "env", "cwd"];

/** Severity of a finding: `error` fails the doctor; `warning` and `info` do not. */
export type FindingSeverity = "error" | "warning" | "info";

/** One finding of a package check, named by its rule code. */
export interface PackageFinding {
  rule: string;
  severity: FindingSeverity;
  message: string;
  /** Package-relative file the finding is about. */
  file?: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * Check parsed plugin.json (Agent Plugins v1 loader `_validate_manifest`): `$schema`,
 * `name` grammar, string fields, `keywords`, `author`, `extensions`; unknown
 * fields are warnings (Hermes drops them).
 */
export function checkPluginManifest(value: unknown): PackageFinding[] {
  const file = "plugin.json";
  const findings: PackageFinding[] = [];
  const error = (rule: string, message: string) => findings.push({ rule, severity: "error", message, file });
  if (!isObject(value)) {
    error("PLUGIN_JSON_INVALID", "plugin.json must be a JSON object");
    return findings;
  }
  if (value["$schema"] !== PLUGIN_SCHEMA_URL) error("PLUGIN_JSON_SCHEMA", `plugin.json $schema must be ${PLUGIN_SCHEMA_URL}, got ${JSON.stringify(value["$schema"] ?? null)}`);
  const name = value["name"];
  if (typeof name !== "string" || name.length < 1 || name.length > 64 || !PLUGIN_NAME_PATTERN.test(name)) {
    error("PLUGIN_NAME_INVALID", `plugin.json name ${JSON.stringify(name ?? null)} is not a plugin name: a name may have ${PLUGIN_NAME_RULE}`);
  }
  for (const key of ["version", "description", "homepage", "repository", "license"]) {
    if (value[key] !== undefined && typeof value[key] !== "string") error("PLUGIN_FIELD_INVALID", `plugin.json ${key} must be a string`);
  }
  const keywords = value["keywords"];
  if (keywords !== undefined && (!Array.isArray(keywords) || !keywords.every((k) => typeof k === "string"))) error("PLUGIN_FIELD_INVALID", "plugin.json keywords must be a list of strings");
  const author = value["author"];
  if (author !== undefined && (!isObject(author) || Object.entries(author).some(([k, v]) => !["name", "email", "url"].includes(k) || typeof v !== "string"))) {
    error("PLUGIN_FIELD_INVALID", "plugin.json author must be an object with only string name, email, url");
  }
  const extensions = value["extensions"];
  if (extensions !== undefined && (!isObject(extensions) || Object.values(extensions).some((ns) => !isObject(ns)))) {
    findings.push({ rule: "PLUGIN_FIELD_INVALID", severity: "warning", message: "plugin.json extensions must be an object of objects (Hermes drops it)", file });
  }
  for (const key of Object.keys(value)) {
    if (!PLUGIN_MANIFEST_FIELDS.includes(key)) findings.push({ rule: "PLUGIN_FIELD_UNKNOWN", severity: "warning", message: `plugin.json field '${key}' is not an Agent Plugins field; Hermes drops it`, file });
  }
  return findings;
}

/** A stdio server entry of mcp.json that passed the checks. */
export interface StdioServerEntry {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

function insideRoot(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** Expand `${PLUGIN_ROOT}` / `${PLUGIN_DATA}` in `value`. @throws PluginKitError `INPUT_TYPE_INVALID` when an argument is not a string. */
export function expandPlaceholders(value: string, root: string, data: string): string {
  expectString("expandPlaceholders", "value", value);
  expectString("expandPlaceholders", "root", root);
  expectString("expandPlaceholders", "data", data);
  return value.replaceAll("${PLUGIN_ROOT}", root).replaceAll("${PLUGIN_DATA}", data);
}

/**
 * Check parsed mcp.json against Hermes' portable translator (Agent Plugins v1 loader):
 * keys exactly `$schema`/`mcpServers`, the `$schema` literal, entry types
 * (`sse` refused), stdio keys, `command` (bare token on PATH or `./path`
 * inside `root`), `args` strings, `env` string map without
 * `PLUGIN_ROOT`/`PLUGIN_DATA`, `cwd` anchored and not escaping, and server
 * names that shadow built-in toolsets. Returns findings and the valid stdio
 * entries (none when a file-level rule fails: Hermes then drops the file).
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `root` is not a string.
 */
export function checkMcpConfig(value: unknown, root: string): { findings: PackageFinding[]; servers: StdioServerEntry[] } {
  expectString("checkMcpConfig", "root", root);
  const file = "mcp.json";
  const findings: PackageFinding[] = [];
  const servers: StdioServerEntry[] = [];
  const error = (rule: string, message: string) => findings.push({ rule, severity: "error", message, file });
  if (!isObject(value)) {
    error("MCP_JSON_INVALID", "mcp.json must be a JSON object");
    return { findings, servers };
  }
  const extra = Object.keys(value).filter((key) => key !== "$schema" && key !== "mcpServers");
  if (extra.length > 0) error("MCP_JSON_INVALID", `mcp.json top-level keys must be exactly $schema and mcpServers; unexpected: ${extra.join(", ")}`);
  if (value["$schema"] !== MCP_SCHEMA_URL) error("MCP_JSON_SCHEMA", `mcp.json $schema must be ${MCP_SCHEMA_URL}, got ${JSON.stringify(value["$schema"] ?? null)}`);
  const fileLevelErrors = findings.length;
  const entries = value["mcpServers"];
  if (!isObject(entries)) {
    error("MCP_JSON_INVALID", "mcp.json mcpServers must be an object");
    return { findings, servers };
  }
  for (const [name, entry] of Object.entries(entries)) {
    const before = findings.length;
    const entryError = (rule: string, message: string) => error(rule, `server '${name}': ${message}`);
    if (name.trim() === "") {
      error("MCP_ENTRY_INVALID", "server names must be non-empty");
      continue;
    }
    const shadow = serverNameShadowProblem(name);
    if (shadow) entryError("SERVER_NAME_SHADOWS_TOOLSET", shadow);
    if (!isObject(entry)) {
      entryError("MCP_ENTRY_INVALID", "entry must be an object");
      continue;
    }
    const type = entry["type"];
    if (type === "sse") {
      entryError("MCP_TRANSPORT_UNSUPPORTED", "portable sse transport is not supported by Hermes; use stdio or streamable-http");
      continue;
    }
    if (type === "streamable-http") {
      findings.push({ rule: "MCP_REMOTE_NOT_CHECKED", severity: "info", message: `server '${name}': streamable-http entries are not started by the doctor`, file });
      continue;
    }
    if (type !== "stdio") {
      entryError("MCP_TYPE_UNKNOWN", `type ${JSON.stringify(type ?? null)} is not stdio or streamable-http; Hermes skips the entry`);
      continue;
    }
    const unknownKeys = Object.keys(entry).filter((key) => !STDIO_ENTRY_KEYS.includes(key));
    if (unknownKeys.length > 0) entryError("MCP_ENTRY_KEYS", `stdio entries allow only ${STDIO_ENTRY_KEYS.join(", ")}; unexpected: ${unknownKeys.join(", ")}`);
    const command = entry["command"];
    if (typeof command !== "string" || command === "" || command.includes("\0")) {
      entryError("MCP_COMMAND_INVALID", "command must be a non-empty string");
    } else if (command.startsWith("./")) {
      if (!insideRoot(root, path.resolve(root, command))) entryError("MCP_COMMAND_INVALID", `command '${command}' resolves outside the package`);
    } else if (/[\s/\\]/.test(command) || command === "." || command === "..") {
      entryError("MCP_COMMAND_INVALID", `command '${command}' must be one bare executable (resolved on PATH) or a ./relative path inside the package`);
    }
    const args = entry["args"] ?? [];
    if (!Array.isArray(args) || !args.every((a) => typeof a === "string")) entryError("MCP_ARGS_INVALID", "args must be a list of strings");
    const env = entry["env"] ?? {};
    if (!isObject(env) || !Object.values(env).every((v) => typeof v === "string")) {
      entryError("MCP_ENV_INVALID", "env must be an object of strings");
    } else {
      for (const key of ["PLUGIN_ROOT", "PLUGIN_DATA"]) if (Object.hasOwn(env, key)) entryError("MCP_ENV_RESERVED", `env key ${key} is set by Hermes and must not be declared`);
    }
    const cwd = entry["cwd"];
    if (cwd !== undefined) {
      const anchored = typeof cwd === "string" && (cwd.startsWith("./") || cwd.startsWith("${PLUGIN_ROOT}") || cwd.startsWith("${PLUGIN_DATA}"));
      const escapes = typeof cwd === "string" && cwd.split(/[\\/]/).includes("..");
      if (!anchored || escapes) entryError("MCP_CWD_INVALID", "cwd must start with ./, ${PLUGIN_ROOT} or ${PLUGIN_DATA} and must not escape it");
    }
    if (findings.slice(before).every((finding) => finding.severity !== "error") && typeof command === "string") {
      servers.push({ name, command, args: args as string[], env: env as Record<string, string>, ...(typeof cwd === "string" ? { cwd } : {}) });
    }
  }
  // A file-level problem makes Hermes drop the whole file: no server is started.
  return { findings, servers: fileLevelErrors > 0 ? [] : servers };
}

/** Text-file extensions the Hermes install scanner reads. */
export const SCANNED_EXTENSIONS: readonly string[] = [
  ".md", ".txt", ".py", ".sh", ".bash", ".js", ".ts", ".rb", ".yaml", ".yml", ".json", ".toml", ".cfg", ".ini", ".conf",
  ".html", ".css", ".xml", ".tex", ".r", ".jl", ".pl", ".php", ".mjs", ".cjs",
];
/** Binary extensions the scanner treats as critical. */
export const BINARY_EXTENSIONS: readonly string[] = [".exe", ".dll", ".so", ".dylib", ".bin", ".node"];
/** Size above which the scanner notes a file, in bytes. */
export const SCAN_LARGE_FILE_BYTES = 256 * 1024;

const LOOPBACK_URL = /^(?:https?:\/\/)?(?:localhost|127\.\d+\.\d+\.\d+|\[::1\])(?:[:/]|$)/i;

/**
 * Scan one text file the way the install scanner would (Hermes install scanner,
 * subset): bracket `process.env[...]` access (high: install prompts for
 * confirmation), `fetch(` with a `${...KEY|TOKEN|SECRET|PASSWORD...}`
 * interpolation to a non-loopback URL (critical: install blocked), reads of
 * `.env`/credential files (critical), prompt-injection wording in Markdown and
 * invisible Unicode (high). Returns findings with line numbers in messages.
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `file` or `text` is not a string.
 */
export function scanTextForInstallRisks(file: string, text: string): PackageFinding[] {
  expectString("scanTextForInstallRisks", "file", file);
  expectString("scanTextForInstallRisks", "text", text);
  const findings: PackageFinding[] = [];
  const lines = text.split("\n");
  const add = (rule: string, severity: FindingSeverity, index: number, what: string) =>
    findings.push({ rule, severity, message: `${file}:${index + 1}: ${what}`, file });
  lines.forEach((line, index) => {
    if (line.includes("process.env[")) add("SCAN_PROCESS_ENV_BRACKET", "warning", index, "bracket process.env[...] access (Hermes' install scanner rates it high: the install asks for confirmation)");
    const fetchAt = line.indexOf("fetch(");
    if (fetchAt >= 0) {
      const call = line.slice(fetchAt, fetchAt + 400);
      const secret = /\$\{[^}]*(?:KEY|TOKEN|SECRET|PASSWORD)[^}]*\}/i.test(call);
      const url = /fetch\(\s*[`'"]([^`'"]*)/.exec(call)?.[1] ?? "";
      if (secret && !LOOPBACK_URL.test(url)) add("SCAN_SECRET_NETWORK", "error", index, "network call interpolating a secret to a non-loopback URL (critical: install blocked)");
    }
    if (/readFile(?:Sync)?\(\s*[^)]*(?:\.env\b|credentials|\.netrc|id_rsa|\.npmrc)/.test(line)) add("SCAN_CREDENTIAL_FILE_READ", "error", index, "reads a credential file (critical: install blocked)");
    if (/[\u200b-\u200f\u2060-\u2064\ufeff\u{e0000}-\u{e007f}]/u.test(index === 0 ? line.replace(/^\ufeff/, "") : line)) add("SCAN_INVISIBLE_UNICODE", "warning", index, "invisible Unicode characters");
    if (/\.md$/i.test(file) && /\b(?:ignore|disregard)\s+(?:all\s+)?(?:previous|prior|above|your)\s+(?:instructions|rules)\b|\byou are (?:\w+\s+){0,3}now\b/i.test(line)) {
      add("SCAN_PROMPT_INJECTION", "warning", index, "prompt-injection wording (the scanner rates it high or critical)");
    }
  });
  return findings;
}
