/**
 * Where a running plugin finds its files and settings. Hermes starts a
 * portable package's MCP server with `PLUGIN_ROOT` (the installed package)
 * and `PLUGIN_DATA` (a writable, profile-scoped data directory) in a
 * filtered environment (Agent Plugins v1 loader; Hermes MCP client); host settings
 * (`plugins.entries.<id>.settings`) are not visible to an MCP server, so
 * operator configuration lives in `${PLUGIN_DATA}/config.json`.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parseStrictJson, type JsonObject } from "../contract/canonical-json.js";
import { PluginKitError } from "./errors.js";

/** Name of the settings file read from `PLUGIN_DATA` (operator) and `PLUGIN_ROOT` (package defaults). */
export const PLUGIN_CONFIG_FILE = "config.json";

/** Largest settings file read, in bytes. */
export const PLUGIN_CONFIG_MAX_BYTES = 1024 * 1024;

/**
 * The plugin root: `PLUGIN_ROOT` when set (Hermes always sets it); otherwise,
 * when the running script sits in a `dist/` directory (the built
 * `dist/server.js`), its parent; otherwise the nearest directory above the
 * running script that holds `plugin.json` or `package.json`; the current
 * directory only when there is no script. Never the working directory when
 * a script is known: hosts do not start servers in the package root.
 * Absolute.
 */
export function resolvePluginRoot(): string {
  const fromEnv = process.env.PLUGIN_ROOT;
  if (fromEnv && fromEnv.trim() !== "") return path.resolve(fromEnv);
  const script = process.argv[1];
  if (!script) return process.cwd();
  let dir = path.dirname(path.resolve(script));
  if (path.basename(dir) === "dist") return path.dirname(dir);
  for (let depth = 0; depth < 32; depth += 1) {
    if (existsSync(path.join(dir, "plugin.json")) || existsSync(path.join(dir, "package.json"))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return path.dirname(path.resolve(script));
}

function containedPath(base: string, segments: readonly string[], what: string): string {
  for (const segment of segments) {
    if (typeof segment !== "string" || segment === "" || segment.includes("\0")) throw new PluginKitError("PLUGIN_PATH_INVALID", `${what} path segments must be non-empty strings`);
    if (path.isAbsolute(segment)) throw new PluginKitError("PLUGIN_PATH_INVALID", `${what} path segment ${JSON.stringify(segment)} must be relative`);
  }
  const target = path.resolve(base, ...segments);
  const relative = path.relative(base, target);
  if (relative.startsWith("..") || path.isAbsolute(relative)) {
    throw new PluginKitError("PLUGIN_PATH_INVALID", `${what} path ${JSON.stringify(segments.join("/"))} escapes ${what === "package" ? "the plugin root" : "PLUGIN_DATA"}`);
  }
  return target;
}

/**
 * Absolute path of a file shipped in the package, e.g.
 * `pluginPath("data", "rates.json")` -> `${PLUGIN_ROOT}/data/rates.json`.
 * Use it for every package file a tool reads: Hermes starts the server in
 * its own working directory unless mcp.json sets `cwd`, so a path relative to
 * `process.cwd()` works in a test from the package root and fails under
 * Hermes (`plugin doctor` reports such tools as `SERVER_CWD_DEPENDENT`).
 * The root is {@link resolvePluginRoot}; no symlinks are resolved.
 *
 * @throws PluginKitError `PLUGIN_PATH_INVALID` for an empty or absolute
 *   segment or a path that escapes the root (`..`).
 */
export function pluginPath(...segments: string[]): string {
  return containedPath(resolvePluginRoot(), segments, "package");
}

/**
 * Absolute path inside the writable data directory `PLUGIN_DATA`, e.g.
 * `pluginDataPath("cache.json")`.
 *
 * @throws PluginKitError `PLUGIN_DATA_MISSING` when `PLUGIN_DATA` is unset,
 *   `PLUGIN_PATH_INVALID` as {@link pluginPath}.
 */
export function pluginDataPath(...segments: string[]): string {
  const data = resolvePluginData();
  if (data === null) throw new PluginKitError("PLUGIN_DATA_MISSING", "PLUGIN_DATA is not set (Hermes sets it for portable packages; set it when running the server yourself)");
  return containedPath(data, segments, "data");
}

/** The data directory from `PLUGIN_DATA`, or `null` when unset. Absolute. */
export function resolvePluginData(): string | null {
  const fromEnv = process.env.PLUGIN_DATA;
  return fromEnv && fromEnv.trim() !== "" ? path.resolve(fromEnv) : null;
}

/** Result of {@link loadPluginConfig}. */
export interface PluginConfig {
  /** Absolute plugin root (see {@link resolvePluginRoot}). */
  root: string;
  /** Absolute data directory, or `null` when `PLUGIN_DATA` is unset. */
  data: string | null;
  /** Package defaults (`${PLUGIN_ROOT}/config.json`) shallow-merged with operator settings (`${PLUGIN_DATA}/config.json`, wins). */
  settings: JsonObject;
  /** Files that were read, in merge order. */
  sources: string[];
}

function readSettings(file: string): JsonObject | null {
  if (!existsSync(file)) return null;
  const stat = statSync(file);
  if (!stat.isFile()) throw new PluginKitError("CONFIG_INVALID", `${file} must be a regular file`);
  if (stat.size > PLUGIN_CONFIG_MAX_BYTES) throw new PluginKitError("CONFIG_INVALID", `${file} is ${stat.size} bytes; the limit is ${PLUGIN_CONFIG_MAX_BYTES}`);
  let settings: JsonObject;
  try {
    // Settings are read, never re-serialised: `1.0` is a fine setting (no canonical-bytes rule applies).
    settings = parseStrictJson(readFileSync(file), { rejectIntegralFloats: false });
  } catch (error) {
    throw new PluginKitError("CONFIG_INVALID", `${file} must be a JSON object without duplicate keys: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const polluting = prototypeKeyPath(settings, "");
  if (polluting !== null) throw new PluginKitError("CONFIG_INVALID", `${file} must not hold a key named '__proto__' (found at ${polluting}): merged into the settings it would replace their prototype`);
  return settings;
}

/** The path of the first own `__proto__` key at any depth of parsed JSON, else `null`. */
function prototypeKeyPath(value: unknown, at: string): string | null {
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      const found = prototypeKeyPath(value[index], `${at}[${index}]`);
      if (found !== null) return found;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const here = at === "" ? key : `${at}.${key}`;
      if (key === "__proto__") return here;
      const found = prototypeKeyPath(item, here);
      if (found !== null) return found;
    }
  }
  return null;
}

/**
 * Load the plugin's settings from `PLUGIN_ROOT`/`PLUGIN_DATA` (see
 * {@link PluginConfig}). Missing files are fine (empty settings).
 *
 * @throws PluginKitError `CONFIG_INVALID` for a file that is not a regular
 *   file, exceeds 1 MiB, is not a strict JSON object, or holds a key
 *   `__proto__` at any depth.
 */
export function loadPluginConfig(): PluginConfig {
  const root = resolvePluginRoot();
  const data = resolvePluginData();
  const settings: JsonObject = {};
  const sources: string[] = [];
  for (const dir of data === null ? [root] : [root, data]) {
    const file = path.join(dir, PLUGIN_CONFIG_FILE);
    const read = readSettings(file);
    if (read) {
      Object.assign(settings, read);
      sources.push(file);
    }
  }
  return { root, data, settings, sources };
}
