/**
 * hermes-plugin-kit: the plugin authoring kit (`src/kit`, listed name by name
 * in src/kit/index.ts) and the pure release contract (`src/contract`, also at
 * `hermes-plugin-kit/contract`).
 */
export * from "./contract/index.js";
// The kit's public surface, the same names as src/kit/index.ts.
export {
  arg, argumentValueProblems, arrayArg, augmentDescription, BINARY_EXTENSIONS, boolArg, BRIDGE_CAPABILITY,
  BRIDGE_DEFAULT_TIMEOUT_MS, BRIDGE_ERRORS, BRIDGE_MAX_TIMEOUT_MS, BRIDGE_METHODS, BRIDGE_PROTOCOL_VERSION,
  bridgeCapability, buildParameters, buildPluginPackage, BUILTIN_COMMAND_NAMES, BUILTIN_TOOLSET_NAMES,
  checkArgumentValue, checkHermesToolNames, checkHostSurface, checkMcpConfig, checkPluginManifest,
  checkSkillFrontmatter, clampedHermesToolName, COMMAND_NAME_PATTERN, COMPANION_MANIFEST_KEYS,
  COMPANION_MARKER, COMPANION_PARENT_DIR, companionDir, companionFiles, companionManifest, companionName,
  companionSpec, configureStderrLogging, credentialIdentityHash, definePlugin, doctorPluginPackage,
  EXAMPLES_META_KEY, EXECUTION_MIDDLEWARE_KINDS, expandPlaceholders, FILTERED_ENV_NAMES,
  filteredServerEnvironment, formatArgumentProblems, formatDoctorReport, guardStdout, HERMES_TOOL_NAME_MAX,
  hermesToolName, intArg, isArgSpec, isMissingArgument, isPluginDefinition, isStdoutGuarded,
  isToolDefinition, kitIndexPath, KitLogger, loadPluginConfig, LOG_ARGUMENT_LIMIT, LOG_LEVELS,
  logObservabilityEvent, MAX_ARGUMENT_PROBLEM_LINES, MCP_SCHEMA_URL, MCP_TOOL_NAME_PREFIX,
  MCP_UTILITY_TOOL_NAMES, NATIVE_MANIFEST_FIELDS, newCorrelationId, normalizeCommandResult,
  normalizeHookResult, normalizeMiddlewareResult, numberArg, objectArg, OBSERVABILITY_SCHEMA,
  ObservabilityEvent, parseSkillDocument, PLUGIN_CONFIG_FILE, PLUGIN_CONFIG_MAX_BYTES,
  PLUGIN_KIT_ERROR_CODES, PLUGIN_MANIFEST_FIELDS, PLUGIN_NAME_PATTERN, PLUGIN_SCHEMA_URL, pluginDataPath,
  PluginKitError, pluginPath, pluginSkill, portableServerName, protocolStdout, pythonRepr,
  qualifiedSkillName, readEnvironmentVariable, redactArguments, REDACTED_KEY_PARTS, redactText,
  REFERENCE_FILE_MAX_BYTES, REFERENCE_LIST_LIMIT, referenceTool, referenceToolName, refusalLine,
  registrationReceipt, renderForModel, REQUEST_MIDDLEWARE_KINDS, RESERVED_TOOL_NAMES, RESERVED_TOOL_PREFIX,
  resolveCapabilitySelection, resolvePluginData, resolvePluginRoot, resolveReferenceFile, safeArguments,
  safeContext, sanitizeNameComponent, SCAN_LARGE_FILE_BYTES, SCANNED_EXTENSIONS, scanTextForInstallRisks,
  servePluginModule, SERVER_SCRIPT, serverNameShadowProblem, setLogSink, setStderrLogLevel,
  SKILL_FILE_MAX_BYTES, SKILL_NAME_PATTERN, skillNamespace, stderrLogLevel, STDIO_ENTRY_KEYS,
  stdoutGuardPath, strArg, tool, TOOL_NAME_PATTERN, toolErrorResult, toolName, VALID_HOOKS,
  validateArguments, validateFunctionSchema, validateParameters, validateServerName, validateToolName,
  withStdoutOnStderr,
} from "./kit/index.js";
export type {
  ArgOptions, ArgSpec, ArgumentProblem, ArgumentProblemKind, ArgumentValidationOptions, BridgeOptions,
  BuildOptions, BuildResult, BuiltParameters, CapabilitySelection, CapabilitySelectionOptions,
  CommandContext, CompanionSpec, DoctorCall, DoctorCompanion, DoctorCompanionCall, DoctorOptions,
  DoctorReport, DoctorServer, DoctorSkill, DoctorTool, FindingSeverity, HookContext, HookEvent, HookName,
  HostCallContext, HostCommand, HostSurface, LogLevel, LogSink, McpConfig, MiddlewareContext,
  ObservabilityEventInit, PackageFinding, ParametersSchema, ParamsToolOptions, PluginCapabilities,
  PluginCommand, PluginConfig, PluginDefinition, PluginHooks, PluginKitErrorCode, PluginLogging,
  PluginManifest, PluginMiddleware, PluginOptions, PluginSkill, PreToolCallDecision, PreToolCallEvent,
  PropertySchema, ReceiptHostSurface, ReceivedToolResult, RequestMiddlewareKind, RunningPlugin,
  SchemaToolOptions, SkillDocument, SkillProblem, StdioServerEntry, ToolCallResult, ToolContext,
  ToolDefinition, ToolHandler, ToolNameProblem, ZodToolOptions,
} from "./kit/index.js";
