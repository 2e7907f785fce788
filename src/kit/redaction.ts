/**
 * Redaction shared by the kit's log lines and observability events (one
 * module, so logging and observability do not import each other):
 *
 * - argument and context summaries (Python kit redaction): every object key whose
 *   lowercased name contains a secret-looking part has its value replaced by
 *   `***`, at any depth; then compact JSON truncated to 200 characters + `…`;
 * - free text (Python kit observability): control characters escaped, bearer tokens,
 *   `password=...`-style pairs and API-key shapes replaced by `***`.
 */
import { expectString, inputTypeError, isRecord } from "./errors.js";
import { setOwn } from "./own-keys.js";

/** Substrings that mark a key as secret (matched on the lowercased key, Python kit redaction). */
export const REDACTED_KEY_PARTS: readonly string[] = ["token", "secret", "password", "passwd", "api_key", "apikey", "auth"];

/** Maximum characters of a logged argument summary before `…` is appended. */
export const LOG_ARGUMENT_LIMIT = 200;

/**
 * Deep copy of `value` with the value of every object key whose lowercased
 * name contains one of {@link REDACTED_KEY_PARTS} replaced by `"***"`, at any
 * depth (objects and arrays). String values are not scanned. Keys are
 * copied as own keys (a `__proto__` key stays a key of the copy).
 */
export function redactArguments(value: unknown, depth = 0): unknown {
  if (depth > 32) return "<max-depth>";
  if (Array.isArray(value)) return value.map((item) => redactArguments(item, depth + 1));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const lowered = key.toLowerCase();
      setOwn(out, key, REDACTED_KEY_PARTS.some((part) => lowered.includes(part)) ? "***" : redactArguments(item, depth + 1));
    }
    return out;
  }
  return value;
}

/** {@link redactArguments}, then JSON, truncated to {@link LOG_ARGUMENT_LIMIT} characters plus `…`. */
export function safeArguments(value: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(redactArguments(value ?? {}), (_key, v: unknown) => (typeof v === "bigint" ? String(v) : v)) ?? "null";
  } catch {
    json = '"<unserializable>"';
  }
  const chars = Array.from(json);
  return chars.length > LOG_ARGUMENT_LIMIT ? chars.slice(0, LOG_ARGUMENT_LIMIT).join("") + "…" : json;
}

const CONTROL = /[\u0000-\u001f\u007f]/g;

function escapeControl(text: string): string {
  return text.replace(CONTROL, (ch) => {
    if (ch === "\n") return "\\n";
    if (ch === "\r") return "\\r";
    if (ch === "\t") return "\\t";
    return `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

/**
 * Redact secret-looking substrings of free text (Python kit observability): control
 * characters escaped (`\n`, `\r`, `\t`, `\u00XX`); `Bearer <token>` ->
 * `Bearer ***`; `api_key|apikey|api-key|authorization|password|passwd|secret|token`
 * followed by `:` or `=` and a value -> `<word>=***`; Google-style `AIza...`
 * and `sk-...` keys -> `***`.
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `text` is not a string.
 */
export function redactText(text: string): string {
  return escapeControl(expectString("redactText", "text", text))
    .replace(/\b(bearer)\s+[A-Za-z0-9._~+/=-]+/gi, "$1 ***")
    .replace(/\b(api[_-]?key|authorization|password|passwd|secret|token)\s*[:=]\s*(?!\*\*\*|bearer\b)[^\s,;&"']+/gi, "$1=***")
    .replace(/AIza[0-9A-Za-z_-]{20,}/g, "***")
    .replace(/sk-[0-9A-Za-z_-]{16,}/g, "***");
}

/**
 * The text a host or the model is shown for a thrown value (a tool handler's
 * error, a result that cannot be serialised, a hook's or command's invalid
 * answer): the Error's `message` (else `String(value)`, `<unprintable error>`
 * when even that throws), each line redacted with {@link redactText} (the
 * same rules as the stderr log line of the same call) and the lines joined by
 * `\n` again, so a multi-line message stays multi-line.
 */
export function redactedErrorMessage(error: unknown): string {
  let message: string;
  try {
    message = error instanceof Error ? String(error.message) : String(error);
  } catch {
    message = "<unprintable error>";
  }
  return message.split("\n").map((line) => redactText(line)).join("\n");
}

/**
 * The context a log line may show (Python kit redaction): only `session_id` and
 * `task_id` of the host's keyword arguments, when present and not null,
 * redacted and truncated like {@link safeArguments}. Payloads never.
 *
 * @throws PluginKitError `INPUT_TYPE_INVALID` when `kwargs` is not an object.
 */
export function safeContext(kwargs: Record<string, unknown>): string {
  if (!isRecord(kwargs)) throw inputTypeError("safeContext", "kwargs", "an object of keyword arguments", kwargs);
  const context: Record<string, unknown> = {};
  for (const key of ["session_id", "task_id"]) {
    const value = Object.hasOwn(kwargs, key) ? kwargs[key] : undefined;
    if (value !== undefined && value !== null) context[key] = value;
  }
  return safeArguments(context);
}
