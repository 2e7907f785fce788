/**
 * The kit's coded error: every rule the plugin authoring kit enforces fails
 * with a {@link PluginKitError} whose `code` names the rule (tests and the
 * doctor branch on it). Messages say what was expected and what was found and
 * never carry argument values or secrets.
 */
import { HermesPluginKitError } from "../contract/errors.js";

/**
 * Stable codes of {@link PluginKitError}. Grouped by the rule family they
 * belong to; the doctor reports findings under the same codes.
 */
export const PLUGIN_KIT_ERROR_CODES = [
  // tool names (Python kit validate_tool_name; Hermes MCP client)
  "TOOL_NAME_REQUIRED",
  "TOOL_NAME_INVALID",
  "TOOL_NAME_RESERVED",
  "TOOL_NAME_RESERVED_PREFIX",
  "TOOL_NAME_NAMESPACE",
  "TOOL_NAME_MCP_UTILITY",
  "TOOL_NAME_DUPLICATE",
  "TOOL_NAME_COLLISION",
  "HERMES_NAME_TOO_LONG",
  "SERVER_NAME_INVALID",
  "SERVER_NAME_SHADOWS_TOOLSET",
  // tool definitions and schemas (A.3-A.5)
  "TOOL_OPTION_INVALID",
  "TOOL_DESCRIPTION_REQUIRED",
  "TOOL_SCHEMA_SOURCE",
  "ARG_INVALID",
  "SCHEMA_TOP_LEVEL_PROPERTIES",
  "SCHEMA_INVALID",
  "SCHEMA_REQUIRED_UNKNOWN",
  "SCHEMA_NAME_MISMATCH",
  // plugin definition (A.12)
  "PLUGIN_NAME_INVALID",
  "PLUGIN_DEFINITION_INVALID",
  // hooks, slash commands, request middleware and the bridge to the native companion (A.6, B.1, B.2, B.4)
  "HOOK_INVALID",
  "HOOK_NAME_UNKNOWN",
  "HOOK_RESULT_INVALID",
  "COMMAND_INVALID",
  "COMMAND_NAME_INVALID",
  "COMMAND_NAME_BUILTIN",
  "COMMAND_DUPLICATE",
  "COMMAND_RESULT_INVALID",
  "MIDDLEWARE_INVALID",
  "MIDDLEWARE_KIND_UNSUPPORTED",
  "MIDDLEWARE_KIND_UNKNOWN",
  "MIDDLEWARE_RESULT_INVALID",
  "BRIDGE_OPTION_INVALID",
  // skills (A.8, B.7)
  "SKILL_NOT_FOUND",
  "SKILL_FRONTMATTER_MISSING",
  "SKILL_FRONTMATTER_UNTERMINATED",
  "SKILL_FRONTMATTER_INVALID_YAML",
  "SKILL_FRONTMATTER_NOT_MAPPING",
  "SKILL_NAME_INVALID",
  "SKILL_NAME_MISMATCH",
  "SKILL_DESCRIPTION_INVALID",
  "SKILL_METADATA_NOT_FLAT",
  "SKILL_FIELD_INVALID",
  "SKILL_DUPLICATE",
  "SKILL_REFERENCES_INVALID",
  // reference tool (A.9)
  "REFERENCE_PATH_INVALID",
  "REFERENCE_PATH_ESCAPE",
  "REFERENCE_NOT_FOUND",
  // capabilities (A.10)
  "CAPABILITY_INVALID",
  "CAPABILITY_UNKNOWN",
  "CAPABILITY_NAME_UNKNOWN",
  "CAPABILITY_CONFLICT",
  // observability + config (A.11, A.16)
  "OBSERVABILITY_INVALID",
  "CREDENTIAL_INVALID",
  "CONFIG_INVALID",
  "PLUGIN_PATH_INVALID",
  "PLUGIN_DATA_MISSING",
  "LOGGING_INVALID",
  // build (plugin build)
  "BUILD_ENTRY_INVALID",
  "BUILD_ENTRY_FAILED",
  "BUILD_BUNDLE_FAILED",
  "BUILD_OUTPUT_INVALID",
  "BUILD_OUTPUT_FOREIGN",
  // plugin doctor
  "DOCTOR_PYTHON_UNAVAILABLE",
  "DOCTOR_PACKAGE_MISSING",
  "DOCTOR_NOT_A_PLUGIN",
  // plugin call
  "CALL_PACKAGE_MISSING",
  "CALL_PACKAGE_INVALID",
  "CALL_SERVER_UNKNOWN",
  "CALL_TOOL_UNKNOWN",
  "CALL_ARGUMENTS_INVALID",
  "CALL_FAILED",
  "TOOL_RESULT_TOO_LARGE",
  "BUILD_VERSION_MISMATCH",
  "BUILD_VERSION_MISSING",
  // init (project scaffold)
  "INIT_NAME_INVALID",
  "INIT_REPOSITORY_INVALID",
  "INIT_TARGET_NOT_EMPTY",
  "INIT_KIT_SOURCE_UNKNOWN",
  "INIT_KIT_TARBALL_INVALID",
  "INIT_KIT_TARBALL_MISMATCH",
  "INIT_FAILED",
  // inputs of the exported helpers: a value of the wrong JavaScript type (plain JavaScript callers)
  "INPUT_TYPE_INVALID",
] as const;

/** One of {@link PLUGIN_KIT_ERROR_CODES}. */
export type PluginKitErrorCode = (typeof PLUGIN_KIT_ERROR_CODES)[number];

/**
 * A plugin definition, tool, skill, schema, capability selection or package
 * violates a rule of the kit (docs/kit.md; the Python kit's rules, Agent
 * Plugins v1, Hermes' MCP client and install scanner). `code` is one of
 * {@link PLUGIN_KIT_ERROR_CODES}.
 */
export class PluginKitError extends HermesPluginKitError<PluginKitErrorCode> {}

/**
 * `text` cut to `max` characters (default 80, as the contract's describeValue cuts), with `...` and its length: a
 * name or value echoed in a message stays one readable line however long it is.
 */
export function shortText(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max - 3)}... (${text.length} characters)` : text;
}

/**
 * What `value` is, for the "found ..." part of a message: its kind
 * (`undefined`, `null`, `a string`, `a number`, `an array`, `an object`, ...),
 * never its content.
 */
export function valueKind(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * The `INPUT_TYPE_INVALID` error of an exported helper called with a value of
 * the wrong type: `<fn>: <what> must be <expected>, found <kind>`.
 */
export function inputTypeError(fn: string, what: string, expected: string, value: unknown): PluginKitError {
  return new PluginKitError("INPUT_TYPE_INVALID", `${fn}: ${what} must be ${expected}, found ${valueKind(value)}`);
}

/**
 * `value` itself when it is a string.
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` otherwise.
 */
export function expectString(fn: string, what: string, value: unknown): string {
  if (typeof value !== "string") throw inputTypeError(fn, what, "a string", value);
  return value;
}

/** True for a non-null, non-array object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
