/**
 * `definePlugin({...})`: a plugin's tools, skills and capabilities, checked
 * as a whole before anything is served (duplicate and reserved names,
 * `mcp__<server>__<tool>` within 64 characters, sanitize collisions, server
 * names that shadow built-in toolsets), then served over stdio with the
 * official `@modelcontextprotocol/sdk` low-level `Server` and explicit
 * `tools/list` / `tools/call` handlers (Python kit registration; docs/kit.md).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { bridgeCapability, BRIDGE_CAPABILITY, registerBridge } from "./bridge.js";
import { resolveCapabilitySelection, type CapabilitySelection } from "./capabilities.js";
import { loadPluginConfig } from "./config.js";
import { PluginKitError } from "./errors.js";
import { checkPluginOptions, type PluginCapabilities, type PluginLogging, type PluginOptions } from "./plugin-options.js";
import { checkHostSurface, type HostSurface } from "./hooks.js";
import { configureStderrLogging, KitLogger, type LogLevel } from "./logging.js";
import { requireKnownOptions } from "./option-keys.js";
import { checkHermesToolNames, clampedHermesToolName, hermesToolName, sanitizeNameComponent, validateServerName } from "./naming.js";
import { redactText } from "./redaction.js";
import { MCP_SCHEMA_URL, PLUGIN_SCHEMA_URL, SERVER_SCRIPT } from "./portable.js";
import type { PluginSkill } from "./skills.js";
import { guardStdout } from "./stdout.js";
import { toolErrorResult, type ToolCallResult, type ToolDefinition } from "./tool.js";

const PLUGIN_MARK = Symbol.for("hermes-plugin-kit.plugin");

/** `_meta` key under which a listed tool carries its argument examples (read by `plugin doctor`). */
export const EXAMPLES_META_KEY = "hermes-plugin-kit/examples";

/**
 * `_meta` key under which every kit tool is listed with what checks its
 * arguments (`ToolDefinition.validator`): `"kit"` (a `params` or `schema`
 * tool: its `inputSchema` holds only keywords the kit's argument validation
 * enforces) or `"zod"` (its `inputSchema` may carry any keyword zod emits;
 * zod checks them). `plugin doctor` reads it: a `"kit"` tool is held to the
 * kit's keyword vocabulary (`SCHEMA_INVALID` per other keyword), a `"zod"`
 * tool is exempt, and a tool listed without it (a server not built with the
 * kit) is checked as plain JSON Schema (any keyword, valid values).
 */
export const VALIDATOR_META_KEY = "hermes-plugin-kit/validator";

/** plugin.json as written by `plugin build` (Agent Plugins 1.0.0). */
export interface PluginManifest {
  $schema: string;
  name: string;
  version: string;
  description: string;
  author?: { name: string; email?: string; url?: string };
  homepage?: string;
  repository?: string;
  license?: string;
  keywords?: string[];
}

/** mcp.json as written by `plugin build`. */
export interface McpConfig {
  $schema: string;
  mcpServers: Record<string, { type: "stdio"; command: string; args: string[]; env?: Record<string, string> }>;
}

/** A served plugin. */
export interface RunningPlugin {
  server: Server;
  selection: CapabilitySelection;
  close(): Promise<void>;
}

/** The checked plugin returned by {@link definePlugin}; the entry's default export. */
export interface PluginDefinition {
  readonly [PLUGIN_MARK]: true;
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly server: string;
  readonly tools: readonly ToolDefinition[];
  readonly skills: readonly PluginSkill[];
  readonly capabilities: PluginCapabilities;
  readonly logging?: PluginLogging;
  /** Hermes registry name per tool (`mcp__<server>__<tool>`). */
  readonly hermesNames: Readonly<Record<string, string>>;
  /** Hooks, slash commands and request middleware (empty when none: no companion is written). */
  readonly host: HostSurface;
  /** The plugin's own tool name for a name Hermes gives one of its tools (see `HostCallContext.ownTool`), else undefined. */
  ownTool(name: unknown): string | undefined;
  /** plugin.json content. */
  manifest(): PluginManifest;
  /** mcp.json content. */
  mcpConfig(): McpConfig;
  /** Resolve which tools are listed, from `${PLUGIN_DATA}/config.json` (`capabilities` or `tools` list) or the static default. */
  selectTools(settings?: Record<string, unknown>): CapabilitySelection;
  /** A low-level SDK `Server` with the kit's `tools/list` and `tools/call` handlers for `selection`. */
  createServer(selection?: CapabilitySelection): Server;
  /**
   * Check, configure logging, select tools, connect to stdio (or `transport`) and log the registration receipt.
   * Rejects with PluginKitError `INPUT_TYPE_INVALID` when `options` is not an object or has a key other than `transport`.
   */
  serve(options?: { transport?: Transport }): Promise<RunningPlugin>;
}

/** True when `value` was returned by {@link definePlugin} (works across bundles). */
export function isPluginDefinition(value: unknown): value is PluginDefinition {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[PLUGIN_MARK] === true;
}

const list = (values: readonly string[]) => (values.length > 0 ? values.join(",") : "<none>");

/** Hooks, slash commands and middleware kinds listed by {@link registrationReceipt}. */
export interface ReceiptHostSurface {
  commands?: readonly string[];
  middlewares?: readonly string[];
  hooks?: readonly string[];
}

/**
 * The registration receipt line (the Python kit's registration summary format): the served tools,
 * skills and capabilities and the hooks, slash commands and middleware kinds
 * the plugin serves through its native companion, each sorted; CLI commands,
 * providers and context engines are always `<none>`.
 */
export function registrationReceipt(plugin: string, tools: readonly string[], skills: readonly string[], capabilities: readonly string[], host: ReceiptHostSurface = {}): string {
  const sorted = (values: readonly string[] | undefined) => list([...(values ?? [])].sort());
  return (
    `hermes_plugin_kit: registered plugin lifecycle; plugin=${plugin}; commands=${sorted(host.commands)}; cli_commands=<none>; ` +
    `tools=${list(tools)}; middlewares=${sorted(host.middlewares)}; hooks=${sorted(host.hooks)}; skills=${list(skills)}; skipped_optional_skills=<none>; ` +
    `memory_providers=<none>; image_gen_providers=<none>; video_gen_providers=<none>; capabilities=${list(capabilities)}; ` +
    `context_engine=<none>; context_engine_registration=<none>`
  );
}

/** The version of a plugin defined without one, outside `plugin build`. */
export const UNBUILT_PLUGIN_VERSION = "0.0.0-unbuilt";

declare const __HERMES_PLUGIN_KIT_PACKAGE_VERSION__: string | undefined;

/** The package.json version `plugin build` injects into the bundle (esbuild `define`), else undefined. */
function builtPackageVersion(): string | undefined {
  return typeof __HERMES_PLUGIN_KIT_PACKAGE_VERSION__ === "string" ? __HERMES_PLUGIN_KIT_PACKAGE_VERSION__ : undefined;
}

/**
 * The plugin's identity once its options have the right shape; the server name against Hermes' rules.
 * The version is the one given, else the package.json version `plugin build` injected, else {@link UNBUILT_PLUGIN_VERSION}.
 */
function checkIdentity(options: PluginOptions): { name: string; version: string; description: string; server: string } {
  const { name, description } = options;
  const version = options.version ?? builtPackageVersion() ?? UNBUILT_PLUGIN_VERSION;
  if (!/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$/.test(version)) throw new PluginKitError("PLUGIN_DEFINITION_INVALID", `plugin version ${JSON.stringify(version)} must be a SemVer string`);
  return { name, version, description, server: validateServerName(options.server ?? name) };
}

/** The tools, their names checked as Hermes will register them (`mcp__<server>__<tool>`). */
function checkTools(server: string, options: PluginOptions): ToolDefinition[] {
  const tools = [...options.tools];
  const problem = checkHermesToolNames(server, tools.map((entry) => entry.name))[0];
  if (problem) throw new PluginKitError(problem.code, problem.message);
  return tools;
}

function checkSkills(options: PluginOptions): PluginSkill[] {
  const skills = [...(options.skills ?? [])];
  const skillNames = new Set<string>();
  for (const skill of skills) {
    if (skillNames.has(skill.name)) throw new PluginKitError("SKILL_DUPLICATE", `duplicate skill name: ${skill.name}`);
    skillNames.add(skill.name);
  }
  return skills;
}

/** mcp.json `env`: the logging flag and the declared extra variables. */
function mcpEnvironment(options: PluginOptions): Record<string, string> {
  const env: Record<string, string> = {};
  if (options.logging !== undefined) env[options.logging.envVar] = options.logging.default ?? "warning";
  return { ...env, ...(options.env ?? {}) };
}

/** plugin.json fields besides `$schema`, name, version and description. */
function manifestMetadata(options: PluginOptions): Partial<PluginManifest> {
  return {
    ...(options.author !== undefined ? { author: { ...options.author } } : {}),
    ...(options.homepage !== undefined ? { homepage: options.homepage } : {}),
    ...(options.repository !== undefined ? { repository: options.repository } : {}),
    ...(options.license !== undefined ? { license: options.license } : {}),
    ...(options.keywords !== undefined ? { keywords: [...options.keywords] } : {}),
  };
}

/** Every name a host may use for one of these tools: `mcp__<server>__<tool>`, its clamped form, and older hosts' `mcp_<server>_<tool>`. */
function ownToolIndex(server: string, names: readonly string[]): (candidate: unknown) => string | undefined {
  const ownNames = new Map<string, string>();
  for (const tool of names) {
    for (const alias of [hermesToolName(server, tool), clampedHermesToolName(server, tool), `mcp_${sanitizeNameComponent(server)}_${sanitizeNameComponent(tool)}`]) ownNames.set(alias, tool);
  }
  return (candidate) => (typeof candidate === "string" ? ownNames.get(candidate) : undefined);
}

interface ServerParts {
  name: string;
  version: string;
  server: string;
  tools: readonly ToolDefinition[];
  host: HostSurface;
  logger: KitLogger;
  ownTool(candidate: unknown): string | undefined;
}

/** The low-level SDK server: `tools/list` and `tools/call` for the selected tools, and the bridge methods when the plugin has a host surface. */
function createSdkServer(parts: ServerParts, selected: CapabilitySelection): Server {
  const { name, version, server, tools, host, logger, ownTool } = parts;
  const byName = new Map(tools.map((entry) => [entry.name, entry]));
  const listed = tools.filter((entry) => selected.names.includes(entry.name));
  const listedNames = new Set(listed.map((entry) => entry.name));
  const mcpTools: Tool[] = listed.map(toMcpTool);
  const capabilities = { tools: {}, ...(host.empty ? {} : { experimental: { [BRIDGE_CAPABILITY]: bridgeCapability(host) } }) };
  const sdkServer = new Server({ name: server, version }, { capabilities });
  registerBridge(sdkServer, host, { plugin: name, server, logger, ownTool });
  sdkServer.setRequestHandler(ListToolsRequestSchema, () => ({ tools: mcpTools }));
  sdkServer.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<ToolCallResult> => {
    const toolName = request.params.name;
    const entry = listedNames.has(toolName) ? byName.get(toolName) : undefined;
    if (!entry) {
      logger.warning(`${JSON.stringify(toolName).slice(0, 80)}: rejected call, unknown tool`);
      return toolErrorResult(`Unknown tool: ${toolName}. Available tools: ${[...listedNames].join(", ") || "<none>"}`);
    }
    return entry.call(request.params.arguments, {
      signal: extra.signal,
      requestId: extra.requestId,
      logger,
      ...(request.params._meta !== undefined ? { meta: request.params._meta as Record<string, unknown> } : {}),
    });
  });
  return sdkServer;
}

/**
 * Define (and check) a plugin. Nothing is served until `serve()`.
 *
 * @throws PluginKitError `PLUGIN_NAME_INVALID`, `PLUGIN_DEFINITION_INVALID`
 *   (version, description, tools not from `tool()`, env, metadata),
 *   `SERVER_NAME_INVALID`, `SERVER_NAME_SHADOWS_TOOLSET`,
 *   `TOOL_NAME_DUPLICATE`, `TOOL_NAME_COLLISION`, `HERMES_NAME_TOO_LONG`,
 *   `SKILL_DUPLICATE`, `CAPABILITY_*`, `LOGGING_INVALID`, and the host
 *   surface codes of `checkHostSurface` (`HOOK_*`, `COMMAND_*`,
 *   `MIDDLEWARE_*`, `BRIDGE_OPTION_INVALID`).
 */
export function definePlugin(options: PluginOptions): PluginDefinition {
  checkPluginOptions(options);
  const { name, version, description, server } = checkIdentity(options);
  const tools = checkTools(server, options);
  const names = tools.map((entry) => entry.name);
  const skills = checkSkills(options);
  const capabilities: PluginCapabilities = { groups: { ...(options.capabilities?.groups ?? {}) }, ...(options.capabilities?.enabled ? { enabled: [...options.capabilities.enabled] } : {}) };
  resolveCapabilitySelection(names, { capabilityGroups: capabilities.groups, enabledCapabilities: capabilities.enabled ?? null });
  const env = mcpEnvironment(options);
  const metadata = manifestMetadata(options);
  const host = checkHostSurface({ hooks: options.hooks, commands: options.commands, middleware: options.middleware, bridge: options.bridge });
  const hermesNames = Object.freeze(Object.fromEntries(names.map((tool) => [tool, hermesToolName(server, tool)])));
  const ownTool = ownToolIndex(server, names);
  const logger = new KitLogger(name);
  const parts: ServerParts = { name, version, server, tools, host, logger, ownTool };

  const definition: PluginDefinition = {
    [PLUGIN_MARK]: true,
    name,
    version,
    description,
    server,
    tools,
    skills,
    capabilities,
    ...(options.logging !== undefined ? { logging: { ...options.logging } } : {}),
    hermesNames,
    host,
    ownTool,
    manifest() {
      return { $schema: PLUGIN_SCHEMA_URL, name, version, description, ...structuredClone(metadata) };
    },
    mcpConfig() {
      const entry = { type: "stdio" as const, command: "node", args: [`\${PLUGIN_ROOT}/${SERVER_SCRIPT}`], ...(Object.keys(env).length > 0 ? { env: { ...env } } : {}) };
      return { $schema: MCP_SCHEMA_URL, mcpServers: { [server]: entry } };
    },
    selectTools(settings) {
      const source = settings ?? {};
      const enabledCapabilities = Array.isArray(source["capabilities"]) ? (source["capabilities"] as string[]) : null;
      const enabledNames = Array.isArray(source["tools"]) ? (source["tools"] as string[]) : null;
      if (enabledCapabilities === null && enabledNames === null) {
        return resolveCapabilitySelection(names, { capabilityGroups: capabilities.groups, enabledCapabilities: capabilities.enabled ?? null });
      }
      return resolveCapabilitySelection(names, { capabilityGroups: capabilities.groups, enabledCapabilities, enabledNames });
    },
    createServer(selection) {
      return createSdkServer(parts, selection ?? resolveCapabilitySelection(names, { capabilityGroups: capabilities.groups }));
    },
    async serve(serveOptions = {}) {
      requireKnownOptions(`plugin '${name}' serve`, serveOptions, ["transport"]);
      if (options.logging) configureStderrLogging({ envVar: options.logging.envVar, default: (options.logging.default ?? "warning") as LogLevel | "warning" });
      const config = loadPluginConfig();
      const selection = definition.selectTools(config.settings);
      const sdkServer = definition.createServer(selection);
      // stdio: every non-protocol stdout write goes to stderr; the transport gets the protocol writer.
      await sdkServer.connect(serveOptions.transport ?? new StdioServerTransport(process.stdin, guardStdout()));
      const hostNames = { commands: host.commands.map((c) => c.name), middlewares: [...host.middleware.keys()], hooks: [...host.hooks.keys()] };
      logger.write("INFO", registrationReceipt(name, selection.names, skills.map((skill) => skill.name).sort(), selection.capabilities, hostNames));
      return { server: sdkServer, selection, close: () => sdkServer.close() };
    },
  };
  return Object.freeze(definition);
}

function toMcpTool(entry: ToolDefinition): Tool {
  const listed: Tool = {
    name: entry.name,
    description: entry.description,
    inputSchema: structuredClone(entry.inputSchema) as Tool["inputSchema"],
    annotations: { readOnlyHint: entry.readOnly, ...(entry.title !== undefined ? { title: entry.title } : {}) },
  };
  const meta: Record<string, unknown> = {};
  if (Object.keys(entry.examples).length > 0) meta[EXAMPLES_META_KEY] = structuredClone(entry.examples);
  meta[VALIDATOR_META_KEY] = entry.validator;
  listed._meta = meta;
  return listed;
}

/**
 * The one stderr line a server writes when it refuses to serve:
 * `hermes_plugin_kit: refused to serve; code=<CODE>; message=<redacted>`
 * (`plugin doctor` reads the code from it).
 */
export function refusalLine(error: unknown): string {
  const raw = (error as { code?: unknown } | null)?.code;
  const code = typeof raw === "string" && /^[A-Z][A-Z0-9_]*$/.test(raw) ? raw : "INTERNAL";
  const message = error instanceof Error ? error.message : String(error);
  return `hermes_plugin_kit: refused to serve; code=${code}; message=${redactText(message)}\n`;
}

/**
 * Main of a built server (`dist/server.js`): load the entry module, take its
 * default export (a {@link definePlugin} result) and serve it. On any
 * failure writes one {@link refusalLine} to stderr and sets exit code 1;
 * stdout stays untouched.
 */
export async function servePluginModule(load: () => Promise<unknown>): Promise<RunningPlugin | null> {
  try {
    const loaded = (await load()) as { default?: unknown } | null;
    const plugin = loaded?.default;
    if (!isPluginDefinition(plugin)) throw new PluginKitError("BUILD_ENTRY_INVALID", "the entry module's default export must be a definePlugin(...) result");
    return await plugin.serve();
  } catch (error) {
    process.stderr.write(refusalLine(error));
    process.exitCode = 1;
    return null;
  }
}
