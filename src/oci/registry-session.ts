/**
 * One registry's HTTP session for {@link RegistryTarget}: authentication
 * (anonymous, Basic, the Bearer token flow GHCR uses), bounded retries, timeouts,
 * redirects and the origin rules (`./origin.ts`).
 *
 * - Credentials (`Authorization`; a `Cookie` is never sent) go only to the
 *   registry's own origin: a redirect, an upload `Location` or any other URL
 *   on another origin is contacted without them, and a 401 from another origin
 *   is refused rather than answered. A token realm on another origin gets an
 *   anonymous token request unless the caller trusts it (`trustedTokenRealms`).
 * - Retries follow `./retry.ts` (429/5xx/resets/timeouts; `Retry-After`
 *   honoured within the budget); a streamed body is sent only after the server
 *   answered `100 Continue`, so an answer given before it (401, 413, 429) leaves
 *   the stream unread and the request can be repeated.
 * - Error bodies and token responses are bounded (64 KiB); messages name the
 *   registry's error codes but never echo bodies, credentials or tokens.
 *
 * OCI Distribution Spec v1.1 (auth per the Docker token specification).
 */
import { Readable } from "node:stream";
import { interruption, throwIfInterrupted } from "../contract/errors.js";
import { OciError, type OciErrorCode } from "./errors.js";
import { refusedHop, sameOrigin, schemeAllowed } from "./origin.js";
import { parseChallenges, parseTokenResponse, type AuthChallenge, type RegistryCredentials } from "./registry-auth.js";
import { HttpAgents, RESET_CODES, bodySpent, TIMEOUT_CODES, bodyError, discard, errorCode, headerValue, headerValues, isPlainHttpAnswer, isTlsErrorCode, plainHttpAnswerMessage, sendRequest, type HttpResponse } from "./registry-http.js";
import { RETRYABLE_STATUS, describeRetryableStatus, parseRetryAfter, retryPolicy, retryVerdict, sleep, type RetryPolicy } from "./retry.js";

/** Ceiling of error bodies and token responses (bytes). */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;
const MAX_REDIRECTS = 5;
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);

/** The token scope of a request: `pull`, `push` (`pull,push`) or none (`/v2/`, token endpoints). */
export type Scope = "pull" | "push" | "none";

/** One request of the session. */
export interface SendOptions {
  method: "GET" | "HEAD" | "PUT" | "POST" | "PATCH" | "DELETE";
  url: URL;
  scope: Scope;
  headers?: Record<string, string>;
  /** A buffer (replayable) or a stream (sent once, after `100 Continue`). */
  body?: Buffer | Readable | undefined;
  /** Follow 3xx redirects (blob GET/HEAD). */
  followRedirects?: boolean;
  /**
   * Stop: no attempt starts after the abort, a retry wait ends, the request in flight (and its response body)
   * is destroyed; the call rejects with InterruptedError `INTERRUPTED`. A token request other calls share is
   * not stopped (it is waited out, then the call stops).
   */
  signal?: AbortSignal | undefined;
}

/** Options of {@link RegistrySession}. */
export interface RegistrySessionOptions {
  /** `http(s)://host[:port]` of the registry. */
  base: URL;
  /** Repository path (token scopes). */
  repository: string;
  plainHttp: boolean;
  credentials?: RegistryCredentials | undefined;
  ca?: string | Buffer | undefined;
  retry?: Partial<RetryPolicy> | undefined;
  timeoutMs?: number | undefined;
  bodyTimeoutMs?: number | undefined;
  /** Token realm origins (`https://auth.example`) that may receive the credentials besides the registry's own origin. */
  trustedTokenRealms?: readonly string[] | undefined;
}

/** Authentication, retries, redirects and the origin rules of one registry; see the module comment. */
export class RegistrySession {
  readonly base: URL;
  readonly repository: string;
  readonly plainHttp: boolean;
  readonly retry: RetryPolicy;
  private readonly credentials: RegistryCredentials | undefined;
  private readonly agents: HttpAgents;
  private readonly timeoutMs: number;
  private readonly bodyTimeoutMs: number;
  private readonly trustedRealms: ReadonlySet<string>;
  private scheme: "unknown" | "basic" | "bearer" = "unknown";
  private bearer: { realm: string; service: string | undefined } | undefined;
  private readonly tokens = new Map<string, { token: string; expiresAt: number }>();
  private readonly tokenRequests = new Map<string, Promise<void>>();

  constructor(options: RegistrySessionOptions) {
    this.base = options.base;
    this.repository = options.repository;
    this.plainHttp = options.plainHttp;
    this.credentials = options.credentials;
    this.agents = new HttpAgents(options.ca);
    this.retry = retryPolicy(options.retry);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? 60_000;
    this.trustedRealms = new Set((options.trustedTokenRealms ?? []).map((o) => new URL(o).origin));
  }

  /** `host[:port]` of the registry. */
  get registry(): string {
    return this.base.host;
  }

  /** `/v2/<repository>/<pathAfterRepo>` on the registry. */
  url(pathAfterRepo: string): URL {
    return new URL(`/v2/${this.repository}/${pathAfterRepo}`, this.base);
  }

  /** Close pooled connections. */
  close(): void {
    this.agents.destroy();
  }

  private scopeString(scope: Scope): string | undefined {
    if (scope === "none") return undefined;
    return `repository:${this.repository}:${scope === "push" ? "pull,push" : "pull"}`;
  }

  private cachedToken(scope: Scope): string | undefined {
    const keys = scope === "pull" ? [this.scopeString("pull"), this.scopeString("push")] : [this.scopeString(scope) ?? ""];
    for (const key of keys) {
      const hit = this.tokens.get(key ?? "");
      if (hit !== undefined && hit.expiresAt > Date.now()) return hit.token;
    }
    return undefined;
  }

  private basicHeader(): string | undefined {
    const creds = this.credentials;
    if (creds === undefined || !("username" in creds)) return undefined;
    return "Basic " + Buffer.from(`${creds.username}:${creds.password}`).toString("base64");
  }

  /** The `Authorization` value for the registry's own origin, fetching a scope token when the realm is known. */
  private async authorization(scope: Scope): Promise<string | undefined> {
    const creds = this.credentials;
    if (creds !== undefined && "token" in creds) return `Bearer ${creds.token}`;
    if (this.scheme === "basic") return this.basicHeader();
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

  /** The one Bearer (else Basic) challenge of a 401; two Bearer challenges naming different realms are refused. */
  private pickChallenge(values: string[]): { bearer?: AuthChallenge; basic?: AuthChallenge } {
    const challenges = values.flatMap((v) => parseChallenges(v));
    const bearers = challenges.filter((c) => c.scheme === "bearer");
    const realms = new Set(bearers.map((c) => `${c.params["realm"] ?? ""}\n${c.params["service"] ?? ""}`));
    if (realms.size > 1) throw new OciError("OCI_RESPONSE_INVALID", `registry ${this.registry}: ambiguous Bearer challenges naming different realms`);
    const out: { bearer?: AuthChallenge; basic?: AuthChallenge } = {};
    if (bearers[0] !== undefined) out.bearer = bearers[0];
    const basic = challenges.find((c) => c.scheme === "basic");
    if (basic !== undefined) out.basic = basic;
    return out;
  }

  /** Answer a 401 challenge of the registry's origin; afterwards {@link authorization} yields a header. */
  private async authenticate(challengeHeaders: string[], scope: Scope, sentAuthorization: boolean): Promise<void> {
    const { bearer, basic } = this.pickChallenge(challengeHeaders);
    const creds = this.credentials;
    if (creds !== undefined && "token" in creds) {
      throw new OciError("OCI_AUTH_FAILED", `registry ${this.registry} refused the bearer token; fix: check the token you set for ${this.registry} (REGISTRY_TOKEN or GH_TOKEN) and that it may read (and, to push, write) ${this.repository}`);
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
      if (creds === undefined) {
        throw new OciError(
          "OCI_AUTH_FAILED",
          `registry ${this.registry} requires credentials (Basic) and none were found: set REGISTRY_USERNAME and REGISTRY_PASSWORD (or REGISTRY_TOKEN), or give a Docker client config with an auths entry or credential helper for ${this.registry} (--registry-config, else $DOCKER_CONFIG/config.json or ~/.docker/config.json)`,
        );
      }
      this.scheme = "basic";
      return;
    }
    throw new OciError("OCI_AUTH_FAILED", `registry ${this.registry} answered 401 without a usable challenge`);
  }

  /** The realm URL, checked: parseable, no user info, no plain HTTP off loopback, no downgrade from the registry's scheme. */
  private realmUrl(): URL {
    const bearer = this.bearer;
    if (bearer === undefined) throw new OciError("OCI_AUTH_FAILED", "no bearer realm known");
    let realm: URL;
    try {
      realm = new URL(bearer.realm);
    } catch {
      throw new OciError("OCI_RESPONSE_INVALID", `registry ${this.registry}: Bearer realm is not a URL`);
    }
    const refused = refusedHop(this.base, realm, this.plainHttp);
    if (refused !== undefined) throw new OciError("OCI_PLAIN_HTTP_REFUSED", `token realm ${realm.protocol}//${realm.host} refused: ${refused}`);
    return realm;
  }

  /** Whether the token endpoint `realm` may receive the credentials: the registry's own origin, or a realm the caller trusts. */
  private realmTrusted(realm: URL): boolean {
    return sameOrigin(realm, this.base) || this.trustedRealms.has(realm.origin);
  }

  private async fetchToken(scope: Scope): Promise<void> {
    const realm = this.realmUrl();
    const service = this.bearer?.service;
    if (service !== undefined) realm.searchParams.set("service", service);
    const scopeText = this.scopeString(scope);
    if (scopeText !== undefined) realm.searchParams.append("scope", scopeText);
    const headers: Record<string, string> = { accept: "application/json" };
    const trusted = this.realmTrusted(realm);
    const basic = trusted ? this.basicHeader() : undefined;
    if (basic !== undefined) headers["authorization"] = basic;
    const res = await this.exchange({ method: "GET", url: realm, scope: "none", headers }, false);
    if (res.statusCode === 401 || res.statusCode === 403) {
      discard(res);
      const why = trusted
        ? `refused the credentials (HTTP ${res.statusCode}); fix: check the credentials you set for ${this.registry} (REGISTRY_USERNAME/REGISTRY_PASSWORD, REGISTRY_TOKEN, or the Docker config entry or credential helper) and that they may read (and, to push, write) ${this.repository}`
        : `refused an anonymous token (HTTP ${res.statusCode}); credentials are sent only to the registry's origin ${this.base.origin} (trust this realm with trustedTokenRealms)`;
      throw new OciError("OCI_AUTH_FAILED", `token endpoint ${realm.origin} ${why}`);
    }
    if (res.statusCode !== 200) throw await this.statusError(res, "GET", realm, "token endpoint");
    const body = await this.readSmallBody(res, MAX_ERROR_BODY_BYTES, "token response");
    this.tokens.set(scopeText ?? "", parseTokenResponse(body, realm.origin));
  }

  /**
   * One HTTP exchange with retries (429/5xx/resets, bounded), timeouts and
   * redirects; `withAuth` adds and refreshes registry authorization on the
   * registry's own origin only.
   */
  async exchange(opts: SendOptions, withAuth: boolean): Promise<HttpResponse> {
    const stream = opts.body instanceof Readable ? opts.body : undefined;
    const unread = (): boolean => stream === undefined || !bodySpent(stream);
    let url = opts.url;
    let authTried = false;
    let redirects = 0;
    let attempt = 0;
    const signal = opts.signal;
    for (;;) {
      throwIfInterrupted(signal);
      attempt += 1;
      const own = sameOrigin(url, this.base);
      const headers: Record<string, string> = { "user-agent": "hermes-plugin-kit", ...(opts.headers ?? {}) };
      // A caller's own Authorization (a trusted token realm) belongs to the first URL's origin only.
      if (!sameOrigin(url, opts.url)) delete headers["authorization"];
      if (withAuth && own) {
        const auth = await this.authorization(opts.scope);
        if (auth !== undefined) headers["authorization"] = auth;
        throwIfInterrupted(signal);
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
          signal,
        });
      } catch (error) {
        const stopped = interruption(signal);
        if (stopped !== undefined) throw stopped;
        const delay = this.transportRetry(error, opts, url, attempt, unread());
        await sleep(delay, signal);
        continue;
      }
      const status = res.statusCode;
      if (status === 401 && withAuth) {
        discard(res);
        if (!own) {
          throw new OciError("OCI_AUTH_FAILED", `${url.origin} (not the registry's origin ${this.base.origin}) asked for credentials; they are sent only to the registry`);
        }
        if (authTried) {
          throw new OciError("OCI_AUTH_FAILED", `registry ${this.registry} refused the credentials for ${opts.scope} on ${this.repository} (HTTP 401 after authenticating); fix: check the credentials you set for ${this.registry} (REGISTRY_USERNAME/REGISTRY_PASSWORD, REGISTRY_TOKEN, or the Docker config entry or credential helper) and that they may read (and, to push, write) ${this.repository}`);
        }
        if (!unread()) throw new OciError("OCI_AUTH_FAILED", `registry ${this.registry} answered 401 to a streamed upload`);
        authTried = true;
        attempt -= 1;
        await this.authenticate(headerValues(res, "www-authenticate"), opts.scope, headers["authorization"] !== undefined);
        continue;
      }
      if (RETRYABLE_STATUS.has(status)) {
        await sleep(this.statusRetry(res, opts, url, attempt, unread()), signal);
        continue;
      }
      if (opts.followRedirects === true && REDIRECT_STATUS.has(status)) {
        redirects += 1;
        url = this.redirectTarget(res, url, redirects);
        attempt -= 1;
        continue;
      }
      if (redirects > 0) res.url = url;
      return res;
    }
  }

  /**
   * Headers for a request of our own to `url` (the blob fast path): the user
   * agent, and `Authorization` only on the registry's own origin (a token for
   * `scope` is fetched when the realm is known).
   */
  async requestHeaders(url: URL, scope: Scope): Promise<Record<string, string>> {
    const headers: Record<string, string> = { "user-agent": "hermes-plugin-kit" };
    if (sameOrigin(url, this.base)) {
      const auth = await this.authorization(scope);
      if (auth !== undefined) headers["authorization"] = auth;
    }
    return headers;
  }

  /** TLS trust roots when an extra CA was configured (else Node's default store). */
  get tlsCa(): string[] | undefined {
    return this.agents.ca;
  }

  /** Request timeouts (ms): until the response head, and of body inactivity. */
  get timeouts(): { headersTimeoutMs: number; bodyTimeoutMs: number } {
    return { headersTimeoutMs: this.timeoutMs, bodyTimeoutMs: this.bodyTimeoutMs };
  }

  /** The delay before repeating a request after a transport error, or the error to throw. */
  private transportRetry(error: unknown, opts: SendOptions, url: URL, attempt: number, unread: boolean): number {
    const code = errorCode(error);
    const timeout = code !== undefined && TIMEOUT_CODES.has(code);
    const reset = code !== undefined && RESET_CODES.has(code);
    const where = `${opts.method} ${url.origin}${url.pathname}`;
    if ((timeout || reset) && unread) {
      const verdict = retryVerdict(this.retry, attempt, undefined);
      if (verdict.retry) return verdict.delayMs;
    }
    if (timeout) throw new OciError("OCI_TIMEOUT", `${where} timed out after ${attempt} attempt(s)`, { cause: error });
    if (error instanceof OciError) throw error;
    const body = opts.body;
    if (body instanceof Readable && body.errored instanceof OciError) throw body.errored;
    if (isPlainHttpAnswer(error)) throw new OciError("OCI_TLS_FAILED", plainHttpAnswerMessage(where, url.host), { cause: error });
    if (code !== undefined && isTlsErrorCode(code)) throw new OciError("OCI_TLS_FAILED", tlsFailure(where, code), { cause: error });
    if (reset) {
      // A streamed body cannot be replayed here; `copy` retries the whole blob transfer.
      throw new OciError("OCI_RETRY_EXHAUSTED", `${where}: connection failed ${attempt} time(s)`, { cause: error });
    }
    throw new OciError("OCI_HTTP_ERROR", `${where} failed (${code ?? "transport error"})`, { cause: error });
  }

  /** The delay before repeating a request answered 429/5xx, or the error to throw (`OCI_RATE_LIMITED` for 429). */
  private statusRetry(res: HttpResponse, opts: SendOptions, url: URL, attempt: number, unread: boolean): number {
    const status = res.statusCode;
    const requested = parseRetryAfter(headerValue(res, "retry-after"));
    discard(res);
    const where = `${opts.method} ${url.origin}${url.pathname}`;
    if (!unread) {
      // The streamed body is spent: the caller (`copy`) repeats the transfer with a fresh stream.
      throw new OciError("OCI_RETRY_EXHAUSTED", `${where} answered ${describeRetryableStatus(status)} to a streamed upload that cannot be replayed here`);
    }
    const verdict = retryVerdict(this.retry, attempt, requested);
    if (verdict.retry) return verdict.delayMs;
    const code: OciErrorCode = status === 429 ? "OCI_RATE_LIMITED" : "OCI_RETRY_EXHAUSTED";
    throw new OciError(code, `${where} answered ${describeRetryableStatus(status)}; ${verdict.reason}`);
  }

  private redirectTarget(res: HttpResponse, url: URL, redirects: number): URL {
    const location = headerValue(res, "location");
    discard(res);
    return this.checkedRedirect(url, location, redirects);
  }

  /**
   * The checked next URL of a redirect from `url` to `location` (hop number
   * `redirects`): at most 5 hops, no downgrade, plain HTTP only to loopback with plainHttp.
   * @throws OciError `OCI_RESPONSE_INVALID` (no Location), `OCI_REDIRECT_REFUSED`.
   */
  checkedRedirect(url: URL, location: string | undefined, redirects: number): URL {
    if (location === undefined) throw new OciError("OCI_RESPONSE_INVALID", `redirect without Location from ${url.origin}`);
    if (redirects > MAX_REDIRECTS) throw new OciError("OCI_REDIRECT_REFUSED", `more than ${MAX_REDIRECTS} redirects`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new OciError("OCI_REDIRECT_REFUSED", `redirect to an invalid URL`);
    }
    const refused = refusedHop(url, next, this.plainHttp);
    if (refused !== undefined) throw new OciError("OCI_REDIRECT_REFUSED", `refusing redirect to ${next.protocol}//${next.host}: ${refused}`);
    return next;
  }

  /**
   * A URL the registry handed us for the next request of an upload (`Location`),
   * resolved against `requestUrl` and checked by the origin rules.
   * @throws OciError `OCI_RESPONSE_INVALID` (absent), `OCI_PLAIN_HTTP_REFUSED` (refused hop).
   */
  nextLocation(res: HttpResponse, requestUrl: URL): URL {
    const location = headerValue(res, "location");
    if (location === undefined) throw new OciError("OCI_RESPONSE_INVALID", `upload session without Location from ${this.registry}`);
    let next: URL;
    try {
      next = new URL(location, requestUrl);
    } catch {
      throw new OciError("OCI_RESPONSE_INVALID", `upload Location from ${this.registry} is not a URL`);
    }
    const refused = refusedHop(requestUrl, next, this.plainHttp);
    if (refused !== undefined) throw new OciError("OCI_PLAIN_HTTP_REFUSED", `upload location ${next.protocol}//${next.host} refused: ${refused}`);
    return next;
  }

  /** Read a small response body whole, bounded by `max` bytes. @throws OciError `OCI_BODY_TOO_LARGE`, body errors. */
  async readSmallBody(res: HttpResponse, max: number, label: string): Promise<Buffer> {
    const declared = Number(res.headers["content-length"]);
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

  /** The registry error codes of an error body (`MANIFEST_UNKNOWN`, ...), never its raw text. */
  async errorCodes(res: HttpResponse, method: string, what: string): Promise<string[]> {
    if (method === "HEAD") {
      discard(res);
      return [];
    }
    const body = await this.readSmallBody(res, MAX_ERROR_BODY_BYTES, `error body of ${what}`);
    try {
      const parsed = JSON.parse(body.toString("utf8")) as { errors?: Array<{ code?: unknown }> };
      return (parsed.errors ?? []).map((e) => e.code).filter((c): c is string => typeof c === "string" && /^[A-Z_]{1,64}$/.test(c));
    } catch {
      return [];
    }
  }

  /** An error for an unexpected status, with the registry's error codes (never its raw body). */
  async statusError(res: HttpResponse, method: string, requested: URL, what: string): Promise<OciError> {
    const status = res.statusCode;
    // The URL that answered: a redirect target when the session followed one.
    const url = res.url ?? requested;
    const list = await this.errorCodes(res, method, what);
    const codes = list.length > 0 ? ` (${list.join(", ")})` : "";
    let code: OciErrorCode = "OCI_HTTP_ERROR";
    if (status === 404) code = "OCI_NOT_FOUND";
    else if (status === 401 || status === 403) code = "OCI_AUTH_FAILED";
    if (!sameOrigin(url, this.base)) {
      // Another origin the registry sent us to (a blob redirect to a storage host or CDN, an upload Location):
      // named by its origin only, since its path and query may carry a signed token. A 404 there is not the
      // registry saying the content is gone.
      const where = `${what}: ${method} on ${url.origin} (another origin, where registry ${this.registry} sent it by a redirect or upload Location)`;
      const fix =
        `fix: the registry still points at this content but ${url.origin} does not serve it (its storage out of sync, or a signed URL that expired): ` +
        `retry; if it persists, report it to the operator of ${this.registry}, naming ${url.origin}`;
      if (status === 404) return new OciError(code, `${where} answered HTTP 404: the redirect target answered 404; expected the content the registry pointed at; ${fix}`);
      return new OciError(code, `${where} answered HTTP ${status}${codes}; expected 2xx; ${fix}`);
    }
    return new OciError(code, `${what}: ${method} ${url.origin}${url.pathname} returned HTTP ${status}${codes}`);
  }

  /** {@link exchange} with authorization, requiring one of `expected`. @throws OciError from {@link statusError}. */
  async send(opts: SendOptions, expected: number[], what: string): Promise<HttpResponse> {
    const res = await this.exchange(opts, true);
    if (!expected.includes(res.statusCode)) throw await this.statusError(res, opts.method, opts.url, what);
    return res;
  }

  /** True when `url` may be contacted at all (the plain-HTTP rule). */
  allows(url: URL): boolean {
    return schemeAllowed(url, this.plainHttp);
  }
}

/**
 * `OCI_TLS_FAILED` text: what failed (the Node/OpenSSL code, never its raw
 * text alone), what was expected and how to fix it (docs/oci.md "Error codes").
 */
function tlsFailure(where: string, code: string): string {
  const untrusted = /SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|CERT_UNTRUSTED/.test(code);
  const found = untrusted ? "a certificate this machine does not trust" : code.includes("ALTNAME") ? "a certificate for another host name" : code.includes("EXPIRED") ? "an expired certificate" : "a TLS handshake failure";
  return (
    `${where}: TLS failed (${code}): expected a certificate issued for this host by a CA this machine trusts, found ${found}; ` +
    "fix: for a registry signed by a private CA set NODE_EXTRA_CA_CERTS=<ca.pem> (Node reads it at start); for a loopback registry without TLS pass --plain-http"
  );
}
