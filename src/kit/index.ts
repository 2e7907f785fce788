/**
 * The plugin authoring kit (DESIGN.md section 6): write Hermes plugin tools
 * in TypeScript, serve them over MCP stdio, build the portable package and
 * check it with Hermes' rules.
 */
export * from "./errors.js";
export * from "./naming.js";
export * from "./schema.js";
export * from "./arguments.js";
export * from "./logging.js";
export { LOG_ARGUMENT_LIMIT, REDACTED_KEY_PARTS, redactArguments, redactText, safeArguments, safeContext } from "./redaction.js";
export * from "./observability.js";
export * from "./config.js";
export * from "./tool.js";
export { guardStdout, isStdoutGuarded, protocolStdout, withStdoutOnStderr } from "./stdout.js";
export * from "./skills.js";
export * from "./capabilities.js";
export * from "./portable.js";
export * from "./plugin.js";
export {
  BRIDGE_DEFAULT_TIMEOUT_MS,
  BRIDGE_MAX_TIMEOUT_MS,
  BUILTIN_COMMAND_NAMES,
  checkHostSurface,
  COMMAND_NAME_PATTERN,
  EXECUTION_MIDDLEWARE_KINDS,
  normalizeCommandResult,
  normalizeHookResult,
  normalizeMiddlewareResult,
  REQUEST_MIDDLEWARE_KINDS,
  VALID_HOOKS,
} from "./hooks.js";
export type {
  BridgeOptions,
  CommandContext,
  HookContext,
  HookEvent,
  HookName,
  HostCallContext,
  HostCommand,
  HostSurface,
  MiddlewareContext,
  PluginCommand,
  PluginHooks,
  PluginMiddleware,
  PreToolCallDecision,
  PreToolCallEvent,
  RequestMiddlewareKind,
} from "./hooks.js";
export { BRIDGE_CAPABILITY, BRIDGE_ERRORS, BRIDGE_METHODS, BRIDGE_PROTOCOL_VERSION, bridgeCapability } from "./bridge.js";
export {
  COMPANION_MANIFEST_KEYS,
  COMPANION_MARKER,
  COMPANION_PARENT_DIR,
  companionDir,
  companionFiles,
  companionManifest,
  companionName,
  companionSpec,
  type CompanionSpec,
} from "./companion.js";
export * from "./render.js";
export * from "./build.js";
export * from "./doctor.js";
