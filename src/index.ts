/**
 * hermes-plugin-kit: the plugin authoring kit (`src/kit`, listed name by name
 * in src/kit/index.ts) and the pure release contract (`src/contract`, also at
 * `hermes-plugin-kit/contract`).
 */
// The contract's public surface, the same names as src/contract/index.ts.
export {
  ArtifactManifestSchema, artifactManifestProblems, EmptyConfigDescriptorSchema, LayerDescriptorSchema, problemAt, SubjectDescriptorSchema,
  bindingFromReceipt, bindingFromTestedManifest, BOOTSTRAP_ARTIFACT_TYPE, BOOTSTRAP_TAG,
  buildPublishedReceipt, bumpVersion, checkReceiptOfBundle, bundleChecksumPaths, bundleLayerTitles, bundlePayloadPaths,
  canonicalJson, canonicalJsonBytes, canonicalJsonPretty, checkFileRecord, checkReleaseBinding,
  checkSignerIdentity, checkStatementAgainstPolicy, checkStatementAgainstSigner, compareCodePoints,
  checkDeclaredGates, createTestedManifest, DEFAULT_GATE_COMMANDS, DEFAULT_INSTALL_COMMAND, DEFAULT_PACKAGE, DEFAULT_REGISTRY_REPOSITORY,
  DEFAULT_SOURCE_REF, DEFAULT_TAR_LIMITS, resolveTarLimits, describeCharacter, describeValue, TAG_GRAMMAR, tagShapeProblem, DOCUMENT_SCHEMAS, documentJsonSchemas,
  documentJsonSchemaText, EMPTY_CONFIG_BYTES, EMPTY_CONFIG_DESCRIPTOR, EMPTY_CONFIG_DIGEST, EVIDENCE_KEYS,
  EvidenceSchema, FleetLockSchema, FleetPluginSchema, formatPayloadChecksums, formatReference, FULCIO_OID,
  GITHUB_ACTIONS_ISSUER, hasCode, hashFile, HermesPluginKitError, HostContractEvidenceSchema,
  IN_TOTO_PAYLOAD_TYPE, IN_TOTO_STATEMENT_V1, inspectDistDir, inspectDistTarball, InstallTimeSchema,
  isAllowedPayloadTitle, isDigest, isDiscoveryTag, isGitSha, isLoopbackHost, isNpmPackageName, isSha256Hex,
  isStableSemver, LAYOUT_PREFIX, LAYOUT_REF_NAME, MAX_MANIFEST_BYTES, MAX_PACKAGE_JSON_BYTES,
  MAX_RELEASE_JSON_BYTES, MAX_TRUSTED_ROOT_BYTES, OCI_EMPTY_MEDIA_TYPE, OCI_INDEX_MEDIA_TYPE,
  OCI_LAYOUT_FILE, OCI_MANIFEST_MEDIA_TYPE, OCTET_STREAM_MEDIA_TYPE, OPTIONAL_RELEASE_KEYS, parsePaxRecords,
  parsePayloadChecksums, parseProvenanceStatement, parseReference, parseReleaseJson, parseRepository, plainHttpRefusal,
  parseStableSemver, parseStrictJson, parseTrustedRoot, PAYLOAD_CHECKSUMS_FILE, PayloadRecordSchema,
  gatesDeclaredBy, parseGatePin, policyForDocument, policyFromPackageJson, promotionFor, PromotionSchema, ProvenanceError, ProvenancePolicySchema,
  provenanceStatement, PUBLISHED_RECEIPT_KEYS, PublishedArtifactSchema, PublishedReceiptSchema,
  readNpmTarballFile, readPackageJsonFile, readPolicyFile, readReleaseJsonBytesFile, readReleaseJsonFile,
  readTarballPackageJsonFile, RECEIPT_ARTIFACT_TYPE, RECEIPT_FILE, receiptBytes, REF_NAME_ANNOTATION,
  ReferencesOutputSchema, RELEASE_ARTIFACT_TYPE, RELEASE_BUILD_TYPE, RELEASE_CANDIDATE_REF,
  RELEASE_MANIFEST_FILE, RELEASE_WORKFLOW_PATH, releaseClassOf, ReleaseContractError, requireDigest,
  requireDiscoveryTag, requireGitSha, resolveConsumerExpectations, resolveProvenancePolicy, SCHEMA_ID_BASE,
  isP256Key, keyFileKind, MAX_KEY_FILE_BYTES, parseP256PrivateKeyPem, parseP256PublicKeyPem, readP256PublicKeyFile, type KeyFileKind,
  SIGSTORE_BUNDLE_V03_MEDIA_TYPE, SLSA_PROVENANCE_V1, SOURCE_BUNDLE_FILE, StageOutputSchema,
  STATIC_BUNDLE_PATHS, StrictTarParser, tarballFileName, TEST_GATES, TESTED_MANIFEST_KEYS,
  TestedArtifactSchema, testedManifestBytes, TestedManifestSchema, TestGateEvidenceSchema, TITLE_ANNOTATION,
  TRUSTED_ROOT_MEDIA_TYPES, verifyFinalReceipt, verifyFinalReceiptBytes, verifyParsedFinalReceiptBytes, verifyReceiptReference, verifyManifest, verifyManifestDist,
  artifactManifestObject, receiptReferenceOf, receiptUnboundFields, type ArtifactLayer,
  verifyReleaseIdentity, verifyTestedManifest, WORKFLOW_NAME, WorkflowEvidenceSchema,
  writeTestedManifestFile, type ArtifactManifest, type ArtifactManifestPart, type ArtifactManifestProblem, type ArtifactManifestProfile,
  type BundleLayer, type CheckedTrustedRoot, type DistInspection, type Evidence,
  type FinalReceiptExpectations, type FleetLock, type FleetPlugin, type GateCommands, type GateResult, type
  HostContractEvidence, type JsonObject, type JsonValue, type LockedProvenancePolicy, type NpmTarball, type
  PayloadChecksumEntry, type PayloadRecord, type PinnedReference, type PackagePolicy, type PolicySources, type ConsumerExpectations, type ConsumerPins, type Promotion, type
  ProvenanceErrorCode, type ReleaseContractErrorCode, type ProvenanceFacts, type ProvenancePolicy, type PublishedArtifact, type
  PublishedReceipt, type ReadNpmTarballOptions, type ReferencesOutput, type ReleaseBinding, type
  ReleaseClass, type ReleasePolicy, type Repository, type ResolvedProvenancePolicy, type SemVer, type
  SignerFacts, type SignerIdentity, type StageOutput, type StrictJsonOptions, type TarLimits, type
  TarballMember, type TestGate, type TestGateEvidence, type TestedArtifact, type TestedManifest, type
  TestedManifestInput, type WorkflowEvidence,
} from "./contract/index.js";
// The kit's public surface, the same names as src/kit/index.ts.
export {
  arg, ARG_KEYWORDS, argumentValueProblems, arrayArg, augmentDescription, BINARY_EXTENSIONS, boolArg, BRIDGE_CAPABILITY,
  BRIDGE_DEFAULT_TIMEOUT_MS, BRIDGE_ERRORS, BRIDGE_MAX_TIMEOUT_MS, BRIDGE_METHODS, BRIDGE_PROTOCOL_VERSION,
  bridgeCapability, buildParameters, buildPluginPackage, callPluginTool, BUILTIN_COMMAND_NAMES, BUILTIN_TOOLSET_NAMES,
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
  ObservabilityEvent, parseCallArguments, parseSkillDocument, PLUGIN_CONFIG_FILE, PLUGIN_CONFIG_MAX_BYTES,
  PLUGIN_KIT_ERROR_CODES, PLUGIN_MANIFEST_FIELDS, PLUGIN_NAME_PATTERN, PLUGIN_SCHEMA_URL, pluginDataPath,
  PluginKitError, pluginPath, pluginSkill, portableServerName, protocolStdout, pythonRepr,
  qualifiedSkillName, readEnvironmentVariable, redactArguments, REDACTED_KEY_PARTS, redactText,
  REFERENCE_FILE_MAX_BYTES, REFERENCE_LIST_LIMIT, referenceTool, referenceToolName, refusalLine,
  registrationReceipt, renderForModel, REQUEST_MIDDLEWARE_KINDS, RESERVED_TOOL_NAMES, RESERVED_TOOL_PREFIX,
  resolveCapabilitySelection, resolvePluginData, resolvePluginRoot, resolveReferenceFile, safeArguments,
  safeContext, sanitizeNameComponent, SCAN_LARGE_FILE_BYTES, SCANNED_EXTENSIONS, scanTextForInstallRisks,
  servePluginModule, SERVER_SCRIPT, serverNameShadowProblem, setLogSink, setStderrLogLevel,
  SKILL_FILE_MAX_BYTES, SKILL_NAME_PATTERN, skillNamespace, stderrLogLevel, STDIO_ENTRY_KEYS,
  stdoutGuardPath, strArg, tool, TOOL_NAME_PATTERN, TOOL_RESULT_MAX_BYTES, toolErrorResult, toolName, UNBUILT_PLUGIN_VERSION, VALID_HOOKS, VALIDATOR_META_KEY,
  validateArguments, validateFunctionSchema, validateParameters, validateServerName, validateToolName,
  withStdoutOnStderr,
} from "./kit/index.js";
export type {
  AnyArgOptions, ArgOptions, ArgSpec, ArgumentProblem, ArrayArgOptions, ArgumentProblemKind, ArgumentValidationOptions, BridgeOptions,
  BuildOptions, BuildResult, BuiltParameters, CapabilitySelection, CapabilitySelectionOptions,
  CommandContext, CompanionSpec, DoctorCall, DoctorCompanion, DoctorCompanionCall, DoctorOptions,
  DoctorReport, DoctorServer, DoctorSkill, DoctorTool, FindingSeverity, HookContext, HookEvent, HookName,
  HostCallContext, HostCommand, HostSurface, LogLevel, LogSink, McpConfig, MiddlewareContext, NumberArgOptions, ObjectArgOptions,
  ObservabilityEventInit, PackageFinding, ParametersSchema, ParamsToolOptions, PluginCallOptions, PluginCallResult, PluginCapabilities,
  PluginCommand, PluginConfig, PluginDefinition, PluginHooks, PluginKitErrorCode, PluginLogging,
  PluginManifest, PluginMiddleware, PluginOptions, PluginSkill, PreToolCallDecision, PreToolCallEvent,
  PropertySchema, ReceiptHostSurface, ReceivedToolResult, RequestMiddlewareKind, RunningPlugin,
  SchemaToolOptions, SkillDocument, StringArgOptions, SkillProblem, StdioServerEntry, ToolCallResult, ToolContext,
  ToolDefinition, ToolHandler, ToolNameProblem, ZodToolOptions,
} from "./kit/index.js";
