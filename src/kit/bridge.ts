/**
 * The server side of the bridge between a plugin's native companion
 * (companion.ts) and its bundled MCP server: three JSON-RPC methods that
 * `tools/list` does not show, advertised under the `experimental`
 * capability {@link BRIDGE_CAPABILITY} of the `initialize` answer.
 *
 * - `hermes-plugin-kit/hook` `{name, kwargs}` -> `{value}`
 * - `hermes-plugin-kit/command` `{name, rawArgs}` -> `{value}`
 * - `hermes-plugin-kit/middleware` `{kind, kwargs}` -> `{value}`
 *
 * `value` is already in the exact shape the host expects (hooks.ts
 * `normalize*`). A callback that throws answers JSON-RPC error
 * {@link BRIDGE_ERRORS}.callback with `data: {code: "CALLBACK_RAISED",
 * errorType}`; an answer of the wrong shape answers `.result` with `data:
 * {code: "RESULT_INVALID"}` and the kit's message of the wrong shape, redacted
 * (redaction.ts); an answer whose own code throws (a getter, a `toJSON`) is
 * the callback raising. Log lines follow Python kit commands, middleware and hooks; Python kit redaction: invoked /
 * callback raised (error type only) / ok with `elapsed_ms`, context =
 * redacted `session_id`/`task_id`; payloads and exception messages are never
 * logged (the stack, redacted, only at DEBUG).
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod/mini";
import { PluginKitError } from "./errors.js";
import { normalizeCommandResult, normalizeHookResult, normalizeMiddlewareResult, type HookName, type HostSurface, type RequestMiddlewareKind } from "./hooks.js";
import type { KitLogger } from "./logging.js";
import { redactedErrorMessage, redactText, safeContext } from "./redaction.js";

/** `experimental` capability key under which the server advertises its bridge. */
export const BRIDGE_CAPABILITY = "hermes-plugin-kit/bridge";
/** Version of the bridge protocol; the companion refuses a server that advertises another. */
export const BRIDGE_PROTOCOL_VERSION = 1;
/** The bridge's JSON-RPC methods. */
export const BRIDGE_METHODS = { hook: "hermes-plugin-kit/hook", command: "hermes-plugin-kit/command", middleware: "hermes-plugin-kit/middleware" } as const;
/** JSON-RPC error codes of the bridge. */
export const BRIDGE_ERRORS = { unknownName: -32601, params: -32602, callback: -32010, result: -32011 } as const;

/** What the bridge needs to know about its plugin. */
export interface BridgeIdentity {
  plugin: string;
  server: string;
  logger: KitLogger;
  ownTool(name: unknown): string | undefined;
}

/** The advertised capability: protocol version and the served names. */
export function bridgeCapability(surface: HostSurface): Record<string, unknown> {
  return {
    version: BRIDGE_PROTOCOL_VERSION,
    hooks: [...surface.hooks.keys()].sort(),
    commands: surface.commands.map((command) => command.name).sort(),
    middleware: [...surface.middleware.keys()].sort(),
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
const elapsed = (start: bigint) => (Number(process.hrtime.bigint() - start) / 1e6).toFixed(2);

function errorType(error: unknown): string {
  const name = error instanceof Error ? error.name : typeof error;
  return /^[A-Za-z_$][A-Za-z0-9_$.]{0,63}$/.test(name) ? name : "Error";
}

function resultType(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

/** How one callback logs (Python kit commands, middleware and hooks): `<label>: invoked; <detail>`, `<label>: <raised>; elapsed_ms=..; error_type=..<suffix>`, `<label>: ok; elapsed_ms=..; result=..<suffix>`. */
interface CallLabels {
  label: string;
  raised: string;
  /** `context=<ctx>` for hooks and middleware, `args_chars=<n>` for commands; built only when a line is written. */
  detail: () => string;
  /** Whether the detail is repeated at the end of the raised/ok lines (hooks and middleware). */
  detailSuffix: boolean;
}

async function runCallback(logger: KitLogger, labels: CallLabels, invoke: () => unknown, normalize: (value: unknown) => unknown): Promise<unknown> {
  const start = process.hrtime.bigint();
  const suffix = () => (labels.detailSuffix ? `; ${labels.detail()}` : "");
  if (logger.isEnabled("DEBUG")) logger.debug(`${labels.label}: invoked; ${labels.detail()}`);
  let value: unknown;
  const callbackRaised = (error: unknown) => {
    const type = errorType(error);
    logger.warning(`${labels.label}: ${labels.raised}; elapsed_ms=${elapsed(start)}; error_type=${type}${suffix()}`);
    if (error instanceof Error && error.stack && logger.isEnabled("DEBUG")) logger.debug(`${labels.label}: ${labels.raised}; stack=${redactText(error.stack)}`);
    return new McpError(BRIDGE_ERRORS.callback, "callback raised", { code: "CALLBACK_RAISED", errorType: type });
  };
  try {
    value = await invoke();
  } catch (error) {
    throw callbackRaised(error);
  }
  try {
    value = normalize(value);
  } catch (error) {
    // The answer's own code raised (a getter, a toJSON): the callback's failure, its text never sent.
    if (!(error instanceof PluginKitError)) throw callbackRaised(error);
    // The kit's message may quote what a toJSON threw: redacted as the log line is.
    const message = redactedErrorMessage(error);
    logger.warning(`${labels.label}: ${labels.raised}; elapsed_ms=${elapsed(start)}; error_type=InvalidResult${suffix()}; expected: ${redactText(message)}`);
    throw new McpError(BRIDGE_ERRORS.result, message, { code: "RESULT_INVALID" });
  }
  if (logger.isEnabled("INFO")) logger.info(`${labels.label}: ok; elapsed_ms=${elapsed(start)}; result=${resultType(value)}${suffix()}`);
  return value;
}

/** Labels of a hook or middleware call: the context is `session_id`/`task_id` only, computed once on first use. */
function contextLabels(label: string, kwargs: Record<string, unknown>): CallLabels {
  let context: string | undefined;
  return { label, raised: "callback raised", detail: () => `context=${(context ??= safeContext(kwargs))}`, detailSuffix: true };
}

function requestSchema(method: string) {
  return z.object({ method: z.literal(method), params: z.optional(z.unknown()) });
}

function paramsOf(request: { params?: unknown }, nameKey: "name" | "kind"): { name: string; params: Record<string, unknown> } {
  const params = request.params;
  if (!isObject(params) || typeof params[nameKey] !== "string") throw new McpError(BRIDGE_ERRORS.params, `params.${nameKey} must be a string`, { code: "PARAMS_INVALID" });
  return { name: params[nameKey] as string, params };
}

function kwargsOf(params: Record<string, unknown>): Record<string, unknown> {
  const kwargs = params["kwargs"] ?? {};
  if (!isObject(kwargs)) throw new McpError(BRIDGE_ERRORS.params, "params.kwargs must be an object", { code: "PARAMS_INVALID" });
  return kwargs;
}

function unknownName(what: string, name: string): McpError {
  return new McpError(BRIDGE_ERRORS.unknownName, `${what} ${JSON.stringify(name).slice(0, 80)} is not served by this plugin`, { code: "UNKNOWN_NAME" });
}

/**
 * Register the bridge methods on `server` for `surface` (no-op for an empty
 * surface). Callbacks receive the payload and a context whose `signal` is
 * the request's (aborted when the companion cancels).
 */
export function registerBridge(server: Server, surface: HostSurface, identity: BridgeIdentity): void {
  if (surface.empty) return;
  const base = (signal: AbortSignal) => ({ plugin: identity.plugin, server: identity.server, logger: identity.logger, signal, ownTool: identity.ownTool });
  server.setRequestHandler(requestSchema(BRIDGE_METHODS.hook), async (request, extra) => {
    const { name, params } = paramsOf(request, "name");
    const callback = surface.hooks.get(name as HookName);
    if (!callback) throw unknownName("hook", name);
    const kwargs = kwargsOf(params);
    const value = await runCallback(identity.logger, contextLabels(name, kwargs), () => callback(kwargs, { ...base(extra.signal), hook: name as HookName }), (v) => normalizeHookResult(name as HookName, v));
    return { value };
  });
  server.setRequestHandler(requestSchema(BRIDGE_METHODS.command), async (request, extra) => {
    const { name, params } = paramsOf(request, "name");
    const command = surface.commands.find((entry) => entry.name === name);
    if (!command) throw unknownName("command", name);
    const rawArgs = typeof params["rawArgs"] === "string" ? params["rawArgs"] : "";
    const labels: CallLabels = { label: name, raised: "handler raised", detail: () => `args_chars=${Array.from(rawArgs).length}`, detailSuffix: false };
    const value = await runCallback(identity.logger, labels, () => command.handler(rawArgs, { ...base(extra.signal), command: name }), (v) => normalizeCommandResult(name, v));
    return { value };
  });
  server.setRequestHandler(requestSchema(BRIDGE_METHODS.middleware), async (request, extra) => {
    const { name: kind, params } = paramsOf(request, "kind");
    const callback = surface.middleware.get(kind as RequestMiddlewareKind);
    if (!callback) throw unknownName("middleware", kind);
    const kwargs = kwargsOf(params);
    const value = await runCallback(identity.logger, contextLabels(`${kind} middleware`, kwargs), () => callback(kwargs, { ...base(extra.signal), kind: kind as RequestMiddlewareKind }), (v) => normalizeMiddlewareResult(kind as RequestMiddlewareKind, v));
    return { value };
  });
}
