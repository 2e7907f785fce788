/**
 * What the model sees: Hermes' rendering of an MCP `tools/call` result into
 * the registry's JSON string (Hermes MCP client `_render_call_tool_result`,
 * text-only subset). Used by `plugin doctor` to show each result as the model
 * would read it.
 */
import { inputTypeError, isRecord } from "./errors.js";

/** A `CallToolResult` as received by a client. */
export interface ReceivedToolResult {
  content?: Array<{ type: string; text?: string; resource?: { text?: string } }>;
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * Render `result` as Hermes hands it to the model: `isError` ->
 * `{"error": "<joined text>"}` (empty -> `MCP tool returned an error`);
 * otherwise text blocks joined with `\n` as `{"result": "<text>"}`, with
 * `structuredContent` kept only when no text block parses to an equal JSON
 * value, and `{"result": <structuredContent>}` when there is no text.
 * Non-text blocks are noted as `[dropped <type> block]` (images and audio are
 * cached by Hermes; not simulated).
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `result` is not an object,
 *   its `content` not a list, or a block not an object.
 */
export function renderForModel(result: ReceivedToolResult): string {
  if (!isRecord(result)) throw inputTypeError("renderForModel", "result", "a tools/call result object", result);
  const blocks = result.content ?? [];
  if (!Array.isArray(blocks)) throw inputTypeError("renderForModel", "result.content", "a list of content blocks", blocks);
  const badBlock = blocks.find((block) => !isRecord(block));
  if (badBlock !== undefined) throw inputTypeError("renderForModel", "each content block", "an object", badBlock);
  const texts = blocks.map((block) => {
    if (block.type === "text") return block.text ?? "";
    if (block.type === "resource" && typeof block.resource?.text === "string") return block.resource.text;
    return `[dropped ${block.type} block]`;
  });
  const text = texts.join("\n");
  if (result.isError) return JSON.stringify({ error: text.trim() === "" ? "MCP tool returned an error" : text });
  const out: Record<string, unknown> = {};
  const structured = result.structuredContent;
  const duplicate =
    structured !== undefined &&
    texts.some((t) => {
      try {
        return deepEqual(JSON.parse(t), structured);
      } catch {
        return false;
      }
    });
  if (text !== "" || structured === undefined) out["result"] = text;
  else out["result"] = structured;
  if (structured !== undefined && !duplicate && text !== "") out["structuredContent"] = structured;
  return JSON.stringify(out);
}
