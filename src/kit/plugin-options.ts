/**
 * The options of `definePlugin({...})` and their shape check: one zod schema
 * with exact keys (an unknown option is refused), every bad field named on a
 * line of its own (docs/kit.md, "Writing a plugin"). What the schema cannot
 * see (server and tool names against Hermes' registry, capabilities, the host
 * surface) is checked by the modules that own those rules.
 */
import * as z from "zod/mini";
import { nearestName } from "../contract/grammar.js";
import { isRecord, PluginKitError, type PluginKitErrorCode } from "./errors.js";
import { plainRecordProblem } from "./own-keys.js";
import type { BridgeOptions, PluginCommand, PluginHooks, PluginMiddleware } from "./hooks.js";
import { PLUGIN_NAME_PATTERN } from "./portable.js";
import type { PluginSkill } from "./skills.js";
import { isToolDefinition, type ToolDefinition } from "./tool.js";

/** Capability groups and the static default selection. */
export interface PluginCapabilities {
  /** Capability name -> member tool names. */
  groups: Record<string, readonly string[]>;
  /** Capabilities enabled when the operator's config names none (default: every tool). */
  enabled?: readonly string[];
}

/** Logging of the served plugin. */
export interface PluginLogging {
  /** Operator flag read by `configureStderrLogging` (written to mcp.json `env`). */
  envVar: string;
  /** Value written for it in mcp.json (default `warning`). */
  default?: "debug" | "info" | "warning" | "error";
}

/** Options of `definePlugin`. */
export interface PluginOptions {
  /** plugin.json `name`: 1-64 chars, `^(?!.*(?:--|\.\.))[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$`. */
  name: string;
  /**
   * plugin.json `version`. Leave it out: `plugin build` takes it from the
   * package's package.json (a different value here fails the build with
   * `BUILD_VERSION_MISMATCH`). Outside a build it is `UNBUILT_PLUGIN_VERSION`.
   */
  version?: string;
  description: string;
  /** mcp.json server name (default: `name`); must not shadow a built-in Hermes toolset. */
  server?: string;
  tools: readonly ToolDefinition[];
  skills?: readonly PluginSkill[];
  capabilities?: PluginCapabilities;
  /**
   * Hermes hooks by name (`VALID_HOOKS`), served through the native
   * companion `plugin build` writes (see hooks.ts for the result shapes).
   */
  hooks?: PluginHooks;
  /** Slash commands `/<name>`, served through the native companion. */
  commands?: readonly PluginCommand[];
  /** Request middleware (`tool_request`, `llm_request`), served through the native companion. */
  middleware?: PluginMiddleware;
  /** Bridge settings of the native companion. */
  bridge?: BridgeOptions;
  logging?: PluginLogging;
  /** Extra mcp.json `env` (public package data: never secrets; `PLUGIN_ROOT`/`PLUGIN_DATA` refused). */
  env?: Record<string, string>;
  author?: { name: string; email?: string; url?: string };
  homepage?: string;
  repository?: string;
  license?: string;
  keywords?: readonly string[];
}

/** SemVer 2.0.0 as plugin.json takes it (build metadata and pre-release allowed). */
export const PLUGIN_VERSION_PATTERN = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$/;
/** An environment variable name mcp.json `env` may declare. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Set by Hermes for every server; a package must not declare them. */
const HOST_SET_ENV = ["PLUGIN_ROOT", "PLUGIN_DATA"];

const found = (input: unknown) => {
  const text = JSON.stringify(input) ?? String(input);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
};
const aString = (error: string) => z.string({ error });
const nonEmptyString = (error: string) => z.string({ error }).check(z.refine((value) => value.trim() !== "", { error }));
/**
 * The error of an object-valued option: an unknown key (named with the nearest of `known`) and a bad
 * record key are named; anything else is "must be <what>".
 */
const section = (what: string, known: readonly string[] = []) => ({
  error: (issue: { code?: string; keys?: readonly string[]; issues?: ReadonlyArray<{ message: string }> }) => {
    if (issue.code === "unrecognized_keys") return unknownOptions(issue.keys ?? [], known);
    if (issue.code === "invalid_key" && issue.issues?.[0] !== undefined) return issue.issues[0].message;
    return `must be ${what}`;
  },
});
/**
 * `unknown option 'x'; did you mean 'y'? (expected only ...)`: the nearest known name, then (for a
 * section, whose list is short) every known one; the top level's list is the PluginOptions type.
 */
const unknownOptions = (keys: readonly string[], known: readonly string[], list = true) => {
  const near = keys[0] === undefined ? undefined : nearestName(keys[0], known);
  return `unknown option ${keys.map((key) => `'${key}'`).join(", ")}${near === undefined ? "" : `; did you mean '${near}'?`}${list && known.length > 0 ? ` (expected only ${known.join(", ")})` : ""}`;
};

/** Every option of {@link PluginOptions}. */
const PLUGIN_OPTION_KEYS = ["name", "version", "description", "server", "tools", "skills", "capabilities", "hooks", "commands", "middleware", "bridge", "logging", "env", "author", "homepage", "repository", "license", "keywords"];

const TOOL = z.custom<ToolDefinition>(isToolDefinition, { error: "was not built with tool()" });
const SKILL = z.custom<PluginSkill>(
  (value) => value !== null && typeof value === "object" && typeof (value as PluginSkill).name === "string" && typeof (value as PluginSkill).dir === "string",
  { error: "must be a pluginSkill() result" },
);
const ENV = z.record(
  z.string().check(
    z.regex(ENV_NAME, { error: (issue) => `key ${found(issue.input)} must be an environment variable name` }),
    z.refine((key) => !HOST_SET_ENV.includes(key), { error: (issue) => `key ${String(issue.input)} is set by Hermes and must not be declared` }),
  ),
  aString("values must be strings"),
  section("an object of NAME: string"),
);

/** The shape of {@link PluginOptions}; sections with rules of their own are checked by their modules. */
const PLUGIN_OPTIONS = z.strictObject(
  {
    name: z.string({ error: (issue) => `must be a string, found ${found(issue.input)}` }).check(
      z.maxLength(64, { error: (issue) => `must be 1-64 characters, found ${found(issue.input)}` }),
      z.regex(PLUGIN_NAME_PATTERN, { error: (issue) => `must be 1-64 of a-z 0-9 - . with no --, .. or edge - or . (e.g. my-plugin), found ${found(issue.input)}` }),
    ),
    version: z.optional(z.string({ error: (issue) => `must be a SemVer string, found ${found(issue.input)}` }).check(z.regex(PLUGIN_VERSION_PATTERN, { error: (issue) => `must be a SemVer string, found ${found(issue.input)}` }))),
    description: nonEmptyString("must be a non-empty string"),
    server: z.optional(aString("must be a string")),
    tools: z.array(TOOL, section("a non-empty list of tool() definitions")).check(z.minLength(1, section("a non-empty list of tool() definitions"))),
    skills: z.optional(z.array(SKILL, section("a list of pluginSkill() results"))),
    capabilities: z.optional(z.strictObject({ groups: z.unknown(), enabled: z.optional(z.unknown()) }, section("{groups, enabled?}", ["groups", "enabled"]))),
    hooks: z.optional(z.unknown()),
    commands: z.optional(z.unknown()),
    middleware: z.optional(z.unknown()),
    bridge: z.optional(z.unknown()),
    logging: z.optional(
      z.strictObject(
        {
          envVar: z.string({ error: "must be an environment variable name" }).check(z.regex(ENV_NAME, { error: (issue) => `must be an environment variable name, found ${found(issue.input)}` })),
          default: z.optional(z.enum(["debug", "info", "warning", "error"], { error: (issue) => `must be debug, info, warning or error, found ${found(issue.input)}` })),
        },
        section("{envVar, default?}", ["envVar", "default"]),
      ),
    ),
    env: z.optional(ENV),
    author: z.optional(z.strictObject({ name: aString("must be a string"), email: z.optional(aString("must be a string")), url: z.optional(aString("must be a string")) }, section("{name, email?, url?} of strings", ["name", "email", "url"]))),
    homepage: z.optional(aString("must be a string")),
    repository: z.optional(aString("must be a string")),
    license: z.optional(aString("must be a string")),
    keywords: z.optional(z.array(aString("must be a string"), section("a list of strings"))),
  },
  { error: (issue) => (issue.code === "unrecognized_keys" ? unknownOptions(issue.keys, PLUGIN_OPTION_KEYS, false) : "definePlugin() needs an options object") },
);

/** The code a problem with a top-level option fails under (the rule family it belongs to). */
const OPTION_CODES: Partial<Record<string, PluginKitErrorCode>> = { name: "PLUGIN_NAME_INVALID", logging: "LOGGING_INVALID", capabilities: "CAPABILITY_INVALID" };

/** At most this many problem lines in one error. */
const MAX_PROBLEM_LINES = 20;

function pathText(path: readonly PropertyKey[]): string {
  return path.map((part, index) => (typeof part === "number" ? `[${part}]` : `${index > 0 ? "." : ""}${String(part)}`)).join("");
}

/** The map-like options checked by {@link checkPlainRecords} (hooks, middleware and bridge: by `checkHostSurface`, under their own codes). */
const PLAIN_RECORD_OPTIONS = ["env", "logging", "author", "capabilities"] as const;

/**
 * `definePlugin`'s options object and its map-like options are plain objects of own enumerable data entries
 * ({@link plainRecordProblem}): an option given through a prototype, a getter or an own `__proto__` key is refused,
 * never read or dropped silently.
 * @throws PluginKitError `PLUGIN_DEFINITION_INVALID` (`LOGGING_INVALID`, `CAPABILITY_INVALID` for theirs).
 */
function checkPlainRecords(options: unknown): void {
  if (options === null || typeof options !== "object" || Array.isArray(options)) return; // the schema names it
  const top = plainRecordProblem(options);
  if (top !== null) throw new PluginKitError("PLUGIN_DEFINITION_INVALID", `definePlugin() options must be a plain object (an object literal) of own enumerable entries, ${top}`);
  const record = options as Record<string, unknown>;
  const parts: [string, unknown][] = PLAIN_RECORD_OPTIONS.map((key) => [key, record[key]]);
  const groups = isRecord(record["capabilities"]) ? record["capabilities"]["groups"] : undefined;
  if (isRecord(groups)) parts.push(["capabilities.groups", groups]);
  for (const [where, value] of parts) {
    if (!isRecord(value)) continue; // a non-object is the schema's to name
    const problem = plainRecordProblem(value);
    if (problem !== null) throw new PluginKitError(OPTION_CODES[where.split(".")[0] as string] ?? "PLUGIN_DEFINITION_INVALID", `${where}: must be a plain object (an object literal or Object.create(null)) of own enumerable entries, ${problem}`);
  }
}

/**
 * Check the shape of `definePlugin`'s options: every problem on its own line
 * (`<field>: <what was expected>, found <value>`), at most one per field.
 *
 * @throws PluginKitError with the code of the first bad field's rule family:
 *   `PLUGIN_NAME_INVALID` (name), `LOGGING_INVALID` (logging),
 *   `CAPABILITY_INVALID` (capabilities not `{groups, enabled?}`), else
 *   `PLUGIN_DEFINITION_INVALID` (version, description, tools not from
 *   `tool()`, skills, env, plugin.json metadata, an unknown option).
 */
export function checkPluginOptions(options: unknown): asserts options is PluginOptions {
  checkPlainRecords(options);
  const parsed = PLUGIN_OPTIONS.safeParse(options);
  if (parsed.success) return;
  const lines: string[] = [];
  const seen = new Set<string>();
  let code: PluginKitErrorCode | undefined;
  for (const issue of parsed.error.issues) {
    const where = pathText(issue.path);
    if (seen.has(where)) continue;
    seen.add(where);
    code ??= OPTION_CODES[String(issue.path[0])] ?? "PLUGIN_DEFINITION_INVALID";
    lines.push(where === "" ? issue.message : `${where}: ${issue.message}`);
  }
  const shown = lines.slice(0, MAX_PROBLEM_LINES);
  if (lines.length > shown.length) shown.push(`... and ${lines.length - shown.length} more`);
  throw new PluginKitError(code ?? "PLUGIN_DEFINITION_INVALID", shown.join("\n"));
}
