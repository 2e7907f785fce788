/**
 * Hooks, slash commands and request middleware of a TypeScript plugin
 * (Python kit commands, middleware and hooks; Hermes PluginContext; Hermes VALID_HOOKS; Hermes middleware): the names Hermes accepts, the checks
 * `definePlugin` runs on them (zod at the boundary, one coded error per
 * rule), and the exact result shapes the host expects, enforced before an
 * answer crosses the bridge (see bridge.ts and companion.ts).
 *
 * Hermes loads these surfaces only from a native plugin's `register(ctx)`,
 * so `plugin build` writes a native companion that forwards each callback to
 * the plugin's own server. The execution middleware kinds (`tool_execution`,
 * `llm_execution`) hand the callback a synchronous single-use `next_call`
 * that cannot cross a process boundary: they are refused.
 */
import * as z from "zod/mini";
import { inputTypeError, isRecord, PluginKitError, type PluginKitErrorCode } from "./errors.js";
import type { KitLogger } from "./logging.js";
import { requireKnownOptions } from "./option-keys.js";
import { nearestName } from "../contract/grammar.js";
import { plainRecordProblem } from "./own-keys.js";

/** Hook names Hermes accepts (`VALID_HOOKS` in Hermes' hermes_cli/plugins.py; 39 names). */
export const VALID_HOOKS = [
  "pre_tool_call", "post_tool_call", "transform_terminal_output", "transform_tool_result", "transform_llm_output", "pre_llm_call",
  "post_llm_call", "on_stream_start", "on_stream_delta", "on_stream_end", "on_interim_message", "pre_verify", "pre_api_request",
  "post_api_request", "api_request_error", "transform_api_error_classification", "on_session_start", "on_session_end",
  "on_session_finalize", "on_session_reset", "on_skill_lifecycle", "subagent_start", "subagent_stop", "pre_gateway_dispatch",
  "agent_loop_stopped", "pre_approval_request", "post_approval_response", "on_room_member_activity", "pre_transcription",
  "kanban_task_claimed", "kanban_task_completed", "kanban_task_blocked", "on_kanban_worker_spawned", "on_kanban_worker_exited",
  "on_kanban_worker_stale_claim", "on_kanban_task_updated", "on_kanban_dispatch_tick", "gateway_platform_event", "pre_command",
] as const;

/** One of {@link VALID_HOOKS}. */
export type HookName = (typeof VALID_HOOKS)[number];

/** Middleware kinds a TypeScript plugin can register (request kinds, Hermes middleware). */
export const REQUEST_MIDDLEWARE_KINDS = ["tool_request", "llm_request"] as const;
/** One of {@link REQUEST_MIDDLEWARE_KINDS}. */
export type RequestMiddlewareKind = (typeof REQUEST_MIDDLEWARE_KINDS)[number];
/** Middleware kinds Hermes knows but the bridge cannot serve (their `next_call` is synchronous and single-use). */
export const EXECUTION_MIDDLEWARE_KINDS = ["tool_execution", "llm_execution"] as const;

/** Slash command grammar (the Python kit's): bare lowercase kebab-case. */
export const COMMAND_NAME_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/**
 * Built-in Hermes slash commands and aliases (hermes_cli/commands.py
 * `COMMAND_REGISTRY`); a plugin command with one of these names is skipped by
 * the host (Hermes PluginContext `register_command`: "built-in clash skipped").
 */
export const BUILTIN_COMMAND_NAMES: readonly string[] = [
  "new", "reset", "clear", "history", "save", "retry", "undo", "title", "branch", "fork", "compress", "compact", "rollback",
  "snapshot", "snap", "stop", "approve", "deny", "background", "bg", "btw", "queue", "q", "steer", "status", "resume",
  "sessions", "config", "model", "provider", "prompt", "personality", "statusbar", "sb", "verbose", "yolo", "reasoning", "fast",
  "skin", "voice", "tools", "toolsets", "skills", "cron", "reload", "reload-mcp", "reload_mcp", "reload-skills", "browser",
  "plugins", "commands", "help", "restart", "usage", "insights", "platforms", "gateway", "paste", "image", "copy", "update",
  "version", "debug", "quit", "exit", "start", "context", "profile", "sethome", "set-home", "agents", "tasks", "kanban",
  "memory", "plan", "goal", "init", "learn", "stats", "whoami", "login",
];

/** Default time the companion waits for one bridged callback, in ms (start included). */
export const BRIDGE_DEFAULT_TIMEOUT_MS = 5_000;
/** Largest bridge timeout, in ms: below Hermes' 30 s `plugins.hook_callback_timeout`, start included. */
export const BRIDGE_MAX_TIMEOUT_MS = 25_000;

/** What every bridged callback receives besides its payload. */
export interface HostCallContext {
  /** plugin.json name. */
  plugin: string;
  /** mcp.json server name. */
  server: string;
  /** The plugin's stderr logger. */
  logger: KitLogger;
  /** Aborted when the companion cancels the call. */
  signal: AbortSignal;
  /**
   * The plugin's own tool name when `name` is the name Hermes gives one of
   * its tools (`mcp__<server>__<tool>`, the clamped form, or older hosts'
   * `mcp_<server>_<tool>`); otherwise `undefined`.
   */
  ownTool(name: unknown): string | undefined;
}

/** Context of a hook callback. */
export interface HookContext extends HostCallContext {
  hook: HookName;
}

/** Payload of every hook: the host's keyword arguments that are JSON values (others are dropped). */
export type HookEvent = Record<string, unknown>;

/** Payload of `pre_tool_call`. */
export interface PreToolCallEvent extends HookEvent {
  tool_name: string;
  args: Record<string, unknown>;
  session_id?: string;
  task_id?: string;
}

/** What `pre_tool_call` may answer (Hermes VALID_HOOKS); `undefined`/`null` lets the call run. */
export type PreToolCallDecision =
  | { action: "block"; message: string }
  | { action: "approve"; message: string; rule_key?: string }
  | { action: "modify"; args: Record<string, unknown> };

type Maybe<T> = T | null | undefined | void;
type HookFn<E, R> = (event: E, context: HookContext) => Maybe<R> | Promise<Maybe<R>>;

/** Hooks whose results the host reads (Hermes VALID_HOOKS). */
interface ContractHooks {
  pre_tool_call?: HookFn<PreToolCallEvent, PreToolCallDecision>;
  pre_llm_call?: HookFn<HookEvent, string | { context: string }>;
  transform_llm_output?: HookFn<HookEvent, string>;
  transform_tool_result?: HookFn<HookEvent, string>;
  transform_terminal_output?: HookFn<HookEvent, string>;
}

/** Hook callbacks by name; the result types are the host's contracts. */
export type PluginHooks = { [K in Exclude<HookName, keyof ContractHooks>]?: HookFn<HookEvent, unknown> } & ContractHooks;

/** Context of a slash command. */
export interface CommandContext extends HostCallContext {
  command: string;
}

/** A slash command `/<name> <raw args>`; the handler's string is shown to the user. */
export interface PluginCommand {
  /** Bare lowercase kebab-case (a leading `/` is stripped). */
  name: string;
  description: string;
  /** Placeholder shown after the name, e.g. `<expression>`. */
  argsHint?: string;
  handler(rawArgs: string, context: CommandContext): Maybe<string> | Promise<Maybe<string>>;
}

/** Context of a middleware callback. */
export interface MiddlewareContext extends HostCallContext {
  kind: RequestMiddlewareKind;
}

/** Optional trace fields of a middleware answer (Hermes middleware). */
interface MiddlewareTrace {
  source?: string;
  reason?: string;
  name?: string;
}

/** Request middleware: answer `{args}` / `{request}` to replace the payload, nothing to keep it. */
export interface PluginMiddleware {
  tool_request?: (payload: HookEvent, context: MiddlewareContext) => Maybe<{ args: Record<string, unknown> } & MiddlewareTrace> | Promise<Maybe<{ args: Record<string, unknown> } & MiddlewareTrace>>;
  llm_request?: (payload: HookEvent, context: MiddlewareContext) => Maybe<{ request: Record<string, unknown> } & MiddlewareTrace> | Promise<Maybe<{ request: Record<string, unknown> } & MiddlewareTrace>>;
}

/** Bridge settings. */
export interface BridgeOptions {
  /** Time the companion waits for one callback (start included), ms; 100..25000, default 5000. */
  timeoutMs?: number;
}

/** A checked command. */
export interface HostCommand {
  name: string;
  description: string;
  argsHint: string;
  handler: PluginCommand["handler"];
}

/** The checked host surface of a plugin (empty when it declares none). */
export interface HostSurface {
  hooks: ReadonlyMap<HookName, HookFn<HookEvent, unknown>>;
  commands: readonly HostCommand[];
  middleware: ReadonlyMap<RequestMiddlewareKind, (payload: HookEvent, context: MiddlewareContext) => unknown>;
  timeoutMs: number;
  /** True when there is no hook, command or middleware (no companion is written). */
  empty: boolean;
}

const callable = z.custom<(...args: never[]) => unknown>((value) => typeof value === "function", { error: "must be a function" });
const SURFACE_SCHEMAS = {
  hooks: z.record(z.string(), callable),
  commands: z.array(
    z.strictObject({
      name: z.string(),
      description: z.string().check(z.trim(), z.minLength(1, { error: "must be a non-empty string" })),
      argsHint: z.optional(z.string().check(z.maxLength(200))),
      handler: callable,
    }),
  ),
  middleware: z.record(z.string(), callable),
  bridge: z.strictObject({ timeoutMs: z.optional(z.int().check(z.minimum(100), z.maximum(BRIDGE_MAX_TIMEOUT_MS))) }),
};
const SURFACE_CODES: Record<keyof typeof SURFACE_SCHEMAS, PluginKitErrorCode> = {
  hooks: "HOOK_INVALID",
  commands: "COMMAND_INVALID",
  middleware: "MIDDLEWARE_INVALID",
  bridge: "BRIDGE_OPTION_INVALID",
};

function parseSection<K extends keyof typeof SURFACE_SCHEMAS>(key: K, value: unknown): z.output<(typeof SURFACE_SCHEMAS)[K]> {
  if (key !== "commands") {
    const problem = plainRecordProblem(value);
    if (problem !== null) throw new PluginKitError(SURFACE_CODES[key], `definePlugin ${key} must be a plain object (an object literal or Object.create(null)) of own enumerable entries, ${problem}`);
  }
  const parsed = SURFACE_SCHEMAS[key].safeParse(value);
  if (parsed.success) return parsed.data as z.output<(typeof SURFACE_SCHEMAS)[K]>;
  const issues = parsed.error.issues.slice(0, 5).map((issue) => `${[key, ...issue.path.map(String)].join(".")}: ${issue.message}`);
  throw new PluginKitError(SURFACE_CODES[key], `definePlugin ${key} is invalid: ${issues.join("; ")}`);
}

function checkCommandName(raw: string, seen: Set<string>): string {
  const name = raw.replace(/^\/+/, "");
  if (!COMMAND_NAME_PATTERN.test(name)) {
    throw new PluginKitError("COMMAND_NAME_INVALID", `command name ${JSON.stringify(raw)} must be bare lowercase kebab-case: lowercase letters a-z and digits 0-9 in words joined by single '-', starting with a letter, no leading '/' (e.g. calc or unit-convert; Hermes lowercases names and turns spaces into '-')`);
  }
  if (BUILTIN_COMMAND_NAMES.includes(name)) throw new PluginKitError("COMMAND_NAME_BUILTIN", `command /${name} clashes with a built-in Hermes command; Hermes would skip it`);
  if (seen.has(name)) throw new PluginKitError("COMMAND_DUPLICATE", `duplicate command name: ${name}`);
  seen.add(name);
  return name;
}

/** The keys {@link checkHostSurface} reads. */
const HOST_SURFACE_KEYS: readonly string[] = ["hooks", "commands", "middleware", "bridge"];

/**
 * Check the host surface of `definePlugin` options, `{hooks?, commands?,
 * middleware?, bridge?}` (see the module comment).
 *
 * @throws PluginKitError `HOOK_INVALID`, `HOOK_NAME_UNKNOWN` (not in
 *   {@link VALID_HOOKS}; the nearest hook named), `COMMAND_INVALID`, `COMMAND_NAME_INVALID`,
 *   `COMMAND_NAME_BUILTIN`, `COMMAND_DUPLICATE`, `MIDDLEWARE_INVALID`,
 *   `MIDDLEWARE_KIND_UNSUPPORTED` (execution kinds), `MIDDLEWARE_KIND_UNKNOWN`,
 *   `BRIDGE_OPTION_INVALID`, `INPUT_TYPE_INVALID` (`options` not an object,
 *   or a key other than the four, named with the nearest).
 */
export function checkHostSurface(options: { hooks?: unknown; commands?: unknown; middleware?: unknown; bridge?: unknown }): HostSurface {
  if (!isRecord(options)) throw inputTypeError("checkHostSurface", "options", "an object", options);
  requireKnownOptions("checkHostSurface", options, HOST_SURFACE_KEYS);
  const hooks = new Map<HookName, HookFn<HookEvent, unknown>>();
  for (const [name, callback] of Object.entries(parseSection("hooks", options.hooks ?? {}))) {
    if (!(VALID_HOOKS as readonly string[]).includes(name)) {
      const near = nearestName(name, VALID_HOOKS);
      throw new PluginKitError("HOOK_NAME_UNKNOWN", `hook ${JSON.stringify(name)} is not one of Hermes' VALID_HOOKS (e.g. pre_tool_call, pre_llm_call, on_session_start)${near === undefined ? "" : `; did you mean '${near}'?`}; Hermes would never call it`);
    }
    hooks.set(name as HookName, callback as HookFn<HookEvent, unknown>);
  }
  const seen = new Set<string>();
  const commands = parseSection("commands", options.commands ?? []).map((command) => ({
    name: checkCommandName(command.name, seen),
    description: command.description.trim(),
    argsHint: command.argsHint ?? "",
    handler: command.handler as PluginCommand["handler"],
  }));
  const middleware = new Map<RequestMiddlewareKind, (payload: HookEvent, context: MiddlewareContext) => unknown>();
  for (const [kind, callback] of Object.entries(parseSection("middleware", options.middleware ?? {}))) {
    if ((EXECUTION_MIDDLEWARE_KINDS as readonly string[]).includes(kind)) {
      throw new PluginKitError("MIDDLEWARE_KIND_UNSUPPORTED", `middleware kind ${kind} hands the callback a synchronous, single-use next_call that cannot cross to the plugin's server; use tool_request or llm_request`);
    }
    if (!(REQUEST_MIDDLEWARE_KINDS as readonly string[]).includes(kind)) {
      const near = nearestName(kind, REQUEST_MIDDLEWARE_KINDS);
      throw new PluginKitError("MIDDLEWARE_KIND_UNKNOWN", `middleware kind ${JSON.stringify(kind)} must be tool_request or llm_request${near === undefined ? "" : `; did you mean '${near}'?`}`);
    }
    middleware.set(kind as RequestMiddlewareKind, callback as (payload: HookEvent, context: MiddlewareContext) => unknown);
  }
  const timeoutMs = parseSection("bridge", options.bridge ?? {}).timeoutMs ?? BRIDGE_DEFAULT_TIMEOUT_MS;
  return { hooks, commands, middleware, timeoutMs, empty: hooks.size === 0 && commands.length === 0 && middleware.size === 0 };
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

function jsonCopy(value: unknown, what: string, code: PluginKitErrorCode): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new PluginKitError(code, `${what} must be JSON-serialisable: ${error instanceof Error ? error.message : String(error)}`);
  }
  return text === undefined ? null : JSON.parse(text);
}

function exactKeys(value: Record<string, unknown>, required: readonly string[], optional: readonly string[]): boolean {
  const keys = Object.keys(value);
  return required.every((key) => Object.hasOwn(value, key)) && keys.every((key) => required.includes(key) || optional.includes(key));
}

const TRANSFORM_HOOKS: readonly string[] = ["transform_llm_output", "transform_tool_result", "transform_terminal_output"];

function preToolCallDecision(value: unknown): PreToolCallDecision | null {
  if (!isObject(value)) return null;
  const { action } = value;
  if (action === "block" && exactKeys(value, ["action", "message"], []) && typeof value["message"] === "string" && value["message"].trim() !== "") return { action, message: value["message"] };
  if (action === "approve" && exactKeys(value, ["action", "message"], ["rule_key"]) && typeof value["message"] === "string" && (value["rule_key"] === undefined || typeof value["rule_key"] === "string")) {
    return { action, message: value["message"], ...(typeof value["rule_key"] === "string" ? { rule_key: value["rule_key"] } : {}) };
  }
  if (action === "modify" && exactKeys(value, ["action", "args"], []) && isObject(value["args"])) return { action, args: jsonCopy(value["args"], "modify args", "HOOK_RESULT_INVALID") as Record<string, unknown> };
  return null;
}

/**
 * The exact value the host receives for a hook's result (Hermes VALID_HOOKS):
 * `undefined`/`null` -> `null`; `pre_tool_call` one of
 * {@link PreToolCallDecision} with exactly its keys; `pre_llm_call` a string
 * or `{context}` -> `{context: string}`; the `transform_*` hooks a string;
 * any other hook a JSON value.
 *
 * @throws PluginKitError `HOOK_RESULT_INVALID` naming the expected shape.
 */
export function normalizeHookResult(hook: HookName, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (hook === "pre_tool_call") {
    const decision = preToolCallDecision(value);
    if (decision) return decision;
    throw new PluginKitError("HOOK_RESULT_INVALID", 'pre_tool_call must answer nothing, {action: "block", message}, {action: "approve", message, rule_key?} or {action: "modify", args}');
  }
  if (hook === "pre_llm_call") {
    if (typeof value === "string") return { context: value };
    if (isObject(value) && exactKeys(value, ["context"], []) && typeof value["context"] === "string") return { context: value["context"] };
    throw new PluginKitError("HOOK_RESULT_INVALID", "pre_llm_call must answer nothing, a string or {context: string}");
  }
  if (TRANSFORM_HOOKS.includes(hook)) {
    if (typeof value === "string") return value;
    throw new PluginKitError("HOOK_RESULT_INVALID", `${hook} must answer nothing or the replacement string`);
  }
  return jsonCopy(value, `${hook} result`, "HOOK_RESULT_INVALID");
}

/**
 * The exact value the host receives for a command: its text, or `null`.
 *
 * @throws PluginKitError `COMMAND_RESULT_INVALID` for anything else.
 */
export function normalizeCommandResult(command: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value;
  throw new PluginKitError("COMMAND_RESULT_INVALID", `command /${command} must answer a string or nothing`);
}

/**
 * The exact value the host receives from request middleware (Hermes middleware):
 * `null` (keep the payload), `{args, source?, reason?, name?}` for
 * `tool_request`, `{request, source?, reason?, name?}` for `llm_request`.
 *
 * @throws PluginKitError `MIDDLEWARE_RESULT_INVALID`.
 */
export function normalizeMiddlewareResult(kind: RequestMiddlewareKind, value: unknown): Record<string, unknown> | null {
  if (value === undefined || value === null) return null;
  const key = kind === "tool_request" ? "args" : "request";
  const trace = ["source", "reason", "name"];
  if (isObject(value) && exactKeys(value, [key], trace) && isObject(value[key]) && trace.every((t) => value[t] === undefined || typeof value[t] === "string")) {
    return jsonCopy(value, `${kind} result`, "MIDDLEWARE_RESULT_INVALID") as Record<string, unknown>;
  }
  throw new PluginKitError("MIDDLEWARE_RESULT_INVALID", `${kind} middleware must answer nothing or {${key}: {...}, source?, reason?, name?}`);
}
