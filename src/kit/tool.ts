/**
 * `tool({...})`: one MCP tool with a kit-built schema, kit-owned argument
 * validation, the `{"success": true, "data": ...}` envelope and redacted
 * stderr logging (reference A.5, C.2; DESIGN.md section 6).
 *
 * What a call answers (as MCP `CallToolResult`):
 * - success: text block `{"success":true,"data":<result>}` and the same
 *   object as `structuredContent` (Hermes drops the duplicate);
 * - a returned string: passed through as the only text block;
 * - missing/blank required arguments and schema violations: `isError`
 *   naming every bad argument, one line each (`<key> is required (e.g.
 *   '<example>')`, `<path> must be <type>`, ...); the handler is not called;
 * - a thrown error: `isError` with `<tool> failed: <message>`.
 */
import type { z } from "zod";
import { formatArgumentProblems, validateArguments, type ArgumentProblem } from "./arguments.js";
import { PluginKitError } from "./errors.js";
import { KitLogger } from "./logging.js";
import { validateToolName } from "./naming.js";
import { redactText, safeArguments } from "./redaction.js";
import {
  augmentDescription,
  buildParameters,
  validateFunctionSchema,
  validateParameters,
  type ArgSpec,
  type BuiltParameters,
  type ParametersSchema,
} from "./schema.js";

const TOOL_MARK = Symbol.for("hermes-plugin-kit.tool");

/** Signal handed to handlers called outside a server (never aborts). */
const NEVER_ABORTED = new AbortController().signal;

/** What a handler receives besides its arguments. */
export interface ToolContext {
  /** Aborted when the client cancels the request or the server closes. */
  signal: AbortSignal;
  /** JSON-RPC id of the `tools/call` request (absent outside a server). */
  requestId?: string | number;
  /** The plugin's stderr logger. */
  logger: KitLogger;
  /** The request's `_meta`, when the client sent one. */
  meta?: Record<string, unknown>;
}

/** A tool handler: returns any JSON value (enveloped) or a string (passed through); may be async; throw to fail. */
export type ToolHandler<A> = (args: A, context: ToolContext) => unknown;

interface ToolOptionsBase {
  /** Tool name, `^[a-z][a-z0-9_]*$` (see `validateToolName`). */
  name: string;
  /** What the tool does; the kit appends the `Required:` clause. */
  description: string;
  /** Marks the tool read-only (`annotations.readOnlyHint: true`); Hermes then skips untrusted-approval prompts. Default false. */
  readOnly?: boolean;
  /** Check required arguments before calling the handler. Default true. */
  validateRequired?: boolean;
  /** Example value per argument (overrides helper examples). */
  examples?: Record<string, unknown>;
  /** Explicit namespace the name must start with (`<namespace>_`). */
  namespace?: string;
  /** Human title (`annotations.title`). */
  title?: string;
  /**
   * How rejected calls and handler errors are answered. `"isError"`
   * (default): an MCP `isError` result (Hermes shows `{"error": ...}` and
   * counts a circuit-breaker strike). `"envelope"`: a normal result whose text
   * is `{"success": false, "error": "<message>"}` (the Python kit's shape; no
   * breaker strike, the model still reads the message).
   */
  errorMode?: "isError" | "envelope";
}

/** Options with helper-declared arguments. */
export interface ParamsToolOptions extends ToolOptionsBase {
  params: Record<string, ArgSpec>;
  schema?: never;
  zod?: never;
  handler: ToolHandler<Record<string, unknown>>;
}

/** Options with a hand-written schema: `{name?, description?, parameters}` or the parameters object `{type: "object", properties, required?}`. */
export interface SchemaToolOptions extends ToolOptionsBase {
  schema: { name?: string; description?: string; parameters: Record<string, unknown>; [key: string]: unknown } | { type: "object"; properties: Record<string, unknown>; required?: string[]; [key: string]: unknown };
  params?: never;
  zod?: never;
  handler: ToolHandler<Record<string, unknown>>;
}

/** Options with a zod object schema; the handler receives the parsed output type. */
export interface ZodToolOptions<S extends z.ZodObject> extends ToolOptionsBase {
  zod: S;
  params?: never;
  schema?: never;
  handler: ToolHandler<z.output<S>>;
}

/** The MCP tool as listed plus what the kit needs to run it. */
export interface ToolDefinition {
  readonly [TOOL_MARK]: true;
  readonly name: string;
  /** Augmented description, as listed. */
  readonly description: string;
  /** The `parameters` object, listed as `inputSchema`. */
  readonly inputSchema: ParametersSchema;
  readonly required: readonly string[];
  readonly examples: Readonly<Record<string, unknown>>;
  readonly readOnly: boolean;
  readonly validateRequired: boolean;
  readonly title?: string;
  readonly errorMode: "isError" | "envelope";
  /** Call through the kit (validation, envelope, logging). */
  call(args: unknown, context?: Partial<ToolContext>): Promise<ToolCallResult>;
}

/** The MCP `CallToolResult` shape the kit produces. */
export interface ToolCallResult {
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** True when `value` was returned by {@link tool}. */
export function isToolDefinition(value: unknown): value is ToolDefinition {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[TOOL_MARK] === true;
}

/** An `isError` result carrying `text`. */
export function errorResult(text: string): ToolCallResult {
  return { content: [{ type: "text", text }], isError: true };
}

function elapsed(start: bigint): string {
  return (Number(process.hrtime.bigint() - start) / 1e6).toFixed(2);
}

interface ZodLike {
  toJSONSchema(params?: Record<string, unknown>): Record<string, unknown>;
  safeParse(input: unknown): { success: true; data: unknown } | { success: false; error: { issues: Array<{ path: PropertyKey[]; message: string }> } };
}

function isZodLike(value: unknown): value is ZodLike {
  return typeof value === "object" && value !== null && typeof (value as ZodLike).toJSONSchema === "function" && typeof (value as ZodLike).safeParse === "function";
}

/**
 * Define a tool. Exactly one of `params`, `schema` or `zod` declares the
 * arguments; the listed `inputSchema` is always the `parameters` object with
 * `additionalProperties: false`.
 *
 * @throws PluginKitError `TOOL_NAME_*` (name rules), `TOOL_SCHEMA_SOURCE`
 *   (not exactly one of params/schema/zod), `TOOL_DESCRIPTION_REQUIRED`,
 *   `TOOL_OPTION_INVALID` (handler not a function, non-boolean flags,
 *   examples not an object), `ARG_INVALID`, `SCHEMA_TOP_LEVEL_PROPERTIES`,
 *   `SCHEMA_INVALID`, `SCHEMA_REQUIRED_UNKNOWN`, `SCHEMA_NAME_MISMATCH`.
 */
export function tool<S extends z.ZodObject>(options: ZodToolOptions<S>): ToolDefinition;
export function tool(options: ParamsToolOptions): ToolDefinition;
export function tool(options: SchemaToolOptions): ToolDefinition;
export function tool(options: ParamsToolOptions | SchemaToolOptions | ZodToolOptions<z.ZodObject>): ToolDefinition {
  if (options === null || typeof options !== "object") throw new PluginKitError("TOOL_OPTION_INVALID", "tool() needs an options object");
  const name = validateToolName(options.name, options.namespace !== undefined ? { namespace: options.namespace } : {});
  const sources = (["params", "schema", "zod"] as const).filter((key) => options[key] !== undefined);
  if (sources.length !== 1) {
    throw new PluginKitError("TOOL_SCHEMA_SOURCE", `tool '${name}' must declare exactly one of params, schema or zod, got ${sources.length === 0 ? "none" : sources.join(" and ")}`);
  }
  if (typeof options.handler !== "function") throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${name}': handler must be a function`);
  for (const flag of ["readOnly", "validateRequired"] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== "boolean") throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${name}': ${flag} must be a boolean`);
  }
  if (options.errorMode !== undefined && options.errorMode !== "isError" && options.errorMode !== "envelope") {
    throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${name}': errorMode must be "isError" or "envelope"`);
  }
  if (options.examples !== undefined && (options.examples === null || typeof options.examples !== "object" || Array.isArray(options.examples))) {
    throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${name}': examples must be an object keyed by argument name`);
  }

  let built: BuiltParameters;
  let schemaDescription: string | undefined;
  let zodSchema: ZodLike | undefined;
  if (options.params !== undefined) {
    built = buildParameters(options.params);
  } else if (options.schema !== undefined) {
    const validated = validateFunctionSchema(options.schema, name);
    built = validated;
    schemaDescription = validated.description;
  } else {
    if (!isZodLike(options.zod)) throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${name}': zod must be a zod object schema`);
    zodSchema = options.zod;
    built = validateParameters(zodSchema.toJSONSchema({ io: "input" }), "zod schema");
  }
  const examples = { ...built.examples, ...structuredClone(options.examples ?? {}) };
  for (const key of Object.keys(examples)) {
    if (!(key in built.parameters.properties)) throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${name}': example for unknown argument '${key}'`);
  }
  const rawDescription = typeof options.description === "string" && options.description.trim() !== "" ? options.description : schemaDescription;
  if (rawDescription === undefined || rawDescription.trim() === "") {
    throw new PluginKitError("TOOL_DESCRIPTION_REQUIRED", `tool '${name}': a description is required`);
  }
  const description = augmentDescription(rawDescription, built.required, examples);
  const readOnly = options.readOnly ?? false;
  const validateRequired = options.validateRequired ?? true;
  const handler = options.handler as ToolHandler<unknown>;
  const parameters = built.parameters;
  const required = built.required;
  const defaultLogger = new KitLogger("hermes_plugin_kit");
  const errorMode = options.errorMode ?? "isError";
  const fail = (message: string): ToolCallResult => {
    if (errorMode === "isError") return errorResult(message);
    const envelope = { success: false, error: message };
    return { content: [{ type: "text", text: JSON.stringify(envelope) }], structuredContent: envelope };
  };

  async function call(input: unknown, partial: Partial<ToolContext> = {}): Promise<ToolCallResult> {
    const logger = partial.logger ?? defaultLogger;
    const start = process.hrtime.bigint();
    if (logger.isEnabled("DEBUG")) logger.debug(`${name}: invoked; args=${safeArguments(input)}; context=${safeArguments(partial.requestId === undefined ? {} : { request_id: partial.requestId })}`);
    const checked = validateArguments(parameters, input, { required, examples, validateRequired });
    if (!checked.ok) {
      if (logger.isEnabled("WARNING")) logger.warning(`${name}: rejected call, ${rejectionSummary(checked.problems)}; elapsed_ms=${elapsed(start)}; args=${safeArguments(input)}`);
      return fail(checked.message);
    }
    let args: unknown = checked.args;
    if (zodSchema) {
      const parsed = zodSchema.safeParse(checked.args);
      if (!parsed.success) {
        const problems = zodProblems(parsed.error.issues);
        logger.warning(`${name}: rejected call, ${rejectionSummary(problems)}; elapsed_ms=${elapsed(start)}; args=${safeArguments(input)}`);
        return fail(formatArgumentProblems(problems));
      }
      args = parsed.data;
    }
    const context: ToolContext = {
      signal: partial.signal ?? NEVER_ABORTED,
      logger,
      ...(partial.requestId !== undefined ? { requestId: partial.requestId } : {}),
      ...(partial.meta !== undefined ? { meta: partial.meta } : {}),
    };
    let result: unknown;
    try {
      result = await handler(args, context);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      logger.error(`${name}: handler raised; elapsed_ms=${elapsed(start)}; error=${redactText(message)}`, error);
      return fail(`${name} failed: ${message}`);
    }
    if (typeof result === "string") {
      if (logger.isEnabled("INFO")) logger.info(`${name}: ok; elapsed_ms=${elapsed(start)}; result=encoded_string`);
      return { content: [{ type: "text", text: result }] };
    }
    const envelope = { success: true, data: result === undefined ? null : result };
    let text: string;
    try {
      text = JSON.stringify(envelope);
    } catch (error) {
      const message = `result is not JSON-serialisable: ${error instanceof Error ? error.message : String(error)}`;
      logger.error(`${name}: handler raised; elapsed_ms=${elapsed(start)}; error=${message}`);
      return fail(`${name} failed: ${message}`);
    }
    if (logger.isEnabled("INFO")) logger.info(`${name}: ok; elapsed_ms=${elapsed(start)}; result=${resultMode(result)}`);
    return { content: [{ type: "text", text }], structuredContent: envelope };
  }

  const definition: ToolDefinition = {
    [TOOL_MARK]: true,
    name,
    description,
    inputSchema: parameters,
    required,
    examples,
    readOnly,
    validateRequired,
    ...(options.title !== undefined ? { title: options.title } : {}),
    errorMode,
    call,
  };
  return Object.freeze(definition);
}

/** One problem per zod issue path (first issue of each path), in zod's order. */
function zodProblems(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): ArgumentProblem[] {
  const seen = new Set<string>();
  const problems: ArgumentProblem[] = [];
  for (const issue of issues) {
    const path = issue.path.length > 0 ? issue.path.map((part, index) => (typeof part === "number" ? `[${part}]` : `${index > 0 ? "." : ""}${String(part)}`)).join("") : "arguments";
    if (seen.has(path)) continue;
    seen.add(path);
    problems.push({ key: path.split(/[.[]/, 1)[0] ?? path, path, kind: "invalid", message: `${path}: ${issue.message}` });
  }
  return problems;
}

/**
 * The WARNING line's summary of a rejection (reference A.5 `rejected call,
 * missing <key>`, extended to every problem): `missing a,b`, `invalid c`,
 * `unknown d`, joined by `, `. Paths only, never values.
 */
function rejectionSummary(problems: readonly ArgumentProblem[]): string {
  const parts: string[] = [];
  for (const kind of ["missing", "invalid", "unknown"] as const) {
    const paths = [...new Set(problems.filter((p) => p.kind === kind).map((p) => p.path || "arguments"))];
    if (paths.length > 0) parts.push(`${kind} ${paths.slice(0, 20).join(",")}${paths.length > 20 ? ",..." : ""}`);
  }
  return parts.join(", ");
}

function resultMode(result: unknown): string {
  if (result === null || result === undefined) return "null";
  if (Array.isArray(result)) return "array";
  return typeof result;
}
