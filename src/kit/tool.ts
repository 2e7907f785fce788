/**
 * `tool({...})`: one MCP tool with a kit-built schema, kit-owned argument
 * validation, the `{"success": true, "data": ...}` envelope and redacted
 * stderr logging (Python kit @tool; docs/kit.md, "What a tool call answers").
 *
 * What a call answers (as MCP `CallToolResult`):
 * - success: text block `{"success":true,"data":<result>}` and the same
 *   object as `structuredContent` (Hermes drops the duplicate);
 * - a returned string: passed through as the only text block;
 * - missing/blank required arguments and schema violations: `isError`
 *   naming every bad argument, one line each (`<key> is required (e.g.
 *   '<example>')`, `<path> must be <type>`, ...); the handler is not called;
 * - a thrown error (handler, zod refinement or transform, unserialisable
 *   result): `isError` with `<tool> failed: <message>`, the message redacted
 *   as the stderr log line is (`redactText` per line: bearer tokens,
 *   `password=`-style pairs, `sk-`/`AIza` keys become `***`).
 */
import type { z } from "zod";
import { isAbortSignal } from "../contract/plain-options.js";
import { formatArgumentProblems, validateArguments, type ArgumentProblem } from "./arguments.js";
import { inputTypeError, isRecord, PluginKitError, shortText, valueKind } from "./errors.js";
import { KitLogger } from "./logging.js";
import { validateToolName } from "./naming.js";
import { requireKnownOptions } from "./option-keys.js";
import { redactedErrorMessage, redactText, safeArguments } from "./redaction.js";
import {
  augmentDescription,
  buildParameters,
  validateFunctionSchema,
  zodParameters,
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
  /**
   * What checks the arguments: `"kit"` (params or schema: the `inputSchema`
   * holds only keywords the kit's validation enforces) or `"zod"` (zod parses
   * them after the kit's checks, so the `inputSchema` may carry any keyword zod
   * emits). Listed as `_meta["hermes-plugin-kit/validator"]` (`VALIDATOR_META_KEY`),
   * which `plugin doctor` reads.
   */
  readonly validator: "kit" | "zod";
  /**
   * Call through the kit (validation, envelope, logging). Rejects with PluginKitError `INPUT_TYPE_INVALID` when
   * `context` is not an object, has a key other than `signal`, `requestId`, `logger`, `meta`, or one of the wrong
   * type (`signal` not an AbortSignal, `requestId` not a string or finite number, `logger` not a `KitLogger`,
   * `meta` not an object).
   */
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
export function toolErrorResult(text: string): ToolCallResult {
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

/** The checked options of a tool: what {@link tool} lists and what its calls need. */
interface ToolSpec {
  name: string;
  description: string;
  parameters: ParametersSchema;
  required: string[];
  examples: Record<string, unknown>;
  validateRequired: boolean;
  zodSchema: ZodLike | undefined;
  handler: ToolHandler<unknown>;
  errorMode: "isError" | "envelope";
}

/**
 * Define a tool. Exactly one of `params`, `schema` or `zod` declares the
 * arguments; the listed `inputSchema` is always the `parameters` object with
 * `additionalProperties: false`.
 *
 * @throws PluginKitError `TOOL_NAME_*` (name rules), `TOOL_SCHEMA_SOURCE`
 *   (not exactly one of params/schema/zod), `TOOL_DESCRIPTION_REQUIRED`,
 *   `TOOL_OPTION_INVALID` (options not an object, an option it does not read
 *   (named with the nearest known one, e.g. `validateRequred` -> `validateRequired`),
 *   handler not a function, non-boolean flags, errorMode not isError/envelope,
 *   title not a string, examples not an object), `ARG_INVALID`, `SCHEMA_TOP_LEVEL_PROPERTIES`,
 *   `SCHEMA_INVALID` (a wrong shape, or a hand-written `schema` holding a
 *   keyword the kit's argument validation does not enforce, at any depth:
 *   see `validateParameters`; a `zod` schema may hold any keyword, zod
 *   checks it), `SCHEMA_REQUIRED_UNKNOWN`, `SCHEMA_NAME_MISMATCH`.
 */
export function tool<S extends z.ZodObject>(options: ZodToolOptions<S>): ToolDefinition;
export function tool(options: ParamsToolOptions): ToolDefinition;
export function tool(options: SchemaToolOptions): ToolDefinition;
export function tool(options: AnyToolOptions): ToolDefinition {
  const name = checkToolOptions(options);
  const { built, schemaDescription, zodSchema } = toolParameters(options, name);
  const examples = toolExamples(options, name, built);
  const spec: ToolSpec = {
    name,
    description: toolDescription(options.description, schemaDescription, name, built.required, examples),
    parameters: built.parameters,
    required: built.required,
    examples,
    validateRequired: options.validateRequired ?? true,
    zodSchema,
    handler: options.handler as ToolHandler<unknown>,
    errorMode: options.errorMode ?? "isError",
  };
  const defaultLogger = new KitLogger("hermes_plugin_kit");
  const definition: ToolDefinition = {
    [TOOL_MARK]: true,
    name,
    description: spec.description,
    inputSchema: spec.parameters,
    required: spec.required,
    examples,
    readOnly: options.readOnly ?? false,
    validateRequired: spec.validateRequired,
    ...(options.title !== undefined ? { title: options.title } : {}),
    errorMode: spec.errorMode,
    validator: zodSchema === undefined ? "kit" : "zod",
    call: (input, partial = {}) => {
      if (!isRecord(partial)) return Promise.reject(inputTypeError(`tool '${shortText(name)}' call`, "context", "an object", partial));
      try {
        requireKnownOptions(`tool '${shortText(name)}' call context`, partial, CALL_CONTEXT_KEYS);
        checkCallContext(name, partial);
      } catch (error) {
        return Promise.reject(error);
      }
      return callTool(spec, input, partial, partial.logger ?? defaultLogger);
    },
  };
  return Object.freeze(definition);
}

/** Every option {@link tool} reads; any other key is refused (`TOOL_OPTION_INVALID`, with the nearest name). */
const TOOL_OPTION_KEYS: readonly string[] = Object.freeze(["name", "description", "params", "schema", "zod", "handler", "readOnly", "validateRequired", "examples", "namespace", "title", "errorMode"]);

/** Every key of a tool call's context ({@link ToolContext}) that `call` reads. */
const CALL_CONTEXT_KEYS: readonly string[] = ["signal", "requestId", "logger", "meta"];

/**
 * The types of a caller's call context, before the handler sees it: `signal` an AbortSignal (the project's one
 * signal rule, `isAbortSignal`), `requestId` a string or a finite number, `logger` a `KitLogger`, `meta` an object.
 * @throws PluginKitError `INPUT_TYPE_INVALID` naming the key, what it must be and the kind found.
 */
function checkCallContext(name: string, partial: Record<string, unknown>): void {
  const fn = `tool '${shortText(name)}' call`;
  const { signal, requestId, logger, meta } = partial;
  if (signal !== undefined && !isAbortSignal(signal)) throw inputTypeError(fn, "context.signal", "an AbortSignal (e.g. new AbortController().signal)", signal);
  if (requestId !== undefined && typeof requestId !== "string" && !(typeof requestId === "number" && Number.isFinite(requestId))) throw inputTypeError(fn, "context.requestId", "a string or a finite number", requestId);
  if (logger !== undefined && !(logger instanceof KitLogger)) throw inputTypeError(fn, "context.logger", "a KitLogger", logger);
  if (meta !== undefined && !isRecord(meta)) throw inputTypeError(fn, "context.meta", "an object", meta);
}

type AnyToolOptions = ParamsToolOptions | SchemaToolOptions | ZodToolOptions<z.ZodObject>;

/** The options' shape checks, in the order their codes are documented; returns the validated name. */
function checkToolOptions(options: AnyToolOptions): string {
  if (!isRecord(options)) throw new PluginKitError("TOOL_OPTION_INVALID", `tool() needs an options object {name, description, params | schema | zod, handler, ...}, found ${valueKind(options)}`);
  requireKnownOptions(typeof options.name === "string" ? `tool '${shortText(options.name)}'` : "tool()", options, TOOL_OPTION_KEYS, "TOOL_OPTION_INVALID");
  const name = validateToolName(options.name, options.namespace !== undefined ? { namespace: options.namespace } : {});
  const sources = (["params", "schema", "zod"] as const).filter((key) => options[key] !== undefined);
  if (sources.length !== 1) {
    throw new PluginKitError("TOOL_SCHEMA_SOURCE", `tool '${shortText(name)}' must declare exactly one of params, schema or zod, got ${sources.length === 0 ? "none" : sources.join(" and ")}`);
  }
  if (typeof options.handler !== "function") throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${shortText(name)}': handler must be a function`);
  for (const flag of ["readOnly", "validateRequired"] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== "boolean") throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${shortText(name)}': ${flag} must be a boolean`);
  }
  if (options.errorMode !== undefined && options.errorMode !== "isError" && options.errorMode !== "envelope") {
    throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${shortText(name)}': errorMode must be "isError" or "envelope"`);
  }
  if (options.title !== undefined && typeof options.title !== "string") throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${shortText(name)}': title must be a string, found ${valueKind(options.title)}`);
  if (options.examples !== undefined && (options.examples === null || typeof options.examples !== "object" || Array.isArray(options.examples))) {
    throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${shortText(name)}': examples must be an object keyed by argument name`);
  }
  return name;
}

/** The `parameters` object from whichever of params, schema or zod the options declare. */
function toolParameters(options: AnyToolOptions, name: string): { built: BuiltParameters; schemaDescription?: string; zodSchema?: ZodLike } {
  if (options.params !== undefined) return { built: buildParameters(options.params) };
  if (options.schema !== undefined) {
    const validated = validateFunctionSchema(options.schema, name);
    return { built: validated, ...(validated.description === undefined ? {} : { schemaDescription: validated.description }) };
  }
  if (!isZodLike(options.zod)) throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${shortText(name)}': zod must be a zod object schema`);
  return { built: zodParameters(options.zod.toJSONSchema({ io: "input" }), "zod schema"), zodSchema: options.zod };
}

/** Declared examples over the helpers' examples; each must name a listed argument. */
function toolExamples(options: AnyToolOptions, name: string, built: BuiltParameters): Record<string, unknown> {
  const examples = { ...built.examples, ...structuredClone(options.examples ?? {}) };
  for (const key of Object.keys(examples)) {
    if (!Object.hasOwn(built.parameters.properties, key)) throw new PluginKitError("TOOL_OPTION_INVALID", `tool '${shortText(name)}': example for unknown argument '${key}'`);
  }
  return examples;
}

/** The listed description: the option's (else the schema's), with the `Required:` clause appended. */
function toolDescription(option: unknown, schemaDescription: string | undefined, name: string, required: readonly string[], examples: Record<string, unknown>): string {
  const raw = typeof option === "string" && option.trim() !== "" ? option : schemaDescription;
  if (raw === undefined || raw.trim() === "") throw new PluginKitError("TOOL_DESCRIPTION_REQUIRED", `tool '${shortText(name)}': a description is required`);
  return augmentDescription(raw, required, examples);
}

/** A rejected call or a handler failure, answered in the tool's error mode. */
function failure(spec: ToolSpec, message: string): ToolCallResult {
  if (spec.errorMode === "isError") return toolErrorResult(message);
  const envelope = { success: false, error: message };
  return { content: [{ type: "text", text: JSON.stringify(envelope) }], structuredContent: envelope };
}

/** One call: validate the arguments (kit rules, then zod), run the handler, answer in the envelope. */
async function callTool(spec: ToolSpec, input: unknown, partial: Partial<ToolContext>, logger: KitLogger): Promise<ToolCallResult> {
  const { name } = spec;
  const start = process.hrtime.bigint();
  if (logger.isEnabled("DEBUG")) logger.debug(`${name}: invoked; args=${safeArguments(input)}; context=${safeArguments(partial.requestId === undefined ? {} : { request_id: partial.requestId })}`);
  let args: ReturnType<typeof checkCallArguments>;
  try {
    args = checkCallArguments(spec, input, logger, start);
  } catch (error) {
    // A zod refinement or transform that throws: answered like a handler error, never as the SDK's raw JSON-RPC error.
    return raised(spec, error, logger, start);
  }
  if (!args.ok) return failure(spec, args.message);
  const context: ToolContext = {
    signal: partial.signal ?? NEVER_ABORTED,
    logger,
    ...(partial.requestId !== undefined ? { requestId: partial.requestId } : {}),
    ...(partial.meta !== undefined ? { meta: partial.meta } : {}),
  };
  let result: unknown;
  try {
    result = await spec.handler(args.value, context);
  } catch (error) {
    return raised(spec, error, logger, start);
  }
  return answer(spec, result, logger, start);
}

/**
 * A thrown error answered as `<tool> failed: <message>`: the message redacted
 * as the ERROR line of the same call is (redaction.ts), so a secret in an
 * error's text reaches neither the log nor the model.
 */
function raised(spec: ToolSpec, error: unknown, logger: KitLogger, start: bigint): ToolCallResult {
  const message = redactedErrorMessage(error);
  logger.error(`${spec.name}: handler raised; elapsed_ms=${elapsed(start)}; error=${redactText(message)}`, error);
  return failure(spec, `${spec.name} failed: ${message}`);
}

/** The handler's arguments, or the message of a rejected call (logged at WARNING, paths only). */
function checkCallArguments(spec: ToolSpec, input: unknown, logger: KitLogger, start: bigint): { ok: true; value: unknown } | { ok: false; message: string } {
  const reject = (problems: readonly ArgumentProblem[], message: string) => {
    if (logger.isEnabled("WARNING")) logger.warning(`${spec.name}: rejected call, ${rejectionSummary(problems)}; elapsed_ms=${elapsed(start)}; args=${safeArguments(input)}`);
    return { ok: false as const, message };
  };
  const checked = validateArguments(spec.parameters, input, { required: spec.required, examples: spec.examples, validateRequired: spec.validateRequired });
  if (!checked.ok) return reject(checked.problems, checked.message);
  if (spec.zodSchema === undefined) return { ok: true, value: checked.args };
  const parsed = spec.zodSchema.safeParse(checked.args);
  if (parsed.success) return { ok: true, value: parsed.data };
  const problems = zodProblems(parsed.error.issues);
  return reject(problems, formatArgumentProblems(problems));
}

/** A handler's result as MCP answers it: a string passes through, anything else goes in the success envelope. */
function answer(spec: ToolSpec, result: unknown, logger: KitLogger, start: bigint): ToolCallResult {
  const { name } = spec;
  if (typeof result === "string") {
    if (logger.isEnabled("INFO")) logger.info(`${name}: ok; elapsed_ms=${elapsed(start)}; result=encoded_string`);
    return { content: [{ type: "text", text: result }] };
  }
  const envelope = { success: true, data: result === undefined ? null : result };
  let text: string;
  try {
    text = JSON.stringify(envelope);
  } catch (error) {
    const message = `result is not JSON-serialisable: ${redactedErrorMessage(error)}`;
    logger.error(`${name}: handler raised; elapsed_ms=${elapsed(start)}; error=${redactText(message)}`);
    return failure(spec, `${name} failed: ${message}`);
  }
  if (logger.isEnabled("INFO")) logger.info(`${name}: ok; elapsed_ms=${elapsed(start)}; result=${resultMode(result)}`);
  return { content: [{ type: "text", text }], structuredContent: envelope };
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
 * The WARNING line's summary of a rejection (Python kit @tool `rejected call,
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
