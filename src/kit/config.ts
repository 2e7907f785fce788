/**
 * Where a running plugin finds its files and settings. Hermes starts a
 * portable package's MCP server with `PLUGIN_ROOT` (the installed package)
 * and `PLUGIN_DATA` (a writable, profile-scoped data directory) in a
 * filtered environment (reference B.7, B.8); host settings
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
 * The plugin root: `PLUGIN_ROOT` when set; otherwise, when the running script
 * sits in a `dist/` directory (the built `dist/server.js`), its parent;
 * otherwise the current directory. Absolute.
 */
export function resolvePluginRoot(): string {
  const fromEnv = process.env.PLUGIN_ROOT;
  if (fromEnv && fromEnv.trim() !== "") return path.resolve(fromEnv);
  const script = process.argv[1];
  if (script) {
    const dir = path.dirname(path.resolve(script));
    if (path.basename(dir) === "dist") return path.dirname(dir);
  }
  return process.cwd();
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
  try {
    return parseStrictJson(readFileSync(file));
  } catch (error) {
    throw new PluginKitError("CONFIG_INVALID", `${file} must be a JSON object without duplicate keys: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/**
 * Load the plugin's settings from `PLUGIN_ROOT`/`PLUGIN_DATA` (see
 * {@link PluginConfig}). Missing files are fine (empty settings).
 *
 * @throws PluginKitError `CONFIG_INVALID` for a file that is not a regular
 *   file, exceeds 1 MiB, or is not a strict JSON object.
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
