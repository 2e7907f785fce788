/**
 * The plugin authoring kit: write Hermes plugin tools in TypeScript, serve
 * them over MCP stdio, build the Agent Plugins v1 package and check it with
 * Hermes' rules (docs/kit.md). The public surface is this explicit list.
 */
// Errors: every rule fails with a PluginKitError whose code names it.
export {
  PLUGIN_KIT_ERROR_CODES,
  PluginKitError,
  type PluginKitErrorCode,
} from "./errors.js";
// Tool and server names (Hermes' registry rules, mcp__<server>__<tool>).
export {
  BUILTIN_TOOLSET_NAMES,
  checkHermesToolNames,
  clampedHermesToolName,
  HERMES_TOOL_NAME_MAX,
  hermesToolName,
  MCP_TOOL_NAME_PREFIX,
  MCP_UTILITY_TOOL_NAMES,
  portableServerName,
  RESERVED_TOOL_NAMES,
  RESERVED_TOOL_PREFIX,
  sanitizeNameComponent,
  serverNameShadowProblem,
  TOOL_NAME_PATTERN,
  toolName,
  type ToolNameProblem,
  validateServerName,
  validateToolName,
} from "./naming.js";
// Argument specs and the parameters object (MCP inputSchema).
export {
  type AnyArgOptions,
  arg,
  ARG_KEYWORDS,
  type ArgOptions,
  type ArgSpec,
  arrayArg,
  type ArrayArgOptions,
  augmentDescription,
  boolArg,
  buildParameters,
  type BuiltParameters,
  intArg,
  isArgSpec,
  type NumberArgOptions,
  numberArg,
  objectArg,
  type ObjectArgOptions,
  type ParametersSchema,
  type PropertySchema,
  pythonRepr,
  strArg,
  type StringArgOptions,
  validateFunctionSchema,
  validateParameters,
} from "./schema.js";
// Argument validation: every bad argument named, one line each.
export {
  type ArgumentProblem,
  type ArgumentProblemKind,
  type ArgumentValidationOptions,
  argumentValueProblems,
  checkArgumentValue,
  formatArgumentProblems,
  isMissingArgument,
  MAX_ARGUMENT_PROBLEM_LINES,
  validateArguments,
} from "./arguments.js";
// Tools: schema, validation, the {success, data} envelope, redacted logs.
export {
  isToolDefinition,
  type ParamsToolOptions,
  type SchemaToolOptions,
  tool,
  type ToolCallResult,
  type ToolContext,
  type ToolDefinition,
  toolErrorResult,
  type ToolHandler,
  type ZodToolOptions,
} from "./tool.js";
// Redaction of log lines and observability events.
export {
  LOG_ARGUMENT_LIMIT,
  redactArguments,
  REDACTED_KEY_PARTS,
  redactText,
  safeArguments,
  safeContext,
} from "./redaction.js";
// stderr logging (stdout is the JSON-RPC channel).
export {
  configureStderrLogging,
  KitLogger,
  LOG_LEVELS,
  type LogLevel,
  type LogSink,
  readEnvironmentVariable,
  setLogSink,
  setStderrLogLevel,
  stderrLogLevel,
} from "./logging.js";
// Observability events.
export {
  credentialIdentityHash,
  logObservabilityEvent,
  newCorrelationId,
  OBSERVABILITY_SCHEMA,
  ObservabilityEvent,
  type ObservabilityEventInit,
} from "./observability.js";
// Plugin root, data directory and operator config.
export {
  loadPluginConfig,
  PLUGIN_CONFIG_FILE,
  PLUGIN_CONFIG_MAX_BYTES,
  type PluginConfig,
  pluginDataPath,
  pluginPath,
  resolvePluginData,
  resolvePluginRoot,
} from "./config.js";
// stdout guard.
export {
  guardStdout,
  isStdoutGuarded,
  protocolStdout,
  withStdoutOnStderr,
} from "./stdout.js";
// Skills and the read-only reference tool.
export {
  checkSkillFrontmatter,
  parseSkillDocument,
  type PluginSkill,
  pluginSkill,
  qualifiedSkillName,
  REFERENCE_FILE_MAX_BYTES,
  REFERENCE_LIST_LIMIT,
  referenceTool,
  referenceToolName,
  resolveReferenceFile,
  SKILL_FILE_MAX_BYTES,
  SKILL_NAME_PATTERN,
  type SkillDocument,
  skillNamespace,
  type SkillProblem,
} from "./skills.js";
// Capability selection.
export {
  type CapabilitySelection,
  type CapabilitySelectionOptions,
  resolveCapabilitySelection,
} from "./capabilities.js";
// Agent Plugins v1 package rules (plugin.json, mcp.json, install scan).
export {
  BINARY_EXTENSIONS,
  checkMcpConfig,
  checkPluginManifest,
  expandPlaceholders,
  type FindingSeverity,
  MCP_SCHEMA_URL,
  type PackageFinding,
  PLUGIN_MANIFEST_FIELDS,
  PLUGIN_NAME_PATTERN,
  PLUGIN_SCHEMA_URL,
  SCAN_LARGE_FILE_BYTES,
  SCANNED_EXTENSIONS,
  scanTextForInstallRisks,
  SERVER_SCRIPT,
  STDIO_ENTRY_KEYS,
  type StdioServerEntry,
} from "./portable.js";
// definePlugin and serving over MCP stdio (servePluginModule and refusalLine are what generated server bundles import).
export {
  definePlugin,
  EXAMPLES_META_KEY,
  isPluginDefinition,
  type McpConfig,
  type PluginDefinition,
  type PluginManifest,
  type ReceiptHostSurface,
  refusalLine,
  registrationReceipt,
  type RunningPlugin,
  servePluginModule,
  UNBUILT_PLUGIN_VERSION,
  VALIDATOR_META_KEY,
} from "./plugin.js";
export { type PluginCapabilities, type PluginLogging, type PluginOptions } from "./plugin-options.js";
// Hooks, slash commands and request middleware (served through the native companion).
export {
  BRIDGE_DEFAULT_TIMEOUT_MS,
  BRIDGE_MAX_TIMEOUT_MS,
  type BridgeOptions,
  BUILTIN_COMMAND_NAMES,
  checkHostSurface,
  COMMAND_NAME_PATTERN,
  type CommandContext,
  EXECUTION_MIDDLEWARE_KINDS,
  type HookContext,
  type HookEvent,
  type HookName,
  type HostCallContext,
  type HostCommand,
  type HostSurface,
  type MiddlewareContext,
  normalizeCommandResult,
  normalizeHookResult,
  normalizeMiddlewareResult,
  type PluginCommand,
  type PluginHooks,
  type PluginMiddleware,
  type PreToolCallDecision,
  type PreToolCallEvent,
  REQUEST_MIDDLEWARE_KINDS,
  type RequestMiddlewareKind,
  VALID_HOOKS,
} from "./hooks.js";
// The bridge between the native companion and the plugin's server.
export {
  BRIDGE_CAPABILITY,
  BRIDGE_ERRORS,
  BRIDGE_METHODS,
  BRIDGE_PROTOCOL_VERSION,
  bridgeCapability,
} from "./bridge.js";
// The native companion plugin.
export {
  COMPANION_MANIFEST_KEYS,
  COMPANION_MARKER,
  COMPANION_PARENT_DIR,
  companionDir,
  companionFiles,
  companionManifest,
  companionName,
  type CompanionSpec,
  companionSpec,
} from "./companion.js";
// What the model sees of a tool result.
export {
  type ReceivedToolResult,
  renderForModel,
} from "./render.js";
// plugin build.
export {
  type BuildOptions,
  buildPluginPackage,
  type BuildResult,
  kitIndexPath,
  stdoutGuardPath,
} from "./build.js";
// plugin call.
export {
  callPluginTool,
  parseCallArguments,
  type PluginCallOptions,
  type PluginCallResult,
} from "./call.js";
// plugin doctor.
export {
  type DoctorOptions,
  doctorPluginPackage,
  type DoctorReport,
  type DoctorSkill,
  formatDoctorReport,
} from "./doctor.js";
// plugin doctor.
export {
  type DoctorCall,
  type DoctorServer,
  type DoctorTool,
  TOOL_RESULT_MAX_BYTES,
} from "./doctor-server.js";
// plugin doctor.
export {
  type DoctorCompanion,
  type DoctorCompanionCall,
  NATIVE_MANIFEST_FIELDS,
} from "./doctor-companion.js";
// plugin doctor.
export {
  FILTERED_ENV_NAMES,
  filteredServerEnvironment,
} from "./host-environment.js";
