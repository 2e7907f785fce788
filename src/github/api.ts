/**
 * The one GitHub REST client of the product: `@octokit/rest` construction,
 * the API base URL rule, request limits (timeout, body size, rate-limit
 * retries) and strictly parsed answers. The privacy gate
 * (`src/fetch/privacy.ts`, GitHub Packages API) and the GitHub release steps
 * (`release/github-release.ts`, `release/check-immutable.ts`) call GitHub
 * only through it.
 *
 * Neutral: it throws no area error for HTTP or network failures. A call
 * returns an answer ({@link GitHubApiAnswer}: a status with its body, or no
 * status), and {@link githubClientFromEnvironment} returns what is wrong with
 * the environment, so each caller raises its own code (`PRIVACY_*`,
 * `GITHUB_*`). The token never appears in argv, logs or error text
 * ({@link GitHubClient.redact}). GitHub REST API version 2022-11-28
 * ("API versions"; "Rate limits for the REST API").
 */
import { Octokit } from "@octokit/rest";
import { parseStrictJson, type JsonValue } from "../contract/canonical-json.js";
import { isLoopbackHost } from "../contract/reference.js";
import { parseRetryAfter, retryPolicy, retryVerdict, sleep, type RetryPolicy } from "../oci/retry.js";
import { networkReason } from "./network-reason.js";

export { networkReason };

/** The REST API version every request asks for (`X-GitHub-Api-Version`). */
export const GITHUB_API_VERSION = "2022-11-28";
/** Default GitHub API base URL. */
export const DEFAULT_GITHUB_API_URL = "https://api.github.com";

/** Environment variables the GitHub client reads: `GH_TOKEN`, `GITHUB_API_URL` (a subset of `process.env`). */
export type GitHubEnv = Readonly<Record<string, string | undefined>>;

/** Timeout of one GitHub API request (ms) unless the caller sets one. */
export const DEFAULT_GITHUB_TIMEOUT_MS = 20_000;
/** Largest GitHub API response body read (bytes); a larger one is `malformed`. */
const MAX_API_BODY_BYTES = 8 * 1024 * 1024;


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
export function resolveGitHubApiUrl(env: GitHubEnv): { url: string } | { error: string } {
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
  const timeoutMs = options.timeoutMs ?? DEFAULT_GITHUB_TIMEOUT_MS;
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

/** Options of {@link githubClientFromEnvironment} (passed to {@link createGitHubClient}). */
export interface GitHubClientOptions {
  /** `fetch` implementation for Octokit (default the global `fetch`). */
  fetchImpl?: typeof fetch;
  /** Timeout of each request in ms (default {@link DEFAULT_GITHUB_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** Retry budget of rate-limited requests (`src/oci/retry.ts`). */
  retry?: Partial<RetryPolicy>;
}

/** What {@link githubClientFromEnvironment} made: a client, or what is wrong (`token-missing` comes first, before anything is called). */
export type GitHubClientFromEnv = { client: GitHubClient } | { problem: "token-missing" | "api-url-invalid"; reason: string };

/**
 * A client from `GH_TOKEN` and `GITHUB_API_URL` ({@link resolveGitHubApiUrl}).
 * Nothing is called; the caller maps a `problem` to its own error code.
 */
export function githubClientFromEnvironment(env: GitHubEnv, options: GitHubClientOptions = {}): GitHubClientFromEnv {
  const token = env["GH_TOKEN"];
  if (token === undefined || token.trim() === "") return { problem: "token-missing", reason: "GH_TOKEN is empty or unset" };
  const api = resolveGitHubApiUrl(env);
  if ("error" in api) return { problem: "api-url-invalid", reason: api.error };
  return { client: createGitHubClient(api.url, token, options) };
}
