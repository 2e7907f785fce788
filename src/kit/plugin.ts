/**
 * `definePlugin({...})`: a plugin's tools, skills and capabilities, checked
 * as a whole before anything is served (duplicate and reserved names,
 * `mcp__<server>__<tool>` within 64 characters, sanitize collisions, server
 * names that shadow built-in toolsets), then served over stdio with the
 * official `@modelcontextprotocol/sdk` low-level `Server` and explicit
 * `tools/list` / `tools/call` handlers (reference A.12, C.1, C.2).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { resolveCapabilitySelection, type CapabilitySelection } from "./capabilities.js";
import { loadPluginConfig } from "./config.js";
import { PluginKitError } from "./errors.js";
import { configureStderrLogging, KitLogger, type LogLevel } from "./logging.js";
import { checkHermesToolNames, hermesToolName, validateServerName } from "./naming.js";
import { redactText } from "./observability.js";
import { MCP_SCHEMA_URL, PLUGIN_NAME_PATTERN, PLUGIN_SCHEMA_URL, SERVER_SCRIPT } from "./portable.js";
import type { PluginSkill } from "./skills.js";
import { guardStdout } from "./stdout.js";
import { errorResult, isToolDefinition, type ToolCallResult, type ToolDefinition } from "./tool.js";

const PLUGIN_MARK = Symbol.for("hermes-plugin-kit.plugin");

/** `_meta` key under which a listed tool carries its argument examples (read by `plugin doctor`). */
export const EXAMPLES_META_KEY = "hermes-plugin-kit/examples";

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

/** Options of {@link definePlugin}. */
export interface PluginOptions {
  /** plugin.json `name`: 1-64 chars, `^(?!.*(?:--|\.\.))[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$`. */
  name: string;
  version: string;
  description: string;
  /** mcp.json server name (default: `name`); must not shadow a built-in Hermes toolset. */
  server?: string;
  tools: readonly ToolDefinition[];
  skills?: readonly PluginSkill[];
  capabilities?: PluginCapabilities;
  logging?: PluginLogging;
  /** Extra mcp.json `env` (public package data: never secrets; `PLUGIN_ROOT`/`PLUGIN_DATA` refused). */
  env?: Record<string, string>;
  author?: { name: string; email?: string; url?: string };
  homepage?: string;
  repository?: string;
  license?: string;
  keywords?: readonly string[];
}

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
  /** plugin.json content. */
  manifest(): PluginManifest;
  /** mcp.json content. */
  mcpConfig(): McpConfig;
  /** Resolve which tools are listed, from `${PLUGIN_DATA}/config.json` (`capabilities` or `tools` list) or the static default. */
  selectTools(settings?: Record<string, unknown>): CapabilitySelection;
  /** A low-level SDK `Server` with the kit's `tools/list` and `tools/call` handlers for `selection`. */
  createServer(selection?: CapabilitySelection): Server;
  /** Check, configure logging, select tools, connect to stdio (or `transport`) and log the registration receipt. */
  serve(options?: { transport?: Transport }): Promise<RunningPlugin>;
}

/** True when `value` was returned by {@link definePlugin} (works across bundles). */
export function isPluginDefinition(value: unknown): value is PluginDefinition {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[PLUGIN_MARK] === true;
}

function invalid(message: string): never {
  throw new PluginKitError("PLUGIN_DEFINITION_INVALID", message);
}

const list = (values: readonly string[]) => (values.length > 0 ? values.join(",") : "<none>");

/**
 * The registration receipt line (reference A.11 format; commands, hooks,
 * middleware and providers are always `<none>` on the MCP path).
 */
export function registrationReceipt(plugin: string, tools: readonly string[], skills: readonly string[], capabilities: readonly string[]): string {
  return (
    `hermes_plugin_kit: registered plugin lifecycle; plugin=${plugin}; commands=<none>; cli_commands=<none>; ` +
    `tools=${list(tools)}; middlewares=<none>; hooks=<none>; skills=${list(skills)}; skipped_optional_skills=<none>; ` +
    `memory_providers=<none>; image_gen_providers=<none>; video_gen_providers=<none>; capabilities=${list(capabilities)}; ` +
    `context_engine=<none>; context_engine_registration=<none>`
  );
}

/**
 * Define (and check) a plugin. Nothing is served until `serve()`.
 *
 * @throws PluginKitError `PLUGIN_NAME_INVALID`, `PLUGIN_DEFINITION_INVALID`
 *   (version, description, tools not from `tool()`, env, metadata),
 *   `SERVER_NAME_INVALID`, `SERVER_NAME_SHADOWS_TOOLSET`,
 *   `TOOL_NAME_DUPLICATE`, `TOOL_NAME_COLLISION`, `HERMES_NAME_TOO_LONG`,
 *   `SKILL_DUPLICATE`, `CAPABILITY_*`, `LOGGING_INVALID`.
 */
export function definePlugin(options: PluginOptions): PluginDefinition {
  if (options === null || typeof options !== "object") invalid("definePlugin() needs an options object");
  const { name, version, description } = options;
  if (typeof name !== "string" || name.length > 64 || !PLUGIN_NAME_PATTERN.test(name)) {
    throw new PluginKitError("PLUGIN_NAME_INVALID", `plugin name ${JSON.stringify(name)} must be 1-64 characters matching ${PLUGIN_NAME_PATTERN.source}`);
  }
  if (typeof version !== "string" || !/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$/.test(version)) invalid(`plugin version ${JSON.stringify(version)} must be a SemVer string`);
  if (typeof description !== "string" || description.trim() === "") invalid("plugin description must be a non-empty string");
  const server = validateServerName(options.server ?? name);
  if (!Array.isArray(options.tools) || options.tools.length === 0) invalid("tools must be a non-empty list of tool() definitions");
  const tools = [...options.tools];
  tools.forEach((entry, index) => {
    if (!isToolDefinition(entry)) invalid(`tools[${index}] was not built with tool()`);
  });
  const names = tools.map((entry) => entry.name);
  const problem = checkHermesToolNames(server, names)[0];
  if (problem) throw new PluginKitError(problem.code, problem.message);
  const skills = [...(options.skills ?? [])];
  const skillNames = new Set<string>();
  for (const skill of skills) {
    if (!skill || typeof skill !== "object" || typeof skill.name !== "string" || typeof skill.dir !== "string") invalid("skills must be pluginSkill() results");
    if (skillNames.has(skill.name)) throw new PluginKitError("SKILL_DUPLICATE", `duplicate skill name: ${skill.name}`);
    skillNames.add(skill.name);
  }
  const capabilities: PluginCapabilities = { groups: { ...(options.capabilities?.groups ?? {}) }, ...(options.capabilities?.enabled ? { enabled: [...options.capabilities.enabled] } : {}) };
  resolveCapabilitySelection(names, { capabilityGroups: capabilities.groups, enabledCapabilities: capabilities.enabled ?? null });
  const env: Record<string, string> = {};
  if (options.logging !== undefined) {
    if (typeof options.logging.envVar !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.logging.envVar)) {
      throw new PluginKitError("LOGGING_INVALID", `logging.envVar ${JSON.stringify(options.logging.envVar)} must be an environment variable name`);
    }
    const level = options.logging.default ?? "warning";
    if (!["debug", "info", "warning", "error"].includes(level)) throw new PluginKitError("LOGGING_INVALID", `logging.default must be debug, info, warning or error, got ${String(level)}`);
    env[options.logging.envVar] = level;
  }
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) || typeof value !== "string") invalid(`env entry ${JSON.stringify(key)} must be NAME: string`);
    if (key === "PLUGIN_ROOT" || key === "PLUGIN_DATA") invalid(`env key ${key} is set by Hermes and must not be declared`);
    env[key] = value;
  }
  const metadata: Partial<PluginManifest> = {};
  if (options.author !== undefined) {
    const author = options.author;
    if (!author || typeof author.name !== "string" || Object.entries(author).some(([k, v]) => !["name", "email", "url"].includes(k) || typeof v !== "string")) {
      invalid("author must be {name, email?, url?} of strings");
    }
    metadata.author = { ...author };
  }
  for (const key of ["homepage", "repository", "license"] as const) {
    const value = options[key];
    if (value !== undefined) {
      if (typeof value !== "string") invalid(`${key} must be a string`);
      metadata[key] = value;
    }
  }
  if (options.keywords !== undefined) {
    if (!Array.isArray(options.keywords) || !options.keywords.every((k) => typeof k === "string")) invalid("keywords must be a list of strings");
    metadata.keywords = [...options.keywords];
  }
  const hermesNames = Object.freeze(Object.fromEntries(names.map((tool) => [tool, hermesToolName(server, tool)])));
  const byName = new Map(tools.map((entry) => [entry.name, entry]));
  const logger = new KitLogger(name);

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
      const selected = selection ?? resolveCapabilitySelection(names, { capabilityGroups: capabilities.groups });
      const listed = tools.filter((entry) => selected.names.includes(entry.name));
      const listedNames = new Set(listed.map((entry) => entry.name));
      const mcpTools: Tool[] = listed.map(toMcpTool);
      const sdkServer = new Server({ name: server, version }, { capabilities: { tools: {} } });
      sdkServer.setRequestHandler(ListToolsRequestSchema, () => ({ tools: mcpTools }));
      sdkServer.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<ToolCallResult> => {
        const toolName = request.params.name;
        const entry = listedNames.has(toolName) ? byName.get(toolName) : undefined;
        if (!entry) {
          logger.warning(`${JSON.stringify(toolName).slice(0, 80)}: rejected call, unknown tool`);
          return errorResult(`Unknown tool: ${toolName}. Available tools: ${[...listedNames].join(", ") || "<none>"}`);
        }
        return entry.call(request.params.arguments, {
          signal: extra.signal,
          requestId: extra.requestId,
          logger,
          ...(request.params._meta !== undefined ? { meta: request.params._meta as Record<string, unknown> } : {}),
        });
      });
      return sdkServer;
    },
    async serve(serveOptions = {}) {
      if (options.logging) configureStderrLogging({ envVar: options.logging.envVar, default: (options.logging.default ?? "warning") as LogLevel | "warning" });
      const config = loadPluginConfig();
      const selection = definition.selectTools(config.settings);
      const sdkServer = definition.createServer(selection);
      // stdio: every non-protocol stdout write goes to stderr; the transport gets the protocol writer.
      await sdkServer.connect(serveOptions.transport ?? new StdioServerTransport(process.stdin, guardStdout()));
      logger.write("INFO", registrationReceipt(name, selection.names, skills.map((skill) => skill.name).sort(), selection.capabilities));
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
  if (Object.keys(entry.examples).length > 0) listed._meta = { [EXAMPLES_META_KEY]: structuredClone(entry.examples) };
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
