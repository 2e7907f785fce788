/**
 * How Hermes launches a stdio MCP server (Hermes MCP client "stdio launch",
 * B.7 "stdio" translation): a filtered environment (only `PATH`, `HOME`,
 * `USER`, `LANG`, `LC_ALL`, `TERM`, `SHELL`, `TMPDIR`, `XDG_*`, plus the
 * entry's `env` with placeholders expanded, `PLUGIN_ROOT` and
 * `PLUGIN_DATA`), and a working directory only when mcp.json sets `cwd`
 * (otherwise the server inherits the host's own working directory, never the
 * package root). `plugin doctor` and the native companion launch servers the
 * same way.
 */
import path from "node:path";
import { expandPlaceholders, type StdioServerEntry } from "./portable.js";

/** Environment variables Hermes passes through to a stdio MCP server (besides `XDG_*`). */
export const FILTERED_ENV_NAMES: readonly string[] = ["PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR"];

/** The environment Hermes gives a stdio server (Hermes MCP client), plus the entry env and PLUGIN_ROOT/PLUGIN_DATA. */
export function filteredServerEnvironment(source: NodeJS.ProcessEnv, entry: StdioServerEntry, root: string, data: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) {
    if (value !== undefined && (FILTERED_ENV_NAMES.includes(key) || key.startsWith("XDG_"))) env[key] = value;
  }
  for (const [key, value] of Object.entries(entry.env)) env[key] = expandPlaceholders(value, root, data);
  env["PLUGIN_ROOT"] = root;
  env["PLUGIN_DATA"] = data;
  return env;
}

/**
 * The working directory Hermes gives the server: mcp.json `cwd` expanded and
 * resolved against the package root, or `null` when unset (the host's own
 * working directory).
 */
export function declaredServerCwd(entry: StdioServerEntry, root: string, data: string): string | null {
  return entry.cwd ? path.resolve(root, expandPlaceholders(entry.cwd, root, data)) : null;
}
