/**
 * The anonymous read probe of the privacy gate (docs/release-publish.md
 * "The privacy gate"): `GET <registry>/v2/<path>/tags/list` without credentials, following
 * the registry's Bearer challenge anonymously (OCI distribution spec
 * "Listing Tags"; Docker registry token authentication), so that only a
 * refusal after the anonymous token flow counts as evidence. A bare first 401
 * proves nothing: GHCR hands anonymous tokens even for public packages.
 * Rate limits (429) and server errors are waited out within the retry budget
 * (`src/oci/retry.ts`); past it the probe fails closed.
 */
import type { Repository } from "../contract/reference.js";
import { OciError } from "../oci/errors.js";
import { refusedHop, requirePlainHttpAllowed } from "../oci/origin.js";
import { parseChallenges, parseTokenResponse, type AuthChallenge as OciAuthChallenge } from "../oci/registry-auth.js";
import { HttpAgents, discard, headerValue, headerValues, isPlainHttpAnswer, plainHttpAnswerMessage, sendRequest, type HttpResponse } from "../oci/registry-http.js";
import { RETRYABLE_STATUS, parseRetryAfter, retryPolicy, retryVerdict, sleep, type RetryPolicy } from "../oci/retry.js";
import { networkReason } from "../github/network-reason.js";
import { PrivacyError } from "./errors.js";

const DEFAULT_TIMEOUT_MS = 20_000;
const MAX_TOKEN_BODY_BYTES = 64 * 1024;

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
        // A registry without TLS on this port: say so (and the fix), not OpenSSL's words or "no HTTP status".
        if (isPlainHttpAnswer(error)) throw new OciError("OCI_TLS_FAILED", plainHttpAnswerMessage(`anonymous read probe GET ${url.origin}${url.pathname}`, url.host), { cause: error });
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
    if (error instanceof OciError && error.code === "OCI_TLS_FAILED") throw error;
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
 *   not https, an unreadable token response); OciError `OCI_PLAIN_HTTP_REFUSED`,
 *   `OCI_TLS_FAILED` (the registry answered plain HTTP to TLS: pass --plain-http for a loopback registry).
 */
/** The fix of `PRIVACY_ANONYMOUS_READ`: what the expectation is, where it comes from, and what to do. */
const ANONYMOUS_READ_FIX =
  "; releases are read and written only in a private repository, one that refuses an anonymous reader (the privacy gate: docs/release-publish.md); fix: if the repository is yours, make the registry require credentials for every read (ghcr.io: the package's settings, Change visibility -> Private; a self-hosted registry: turn on its authentication, e.g. the distribution registry's auth section), then rerun; if it is not, ask its publisher to make it private";

export async function probeAnonymousRead(
  repository: Repository,
  options: { plainHttp?: boolean; timeoutMs?: number; retry?: Partial<RetryPolicy> } = {},
): Promise<AnonymousProbe> {
  if (repository.kind !== "registry") throw new PrivacyError("PRIVACY_REPOSITORY_UNSUPPORTED", `${repository.repository} is not a registry repository`);
  const plainHttp = options.plainHttp === true;
  requirePlainHttpAllowed(repository, plainHttp);
  const probe: ProbeOptions = { plainHttp, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, retry: retryPolicy(options.retry) };
  const url = `${plainHttp ? "http" : "https"}://${repository.registry}/v2/${repository.path}/tags/list`;
  const first = await anonymousGet(new URL(url), {}, probe, 0);
  if ("error" in first) {
    throw new PrivacyError(
      "PRIVACY_NO_STATUS",
      `anonymous read probe of ${url} got no HTTP status (${first.error}); failing closed: check that the registry at ${repository.registry} is running and reachable from here (the privacy gate reads nothing until the registry has answered it)`,
    );
  }
  if (first.gaveUp !== undefined) throw gaveUpError(`anonymous read probe of ${url}`, first);
  if (first.status === 200) {
    throw new PrivacyError("PRIVACY_ANONYMOUS_READ", `the registry serves the tag list of ${repository.repository} anonymously (HTTP 200 without any credentials)${ANONYMOUS_READ_FIX}`);
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
      `the registry serves the tag list of ${repository.repository} to an anonymous token (HTTP 200 after the Bearer challenge without credentials)${ANONYMOUS_READ_FIX}`,
    );
  }
  if (retry.status === 401 || retry.status === 403) return { absent: false, evidence: { url, challenge: "bearer", refusedAt: "tags", status: retry.status } };
  if (retry.status === 404) return { absent: true, url };
  throw new PrivacyError("PRIVACY_ANONYMOUS_CHECK_FAILED", `anonymous read probe of ${url} with an anonymous token answered HTTP ${retry.status}; failing closed`, { httpStatus: retry.status });
}
