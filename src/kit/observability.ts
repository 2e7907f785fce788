/**
 * Structured observability events (schema `hermes.plugin.observability.v1`,
 * Python kit observability): redaction of secret-looking text and attribute keys,
 * bounds on every field, control-character escaping, credential identity
 * hashes and correlation ids. Pure except {@link logObservabilityEvent},
 * which writes one line through a {@link KitLogger}.
 */
import { createHash, randomUUID } from "node:crypto";
import { isRecord, PluginKitError, valueKind } from "./errors.js";
import { setOwn } from "./own-keys.js";
import { LOG_LEVELS, type KitLogger, type LogLevel } from "./logging.js";
import { requireKnownOptions } from "./option-keys.js";
import { redactText } from "./redaction.js";

/** Schema id carried by every event. */
export const OBSERVABILITY_SCHEMA = "hermes.plugin.observability.v1";

/** Prefix hashed before a credential (Python kit observability). */
const CREDENTIAL_PREFIX = "hermes-plugin-kit:credential-identity:v1\0";

/** A new correlation id: a random UUID v4 as 32 lowercase hex characters (no dashes). */
export function newCorrelationId(): string {
  return randomUUID().replace(/-/g, "");
}

/**
 * A stable, non-reversible identity for a credential, safe to log:
 * `sha256:` + the first 16 hex of SHA-256(`hermes-plugin-kit:credential-identity:v1\0` + secret).
 * Strings are UTF-8 encoded. Vectors: `"test"` -> `sha256:8007bafd6bee5a61`.
 *
 * @throws PluginKitError `CREDENTIAL_INVALID` for a non-string/non-bytes or empty secret.
 */
export function credentialIdentityHash(secret: string | Uint8Array): string {
  let bytes: Buffer;
  if (typeof secret === "string") bytes = Buffer.from(secret, "utf8");
  else if (secret instanceof Uint8Array) bytes = Buffer.from(secret);
  else throw new PluginKitError("CREDENTIAL_INVALID", `credential must be a string or bytes, got ${typeof secret}`);
  if (bytes.length === 0) throw new PluginKitError("CREDENTIAL_INVALID", "credential must not be empty");
  const hash = createHash("sha256").update(CREDENTIAL_PREFIX, "utf8").update(bytes).digest("hex");
  return `sha256:${hash.slice(0, 16)}`;
}

function cap(text: string, limit: number): string {
  const chars = Array.from(text);
  return chars.length > limit ? chars.slice(0, limit - 1).join("") + "…" : text;
}

const SENSITIVE_ATTRIBUTE_PARTS = [
  "api_key", "apikey", "auth", "authorization", "bearer", "credential", "password", "passwd", "private_key", "secret", "token",
];
const MAX_ATTRIBUTE_DEPTH = 4;
const MAX_ENTRIES = 24;
const MAX_ATTRIBUTES_JSON = 1024;

function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "");
}

function redactAttributeValue(value: unknown, depth: number): unknown {
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (depth >= MAX_ATTRIBUTE_DEPTH && typeof value === "object") return "<max-depth>";
  if (Array.isArray(value) || value instanceof Set) {
    const items = Array.from(value as Iterable<unknown>);
    const out = items.slice(0, MAX_ENTRIES).map((item) => redactAttributeValue(item, depth + 1));
    if (items.length > MAX_ENTRIES) out.push(`<${items.length - MAX_ENTRIES} more>`);
    return out;
  }
  if (typeof value === "object") return redactAttributes(value as Record<string, unknown>, depth + 1);
  return cap(redactText(String(value)), 256);
}

function redactAttributes(attributes: Record<string, unknown>, depth: number): Record<string, unknown> {
  const entries = Object.entries(attributes);
  const out: Record<string, unknown> = {};
  for (const [rawKey, value] of entries.slice(0, MAX_ENTRIES)) {
    const key = cap(redactText(rawKey), 64);
    const normalized = normalizeKey(rawKey);
    setOwn(out, key, SENSITIVE_ATTRIBUTE_PARTS.some((part) => normalized.includes(part)) ? "***" : redactAttributeValue(value, depth));
  }
  if (entries.length > MAX_ENTRIES) out["<truncated>"] = entries.length - MAX_ENTRIES;
  return out;
}

function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}

/** Fields of an {@link ObservabilityEvent} (camelCase here; snake_case in {@link ObservabilityEvent.asDict}). */
export interface ObservabilityEventInit {
  plugin: string;
  event: string;
  correlationId?: string;
  persona?: string;
  lane?: string;
  tool?: string;
  requestId?: string;
  fingerprint?: string;
  provider?: string;
  model?: string;
  credentialRef?: string;
  credentialHash?: string;
  stage?: string;
  status?: string;
  /** HTTP status, 100..599. */
  httpStatus?: number;
  errorCode?: string;
  errorMessage?: string;
  /** Elapsed time in milliseconds, >= 0. */
  elapsedMs?: number;
  retryClassification?: string;
  artifactOutcome?: string;
  attributes?: Record<string, unknown>;
}

/** Every field of {@link ObservabilityEventInit}. */
const EVENT_INIT_KEYS: readonly string[] = [
  "plugin", "event", "correlationId", "persona", "lane", "tool", "requestId", "fingerprint", "provider", "model", "credentialRef", "credentialHash",
  "stage", "status", "httpStatus", "errorCode", "errorMessage", "elapsedMs", "retryClassification", "artifactOutcome", "attributes",
];

const STRING_FIELDS: Array<[keyof ObservabilityEventInit, string]> = [
  ["persona", "persona"], ["lane", "lane"], ["tool", "tool"], ["requestId", "request_id"], ["fingerprint", "fingerprint"],
  ["provider", "provider"], ["model", "model"], ["credentialRef", "credential_ref"], ["credentialHash", "credential_hash"],
  ["stage", "stage"], ["status", "status"],
];

/**
 * One observability event (Python kit observability). Construction validates: `plugin`,
 * `event`, `correlationId` non-blank; `httpStatus` an integer 100..599;
 * `elapsedMs` finite and >= 0; `attributes` a plain object.
 *
 * @throws PluginKitError `OBSERVABILITY_INVALID` (also for a field not in
 *   {@link ObservabilityEventInit}, named with the nearest known one).
 */
export class ObservabilityEvent {
  readonly init: Readonly<ObservabilityEventInit> & { correlationId: string };

  constructor(init: ObservabilityEventInit) {
    if (!isRecord(init)) throw new PluginKitError("OBSERVABILITY_INVALID", `the event init must be an object, found ${valueKind(init)}`);
    requireKnownOptions("new ObservabilityEvent", init, EVENT_INIT_KEYS, "OBSERVABILITY_INVALID");
    const correlationId = init.correlationId ?? newCorrelationId();
    for (const [label, value] of [["plugin", init.plugin], ["event", init.event], ["correlation_id", correlationId]] as const) {
      if (typeof value !== "string" || value.trim() === "") throw new PluginKitError("OBSERVABILITY_INVALID", `${label} must be a non-blank string`);
    }
    if (init.httpStatus !== undefined && (!Number.isInteger(init.httpStatus) || init.httpStatus < 100 || init.httpStatus > 599)) {
      throw new PluginKitError("OBSERVABILITY_INVALID", `http_status must be an integer 100..599, got ${String(init.httpStatus)}`);
    }
    if (init.elapsedMs !== undefined && (typeof init.elapsedMs !== "number" || !Number.isFinite(init.elapsedMs) || init.elapsedMs < 0)) {
      throw new PluginKitError("OBSERVABILITY_INVALID", `elapsed_ms must be a finite number >= 0, got ${String(init.elapsedMs)}`);
    }
    if (init.attributes !== undefined && (init.attributes === null || typeof init.attributes !== "object" || Array.isArray(init.attributes))) {
      throw new PluginKitError("OBSERVABILITY_INVALID", "attributes must be an object");
    }
    this.init = { ...init, correlationId };
  }

  /**
   * The redacted, bounded event as a plain object with keys in schema order:
   * `schema, event, correlation_id, plugin, persona, lane, tool, request_id,
   * fingerprint, provider, model, credential_ref, credential_hash, stage,
   * status, http_status, error_code, error_message, elapsed_ms,
   * retry_classification, artifact_outcome, [attributes]`. Absent fields are
   * omitted; strings capped at 256 characters (`error_message` 512);
   * `elapsed_ms` rounded to 2 decimals; attributes whose sorted JSON exceeds
   * 1024 characters become `{"_truncated": true, "preview": ...}`.
   */
  asDict(): Record<string, unknown> {
    const i = this.init;
    const text = (value: string, limit = 256) => cap(redactText(value), limit);
    const out: Record<string, unknown> = {
      schema: OBSERVABILITY_SCHEMA,
      event: text(i.event),
      correlation_id: text(i.correlationId),
      plugin: text(i.plugin),
    };
    for (const [field, key] of STRING_FIELDS) {
      const value = i[field];
      if (value !== undefined && value !== null) out[key] = text(String(value));
    }
    if (i.httpStatus !== undefined) out["http_status"] = i.httpStatus;
    if (i.errorCode !== undefined) out["error_code"] = text(i.errorCode);
    if (i.errorMessage !== undefined) out["error_message"] = text(i.errorMessage, 512);
    if (i.elapsedMs !== undefined) out["elapsed_ms"] = Math.round(i.elapsedMs * 100) / 100;
    if (i.retryClassification !== undefined) out["retry_classification"] = text(i.retryClassification);
    if (i.artifactOutcome !== undefined) out["artifact_outcome"] = text(i.artifactOutcome);
    if (i.attributes && Object.keys(i.attributes).length > 0) {
      const attributes = redactAttributes(i.attributes, 0);
      const json = sortedJson(attributes);
      out["attributes"] = json.length > MAX_ATTRIBUTES_JSON ? { _truncated: true, preview: json.slice(0, 976) + "…" } : attributes;
    }
    return out;
  }
}

const WARNING_STATUSES = new Set(["denied", "error", "failed", "failure", "rejected", "timeout"]);
const MAX_EVENT_JSON = 16_384;

/**
 * Log `event` as one stderr line `hermes_plugin_observability <compact json>`.
 * Level defaults to WARNING when `status` is one of denied, error, failed,
 * failure, rejected, timeout, else INFO. A payload over 16,384 characters
 * shrinks to `schema, event, correlation_id, plugin, status, truncated: true`.
 *
 * @returns the (possibly reduced) payload that was logged.
 * @throws PluginKitError `OBSERVABILITY_INVALID` when `logger` is not a
 *   `KitLogger`, `event` not an {@link ObservabilityEvent}, `options` not an object, an option other
 *   than `level` (named with the nearest) or a `level` not in `LOG_LEVELS`.
 */
export function logObservabilityEvent(logger: KitLogger, event: ObservabilityEvent, options: { level?: LogLevel } = {}): Record<string, unknown> {
  if (!isRecord(logger) || typeof logger["log"] !== "function") throw new PluginKitError("OBSERVABILITY_INVALID", `logObservabilityEvent: logger must be a KitLogger, found ${valueKind(logger)}`);
  if (!isRecord(event) || typeof event["asDict"] !== "function") throw new PluginKitError("OBSERVABILITY_INVALID", `logObservabilityEvent: event must be an ObservabilityEvent, found ${valueKind(event)}`);
  if (!isRecord(options)) throw new PluginKitError("OBSERVABILITY_INVALID", `logObservabilityEvent: options must be an object, found ${valueKind(options)}`);
  requireKnownOptions("logObservabilityEvent", options, ["level"], "OBSERVABILITY_INVALID");
  if (options.level !== undefined && !(LOG_LEVELS as readonly unknown[]).includes(options.level)) {
    throw new PluginKitError("OBSERVABILITY_INVALID", `logObservabilityEvent: options.level must be one of ${LOG_LEVELS.join(", ")}, found ${typeof options.level === "string" ? JSON.stringify(options.level) : valueKind(options.level)}`);
  }
  let payload = event.asDict();
  let json = JSON.stringify(payload);
  if (json.length > MAX_EVENT_JSON) {
    const reduced: Record<string, unknown> = {};
    for (const key of ["schema", "event", "correlation_id", "plugin", "status"]) if (key in payload) reduced[key] = payload[key];
    reduced["truncated"] = true;
    payload = reduced;
    json = JSON.stringify(payload);
  }
  const status = typeof payload["status"] === "string" ? payload["status"].toLowerCase() : "";
  const level = options.level ?? (WARNING_STATUSES.has(status) ? "WARNING" : "INFO");
  logger.log(level, `hermes_plugin_observability ${json}`);
  return payload;
}
