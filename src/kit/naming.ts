/**
 * Tool and server names: the kit's name grammar (Python kit validate_tool_name), the names
 * Hermes reserves, and the Hermes registry name an MCP tool ends up with
 * (`mcp__<server>__<tool>`, Agent Plugins v1 loader; Hermes MCP client).
 */
import { createHash } from "node:crypto";
import { expectString, inputTypeError, isRecord, PluginKitError, shortText, valueKind, type PluginKitErrorCode } from "./errors.js";
import { requireKnownOptions } from "./option-keys.js";

/** Grammar of a tool name (and of an explicit namespace): `^[a-z][a-z0-9_]*$`. */
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]*$/;

/** Names the Hermes agent loop owns; a plugin tool may not take them (Python kit validate_tool_name rule 3). */
export const RESERVED_TOOL_NAMES: readonly string[] = ["todo", "memory", "session_search", "delegate_task"];

/** Reserved core prefix (Python kit validate_tool_name rule 4). */
export const RESERVED_TOOL_PREFIX = "memory_";

/**
 * Names of the utility tools Hermes generates per MCP server when it
 * advertises resources or prompts (Hermes MCP client); a plugin tool with one of
 * these names collides with them.
 */
export const MCP_UTILITY_TOOL_NAMES: readonly string[] = ["list_resources", "read_resource", "list_prompts", "get_prompt"];

/**
 * Built-in Hermes toolset names (hermes-agent `toolsets.py`). An MCP server
 * registers a bare toolset alias under its own name, so a server named like
 * one of these shadows the built-in toolset (Hermes MCP client). Every name
 * starting with `hermes-` (the platform bundles) is refused as well.
 */
export const BUILTIN_TOOLSET_NAMES: readonly string[] = [
  "web", "search", "x_search", "vision", "video", "image_gen", "video_gen", "computer_use", "terminal", "skills",
  "browser", "cronjob", "file", "tts", "todo", "memory", "context_engine", "session_search", "project", "bot_room",
  "desktop_ui", "clarify", "code_execution", "delegation", "homeassistant", "kanban", "discord", "discord_admin",
  "yuanbao", "feishu_doc", "feishu_drive", "spotify", "debugging", "safe", "coding",
];

/** Hermes' limit on a registry tool name, in characters (Hermes MCP client). */
export const HERMES_TOOL_NAME_MAX = 64;

/** Prefix of every Hermes registry name of an MCP tool (`MCP_TOOL_NAME_PREFIX`). */
export const MCP_TOOL_NAME_PREFIX = "mcp__";

function fail(code: PluginKitErrorCode, message: string): never {
  throw new PluginKitError(code, message);
}

/**
 * Validate a tool name (Python kit validate_tool_name, in that order): non-empty, matches
 * {@link TOOL_NAME_PATTERN}, not a {@link RESERVED_TOOL_NAMES} entry, not
 * under {@link RESERVED_TOOL_PREFIX}, not an MCP utility name (kit
 * extension, Hermes MCP client) and, when `namespace` is given, starting with
 * `<namespace>_`.
 *
 * @returns the name unchanged.
 * @throws PluginKitError `TOOL_NAME_REQUIRED`, `TOOL_NAME_INVALID`,
 *   `TOOL_NAME_RESERVED`, `TOOL_NAME_RESERVED_PREFIX`, `TOOL_NAME_MCP_UTILITY`,
 *   `TOOL_NAME_NAMESPACE`, `INPUT_TYPE_INVALID` (`options` not an object, or
 *   a key other than `namespace`, named with the nearest).
 */
export function validateToolName(name: unknown, options: { namespace?: string } = {}): string {
  if (!isRecord(options)) throw inputTypeError("validateToolName", "options", "an object", options);
  requireKnownOptions("validateToolName", options, ["namespace"]);
  if (typeof name !== "string" || name.length === 0) fail("TOOL_NAME_REQUIRED", `tool name is required (a non-empty string), found ${name === "" ? "an empty string" : valueKind(name)}`);
  if (!TOOL_NAME_PATTERN.test(name)) fail("TOOL_NAME_INVALID", `tool name '${shortText(name)}' must match '^[a-z][a-z0-9_]*$'`);
  if (RESERVED_TOOL_NAMES.includes(name)) fail("TOOL_NAME_RESERVED", `tool name '${shortText(name)}' is reserved by the Hermes agent loop`);
  if (name.startsWith(RESERVED_TOOL_PREFIX)) {
    fail("TOOL_NAME_RESERVED_PREFIX", `tool name '${shortText(name)}' uses a reserved Hermes core namespace; choose a plugin/domain namespace instead`);
  }
  if (MCP_UTILITY_TOOL_NAMES.includes(name)) {
    fail("TOOL_NAME_MCP_UTILITY", `tool name '${shortText(name)}' collides with the MCP utility tool Hermes generates for resources/prompts; choose another name`);
  }
  const namespace = options.namespace;
  if (namespace !== undefined) {
    if (!TOOL_NAME_PATTERN.test(namespace)) fail("TOOL_NAME_NAMESPACE", `namespace '${shortText(namespace)}' must match '^[a-z][a-z0-9_]*$'`);
    if (RESERVED_TOOL_NAMES.includes(namespace)) fail("TOOL_NAME_NAMESPACE", `namespace '${shortText(namespace)}' is reserved by the Hermes agent loop`);
    if (!name.startsWith(`${namespace}_`)) fail("TOOL_NAME_NAMESPACE", `tool name '${shortText(name)}' must start with explicit namespace '${shortText(namespace)}_'`);
  }
  return name;
}

/**
 * Join `namespace`, `verb` and `noun` (each stripped of leading/trailing `_`,
 * empty parts dropped) with `_` and validate the result with `namespace`
 * (Python kit validate_tool_name). `toolName("discord", "read", "thread") === "discord_read_thread"`.
 *
 * @throws PluginKitError as {@link validateToolName}; `INPUT_TYPE_INVALID`
 *   when a part is not a string.
 */
export function toolName(namespace: string, verb: string, noun: string): string {
  for (const [what, part] of [["namespace", namespace], ["verb", verb], ["noun", noun]] as const) expectString("toolName", what, part);
  const parts = [namespace, verb, noun].map((part) => part.replace(/^_+|_+$/g, "")).filter((part) => part.length > 0);
  return validateToolName(parts.join("_"), { namespace });
}

/**
 * Hermes' MCP name-component sanitizer: every char outside `[A-Za-z0-9_]` becomes `_` (Hermes MCP client).
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `value` is not a string.
 */
export function sanitizeNameComponent(value: string): string {
  return expectString("sanitizeNameComponent", "value", value).replace(/[^A-Za-z0-9_]/g, "_");
}

/**
 * The internal name Hermes gives a portable package's MCP server: the slug of
 * the mcp.json server name (lowercased, chars outside `[a-z0-9_-]` to `-`,
 * stripped of `-`/`_`, default `plugin`; Agent Plugins v1 loader).
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `server` is not a string.
 */
export function portableServerName(server: string): string {
  const slug = expectString("portableServerName", "server", server).toLowerCase().replace(/[^a-z0-9_-]/g, "-").replace(/^[-_]+|[-_]+$/g, "");
  return slug.length > 0 ? slug : "plugin";
}

/**
 * The Hermes registry name of MCP tool `tool` of portable server `server`:
 * `mcp__<sanitized server slug>__<sanitized tool>` before any clamping
 * (Hermes MCP client). Compare its length with {@link HERMES_TOOL_NAME_MAX}.
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `server` or `tool` is not a string.
 */
export function hermesToolName(server: string, tool: string): string {
  expectString("hermesToolName", "server", server);
  expectString("hermesToolName", "tool", tool);
  return `${MCP_TOOL_NAME_PREFIX}${sanitizeNameComponent(portableServerName(server))}__${sanitizeNameComponent(tool)}`;
}

/**
 * The name Hermes actually registers: {@link hermesToolName}, or for names
 * over 64 characters the first 55 characters + `_` + the first 8 hex of the
 * SHA-256 of the full name (newest hosts, Hermes MCP client).
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `server` or `tool` is not a string.
 */
export function clampedHermesToolName(server: string, tool: string): string {
  expectString("clampedHermesToolName", "server", server);
  expectString("clampedHermesToolName", "tool", tool);
  const full = hermesToolName(server, tool);
  if (full.length <= HERMES_TOOL_NAME_MAX) return full;
  return `${full.slice(0, 55)}_${createHash("sha256").update(full, "utf8").digest("hex").slice(0, 8)}`;
}

/**
 * Validate an MCP server name as the kit uses it in mcp.json: 1-64 chars of
 * `[a-z0-9_-]` starting with a letter or digit (so Hermes' slug is the name
 * itself), and not shadowing a {@link BUILTIN_TOOLSET_NAMES} toolset nor a
 * `hermes-*` platform bundle.
 *
 * @throws PluginKitError `SERVER_NAME_INVALID`, `SERVER_NAME_SHADOWS_TOOLSET`.
 */
export function validateServerName(server: unknown): string {
  if (typeof server !== "string" || !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(server) || portableServerName(server) !== server) {
    fail("SERVER_NAME_INVALID", `server name ${JSON.stringify(server)} must be 1-64 characters of [a-z0-9_-] starting with a letter or digit and not ending in '-' or '_'`);
  }
  const problem = serverNameShadowProblem(server);
  if (problem) fail("SERVER_NAME_SHADOWS_TOOLSET", problem);
  return server;
}

/** The message of a server name that shadows a built-in toolset, or `null`. @throws PluginKitError `INPUT_TYPE_INVALID` when `server` is not a string. */
export function serverNameShadowProblem(server: string): string | null {
  expectString("serverNameShadowProblem", "server", server);
  const slug = portableServerName(server);
  if (BUILTIN_TOOLSET_NAMES.includes(slug)) {
    return `server name '${server}' shadows the built-in Hermes toolset '${slug}' (Hermes registers a toolset alias under the server name); fix: choose a distinctive name (for init: --name <another name>)`;
  }
  if (slug.startsWith("hermes-")) {
    return `server name '${server}' starts with 'hermes-', the prefix of Hermes' own platform toolsets (hermes-*), and Hermes registers a toolset alias under the server name; fix: choose a name without that prefix (for init: --name <another name>)`;
  }
  return null;
}

/** One problem found by {@link checkHermesToolNames}. */
export interface ToolNameProblem {
  /** Rule code (a {@link PluginKitErrorCode}). */
  code: PluginKitErrorCode;
  /** The tool (raw MCP name) the problem is about. */
  tool: string;
  message: string;
}

/**
 * Check a server's raw MCP tool names as Hermes would register them
 * (Hermes MCP client): duplicates, names that sanitize to the same Hermes name
 * (Hermes skips both), and Hermes names over 64 characters (hash-clamped by
 * new hosts, unusable on older ones). Pure; returns every problem in listing
 * order.
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `server` is not a string
 *   or `names` not a list of strings.
 */
export function checkHermesToolNames(server: string, names: readonly string[]): ToolNameProblem[] {
  expectString("checkHermesToolNames", "server", server);
  if (!Array.isArray(names) || !names.every((name) => typeof name === "string")) throw inputTypeError("checkHermesToolNames", "names", "a list of strings", names);
  const problems: ToolNameProblem[] = [];
  const seen = new Set<string>();
  const byHermesName = new Map<string, string>();
  for (const name of names) {
    if (seen.has(name)) {
      problems.push({ code: "TOOL_NAME_DUPLICATE", tool: name, message: `duplicate tool name: ${shortText(name)}` });
      continue;
    }
    seen.add(name);
    const hermes = hermesToolName(server, name);
    const other = byHermesName.get(hermes);
    if (other !== undefined) {
      problems.push({
        code: "TOOL_NAME_COLLISION",
        tool: name,
        message: `tools '${shortText(other)}' and '${shortText(name)}' both sanitize to the Hermes name '${shortText(hermes)}'; Hermes skips both`,
      });
    } else {
      byHermesName.set(hermes, name);
    }
    if (hermes.length > HERMES_TOOL_NAME_MAX) {
      problems.push({
        code: "HERMES_NAME_TOO_LONG",
        tool: name,
        message: `Hermes name '${shortText(hermes)}' is ${hermes.length} characters; the limit is ${HERMES_TOOL_NAME_MAX} (shorten the server or tool name)`,
      });
    }
  }
  return problems;
}
