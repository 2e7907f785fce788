/**
 * The privacy gate (docs/release-publish.md "The privacy gate"; the
 * GitHub REST API "Get a package for a user/organization").
 *
 * Owns: the positive evidence that a repository is private before any
 * sensitive write (stage, publish, every bind) and before any read (fetch).
 *
 * - `ghcr.io/<owner>/<package>`: the GitHub Packages API, through the one
 *   GitHub client `src/github/api.ts` (base URL `GITHUB_API_URL`, token `GH_TOKEN`), must
 *   report the owner as a `User` or `Organization`, the container package with
 *   the expected identity, `visibility` exactly `private` and no linked
 *   repository. Absent + bootstrap: the caller's bootstrap callback pushes the
 *   zero-layer bootstrap artifact, then the lookup runs again and must give
 *   positive evidence.
 * - every registry repository (ghcr.io included): an anonymous read of
 *   `/v2/<path>/tags/list` must be refused after following the registry's
 *   Bearer challenge without credentials (GHCR hands out anonymous tokens even
 *   for public packages, so a first bare 401 proves nothing):
 *   `./anonymous-probe.ts`.
 * - `oci-layout:<dir>`: the directory is not a symlink, is owned by the
 *   current uid and has no group/other permission bits (created 0700 when
 *   bootstrapping).
 *
 * Everything else fails closed with a {@link PrivacyError} carrying its own
 * code. The token never appears in argv, logs or error text. Rate limits
 * (the API's and the registry's) are waited out within a bounded budget
 * (`src/oci/retry.ts`); past it the gate fails closed with `PRIVACY_RATE_LIMITED`.
 */
import { shellWord } from "../contract/grammar.js";
import { lstat } from "node:fs/promises";
import { resolve as resolvePath } from "node:path";
import type { JsonValue } from "../contract/canonical-json.js";
import { GHCR_HOST, isGhcrHost, isLoopbackHost, type Repository } from "../contract/reference.js";
import type { RetryPolicy } from "../oci/retry.js";
import { requirePlainHttpAllowed } from "../oci/origin.js";
import type { GitHubApiAnswer, GitHubClient } from "../github/api.js";
import { probeAnonymousRead, type AnonymousReadEvidence } from "./anonymous-probe.js";
import { PrivacyError } from "./errors.js";
import { makeDirectory, pathTooLong } from "../contract/directory.js";

export { PrivacyError, type PrivacyErrorCode } from "./errors.js";
export { parseWwwAuthenticate, probeAnonymousRead, type AnonymousProbe, type AnonymousReadEvidence, type AuthChallenge } from "./anonymous-probe.js";

/** Environment variables the gate reads (a subset of `process.env`). */
export type PrivacyEnv = Readonly<Record<string, string | undefined>>;

/** Options of {@link requirePrivate}. */
export interface PrivacyOptions {
  /**
   * Bootstrap callback: when the package (or registry repository) is absent,
   * it is called once to push the zero-layer bootstrap artifact to tag
   * `private-bootstrap` (docs/release-publish.md); the lookup then runs again. For an
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

/** Positive evidence from the GitHub Packages API (docs/release-publish.md). */
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

/** The GitHub Packages container registry host. */
export const GHCR_REGISTRY = GHCR_HOST;
/**
 * Test hook: a loopback `host:port` registry that is treated like ghcr.io
 * (the Packages API check is added for it). It can only add checks, and is
 * ignored unless the host is loopback.
 */
export const GHCR_REGISTRY_OVERRIDE_ENV = "HERMES_PLUGIN_KIT_GHCR_REGISTRY";


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
  requirePlainHttpAllowed(repository, plainHttp);
  if (isGitHubPackagesRegistry(repository, env)) {
    const githubPackage = await requirePrivatePackage(repository, options);
    const probe = await probeAnonymousRead(repository, { plainHttp, timeoutMs: options.timeoutMs, retry: options.retry });
    if (probe.absent) {
      throw new PrivacyError(
        "PRIVACY_ABSENT",
        `anonymous read of ${repository.repository} answered 404 although the packages API reports the package: the registry and the API disagree about it, so its privacy cannot be proven; fix: check that the registry host is the one the packages API (GITHUB_API_URL) answers for, and that the package has been pushed to it (a package the API lists may hold no image yet), then rerun`,
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
      `anonymous read of ${repository.repository} answered 404${bootstrapped ? " even after the bootstrap push" : ""}: the repository is absent and its privacy cannot be proven${bootstrapped ? "; fix: check that the registry keeps what the bootstrap push wrote (the same host and path, credentials that may push there), then rerun" : options.bootstrap === undefined ? "; fix: check the repository in the reference (host and path exactly as published) and that the release was pushed there; a repository is created by its publisher's first release (the check-private step's bootstrap push), never by a read" : ""}`,
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

/**
 * True when `repository` is served by GitHub Packages: host ghcr.io with any port or none (`ghcr.io:443`
 * is the same registry; writing the port must not skip the package API's evidence), or the loopback
 * test override.
 */
export function isGitHubPackagesRegistry(repository: Repository, env: PrivacyEnv = process.env): boolean {
  if (repository.kind !== "registry") return false;
  if (isGhcrHost(repository)) return true;
  const override = env[GHCR_REGISTRY_OVERRIDE_ENV];
  return override !== undefined && override !== "" && override === repository.registry && isLoopbackHost(repository.host);
}

function isObject(value: unknown): value is Record<string, JsonValue> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

// ---------------------------------------------------------------------------
// GitHub Packages evidence

/** The GitHub API module (Octokit), loaded only for a GitHub Packages repository: every other `fetch` runs without it. */
type GitHubApi = typeof import("../github/api.js");
const loadGitHubApi = (): Promise<GitHubApi> => import("../github/api.js");

function clientFromEnv(github: GitHubApi, options: PrivacyOptions): GitHubClient {
  const made = github.githubClientFromEnvironment(options.env ?? process.env, { fetchImpl: options.fetchImpl, timeoutMs: options.timeoutMs, retry: options.retry });
  if ("client" in made) return made.client;
  if (made.problem === "token-missing") throw new PrivacyError("PRIVACY_TOKEN_MISSING", "GH_TOKEN must contain the protected private-package credential (it is empty or unset)");
  throw new PrivacyError("PRIVACY_API_URL_INVALID", made.reason);
}

function apiFailure(github: GitHubApi, what: string, answer: GitHubApiAnswer): PrivacyError {
  if (answer.status === null) {
    return new PrivacyError("PRIVACY_NO_STATUS", `package API returned no verifiable HTTP status for ${what} (${answer.reason}); failing closed`);
  }
  if (answer.rateLimited !== undefined) {
    return new PrivacyError("PRIVACY_RATE_LIMITED", `package API was ${github.describeRateLimit(answer.status, answer.rateLimited)} for ${what}; privacy is unproven, failing closed (try again later)`, { httpStatus: answer.status });
  }
  return new PrivacyError("PRIVACY_API_FAILED", `package API failed closed (HTTP ${answer.status}) for ${what}`, { httpStatus: answer.status });
}

/**
 * The login of the token's user (`GET /user`), checked against
 * `[A-Za-z0-9-]+` (docs/release-publish.md; the registry username for ghcr.io).
 * @throws PrivacyError `PRIVACY_TOKEN_MISSING`, `PRIVACY_API_FAILED`, `PRIVACY_NO_STATUS`, `PRIVACY_CREDENTIAL_UNKNOWN`.
 */
export async function packageCredentialLogin(options: Omit<PrivacyOptions, "bootstrap"> = {}): Promise<string> {
  const github = await loadGitHubApi();
  const client = clientFromEnv(github, options);
  const answer = await github.callGitHubApi(client, "GET /user");
  if (answer.status !== 200) throw apiFailure(github, "GET /user", answer);
  const login = isObject(answer.data) ? answer.data["login"] : undefined;
  if (typeof login !== "string" || !/^[A-Za-z0-9-]+$/.test(login)) {
    throw new PrivacyError("PRIVACY_CREDENTIAL_UNKNOWN", "package credential owner is unknown (GET /user gave no valid login)");
  }
  return login;
}

type PackageLookup = { ownerType: "User" | "Organization"; metadata: Record<string, JsonValue> | null };

async function lookupPackage(github: GitHubApi, client: GitHubClient, owner: string, name: string): Promise<PackageLookup> {
  const ownerAnswer = await github.callGitHubApi(client, "GET /users/{username}", { username: owner });
  if (ownerAnswer.status !== 200) throw apiFailure(github, `owner ${owner}`, ownerAnswer);
  if (ownerAnswer.malformed || !isObject(ownerAnswer.data)) {
    throw new PrivacyError("PRIVACY_API_MALFORMED", `package API returned an unreadable owner document for ${owner}`);
  }
  const type = ownerAnswer.data["type"];
  if (type !== "User" && type !== "Organization") {
    throw new PrivacyError("PRIVACY_OWNER_UNKNOWN", `package owner type is unknown: expected User or Organization, found ${describeJson(type)}`);
  }
  const route = type === "Organization" ? "GET /orgs/{org}/packages/{package_type}/{package_name}" : "GET /users/{username}/packages/{package_type}/{package_name}";
  const params = type === "Organization" ? { org: owner, package_type: "container", package_name: name } : { username: owner, package_type: "container", package_name: name };
  const answer = await github.callGitHubApi(client, route, params);
  if (answer.status === 404) return { ownerType: type, metadata: null };
  if (answer.status !== 200) throw apiFailure(github, `container package ${owner}/${name}`, answer);
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
  const github = await loadGitHubApi();
  const client = clientFromEnv(github, options);
  let lookup = await lookupPackage(github, client, owner, name);
  let bootstrapped = false;
  if (lookup.metadata === null && options.bootstrap !== undefined) {
    await options.bootstrap();
    bootstrapped = true;
    lookup = await lookupPackage(github, client, owner, name);
  }
  const metadata = lookup.metadata;
  if (metadata === null) {
    throw new PrivacyError(
      "PRIVACY_ABSENT",
      `package visibility must be positively verified as private: container package ${owner}/${name} is absent${bootstrapped ? " even after the bootstrap push" : options.bootstrap === undefined ? " (reads never bootstrap)" : ""}, or GH_TOKEN may not see it (GitHub answers 404 for a private package the token cannot read); fix: check the owner and package name in the repository, and that GH_TOKEN belongs to someone who may read the package (read:packages)${bootstrapped ? ", then check that the bootstrap push went to this package" : "; a package is created by its publisher's first release (the check-private step's bootstrap push), never by a read"}, then rerun`,
    );
  }
  const packageOwner = metadata["owner"];
  const ownerLogin = isObject(packageOwner) ? packageOwner["login"] : undefined;
  if (metadata["name"] !== name || metadata["package_type"] !== "container" || typeof ownerLogin !== "string" || ownerLogin.toLowerCase() !== owner.toLowerCase()) {
    throw new PrivacyError(
      "PRIVACY_IDENTITY_MISMATCH",
      `package API returned another package identity: expected container ${JSON.stringify(name)} owned by ${JSON.stringify(owner)}, found ${describeJson(metadata["package_type"])} ${describeJson(metadata["name"])} owned by ${describeJson(ownerLogin)}; its visibility says nothing about the package asked for, so privacy is unproven; fix: check that GITHUB_API_URL is GitHub's API (default https://api.github.com; nothing in between rewrites its answers) and that the repository names the package exactly (owner/package), then rerun`,
    );
  }
  const visibility = metadata["visibility"];
  if (visibility !== "private") {
    const code = visibility === "public" ? "PRIVACY_PUBLIC" : visibility === "internal" ? "PRIVACY_INTERNAL" : "PRIVACY_VISIBILITY_UNVERIFIED";
    const fix =
      code === "PRIVACY_VISIBILITY_UNVERIFIED"
        ? "; fix: check that the GitHub API at this URL is GitHub's (GITHUB_API_URL) and that GH_TOKEN may read the package (read:packages), then rerun"
        : `; fix: if the package is yours, make it private (its settings on GitHub: Packages -> ${name} -> Package settings -> Change visibility -> Private), then rerun; if it is not, ask its publisher to`;
    throw new PrivacyError(code, `package visibility must be positively verified as private: ${owner}/${name} reports visibility ${describeJson(visibility)}${fix}`);
  }
  if ("repository" in metadata && metadata["repository"] !== null) {
    const linked = metadata["repository"];
    const fullName = isObject(linked) ? linked["full_name"] : undefined;
    throw new PrivacyError(
      "PRIVACY_LINKED",
      `private package must not be linked to a source repository: ${owner}/${name} is linked to ${describeJson(fullName ?? linked)}, and a linked package can inherit its visibility and access from that repository, so the package's own visibility does not prove who may read it (the privacy gate: docs/release-publish.md); fix: if the package is yours, publish releases to a container package that is connected to no repository (a package is connected on its settings page on GitHub, or by an org.opencontainers.image.source label on what was pushed), then rerun; if it is not, ask its publisher to`,
    );
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
// oci-layout stores


/**
 * The `oci-layout:` analogue of privacy: `dir` is a real directory (not a
 * symlink) owned by the current uid with no group/other permission bits.
 * With `create`, an absent directory is created with mode 0700.
 * @throws PrivacyError `PRIVACY_ABSENT`, `PRIVACY_LAYOUT_SYMLINK`,
 *   `PRIVACY_LAYOUT_NOT_DIRECTORY`, `PRIVACY_LAYOUT_OWNER`, `PRIVACY_LAYOUT_PERMISSIONS` (also: it or a
 *   parent cannot be searched, EACCES); IoError `IO_PATH_TOO_LONG`.
 */
export async function requirePrivateLayout(dir: string, create: boolean): Promise<LayoutEvidence> {
  const absolute = resolvePath(dir);
  let created = false;
  let stats = await lstat(absolute).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    // Privacy is unproven when the store cannot be inspected: fail closed, with the reason.
    if (error.code === "EACCES" || error.code === "EPERM") {
      throw new PrivacyError("PRIVACY_LAYOUT_PERMISSIONS", `cannot inspect layout store ${absolute}: permission denied on it or a parent directory (${error.code}); privacy is unproven, failing closed; fix: run as the store's owner, or give this user search (x) permission on its parents`);
    }
    if (error.code === "ENAMETOOLONG") throw pathTooLong(absolute, absolute, "layout store (oci-layout:)", error);
    throw new PrivacyError("PRIVACY_LAYOUT_NOT_DIRECTORY", `cannot inspect layout store ${absolute} (${error.code ?? "error"}): expected a directory`);
  });
  if (stats === null) {
    if (!create) throw new PrivacyError("PRIVACY_ABSENT", `layout store ${absolute} does not exist (reads never create it)`);
    await makeDirectory(absolute, { mode: 0o700, purpose: "layout store (oci-layout:)" });
    created = true;
    stats = await lstat(absolute);
  }
  if (stats.isSymbolicLink()) throw new PrivacyError("PRIVACY_LAYOUT_SYMLINK", `layout store ${absolute} must not be a symlink`);
  if (!stats.isDirectory()) throw new PrivacyError("PRIVACY_LAYOUT_NOT_DIRECTORY", `layout store ${absolute} must be a directory`);
  const uid = typeof process.getuid === "function" ? process.getuid() : -1;
  if (stats.uid !== uid) {
    throw new PrivacyError("PRIVACY_LAYOUT_OWNER", `layout store ${absolute} must be owned by the current user (uid ${uid}), found uid ${stats.uid}; fix: use a store directory you own (or chown it to yourself)`);
  }
  const permissions = stats.mode & 0o777;
  if ((permissions & 0o077) !== 0) {
    throw new PrivacyError(
      "PRIVACY_LAYOUT_PERMISSIONS",
      `layout store ${absolute} must have no group/other permission bits (a private store), found mode ${permissions.toString(8).padStart(4, "0")}; fix: chmod 700 ${shellWord(absolute)}`,
    );
  }
  return { dir: absolute, uid, mode: permissions.toString(8).padStart(4, "0"), created };
}

