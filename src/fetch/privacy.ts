/**
 * The privacy gate (DESIGN.md section 3 "Privacy gate"; reference
 * `original-release-contract.md` section 5.1; issue 4 item 2, issue 6 item 1).
 *
 * Owns: the positive evidence that a repository is private before any
 * sensitive write (stage, publish, every bind) and before any read (fetch).
 *
 * - `ghcr.io/<owner>/<package>`: the GitHub Packages API, through the real
 *   `@octokit/rest` client (base URL `GITHUB_API_URL`, token `GH_TOKEN`), must
 *   report the owner as a `User` or `Organization`, the container package with
 *   the expected identity, `visibility` exactly `private` and no linked
 *   repository. Absent + bootstrap: the caller's bootstrap callback pushes the
 *   zero-layer bootstrap artifact, then the lookup runs again and must give
 *   positive evidence.
 * - every registry repository (ghcr.io included): an anonymous read of
 *   `/v2/<path>/tags/list` must be refused after following the registry's
 *   Bearer challenge without credentials (GHCR hands out anonymous tokens even
 *   for public packages, so a first bare 401 proves nothing).
 * - `oci-layout:<dir>`: the directory is not a symlink, is owned by the
 *   current uid and has no group/other permission bits (created 0700 when
 *   bootstrapping).
 *
 * Everything else fails closed with a {@link PrivacyError} carrying its own
 * code. The token never appears in argv, logs or error text. Rate limits
 * (the API's and the registry's) are waited out within a bounded budget
 * (`src/oci/retry.ts`); past it the gate fails closed with `PRIVACY_RATE_LIMITED`.
 */
import { lstat, mkdir } from "node:fs/promises";
import { resolve as resolvePath } from "node:path";
import { Octokit } from "@octokit/rest";
import { parseStrictJson, type JsonValue } from "../contract/canonical-json.js";
import { HermesPluginKitError } from "../contract/errors.js";
import { isLoopbackHost, type Repository } from "../contract/reference.js";
import { OciError } from "../oci/errors.js";
import { refusedHop } from "../oci/origin.js";
import { parseChallenges, type AuthChallenge as OciAuthChallenge } from "../oci/registry-auth.js";
import { HttpAgents, discard, headerValue, headerValues, sendRequest, type HttpResponse } from "../oci/registry-http.js";
import { parseTokenResponse } from "../oci/registry-session.js";
import { RETRYABLE_STATUS, parseRetryAfter, retryPolicy, retryVerdict, sleep, type RetryPolicy } from "../oci/retry.js";

/**
 * A privacy check failed closed. Codes:
 * `PRIVACY_TOKEN_MISSING` (no `GH_TOKEN`, nothing was called),
 * `PRIVACY_API_URL_INVALID` (`GITHUB_API_URL` not https, or plain http to a non-loopback host, or carrying credentials),
 * `PRIVACY_REPOSITORY_UNSUPPORTED` (a ghcr.io path without `<owner>/<package>`),
 * `PRIVACY_API_FAILED` (any HTTP status other than the expected ones; {@link PrivacyError.httpStatus} holds it),
 * `PRIVACY_NO_STATUS` (no HTTP status at all: connection refused or dropped, timeout),
 * `PRIVACY_API_MALFORMED` (a 200 whose body is not a strict JSON object),
 * `PRIVACY_OWNER_UNKNOWN` (owner `type` not `User`/`Organization`),
 * `PRIVACY_CREDENTIAL_UNKNOWN` (`GET /user` login not `[A-Za-z0-9-]+`),
 * `PRIVACY_ABSENT` (package or repository absent, without bootstrap or still after it),
 * `PRIVACY_IDENTITY_MISMATCH` (another name, package type or owner),
 * `PRIVACY_PUBLIC`, `PRIVACY_INTERNAL`, `PRIVACY_VISIBILITY_UNVERIFIED` (visibility not exactly `private`),
 * `PRIVACY_LINKED` (linked to a source repository),
 * `PRIVACY_ANONYMOUS_READ` (the tag list was served anonymously),
 * `PRIVACY_ANONYMOUS_CHECK_FAILED` (the anonymous probe got an answer that proves nothing),
 * `PRIVACY_RATE_LIMITED` (the packages API or the anonymous probe stayed rate limited past the retry budget,
 *   or asked for a longer wait: privacy unproven, try again later),
 * `PRIVACY_PLAIN_HTTP_REFUSED` (plain HTTP requested for a non-loopback host),
 * `PRIVACY_LAYOUT_SYMLINK`, `PRIVACY_LAYOUT_NOT_DIRECTORY`, `PRIVACY_LAYOUT_OWNER`, `PRIVACY_LAYOUT_PERMISSIONS`.
 */
export class PrivacyError extends HermesPluginKitError {
  /** The HTTP status behind `PRIVACY_API_FAILED` / `PRIVACY_ANONYMOUS_CHECK_FAILED`, when there was one. */
  readonly httpStatus: number | undefined;

  constructor(code: string, message: string, options: { httpStatus?: number; cause?: unknown } = {}) {
    super(code, message, options.cause === undefined ? undefined : { cause: options.cause });
    this.httpStatus = options.httpStatus;
  }
}

/** Environment variables the gate reads (a subset of `process.env`). */
export type PrivacyEnv = Readonly<Record<string, string | undefined>>;

/** Options of {@link requirePrivate}. */
export interface PrivacyOptions {
  /**
   * Bootstrap callback: when the package (or registry repository) is absent,
   * it is called once to push the zero-layer bootstrap artifact to tag
   * `private-bootstrap` (reference 2.10); the lookup then runs again. For an
   * `oci-layout:` store its presence means "create the directory 0700".
   * Without it an absent package fails with `PRIVACY_ABSENT`.
   */
  bootstrap?: () => Promise<void>;
  /** Environment (default `process.env`): `GH_TOKEN`, `GITHUB_API_URL`, `HERMES_PLUGIN_KIT_GHCR_REGISTRY`. */
  env?: PrivacyEnv;
  /** Allow plain HTTP for the anonymous registry probe (loopback hosts only). */
  plainHttp?: boolean;
  /** `fetch` implementation for the GitHub API client (default the global `fetch`). */
  fetchImpl?: typeof fetch;
  /** Timeout of each HTTP request in ms (default 20 000). */
  timeoutMs?: number;
  /** Retry budget of rate-limited requests (GitHub API and the anonymous probe; see `src/oci/retry.ts`). */
  retry?: Partial<RetryPolicy>;
}

/** Positive evidence from the GitHub Packages API (reference 5.1). */
export interface GitHubPackageEvidence {
  apiUrl: string;
  owner: string;
  ownerType: "User" | "Organization";
  package: string;
  packageType: "container";
  visibility: "private";
  repository: null;
  /** Whether the bootstrap callback ran before the evidence was found. */
  bootstrapped: boolean;
}

/** Evidence that an anonymous read of the tag list is refused. */
export interface AnonymousReadEvidence {
  /** The probed URL, `<scheme>://<registry>/v2/<path>/tags/list`. */
  url: string;
  /** The challenge the registry answered the first anonymous request with. */
  challenge: "bearer" | "basic" | "none";
  /** Where the refusal happened: the first request, the anonymous token request, or the retry with the anonymous token. */
  refusedAt: "challenge" | "token" | "tags";
  /** The refusing status. */
  status: 401 | 403;
}

/** Evidence for an `oci-layout:` store. */
export interface LayoutEvidence {
  /** Absolute directory path. */
  dir: string;
  uid: number;
  /** Permission bits in octal, e.g. `0700`. */
  mode: string;
  /** Whether the gate created the directory (bootstrap). */
  created: boolean;
}

/** What {@link requirePrivate} proved. */
export type PrivacyEvidence =
  | { kind: "github-packages"; repository: string; bootstrapped: boolean; githubPackage: GitHubPackageEvidence; anonymousRead: AnonymousReadEvidence }
  | { kind: "registry"; repository: string; bootstrapped: boolean; githubPackage: null; anonymousRead: AnonymousReadEvidence; note: string }
  | { kind: "layout"; repository: string; bootstrapped: boolean; layout: LayoutEvidence };

/** Note recorded for registries without a packages API. */
export const NO_PACKAGES_API_NOTE =
  "no GitHub Packages API for this registry: the refused anonymous read of the tag list is the only privacy evidence";

/** The REST API version every request asks for (`X-GitHub-Api-Version`). */
export const GITHUB_API_VERSION = "2022-11-28";
/** Default GitHub API base URL. */
export const DEFAULT_GITHUB_API_URL = "https://api.github.com";
/** The GitHub Packages container registry host. */
export const GHCR_REGISTRY = "ghcr.io";
/**
 * Test hook: a loopback `host:port` registry that is treated like ghcr.io
 * (the Packages API check is added for it). It can only add checks, and is
 * ignored unless the host is loopback.
 */
export const GHCR_REGISTRY_OVERRIDE_ENV = "HERMES_PLUGIN_KIT_GHCR_REGISTRY";

const DEFAULT_TIMEOUT_MS = 20_000;
const MAX_API_BODY_BYTES = 8 * 1024 * 1024;
const MAX_TOKEN_BODY_BYTES = 64 * 1024;

/**
 * Require positive evidence that `repository` is private; see the module
 * comment for the rules per repository kind. Read-only unless `bootstrap` is
 * given (then the callback may push the bootstrap artifact, or the layout
 * directory is created 0700).
 *
 * @returns the evidence; never returns without it.
 * @throws PrivacyError with one of the codes listed on {@link PrivacyError}.
 */
export async function requirePrivate(repository: Repository, options: PrivacyOptions = {}): Promise<PrivacyEvidence> {
  const env = options.env ?? process.env;
  if (repository.kind === "layout") {
    const layout = await requirePrivateLayout(repository.dir, options.bootstrap !== undefined);
    return { kind: "layout", repository: repository.repository, bootstrapped: layout.created, layout };
  }
  const plainHttp = options.plainHttp === true;
  if (plainHttp && !isLoopbackHost(repository.host)) {
    throw new PrivacyError("PRIVACY_PLAIN_HTTP_REFUSED", `plain HTTP is allowed only for loopback registries, found ${repository.host}`);
  }
  if (isGitHubPackagesRegistry(repository, env)) {
    const githubPackage = await requirePrivatePackage(repository, options);
    const probe = await probeAnonymousRead(repository, { plainHttp, timeoutMs: options.timeoutMs, retry: options.retry });
    if (probe.absent) {
      throw new PrivacyError(
        "PRIVACY_ABSENT",
        `anonymous read of ${repository.repository} answered 404 although the packages API reports the package: its privacy cannot be proven`,
      );
    }
    return { kind: "github-packages", repository: repository.repository, bootstrapped: githubPackage.bootstrapped, githubPackage, anonymousRead: probe.evidence };
  }
  let bootstrapped = false;
  let probe = await probeAnonymousRead(repository, { plainHttp, timeoutMs: options.timeoutMs, retry: options.retry });
  if (probe.absent && options.bootstrap !== undefined) {
    await options.bootstrap();
    bootstrapped = true;
    probe = await probeAnonymousRead(repository, { plainHttp, timeoutMs: options.timeoutMs, retry: options.retry });
  }
  if (probe.absent) {
    throw new PrivacyError(
      "PRIVACY_ABSENT",
      `anonymous read of ${repository.repository} answered 404${bootstrapped ? " even after the bootstrap push" : ""}: the repository is absent and its privacy cannot be proven`,
    );
  }
  return { kind: "registry", repository: repository.repository, bootstrapped, githubPackage: null, anonymousRead: probe.evidence, note: NO_PACKAGES_API_NOTE };
}

/**
 * {@link requirePrivate} for reads (fetch, publish, every bind): never
 * bootstraps, never writes.
 * @throws PrivacyError (see {@link PrivacyError}).
 */
export async function requirePrivateForRead(repository: Repository, options: Omit<PrivacyOptions, "bootstrap"> = {}): Promise<PrivacyEvidence> {
  const { env, plainHttp, fetchImpl, timeoutMs, retry } = options;
  return requirePrivate(repository, { env, plainHttp, fetchImpl, timeoutMs, retry });
}

/** True when `repository` is served by GitHub Packages (ghcr.io, or the loopback test override). */
export function isGitHubPackagesRegistry(repository: Repository, env: PrivacyEnv = process.env): boolean {
  if (repository.kind !== "registry") return false;
  if (repository.registry.toLowerCase() === GHCR_REGISTRY) return true;
  const override = env[GHCR_REGISTRY_OVERRIDE_ENV];
  return override !== undefined && override !== "" && override === repository.registry && isLoopbackHost(repository.host);
}

// ---------------------------------------------------------------------------
// GitHub API client (shared with release/github-release.ts and release/check-immutable.ts)

/** A configured GitHub API client. */
export interface GitHubClient {
  octokit: Octokit;
  /** Base URL without trailing slash. */
  apiUrl: string;
  /** The token, kept only to redact it from any text we emit. */
  readonly redact: (text: string) => string;
}

/**
 * One GitHub API answer: an HTTP status with its strictly parsed JSON body, or
 * no status at all. `rateLimited` is set when the final answer was GitHub's
 * rate limit (after the bounded retries of {@link createGitHubClient}).
 */
export type GitHubApiAnswer =
  | { status: number; data: JsonValue | undefined; malformed: boolean; rateLimited?: RateLimitAnswer }
  | { status: null; reason: string };

/** A GitHub rate-limit answer: what the server asked for. */
export interface RateLimitAnswer {
  /** The wait the server asked for (ms): `retry-after`, else until `x-ratelimit-reset`; undefined when neither. */
  requestedMs: number | undefined;
  /** `x-ratelimit-reset` as an ISO time, when given. */
  resetsAt?: string;
}

/**
 * GitHub REST "Rate limits for the REST API": a 429, or a 403 carrying
 * `retry-after` or `x-ratelimit-remaining: 0`, is a rate limit (primary or
 * secondary); wait `retry-after` seconds, else until `x-ratelimit-reset`.
 * @returns undefined when the answer is not a rate limit.
 */
export function githubRateLimit(status: number, header: (name: string) => string | undefined | null, now = Date.now()): RateLimitAnswer | undefined {
  const retryAfter = header("retry-after") ?? undefined;
  const remaining = header("x-ratelimit-remaining") ?? undefined;
  if (status !== 429 && !(status === 403 && (retryAfter !== undefined || remaining === "0"))) return undefined;
  const reset = Number(header("x-ratelimit-reset") ?? NaN);
  const resetsAt = Number.isFinite(reset) && reset > 0 ? new Date(reset * 1000).toISOString() : undefined;
  let requestedMs = parseRetryAfter(retryAfter, now);
  if (requestedMs === undefined && remaining === "0" && resetsAt !== undefined) requestedMs = Math.max(0, reset * 1000 - now);
  return resetsAt === undefined ? { requestedMs } : { requestedMs, resetsAt };
}

/** Text for a rate-limit failure: `rate limited (HTTP 429; resets at ...)`. */
export function describeRateLimit(status: number, limit: RateLimitAnswer): string {
  return `rate limited (HTTP ${status}${limit.resetsAt === undefined ? "" : `; the limit resets at ${limit.resetsAt}`})`;
}

/**
 * Resolve `GITHUB_API_URL` (default `https://api.github.com`): https, or plain
 * http to a loopback host only; no credentials in the URL.
 * @returns the base URL without trailing slash, or an error text.
 */
export function resolveGitHubApiUrl(env: PrivacyEnv): { url: string } | { error: string } {
  const raw = env["GITHUB_API_URL"];
  const text = raw === undefined || raw === "" ? DEFAULT_GITHUB_API_URL : raw;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: "GITHUB_API_URL is not a URL" };
  }
  if (url.username !== "" || url.password !== "") return { error: "GITHUB_API_URL must not carry credentials" };
  if (url.search !== "" || url.hash !== "") return { error: "GITHUB_API_URL must not carry a query or fragment" };
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
    return { error: `GITHUB_API_URL must use https (plain http only for loopback hosts), found ${url.protocol}//${url.host}` };
  }
  return { url: url.toString().replace(/\/+$/, "") };
}

/**
 * Build an `@octokit/rest` client for `apiUrl` with `token`: headers
 * `Accept: application/vnd.github+json` and `X-GitHub-Api-Version: 2022-11-28`, silent log, no Octokit
 * retry/throttling plugins, each request bounded by `timeoutMs` (default 20 000 ms). A rate-limit answer
 * ({@link githubRateLimit}) is repeated within the retry budget (`retry`, default 5 attempts, at most 10 s
 * per wait); a longer wait is not attempted and the answer goes back to the caller as `rateLimited`.
 */
export function createGitHubClient(
  apiUrl: string,
  token: string,
  options: { fetchImpl?: typeof fetch; timeoutMs?: number; retry?: Partial<RetryPolicy> } = {},
): GitHubClient {
  const baseFetch = options.fetchImpl ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const policy = retryPolicy(options.retry);
  const boundedFetch: typeof fetch = async (input, init) => {
    // Rate limits (GitHub REST "Rate limits"): the request was not processed, so it is repeated,
    // a bounded number of times, after the wait GitHub asks for (OCI layer's retry rule).
    for (let attempt = 1; ; attempt += 1) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
      const response = await baseFetch(input, { ...init, signal });
      const limit = githubRateLimit(response.status, (name) => response.headers.get(name));
      if (limit === undefined) return response;
      const verdict = retryVerdict(policy, attempt, limit.requestedMs);
      if (!verdict.retry) return response;
      await response.body?.cancel().catch(() => undefined);
      await sleep(verdict.delayMs);
    }
  };
  const silent = () => undefined;
  const octokit = new Octokit({
    auth: token,
    baseUrl: apiUrl,
    userAgent: "hermes-plugin-kit",
    log: { debug: silent, info: silent, warn: silent, error: silent },
    request: { fetch: boundedFetch, redirect: "error" },
  });
  octokit.hook.before("request", (options) => {
    options.headers["accept"] = "application/vnd.github+json";
    options.headers["x-github-api-version"] = GITHUB_API_VERSION;
  });
  const redact = (text: string) => (token.length >= 4 ? text.split(token).join("[redacted]") : text);
  return { octokit, apiUrl, redact };
}

/**
 * Call `route` (an octokit route such as `GET /users/{username}`) and return
 * the HTTP status with the body parsed by the strict JSON reader (duplicate
 * keys refused: `malformed: true`). Never throws for HTTP or network
 * failures: a missing status is `{status: null}`.
 */
export async function callGitHubApi(client: GitHubClient, route: string, params: Record<string, unknown> = {}): Promise<GitHubApiAnswer> {
  try {
    const response = await client.octokit.request(route, { ...params, request: { parseSuccessResponseBody: false } });
    const status = response.status;
    const stream = response.data as unknown;
    const bytes = await readWebStream(stream, MAX_API_BODY_BYTES);
    if (bytes === null) return { status, data: undefined, malformed: true };
    if (bytes.length === 0) return { status, data: undefined, malformed: false };
    try {
      return { status, data: parseStrictJson(bytes, { requireObject: false, rejectIntegralFloats: false }), malformed: false };
    } catch {
      return { status, data: undefined, malformed: true };
    }
  } catch (error) {
    const candidate = error as { status?: unknown; response?: { status?: unknown; data?: unknown; headers?: Record<string, unknown> } } | null;
    if (candidate !== null && typeof candidate === "object" && candidate.response !== undefined && typeof candidate.response?.status === "number") {
      const { data, status } = candidate.response as { data?: unknown; status: number };
      const headers = candidate.response.headers ?? {};
      const limit = githubRateLimit(status, (name) => (typeof headers[name] === "string" ? (headers[name] as string) : undefined));
      const answer: GitHubApiAnswer = { status, data: isJsonLike(data) ? (data as JsonValue) : undefined, malformed: false };
      if (limit !== undefined) answer.rateLimited = limit;
      return answer;
    }
    return { status: null, reason: client.redact(networkReason(error)) };
  }
}

function isJsonLike(value: unknown): boolean {
  return value === null || ["string", "number", "boolean", "object"].includes(typeof value);
}

function networkReason(error: unknown): string {
  if (!(error instanceof Error)) return "unknown error";
  const cause = (error as { cause?: unknown }).cause;
  const inner = cause instanceof Error ? ((cause as { cause?: unknown }).cause instanceof Error ? ((cause as { cause: Error }).cause.message) : cause.message) : undefined;
  const text = inner ?? error.message;
  return text.length > 200 ? text.slice(0, 197) + "..." : text;
}

async function readWebStream(stream: unknown, limit: number): Promise<Buffer | null> {
  if (stream === null || stream === undefined || stream === "") return Buffer.alloc(0);
  if (typeof (stream as ReadableStream).getReader !== "function") return null;
  const reader = (stream as ReadableStream<Uint8Array>).getReader();
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  }
  return Buffer.concat(chunks, total);
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// ---------------------------------------------------------------------------
// GitHub Packages evidence

function clientFromEnv(options: PrivacyOptions): GitHubClient {
  const env = options.env ?? process.env;
  const token = env["GH_TOKEN"];
  if (token === undefined || token.trim() === "") {
    throw new PrivacyError("PRIVACY_TOKEN_MISSING", "GH_TOKEN must contain the protected private-package credential (it is empty or unset)");
  }
  const api = resolveGitHubApiUrl(env);
  if ("error" in api) throw new PrivacyError("PRIVACY_API_URL_INVALID", api.error);
  return createGitHubClient(api.url, token, { fetchImpl: options.fetchImpl, timeoutMs: options.timeoutMs, retry: options.retry });
}

function apiFailure(what: string, answer: GitHubApiAnswer): PrivacyError {
  if (answer.status === null) {
    return new PrivacyError("PRIVACY_NO_STATUS", `package API returned no verifiable HTTP status for ${what} (${answer.reason}); failing closed`);
  }
  if (answer.rateLimited !== undefined) {
    return new PrivacyError("PRIVACY_RATE_LIMITED", `package API was ${describeRateLimit(answer.status, answer.rateLimited)} for ${what}; privacy is unproven, failing closed (try again later)`, { httpStatus: answer.status });
  }
  return new PrivacyError("PRIVACY_API_FAILED", `package API failed closed (HTTP ${answer.status}) for ${what}`, { httpStatus: answer.status });
}

/**
 * The login of the token's user (`GET /user`), checked against
 * `[A-Za-z0-9-]+` (reference 5.1 session setup; the registry username for ghcr.io).
 * @throws PrivacyError `PRIVACY_TOKEN_MISSING`, `PRIVACY_API_FAILED`, `PRIVACY_NO_STATUS`, `PRIVACY_CREDENTIAL_UNKNOWN`.
 */
export async function packageCredentialLogin(options: Omit<PrivacyOptions, "bootstrap"> = {}): Promise<string> {
  const client = clientFromEnv(options);
  const answer = await callGitHubApi(client, "GET /user");
  if (answer.status !== 200) throw apiFailure("GET /user", answer);
  const login = isObject(answer.data) ? answer.data["login"] : undefined;
  if (typeof login !== "string" || !/^[A-Za-z0-9-]+$/.test(login)) {
    throw new PrivacyError("PRIVACY_CREDENTIAL_UNKNOWN", "package credential owner is unknown (GET /user gave no valid login)");
  }
  return login;
}

type PackageLookup = { ownerType: "User" | "Organization"; metadata: Record<string, JsonValue> | null };

async function lookupPackage(client: GitHubClient, owner: string, name: string): Promise<PackageLookup> {
  const ownerAnswer = await callGitHubApi(client, "GET /users/{username}", { username: owner });
  if (ownerAnswer.status !== 200) throw apiFailure(`owner ${owner}`, ownerAnswer);
  if (ownerAnswer.malformed || !isObject(ownerAnswer.data)) {
    throw new PrivacyError("PRIVACY_API_MALFORMED", `package API returned an unreadable owner document for ${owner}`);
  }
  const type = ownerAnswer.data["type"];
  if (type !== "User" && type !== "Organization") {
    throw new PrivacyError("PRIVACY_OWNER_UNKNOWN", `package owner type is unknown: expected User or Organization, found ${describeJson(type)}`);
  }
  const route = type === "Organization" ? "GET /orgs/{org}/packages/{package_type}/{package_name}" : "GET /users/{username}/packages/{package_type}/{package_name}";
  const params = type === "Organization" ? { org: owner, package_type: "container", package_name: name } : { username: owner, package_type: "container", package_name: name };
  const answer = await callGitHubApi(client, route, params);
  if (answer.status === 404) return { ownerType: type, metadata: null };
  if (answer.status !== 200) throw apiFailure(`container package ${owner}/${name}`, answer);
  if (answer.malformed || !isObject(answer.data)) {
    throw new PrivacyError("PRIVACY_API_MALFORMED", `package API returned an unreadable package document for ${owner}/${name} (expected a JSON object without duplicate keys)`);
  }
  return { ownerType: type, metadata: answer.data };
}

function describeJson(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 80 ? text.slice(0, 77) + "..." : text;
}

/**
 * The GitHub Packages half of the gate for a ghcr.io-style repository.
 * @throws PrivacyError (see {@link PrivacyError}).
 */
export async function requirePrivatePackage(repository: Repository, options: PrivacyOptions = {}): Promise<GitHubPackageEvidence> {
  if (repository.kind !== "registry") throw new PrivacyError("PRIVACY_REPOSITORY_UNSUPPORTED", `${repository.repository} is not a registry repository`);
  const slash = repository.path.indexOf("/");
  if (slash <= 0) {
    throw new PrivacyError("PRIVACY_REPOSITORY_UNSUPPORTED", `a GitHub Packages repository must be ${repository.registry}/<owner>/<package>, found ${repository.repository}`);
  }
  const owner = repository.path.slice(0, slash);
  const name = repository.path.slice(slash + 1);
  const client = clientFromEnv(options);
  let lookup = await lookupPackage(client, owner, name);
  let bootstrapped = false;
  if (lookup.metadata === null && options.bootstrap !== undefined) {
    await options.bootstrap();
    bootstrapped = true;
    lookup = await lookupPackage(client, owner, name);
  }
  const metadata = lookup.metadata;
  if (metadata === null) {
    throw new PrivacyError(
      "PRIVACY_ABSENT",
      `package visibility must be positively verified as private: container package ${owner}/${name} is absent${bootstrapped ? " even after the bootstrap push" : options.bootstrap === undefined ? " (reads never bootstrap)" : ""}`,
    );
  }
  const packageOwner = metadata["owner"];
  const ownerLogin = isObject(packageOwner) ? packageOwner["login"] : undefined;
  if (metadata["name"] !== name || metadata["package_type"] !== "container" || typeof ownerLogin !== "string" || ownerLogin.toLowerCase() !== owner.toLowerCase()) {
    throw new PrivacyError(
      "PRIVACY_IDENTITY_MISMATCH",
      `package API returned another package identity: expected container ${JSON.stringify(name)} owned by ${JSON.stringify(owner)}, found ${describeJson(metadata["package_type"])} ${describeJson(metadata["name"])} owned by ${describeJson(ownerLogin)}`,
    );
  }
  const visibility = metadata["visibility"];
  if (visibility !== "private") {
    const code = visibility === "public" ? "PRIVACY_PUBLIC" : visibility === "internal" ? "PRIVACY_INTERNAL" : "PRIVACY_VISIBILITY_UNVERIFIED";
    throw new PrivacyError(code, `package visibility must be positively verified as private: ${owner}/${name} reports visibility ${describeJson(visibility)}`);
  }
  if ("repository" in metadata && metadata["repository"] !== null) {
    const linked = metadata["repository"];
    const fullName = isObject(linked) ? linked["full_name"] : undefined;
    throw new PrivacyError("PRIVACY_LINKED", `private package must not be linked to a source repository: ${owner}/${name} is linked to ${describeJson(fullName ?? linked)}`);
  }
  return {
    apiUrl: client.apiUrl,
    owner,
    ownerType: lookup.ownerType,
    package: name,
    packageType: "container",
    visibility: "private",
    repository: null,
    bootstrapped,
  };
}

// ---------------------------------------------------------------------------
// Anonymous read probe

/** Outcome of {@link probeAnonymousRead}: refused (evidence), or absent (404: nothing proven). */
export type AnonymousProbe = { absent: false; evidence: AnonymousReadEvidence } | { absent: true; url: string };

/** A parsed `WWW-Authenticate` challenge (the OCI layer's shape). */
export type AuthChallenge = OciAuthChallenge;

/**
 * Parse a `WWW-Authenticate` header value into challenges (RFC 9110 section
 * 11.6.1): the OCI layer's one challenge parser (`parseChallenges`).
 * @throws OciError `OCI_RESPONSE_INVALID` for a parameter given twice with different values.
 */
export function parseWwwAuthenticate(header: string): AuthChallenge[] {
  return parseChallenges(header);
}

interface HttpAnswer {
  status: number;
  /** Every `WWW-Authenticate` value. */
  challenges: string[];
  body: Buffer;
  /** Set when the answer was 429/5xx past the retry budget: why the probe gave up. */
  gaveUp?: string;
}

/**
 * One anonymous GET (never any credentials), retried on 429/5xx per the OCI
 * layer's retry rule (`Retry-After` honoured within the budget). The body is
 * read up to `bodyLimit` bytes (0: discarded).
 */
async function anonymousGet(url: URL, headers: Record<string, string>, options: ProbeOptions, bodyLimit: number): Promise<HttpAnswer | { error: string }> {
  const agents = new HttpAgents();
  try {
    for (let attempt = 1; ; attempt += 1) {
      let res: HttpResponse;
      try {
        res = await sendRequest(url, {
          method: "GET",
          headers: { "user-agent": "hermes-plugin-kit", accept: "application/json", ...headers },
          agent: agents.for(url),
          headersTimeoutMs: options.timeoutMs,
          bodyTimeoutMs: options.timeoutMs,
        });
      } catch (error) {
        return { error: networkReason(error) };
      }
      const status = res.statusCode;
      if (RETRYABLE_STATUS.has(status)) {
        const requested = parseRetryAfter(headerValue(res, "retry-after"));
        discard(res);
        const verdict = retryVerdict(options.retry, attempt, requested);
        if (verdict.retry) {
          await sleep(verdict.delayMs);
          continue;
        }
        return { status, challenges: [], body: Buffer.alloc(0), gaveUp: verdict.reason };
      }
      const challenges = headerValues(res, "www-authenticate");
      return { status, challenges, body: await readBounded(res, bodyLimit) };
    }
  } catch (error) {
    if (error instanceof OciError) return { error: error.message };
    return { error: networkReason(error) };
  } finally {
    agents.destroy();
  }
}

async function readBounded(res: HttpResponse, limit: number): Promise<Buffer> {
  if (limit === 0) {
    discard(res);
    return Buffer.alloc(0);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res.body) {
    total += (chunk as Buffer).length;
    if (total > limit) {
      res.body.destroy();
      return Buffer.alloc(0);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, total);
}

/** Options of the anonymous probe: plain HTTP (loopback only), per-request timeout (ms), retry budget. */
interface ProbeOptions {
  plainHttp: boolean;
  timeoutMs: number;
  retry: RetryPolicy;
}

/** A 429/5xx answer past the retry budget: `PRIVACY_RATE_LIMITED` for 429, else `PRIVACY_ANONYMOUS_CHECK_FAILED`. */
function gaveUpError(what: string, answer: HttpAnswer): PrivacyError {
  if (answer.status === 429) {
    return new PrivacyError("PRIVACY_RATE_LIMITED", `${what} was rate limited (HTTP 429) and ${answer.gaveUp ?? "gave up"}; privacy is unproven, failing closed (try again later)`, { httpStatus: 429 });
  }
  return new PrivacyError("PRIVACY_ANONYMOUS_CHECK_FAILED", `${what} answered HTTP ${answer.status} and ${answer.gaveUp ?? "gave up"}; failing closed`, { httpStatus: answer.status });
}

/**
 * Probe an anonymous read of `<registry>/v2/<path>/tags/list`. Refused means:
 * 403 at once; 401 with only a Basic challenge; or, after a Bearer challenge,
 * the anonymous token request answered 401/403, or the retry with the
 * anonymous token answered 401/403. 404 (at once or after the token) is
 * `absent`: nothing is proven.
 *
 * @throws PrivacyError `PRIVACY_ANONYMOUS_READ` (200: tags served anonymously),
 *   `PRIVACY_NO_STATUS` (no HTTP status), `PRIVACY_ANONYMOUS_CHECK_FAILED`
 *   (any other answer: another status, an unknown challenge, a realm that is
 *   not https, an unreadable token response), `PRIVACY_PLAIN_HTTP_REFUSED`.
 */
export async function probeAnonymousRead(
  repository: Repository,
  options: { plainHttp?: boolean; timeoutMs?: number; retry?: Partial<RetryPolicy> } = {},
): Promise<AnonymousProbe> {
  if (repository.kind !== "registry") throw new PrivacyError("PRIVACY_REPOSITORY_UNSUPPORTED", `${repository.repository} is not a registry repository`);
  const plainHttp = options.plainHttp === true;
  if (plainHttp && !isLoopbackHost(repository.host)) {
    throw new PrivacyError("PRIVACY_PLAIN_HTTP_REFUSED", `plain HTTP is allowed only for loopback registries, found ${repository.host}`);
  }
  const probe: ProbeOptions = { plainHttp, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, retry: retryPolicy(options.retry) };
  const url = `${plainHttp ? "http" : "https"}://${repository.registry}/v2/${repository.path}/tags/list`;
  const first = await anonymousGet(new URL(url), {}, probe, 0);
  if ("error" in first) {
    throw new PrivacyError("PRIVACY_NO_STATUS", `anonymous read probe of ${url} got no HTTP status (${first.error}); failing closed`);
  }
  if (first.gaveUp !== undefined) throw gaveUpError(`anonymous read probe of ${url}`, first);
  if (first.status === 200) {
    throw new PrivacyError("PRIVACY_ANONYMOUS_READ", `the registry serves the tag list of ${repository.repository} anonymously (HTTP 200 without any credentials)`);
  }
  if (first.status === 403) return { absent: false, evidence: { url, challenge: "none", refusedAt: "challenge", status: 403 } };
  if (first.status === 404) return { absent: true, url };
  if (first.status !== 401) {
    throw new PrivacyError("PRIVACY_ANONYMOUS_CHECK_FAILED", `anonymous read probe of ${url} answered HTTP ${first.status}, which proves nothing; failing closed`, { httpStatus: first.status });
  }
  let challenges: AuthChallenge[];
  try {
    challenges = first.challenges.flatMap((value) => parseChallenges(value));
  } catch (error) {
    throw new PrivacyError("PRIVACY_ANONYMOUS_CHECK_FAILED", `anonymous read probe of ${url}: ${(error as Error).message}; failing closed`, { httpStatus: 401 });
  }
  const bearer = challenges.find((challenge) => challenge.scheme === "bearer");
  if (bearer === undefined) {
    if (challenges.length > 0 && challenges.every((challenge) => challenge.scheme === "basic")) {
      return { absent: false, evidence: { url, challenge: "basic", refusedAt: "challenge", status: 401 } };
    }
    throw new PrivacyError(
      "PRIVACY_ANONYMOUS_CHECK_FAILED",
      `anonymous read probe of ${url} answered 401 without a Bearer or Basic challenge; the anonymous flow cannot be checked; failing closed`,
      { httpStatus: 401 },
    );
  }
  return probeBearer(repository, url, bearer, probe);
}

/** The anonymous Bearer flow of {@link probeAnonymousRead}: token without credentials, then the tag list with it. */
async function probeBearer(repository: Repository & { kind: "registry" }, url: string, bearer: AuthChallenge, probe: ProbeOptions): Promise<AnonymousProbe> {
  let realm: URL;
  try {
    realm = new URL(bearer.params["realm"] ?? "");
  } catch {
    throw new PrivacyError("PRIVACY_ANONYMOUS_CHECK_FAILED", `the Bearer challenge of ${url} has no usable realm; failing closed`);
  }
  const refused = refusedHop(new URL(url), realm, probe.plainHttp);
  if (refused !== undefined) {
    throw new PrivacyError("PRIVACY_ANONYMOUS_CHECK_FAILED", `the Bearer realm ${realm.protocol}//${realm.host} of ${url} is not https (plain http only for loopback with --plain-http): ${refused}; failing closed`);
  }
  if (bearer.params["service"] !== undefined) realm.searchParams.set("service", bearer.params["service"]);
  realm.searchParams.set("scope", bearer.params["scope"] ?? `repository:${repository.path}:pull`);
  const tokenAnswer = await anonymousGet(realm, {}, probe, MAX_TOKEN_BODY_BYTES);
  if ("error" in tokenAnswer) {
    throw new PrivacyError("PRIVACY_NO_STATUS", `anonymous token request to ${realm.host} got no HTTP status (${tokenAnswer.error}); failing closed`);
  }
  if (tokenAnswer.gaveUp !== undefined) throw gaveUpError(`anonymous token request to ${realm.host}`, tokenAnswer);
  if (tokenAnswer.status === 401 || tokenAnswer.status === 403) {
    return { absent: false, evidence: { url, challenge: "bearer", refusedAt: "token", status: tokenAnswer.status } };
  }
  if (tokenAnswer.status !== 200) {
    throw new PrivacyError("PRIVACY_ANONYMOUS_CHECK_FAILED", `anonymous token request to ${realm.host} answered HTTP ${tokenAnswer.status}; failing closed`, { httpStatus: tokenAnswer.status });
  }
  let anonymousToken: string;
  try {
    anonymousToken = parseTokenResponse(tokenAnswer.body, realm.origin).token;
  } catch {
    throw new PrivacyError("PRIVACY_ANONYMOUS_CHECK_FAILED", `anonymous token response from ${realm.host} holds no single token; failing closed`);
  }
  const retry = await anonymousGet(new URL(url), { authorization: `Bearer ${anonymousToken}` }, probe, 0);
  if ("error" in retry) {
    throw new PrivacyError("PRIVACY_NO_STATUS", `anonymous read probe of ${url} with an anonymous token got no HTTP status (${retry.error}); failing closed`);
  }
  if (retry.gaveUp !== undefined) throw gaveUpError(`anonymous read probe of ${url} with an anonymous token`, retry);
  if (retry.status === 200) {
    throw new PrivacyError(
      "PRIVACY_ANONYMOUS_READ",
      `the registry serves the tag list of ${repository.repository} to an anonymous token (HTTP 200 after the Bearer challenge without credentials)`,
    );
  }
  if (retry.status === 401 || retry.status === 403) return { absent: false, evidence: { url, challenge: "bearer", refusedAt: "tags", status: retry.status } };
  if (retry.status === 404) return { absent: true, url };
  throw new PrivacyError("PRIVACY_ANONYMOUS_CHECK_FAILED", `anonymous read probe of ${url} with an anonymous token answered HTTP ${retry.status}; failing closed`, { httpStatus: retry.status });
}

// ---------------------------------------------------------------------------
// oci-layout stores

/**
 * The `oci-layout:` analogue of privacy: `dir` is a real directory (not a
 * symlink) owned by the current uid with no group/other permission bits.
 * With `create`, an absent directory is created with mode 0700.
 * @throws PrivacyError `PRIVACY_ABSENT`, `PRIVACY_LAYOUT_SYMLINK`,
 *   `PRIVACY_LAYOUT_NOT_DIRECTORY`, `PRIVACY_LAYOUT_OWNER`, `PRIVACY_LAYOUT_PERMISSIONS`.
 */
export async function requirePrivateLayout(dir: string, create: boolean): Promise<LayoutEvidence> {
  const absolute = resolvePath(dir);
  let created = false;
  let stats = await lstat(absolute).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw new PrivacyError("PRIVACY_LAYOUT_NOT_DIRECTORY", `cannot inspect layout store ${absolute} (${error.code ?? "error"})`);
  });
  if (stats === null) {
    if (!create) throw new PrivacyError("PRIVACY_ABSENT", `layout store ${absolute} does not exist (reads never create it)`);
    await mkdir(absolute, { recursive: true, mode: 0o700 });
    created = true;
    stats = await lstat(absolute);
  }
  if (stats.isSymbolicLink()) throw new PrivacyError("PRIVACY_LAYOUT_SYMLINK", `layout store ${absolute} must not be a symlink`);
  if (!stats.isDirectory()) throw new PrivacyError("PRIVACY_LAYOUT_NOT_DIRECTORY", `layout store ${absolute} must be a directory`);
  const uid = typeof process.getuid === "function" ? process.getuid() : -1;
  if (stats.uid !== uid) {
    throw new PrivacyError("PRIVACY_LAYOUT_OWNER", `layout store ${absolute} must be owned by the current user (uid ${uid}), found uid ${stats.uid}`);
  }
  const permissions = stats.mode & 0o777;
  if ((permissions & 0o077) !== 0) {
    throw new PrivacyError(
      "PRIVACY_LAYOUT_PERMISSIONS",
      `layout store ${absolute} must have no group/other permission bits, found mode ${permissions.toString(8).padStart(4, "0")}`,
    );
  }
  return { dir: absolute, uid, mode: permissions.toString(8).padStart(4, "0"), created };
}
