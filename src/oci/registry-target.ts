/**
 * `RegistryTarget`: an OCI Distribution Spec v1.1 client (pull, push, tag
 * listing) over HTTP(S) with `node:http`/`node:https`, implementing {@link Target}.
 *
 * - Auth: anonymous, Basic, and the Bearer challenge flow GHCR uses
 *   (`WWW-Authenticate: Bearer realm,service,scope` -> token endpoint with
 *   Basic credentials -> token cached per scope until it expires). A 401 after
 *   a fresh token is `OCI_AUTH_FAILED`. Credentials come from the caller
 *   (environment or stdin), never argv, and never appear in errors.
 * - Reads verify size and SHA-256 while streaming; a manifest over 1 MiB is
 *   refused before it is read whole; a `Docker-Content-Digest` that disagrees
 *   with the computed digest is `OCI_DIGEST_MISMATCH`.
 * - Bounded retries with exponential backoff on 429/5xx and connection
 *   resets (honouring `Retry-After` within the budget), per-request header and
 *   body-idle timeouts, bounded error/token bodies (64 KiB).
 * - Blob redirects: followed (at most 5 hops); a cross-origin hop drops the
 *   `Authorization` header; plain HTTP only to loopback hosts with `plainHttp`.
 * - Tag listing follows `Link: <url>; rel="next"` resolved against the request
 *   URL, same origin only, refusing loops.
 */
import { Readable } from "node:stream";
import { MAX_MANIFEST_BYTES, OCI_INDEX_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE } from "../contract/constants.js";
import { describe, isDigest, isDiscoveryTag } from "../contract/grammar.js";
import { isLoopbackHost, parseRepository } from "../contract/reference.js";
import {
  DOCKER_MANIFEST_LIST_MEDIA_TYPE,
  DOCKER_MANIFEST_MEDIA_TYPE,
  DescriptorVerifier,
  bufferStream,
  checkDescriptor,
  digestOf,
  isManifestMediaType,
  readAllBounded,
  verifiesDescriptor,
} from "./descriptor.js";
import { OciError, type OciErrorCode } from "./errors.js";
import { parseManifest } from "./manifest.js";
import { parseChallenges, type RegistryCredentials } from "./registry-auth.js";
import { HttpAgents, sendRequest, type HttpResponse } from "./registry-http.js";
import type { Descriptor, Target } from "./target.js";

export type { RegistryCredentials } from "./registry-auth.js";
export { credentialsFromEnv, readSecretFromStream, parseChallenges } from "./registry-auth.js";

/** Retry budget (attempts and delays in ms). */
export interface RetryPolicy {
  /** Total attempts per request, including the first. Default 5. */
  maxAttempts: number;
  /** First backoff delay (ms); doubles each attempt. Default 200. */
  baseDelayMs: number;
  /** Largest single delay (ms), also the largest `Retry-After` honoured. Default 10 000. */
  maxDelayMs: number;
}

/** Options of {@link RegistryTarget}. */
export interface RegistryTargetOptions {
  /** `host[:port]` of the registry. */
  registry: string;
  /** Repository path inside the registry, e.g. `owner/name`. */
  repository: string;
  /** Use `http://` (only for loopback hosts). Default false. */
  plainHttp?: boolean;
  credentials?: RegistryCredentials;
  /** Time to wait for response headers, per request (ms). Default 30 000. */
  timeoutMs?: number;
  /** Longest pause between body bytes (ms). Default 60 000. */
  bodyTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Blobs larger than this are uploaded in PATCH chunks of this size (bytes). Default 64 MiB. */
  chunkSize?: number;
  /** PEM certificate(s) trusted in addition to Node's root store, for a registry with a private CA. */
  ca?: string | Buffer;
  /** Most tag-list pages followed. Default 1000. */
  maxTagPages?: number;
  /** Tags asked for per tag-list page (`?n=`). Default 1000. */
  tagPageSize?: number;
}

/** Ceiling of error bodies and token responses (bytes). */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** Ceiling of one tag-list page (bytes). */
export const MAX_TAG_PAGE_BYTES = 4 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const MANIFEST_ACCEPT = [OCI_MANIFEST_MEDIA_TYPE, OCI_INDEX_MEDIA_TYPE, DOCKER_MANIFEST_MEDIA_TYPE, DOCKER_MANIFEST_LIST_MEDIA_TYPE].join(", ");
const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);
const RESET_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNREFUSED", "ECONNABORTED"]);
const TIMEOUT_CODES = new Set(["HEADERS_TIMEOUT", "BODY_TIMEOUT", "ETIMEDOUT"]);

type Scope = "pull" | "push" | "none";
type Body = Buffer | Readable | undefined;

interface SendOptions {
  method: "GET" | "HEAD" | "PUT" | "POST" | "PATCH" | "DELETE";
  url: URL;
  scope: Scope;
  headers?: Record<string, string>;
  body?: Body;
  /** Follow 3xx redirects (blob GET/HEAD). */
  followRedirects?: boolean;
}

function header(res: HttpResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Drop a response body: a small declared body is drained (the connection goes
 * back to the pool), anything else is destroyed unread. Errors are ignored.
 */
function discard(res: HttpResponse): void {
  res.body.on("error", () => undefined);
  const declared = Number(header(res, "content-length"));
  if (Number.isFinite(declared) && declared <= 64 * 1024 && !res.body.destroyed) res.body.resume();
  else res.body.destroy();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  if (e && typeof e.code === "string") return e.code;
  if (e && e.cause && typeof e.cause.code === "string") return e.cause.code;
  return undefined;
}

/** True for Node/OpenSSL TLS and certificate error codes. */
function isTlsErrorCode(code: string): boolean {
  return code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || code === "EPROTO" || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code);
}

/**
 * Map a stream/transport error of a response body to an {@link OciError}:
 * timeouts -> `OCI_TIMEOUT`, early close/reset -> `OCI_SIZE_MISMATCH`.
 */
function bodyError(error: unknown, label: string): OciError {
  if (error instanceof OciError) return error;
  const code = errorCode(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) return new OciError("OCI_TIMEOUT", `${label}: body timed out`, { cause: error });
  return new OciError("OCI_SIZE_MISMATCH", `${label}: connection closed before all bytes arrived (truncated)`, { cause: error });
}

/** Parse `Retry-After` (seconds or HTTP-date) into ms; undefined when absent or unparsable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^[0-9]+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * Parse a tag-list `Link` header and return the `rel="next"` target as given
 * (not yet resolved), or undefined when there is no next link.
 * @throws OciError `OCI_LINK_INVALID` when the header is not `<uri>; rel="next"` form.
 */
export function parseNextLink(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const parts = value.split(/,(?=\s*<)/);
  let sawLink = false;
  for (const part of parts) {
    const m = /^\s*<([^>]*)>\s*((?:;\s*[^;]*)*)$/.exec(part);
    if (m === null) continue;
    sawLink = true;
    const params = (m[2] ?? "").split(";").map((p) => p.trim()).filter((p) => p.length > 0);
    const rel = params.find((p) => /^rel\s*=/i.test(p));
    if (rel === undefined) continue;
    const relValue = rel.replace(/^rel\s*=\s*/i, "").replace(/^"|"$/g, "");
    if (relValue.split(/\s+/).includes("next")) return m[1] as string;
  }
  if (!sawLink) throw new OciError("OCI_LINK_INVALID", `tag list Link header is not of the form <uri>; rel="next": ${describe(value)}`);
  return undefined;
}

/** Bytes read past one upload chunk, handed to the next. */
interface ChunkCarry {
  rest: Buffer | null;
}

/**
 * The next `length` bytes of `source` as a stream (one PATCH body), pulled with
 * `read()` (no promise per chunk); bytes beyond the chunk stay in `carry`.
 */
class UploadChunk extends Readable {
  private remaining: number;
  private waiting = false;

  constructor(
    private readonly source: Readable,
    length: number,
    private readonly carry: ChunkCarry,
  ) {
    super({ highWaterMark: 256 * 1024 });
    this.remaining = length;
    const fail = (error: Error): void => {
      this.destroy(error);
    };
    source.once("error", fail);
    this.once("close", () => source.removeListener("error", fail));
  }

  override _read(): void {
    for (;;) {
      if (this.remaining === 0) {
        this.push(null);
        return;
      }
      let buf = this.carry.rest ?? (this.source.read() as Buffer | null);
      this.carry.rest = null;
      if (buf === null) {
        if (this.source.readableEnded || this.source.destroyed) {
          this.push(null);
          return;
        }
        if (!this.waiting) {
          this.waiting = true;
          this.source.once("readable", () => {
            this.waiting = false;
            this._read();
          });
        }
        return;
      }
      if (buf.length > this.remaining) {
        this.carry.rest = buf.subarray(this.remaining);
        buf = buf.subarray(0, this.remaining);
      }
      this.remaining -= buf.length;
      if (!this.push(buf)) return;
    }
  }
}

/**
 * After the last chunk: require that `source` has no more bytes and ends
 * cleanly, so the verifier's size/digest verdict arrives before the commit.
 * @throws OciError `OCI_SIZE_MISMATCH`, or the verifier's error.
 */
async function drainToEnd(source: Readable, carry: ChunkCarry, desc: Descriptor): Promise<void> {
  const tooMany = (): OciError => new OciError("OCI_SIZE_MISMATCH", `OCI blob ${desc.digest}: more than ${desc.size} bytes`);
  if (carry.rest !== null) throw tooMany();
  for (;;) {
    if (source.errored) throw source.errored;
    if (source.read() !== null) throw tooMany();
    if (source.readableEnded) return;
    await new Promise<void>((resolve, reject) => {
      const onReadable = (): void => {
        cleanup();
        resolve();
      };
      const onEnd = (): void => {
        cleanup();
        resolve();
      };
      const onError = (error: Error): void => {
        cleanup();
        reject(error);
      };
      const cleanup = (): void => {
        source.removeListener("readable", onReadable);
        source.removeListener("end", onEnd);
        source.removeListener("error", onError);
      };
      source.once("readable", onReadable);
      source.once("end", onEnd);
      source.once("error", onError);
    });
  }
}

/** An OCI distribution-spec registry repository as a {@link Target}. */
export class RegistryTarget implements Target {
  /** `host[:port]`. */
  readonly registry: string;
  /** Repository path. */
  readonly repository: string;
  readonly plainHttp: boolean;
  private readonly credentials: RegistryCredentials | undefined;
  private readonly base: URL;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly bodyTimeoutMs: number;
  private readonly chunkSize: number;
  private readonly maxTagPages: number;
  private readonly tagPageSize: number;
  private readonly agents: HttpAgents;
  private scheme: "unknown" | "anonymous" | "basic" | "bearer" = "unknown";
  private bearer: { realm: string; service: string | undefined } | undefined;
  private readonly tokens = new Map<string, { token: string; expiresAt: number }>();
  private readonly manifestCache = new Map<string, Buffer>();
  private readonly tokenRequests = new Map<string, Promise<void>>();

  /**
   * @throws OciError `OCI_PLAIN_HTTP_REFUSED` for `plainHttp` with a non-loopback host,
   *   `OCI_REPOSITORY_INVALID` when `registry/repository` is not a valid `host[:port]/path`.
   */
  constructor(options: RegistryTargetOptions) {
    let parsed;
    try {
      parsed = parseRepository(`${options.registry}/${options.repository}`);
    } catch {
      throw new OciError("OCI_REPOSITORY_INVALID", `invalid registry repository ${describe(`${options.registry}/${options.repository}`)}`);
    }
    if (parsed.kind !== "registry" || parsed.registry !== options.registry || parsed.path !== options.repository) {
      throw new OciError("OCI_REPOSITORY_INVALID", `invalid registry repository ${describe(`${options.registry}/${options.repository}`)}`);
    }
    this.registry = options.registry;
    this.repository = options.repository;
    this.plainHttp = options.plainHttp === true;
    this.base = new URL(`${this.plainHttp ? "http" : "https"}://${options.registry}`);
    if (this.plainHttp && !isLoopbackHost(this.base.hostname)) {
      throw new OciError("OCI_PLAIN_HTTP_REFUSED", `plain HTTP is allowed only for loopback hosts, not ${this.base.hostname}`);
    }
    this.credentials = options.credentials;
    this.agents = new HttpAgents(options.ca);
    this.retry = { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 10_000, ...(options.retry ?? {}) };
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? 60_000;
    this.chunkSize = options.chunkSize ?? 64 * 1024 * 1024;
    this.maxTagPages = options.maxTagPages ?? 1000;
    this.tagPageSize = options.tagPageSize ?? 1000;
  }

  /** `host[:port]/path`. */
  get reference(): string {
    return `${this.registry}/${this.repository}`;
  }

  /** Close pooled connections. */
  async close(): Promise<void> {
    this.agents.destroy();
  }

  private url(pathAfterRepo: string): URL {
    return new URL(`/v2/${this.repository}/${pathAfterRepo}`, this.base);
  }

  private scopeString(scope: Scope): string | undefined {
    if (scope === "none") return undefined;
    return `repository:${this.repository}:${scope === "push" ? "pull,push" : "pull"}`;
  }

  private allowedUrl(url: URL): boolean {
    if (url.protocol === "https:") return true;
    return url.protocol === "http:" && this.plainHttp && isLoopbackHost(url.hostname);
  }

  private cachedToken(scope: Scope): string | undefined {
    const keys = scope === "pull" ? [this.scopeString("pull"), this.scopeString("push")] : [this.scopeString(scope) ?? ""];
    for (const key of keys) {
      const hit = this.tokens.get(key ?? "");
      if (hit !== undefined && hit.expiresAt > Date.now()) return hit.token;
    }
    return undefined;
  }

  private async authorization(scope: Scope): Promise<string | undefined> {
    const creds = this.credentials;
    if (creds !== undefined && "token" in creds) return `Bearer ${creds.token}`;
    if (this.scheme === "basic" && creds !== undefined) return "Basic " + Buffer.from(`${creds.username}:${creds.password}`).toString("base64");
    if (this.scheme === "bearer") {
      let token = this.cachedToken(scope);
      if (token === undefined && scope !== "none") {
        // The realm is known: ask for this scope's token up front instead of provoking another 401.
        await this.fetchTokenOnce(scope);
        token = this.cachedToken(scope);
      }
      if (token !== undefined) return `Bearer ${token}`;
    }
    return undefined;
  }

  /** One token request per scope at a time; concurrent callers share it. */
  private fetchTokenOnce(scope: Scope): Promise<void> {
    const key = this.scopeString(scope) ?? "";
    const running = this.tokenRequests.get(key);
    if (running !== undefined) return running;
    const started = this.fetchToken(scope).finally(() => this.tokenRequests.delete(key));
    this.tokenRequests.set(key, started);
    return started;
  }

  /** Answer a 401 challenge; afterwards {@link authorization} yields a header. */
  private async authenticate(challengeHeader: string | undefined, scope: Scope, sentAuthorization: boolean): Promise<void> {
    const challenges = parseChallenges(challengeHeader);
    const bearer = challenges.find((c) => c.scheme === "bearer");
    const basic = challenges.find((c) => c.scheme === "basic");
    const creds = this.credentials;
    if (creds !== undefined && "token" in creds) {
      throw new OciError("OCI_AUTH_FAILED", `registry ${this.registry} refused the bearer token`);
    }
    if (bearer !== undefined) {
      const realm = bearer.params["realm"];
      if (realm === undefined) throw new OciError("OCI_RESPONSE_INVALID", `registry ${this.registry}: Bearer challenge without realm`);
      this.bearer = { realm, service: bearer.params["service"] };
      this.scheme = "bearer";
      // A concurrent request may have fetched this scope's token since ours left without one.
      if (!sentAuthorization && this.cachedToken(scope) !== undefined) return;
      await this.fetchTokenOnce(scope);
      return;
    }
    if (basic !== undefined) {
      if (creds === undefined) throw new OciError("OCI_AUTH_FAILED", `registry ${this.registry} requires credentials (Basic)`);
      this.scheme = "basic";
      return;
    }
    throw new OciError("OCI_AUTH_FAILED", `registry ${this.registry} answered 401 without a usable challenge`);
  }

  private async fetchToken(scope: Scope): Promise<void> {
    const bearer = this.bearer;
    if (bearer === undefined) throw new OciError("OCI_AUTH_FAILED", "no bearer realm known");
    let realm: URL;
    try {
      realm = new URL(bearer.realm);
    } catch {
      throw new OciError("OCI_RESPONSE_INVALID", `registry ${this.registry}: Bearer realm is not a URL`);
    }
    if (!this.allowedUrl(realm)) {
      throw new OciError("OCI_PLAIN_HTTP_REFUSED", `token realm ${realm.origin} is plain HTTP (allowed only for loopback hosts with plainHttp)`);
    }
    if (bearer.service !== undefined) realm.searchParams.set("service", bearer.service);
    const scopeText = this.scopeString(scope);
    if (scopeText !== undefined) realm.searchParams.append("scope", scopeText);
    const headers: Record<string, string> = { accept: "application/json" };
    const creds = this.credentials;
    if (creds !== undefined && "username" in creds) {
      headers["authorization"] = "Basic " + Buffer.from(`${creds.username}:${creds.password}`).toString("base64");
    }
    const res = await this.exchange({ method: "GET", url: realm, scope: "none", headers }, false);
    if (res.statusCode === 401 || res.statusCode === 403) {
      discard(res);
      throw new OciError("OCI_AUTH_FAILED", `token endpoint ${realm.origin} refused the credentials (HTTP ${res.statusCode})`);
    }
    if (res.statusCode !== 200) {
      throw await this.statusError(res, "GET", realm, "token endpoint");
    }
    const body = await this.readSmallBody(res, MAX_ERROR_BODY_BYTES, "token response");
    let json: unknown;
    try {
      json = JSON.parse(body.toString("utf8"));
    } catch {
      throw new OciError("OCI_RESPONSE_INVALID", `token endpoint ${realm.origin} did not answer JSON`);
    }
    const obj = (json ?? {}) as Record<string, unknown>;
    const token = typeof obj["token"] === "string" && obj["token"] !== "" ? obj["token"] : obj["access_token"];
    if (typeof token !== "string" || token.length === 0 || /[\r\n]/.test(token)) {
      throw new OciError("OCI_RESPONSE_INVALID", `token endpoint ${realm.origin} answered without a token`);
    }
    const expiresIn = typeof obj["expires_in"] === "number" && obj["expires_in"] > 0 ? obj["expires_in"] : 60;
    this.tokens.set(scopeText ?? "", { token, expiresAt: Date.now() + Math.max(1, expiresIn - 10) * 1000 });
  }

  /**
   * One HTTP exchange with retries (429/5xx/resets, bounded), timeouts and
   * redirects; `withAuth` adds and refreshes registry authorization.
   */
  private async exchange(opts: SendOptions, withAuth: boolean): Promise<HttpResponse> {
    const replayable = !(opts.body instanceof Readable);
    let url = opts.url;
    let crossOrigin = false;
    let authTried = false;
    let redirects = 0;
    let attempt = 0;
    for (;;) {
      attempt += 1;
      const headers: Record<string, string> = { "user-agent": "hermes-plugin-kit", ...(opts.headers ?? {}) };
      if (withAuth && !crossOrigin) {
        const auth = await this.authorization(opts.scope);
        if (auth !== undefined) headers["authorization"] = auth;
      }
      let res: HttpResponse;
      try {
        res = await sendRequest(url, {
          method: opts.method,
          headers,
          body: opts.body,
          agent: this.agents.for(url),
          headersTimeoutMs: this.timeoutMs,
          bodyTimeoutMs: this.bodyTimeoutMs,
        });
      } catch (error) {
        const code = errorCode(error);
        const timeout = code !== undefined && TIMEOUT_CODES.has(code);
        const reset = code !== undefined && RESET_CODES.has(code);
        if ((timeout || reset) && replayable && attempt < this.retry.maxAttempts) {
          await sleep(this.backoff(attempt));
          continue;
        }
        if (timeout) throw new OciError("OCI_TIMEOUT", `${opts.method} ${url.origin}${url.pathname} timed out after ${attempt} attempt(s)`, { cause: error });
        if (error instanceof OciError) throw error;
        if (opts.body instanceof Readable && opts.body.errored instanceof OciError) throw opts.body.errored;
        if (code !== undefined && isTlsErrorCode(code)) {
          throw new OciError("OCI_TLS_FAILED", `${opts.method} ${url.origin}${url.pathname}: TLS failed (${code})`, { cause: error });
        }
        if (reset) {
          // A streamed body cannot be replayed here; `copy` retries the whole blob transfer.
          throw new OciError("OCI_RETRY_EXHAUSTED", `${opts.method} ${url.origin}${url.pathname}: connection failed ${attempt} time(s)`, { cause: error });
        }
        throw new OciError("OCI_HTTP_ERROR", `${opts.method} ${url.origin}${url.pathname} failed (${code ?? "transport error"})`, { cause: error });
      }
      const status = res.statusCode;
      if (status === 401 && withAuth && !crossOrigin) {
        discard(res);
        if (authTried) {
          throw new OciError("OCI_AUTH_FAILED", `registry ${this.registry} refused the credentials for ${opts.scope} on ${this.repository} (HTTP 401 after authenticating)`);
        }
        if (!replayable && (opts.body as Readable).readableDidRead) {
          throw new OciError("OCI_AUTH_FAILED", `registry ${this.registry} answered 401 to a streamed upload`);
        }
        authTried = true;
        attempt -= 1;
        await this.authenticate(header(res, "www-authenticate"), opts.scope, headers["authorization"] !== undefined);
        continue;
      }
      if (RETRYABLE_STATUS.has(status)) {
        const retryAfter = parseRetryAfter(header(res, "retry-after"));
        discard(res);
        if (!replayable || attempt >= this.retry.maxAttempts) {
          throw new OciError("OCI_RETRY_EXHAUSTED", `${opts.method} ${url.origin}${url.pathname} answered HTTP ${status} ${attempt} time(s); retry budget exhausted`);
        }
        if (retryAfter !== undefined && retryAfter > this.retry.maxDelayMs) {
          throw new OciError("OCI_RETRY_EXHAUSTED", `${opts.method} ${url.origin}${url.pathname} asked to retry after ${Math.ceil(retryAfter / 1000)} s, beyond the retry budget (${this.retry.maxDelayMs} ms)`);
        }
        await sleep(retryAfter ?? this.backoff(attempt));
        continue;
      }
      if (opts.followRedirects === true && [301, 302, 303, 307, 308].includes(status)) {
        const location = header(res, "location");
        discard(res);
        redirects += 1;
        if (location === undefined) throw new OciError("OCI_RESPONSE_INVALID", `redirect without Location from ${url.origin}`);
        if (redirects > MAX_REDIRECTS) throw new OciError("OCI_REDIRECT_REFUSED", `more than ${MAX_REDIRECTS} redirects`);
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new OciError("OCI_REDIRECT_REFUSED", `redirect to an invalid URL`);
        }
        if (!this.allowedUrl(next)) {
          throw new OciError("OCI_REDIRECT_REFUSED", `refusing redirect to ${next.protocol}//${next.host} (plain HTTP only to loopback hosts with plainHttp)`);
        }
        if (next.origin !== this.base.origin) crossOrigin = true;
        url = next;
        attempt -= 1;
        continue;
      }
      return res;
    }
  }

  private backoff(attempt: number): number {
    const raw = this.retry.baseDelayMs * 2 ** (attempt - 1);
    const jitter = 0.75 + Math.random() * 0.5;
    return Math.min(this.retry.maxDelayMs, Math.round(raw * jitter));
  }

  private async readSmallBody(res: HttpResponse, max: number, label: string): Promise<Buffer> {
    const declared = Number(header(res, "content-length"));
    if (Number.isFinite(declared) && declared > max) {
      discard(res);
      throw new OciError("OCI_BODY_TOO_LARGE", `${label} is ${declared} bytes, more than ${max}`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        total += buf.length;
        if (total > max) {
          discard(res);
          throw new OciError("OCI_BODY_TOO_LARGE", `${label} is more than ${max} bytes`);
        }
        chunks.push(buf);
      }
    } catch (error) {
      throw bodyError(error, label);
    }
    return Buffer.concat(chunks, total);
  }

  /** An error for an unexpected status, with the registry's error codes (never its raw body). */
  private async statusError(res: HttpResponse, method: string, url: URL, what: string): Promise<OciError> {
    const status = res.statusCode;
    let codes = "";
    if (method !== "HEAD") {
      const body = await this.readSmallBody(res, MAX_ERROR_BODY_BYTES, `error body of ${what}`);
      try {
        const parsed = JSON.parse(body.toString("utf8")) as { errors?: Array<{ code?: unknown }> };
        const list = (parsed.errors ?? []).map((e) => e.code).filter((c): c is string => typeof c === "string" && /^[A-Z_]{1,64}$/.test(c));
        if (list.length > 0) codes = ` (${list.join(", ")})`;
      } catch {
        /* not JSON: nothing to report */
      }
    } else {
      discard(res);
    }
    let code: OciErrorCode = "OCI_HTTP_ERROR";
    if (status === 404) code = "OCI_NOT_FOUND";
    else if (status === 401 || status === 403) code = "OCI_AUTH_FAILED";
    return new OciError(code, `${what}: ${method} ${url.origin}${url.pathname} returned HTTP ${status}${codes}`);
  }

  private async send(opts: SendOptions, expected: number[], what: string): Promise<HttpResponse> {
    const res = await this.exchange(opts, true);
    if (!expected.includes(res.statusCode)) throw await this.statusError(res, opts.method, opts.url, what);
    return res;
  }

  /**
   * `GET /v2/`: check the registry answers and authenticate (no scope).
   * @throws OciError `OCI_AUTH_FAILED`, `OCI_HTTP_ERROR`, `OCI_RETRY_EXHAUSTED`, `OCI_TIMEOUT`.
   */
  async ping(): Promise<void> {
    const res = await this.send({ method: "GET", url: new URL("/v2/", this.base), scope: "none" }, [200], "registry ping");
    discard(res);
  }

  /**
   * GET a manifest by tag or digest (OCI `Accept`), bounded to 1 MiB, digest
   * computed from the bytes and checked against `Docker-Content-Digest` and a
   * requested digest.
   */
  private async getManifest(reference: string): Promise<{ desc: Descriptor; bytes: Buffer }> {
    const url = this.url(`manifests/${reference}`);
    const res = await this.send({ method: "GET", url, scope: "pull", headers: { accept: MANIFEST_ACCEPT } }, [200], `manifest ${reference}`);
    const declared = Number(header(res, "content-length"));
    if (Number.isFinite(declared) && declared > MAX_MANIFEST_BYTES) {
      discard(res);
      throw new OciError("OCI_MANIFEST_TOO_LARGE", `OCI manifest ${reference} is ${declared} bytes, more than ${MAX_MANIFEST_BYTES}`);
    }
    let bytes: Buffer;
    try {
      bytes = await readAllBounded(res.body, MAX_MANIFEST_BYTES, `OCI manifest ${reference}`, "OCI_MANIFEST_TOO_LARGE");
    } catch (error) {
      throw bodyError(error, `OCI manifest ${reference}`);
    }
    if (Number.isFinite(declared) && declared !== bytes.length) {
      throw new OciError("OCI_SIZE_MISMATCH", `OCI manifest ${reference}: Content-Length ${declared}, received ${bytes.length}`);
    }
    const digest = digestOf(bytes);
    const claimed = header(res, "docker-content-digest");
    if (claimed !== undefined && claimed !== digest) {
      throw new OciError("OCI_DIGEST_MISMATCH", `OCI manifest ${reference}: Docker-Content-Digest ${describe(claimed)} disagrees with the computed ${digest}`);
    }
    if (isDigest(reference) && reference !== digest) {
      throw new OciError("OCI_DIGEST_MISMATCH", `OCI manifest: expected digest ${reference}, computed ${digest}`);
    }
    const contentType = (header(res, "content-type") ?? "").split(";")[0]?.trim() ?? "";
    const parsed = parseManifest(bytes, isManifestMediaType(contentType) ? contentType : undefined);
    if (!isManifestMediaType(parsed.mediaType)) {
      throw new OciError("OCI_MANIFEST_INVALID", `OCI manifest ${reference}: unsupported media type ${describe(parsed.mediaType)}`);
    }
    this.remember(digest, bytes);
    return { desc: { mediaType: parsed.mediaType, digest, size: bytes.length }, bytes };
  }

  private remember(digest: string, bytes: Buffer): void {
    this.manifestCache.delete(digest);
    this.manifestCache.set(digest, bytes);
    while (this.manifestCache.size > 16) {
      const oldest = this.manifestCache.keys().next().value as string;
      this.manifestCache.delete(oldest);
    }
  }

  /**
   * Resolve a tag or digest to the manifest descriptor `{mediaType, digest, size}`,
   * the digest computed from the fetched bytes (must equal `Docker-Content-Digest`).
   * @throws OciError `OCI_NOT_FOUND`, `OCI_TAG_INVALID`, `OCI_DIGEST_MISMATCH`, `OCI_MANIFEST_TOO_LARGE`,
   *   `OCI_MANIFEST_INVALID`, `OCI_AUTH_FAILED`, `OCI_RETRY_EXHAUSTED`, `OCI_TIMEOUT`, `OCI_HTTP_ERROR`.
   */
  async resolve(tagOrDigest: string): Promise<Descriptor> {
    if (!isDigest(tagOrDigest) && !isDiscoveryTag(tagOrDigest)) {
      throw new OciError("OCI_TAG_INVALID", `invalid OCI tag or digest: ${describe(tagOrDigest)}`);
    }
    return (await this.getManifest(tagOrDigest)).desc;
  }

  /**
   * A verifying stream of a manifest or blob. Manifests above 1 MiB are refused
   * before the request; a `Content-Length` other than `desc.size` fails before
   * reading; the body is verified while it streams (more than `size` bytes stop
   * the read at `size + 1`; early close -> `OCI_SIZE_MISMATCH`).
   * @throws OciError `OCI_NOT_FOUND`, `OCI_MANIFEST_TOO_LARGE`, `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`,
   *   `OCI_REDIRECT_REFUSED`, `OCI_AUTH_FAILED`, `OCI_RETRY_EXHAUSTED`, `OCI_TIMEOUT`, `OCI_HTTP_ERROR`.
   */
  async fetch(desc: Descriptor): Promise<Readable> {
    checkDescriptor(desc);
    const manifest = isManifestMediaType(desc.mediaType);
    const label = `OCI ${manifest ? "manifest" : "blob"} ${desc.digest}`;
    if (manifest) {
      if (desc.size > MAX_MANIFEST_BYTES) {
        throw new OciError("OCI_MANIFEST_TOO_LARGE", `OCI manifest ${desc.digest} is ${desc.size} bytes, more than ${MAX_MANIFEST_BYTES}`);
      }
      const cached = this.manifestCache.get(desc.digest);
      const bytes = cached ?? (await this.getManifest(desc.digest)).bytes;
      const verifier = new DescriptorVerifier(desc, label);
      bufferStream(bytes).pipe(verifier);
      return verifier;
    }
    const url = this.url(`blobs/${desc.digest}`);
    const res = await this.send({ method: "GET", url, scope: "pull", followRedirects: true }, [200], label);
    const declared = header(res, "content-length");
    if (declared !== undefined && Number(declared) !== desc.size) {
      discard(res);
      throw new OciError("OCI_SIZE_MISMATCH", `${label}: expected ${desc.size} bytes, registry announced ${describe(declared)}`);
    }
    const claimed = header(res, "docker-content-digest");
    if (claimed !== undefined && claimed !== desc.digest) {
      discard(res);
      throw new OciError("OCI_DIGEST_MISMATCH", `${label}: Docker-Content-Digest ${describe(claimed)} disagrees with the expected digest`);
    }
    const verifier = new DescriptorVerifier(desc, label);
    const body = res.body;
    body.on("error", (error) => verifier.destroy(bodyError(error, label)));
    verifier.on("error", () => body.destroy());
    verifier.on("close", () => {
      if (!body.destroyed && !body.readableEnded) body.destroy();
    });
    body.pipe(verifier);
    return verifier;
  }

  /**
   * HEAD the blob (or manifest): true on 200 (with a matching `Content-Length`
   * when one is sent), false on 404.
   * @throws OciError `OCI_AUTH_FAILED`, `OCI_RETRY_EXHAUSTED`, `OCI_TIMEOUT`, `OCI_HTTP_ERROR`.
   */
  async exists(desc: Descriptor): Promise<boolean> {
    checkDescriptor(desc);
    const manifest = isManifestMediaType(desc.mediaType);
    const url = this.url(`${manifest ? "manifests" : "blobs"}/${desc.digest}`);
    const headers: Record<string, string> = manifest ? { accept: MANIFEST_ACCEPT } : {};
    const res = await this.exchange({ method: "HEAD", url, scope: "pull", headers, followRedirects: true }, true);
    discard(res);
    if (res.statusCode === 404) return false;
    if (res.statusCode !== 200) throw await this.statusError(res, "HEAD", url, `existence of ${desc.digest}`);
    const declared = header(res, "content-length");
    if (declared !== undefined && Number(declared) !== desc.size) return false;
    const claimed = header(res, "docker-content-digest");
    if (claimed !== undefined && claimed !== desc.digest) {
      throw new OciError("OCI_DIGEST_MISMATCH", `HEAD ${desc.digest}: Docker-Content-Digest ${describe(claimed)} disagrees`);
    }
    return true;
  }

  /**
   * Push a blob (HEAD, then POST + monolithic PUT, or POST + PATCH chunks +
   * PUT above `chunkSize`) or a manifest (PUT by digest). The content streams
   * through a verifier; the registry's `Docker-Content-Digest` must match.
   * @throws OciError `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`, `OCI_MANIFEST_TOO_LARGE`, `OCI_AUTH_FAILED`,
   *   `OCI_RESPONSE_INVALID`, `OCI_RETRY_EXHAUSTED`, `OCI_TIMEOUT`, `OCI_HTTP_ERROR`.
   */
  async push(desc: Descriptor, content: Readable): Promise<void> {
    checkDescriptor(desc);
    const verified: Readable = verifiesDescriptor(content, desc) ? content : content.pipe(new DescriptorVerifier(desc, `OCI content ${desc.digest}`));
    if (verified !== content) content.on("error", (error) => verified.destroy(error));
    // The verifier's verdict wins over the registry's reaction to bad bytes.
    let streamError: unknown;
    verified.on("error", (error) => {
      streamError ??= error;
    });
    if (isManifestMediaType(desc.mediaType)) {
      if (desc.size > MAX_MANIFEST_BYTES) {
        content.destroy();
        throw new OciError("OCI_MANIFEST_TOO_LARGE", `OCI manifest ${desc.digest} is ${desc.size} bytes, more than ${MAX_MANIFEST_BYTES}`);
      }
      const bytes = await readAllBounded(verified, desc.size, `OCI manifest ${desc.digest}`).catch((error: unknown) => {
        throw streamError ?? error;
      });
      await this.putManifest(desc, bytes, desc.digest);
      return;
    }
    if (await this.exists(desc)) {
      content.destroy();
      return;
    }
    try {
      await this.pushBlob(desc, verified);
    } catch (error) {
      await new Promise((resolve) => setImmediate(resolve));
      throw streamError ?? error;
    } finally {
      if (!verified.destroyed && !verified.readableEnded) verified.destroy();
    }
    if (streamError !== undefined) throw streamError;
  }

  private async startUpload(desc: Descriptor): Promise<URL> {
    const url = this.url("blobs/uploads/");
    const res = await this.send({ method: "POST", url, scope: "push", headers: { "content-length": "0" } }, [202], `upload of ${desc.digest}`);
    discard(res);
    return this.uploadLocation(res, url);
  }

  private uploadLocation(res: HttpResponse, requestUrl: URL): URL {
    const location = header(res, "location");
    if (location === undefined) throw new OciError("OCI_RESPONSE_INVALID", `upload session without Location from ${this.registry}`);
    const next = new URL(location, requestUrl);
    if (next.origin !== this.base.origin && !this.allowedUrl(next)) {
      throw new OciError("OCI_PLAIN_HTTP_REFUSED", `upload location ${next.protocol}//${next.host} refused`);
    }
    return next;
  }

  private checkPushedDigest(res: HttpResponse, desc: Descriptor): void {
    const claimed = header(res, "docker-content-digest");
    if (claimed !== undefined && claimed !== desc.digest) {
      throw new OciError("OCI_DIGEST_MISMATCH", `registry stored ${describe(claimed)} for ${desc.digest}`);
    }
  }

  private async pushBlob(desc: Descriptor, verified: Readable): Promise<void> {
    let location = await this.startUpload(desc);
    if (desc.size <= this.chunkSize) {
      const put = new URL(location);
      put.searchParams.append("digest", desc.digest);
      const res = await this.send(
        {
          method: "PUT",
          url: put,
          scope: "push",
          headers: { "content-type": "application/octet-stream", "content-length": String(desc.size) },
          body: verified,
        },
        [201],
        `upload of ${desc.digest}`,
      );
      discard(res);
      this.checkPushedDigest(res, desc);
      return;
    }
    const carry: ChunkCarry = { rest: null };
    let offset = 0;
    while (offset < desc.size) {
      const length = Math.min(this.chunkSize, desc.size - offset);
      const res = await this.send(
        {
          method: "PATCH",
          url: location,
          scope: "push",
          headers: {
            "content-type": "application/octet-stream",
            "content-length": String(length),
            "content-range": `${offset}-${offset + length - 1}`,
          },
          body: new UploadChunk(verified, length, carry),
        },
        [202],
        `chunk upload of ${desc.digest}`,
      );
      discard(res);
      location = this.uploadLocation(res, location);
      offset += length;
    }
    // The verifier reports size/digest at end of stream: drain it before committing.
    await drainToEnd(verified, carry, desc);
    const put = new URL(location);
    put.searchParams.append("digest", desc.digest);
    const res = await this.send({ method: "PUT", url: put, scope: "push", headers: { "content-length": "0" } }, [201], `upload of ${desc.digest}`);
    discard(res);
    this.checkPushedDigest(res, desc);
  }

  private async putManifest(desc: Descriptor, bytes: Buffer, reference: string): Promise<void> {
    const url = this.url(`manifests/${reference}`);
    const res = await this.send(
      { method: "PUT", url, scope: "push", headers: { "content-type": desc.mediaType }, body: bytes },
      [201],
      `manifest push ${reference}`,
    );
    discard(res);
    this.checkPushedDigest(res, desc);
    this.remember(desc.digest, bytes);
  }

  /**
   * Tag the manifest `desc`: GET it by digest (verified), PUT it by tag.
   * Debian's registry and GHCR allow tag overwrite; use `tagIfAbsent` for the
   * no-overwrite rule.
   * @throws OciError `OCI_TAG_INVALID`, `OCI_NOT_FOUND`, `OCI_DIGEST_MISMATCH`, and the HTTP errors.
   */
  async tag(desc: Descriptor, tag: string): Promise<void> {
    if (!isDiscoveryTag(tag)) throw new OciError("OCI_TAG_INVALID", `invalid OCI discovery tag: ${describe(tag)}`);
    checkDescriptor(desc);
    if (desc.size > MAX_MANIFEST_BYTES) {
      throw new OciError("OCI_MANIFEST_TOO_LARGE", `OCI manifest ${desc.digest} is ${desc.size} bytes, more than ${MAX_MANIFEST_BYTES}`);
    }
    const stream = await this.fetch({ mediaType: desc.mediaType, digest: desc.digest, size: desc.size });
    const bytes = await readAllBounded(stream, desc.size, `OCI manifest ${desc.digest}`);
    await this.putManifest(desc, bytes, tag);
  }

  /**
   * Every tag (`GET /v2/<name>/tags/list`, following `Link` pagination resolved
   * against the request URL, same origin only, loops refused).
   * @throws OciError `OCI_NOT_FOUND` (unknown repository), `OCI_PAGINATION_LOOP`, `OCI_LINK_INVALID`,
   *   `OCI_BODY_TOO_LARGE`, `OCI_RESPONSE_INVALID`, and the HTTP errors.
   */
  async tags(): Promise<string[]> {
    const out: string[] = [];
    const visited = new Set<string>();
    let url: URL | undefined = this.url("tags/list");
    url.searchParams.set("n", String(this.tagPageSize));
    for (let page = 0; url !== undefined; page += 1) {
      if (page >= this.maxTagPages) throw new OciError("OCI_PAGINATION_LOOP", `tag list has more than ${this.maxTagPages} pages`);
      const key = url.href;
      if (visited.has(key)) throw new OciError("OCI_PAGINATION_LOOP", `tag list pagination returned to an earlier page (${url.pathname}${url.search})`);
      visited.add(key);
      const res = await this.send({ method: "GET", url, scope: "pull", headers: { accept: "application/json" } }, [200], "tag list");
      const link = header(res, "link");
      const body = await this.readSmallBody(res, MAX_TAG_PAGE_BYTES, "tag list page");
      let json: unknown;
      try {
        json = JSON.parse(body.toString("utf8"));
      } catch {
        throw new OciError("OCI_RESPONSE_INVALID", `tag list page is not JSON`);
      }
      const tags = (json as { tags?: unknown } | null)?.tags;
      if (json === null || typeof json !== "object" || (tags !== null && tags !== undefined && !Array.isArray(tags))) {
        throw new OciError("OCI_RESPONSE_INVALID", `tag list page is not {"name", "tags": [...]}`);
      }
      for (const t of (tags ?? []) as unknown[]) {
        if (typeof t !== "string") throw new OciError("OCI_RESPONSE_INVALID", `tag list holds a non-string tag`);
        out.push(t);
      }
      const next = parseNextLink(link);
      if (next === undefined) {
        url = undefined;
      } else {
        let resolved: URL;
        try {
          resolved = new URL(next, url);
        } catch {
          throw new OciError("OCI_LINK_INVALID", `tag list Link target is not a URL`);
        }
        if (resolved.origin !== url.origin) throw new OciError("OCI_LINK_INVALID", `tag list Link leaves ${url.origin} for ${resolved.origin}`);
        url = resolved;
      }
    }
    return [...new Set(out)];
  }
}
