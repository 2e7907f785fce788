/**
 * The metadata-only, immutable GitHub Release (docs/release-publish.md,
 * "Commands"; docs/architecture.md, "Release: steps and data flow").
 *
 * Owns: `release github-release`. For tag `v<V>` whose remote ref (peeled)
 * equals the release SHA, create the release as a draft with no assets whose
 * body holds the bundle and receipt references, verify the draft, publish it,
 * then verify `immutable: true`, zero assets and exactly the two references.
 * On resume it only verifies (and publishes a verified draft it created
 * before); it never edits a published release, never deletes, never
 * recreates. A 422 on publishing is terminal.
 *
 * All calls go through the real `@octokit/rest` client of
 * `src/github/api.ts` (`GITHUB_API_URL`, token `GH_TOKEN`; no retry
 * plugin). Owner and repository come from `GITHUB_REPOSITORY`.
 */
import { HermesPluginKitError } from "../src/contract/errors.js";
import { isGitSha, isStableSemver } from "../src/contract/grammar.js";
import { parseReference } from "../src/contract/reference.js";
import { DEFAULT_PACKAGE } from "../src/contract/constants.js";
import type { JsonValue } from "../src/contract/canonical-json.js";
import { callGitHubApi, describeRateLimit, githubClientFromEnvironment, type GitHubApiAnswer, type GitHubClient, type GitHubEnv } from "../src/github/api.js";

/** The codes of {@link GitHubReleaseError}. */
export type GitHubReleaseErrorCode =
  | "GITHUB_TOKEN_MISSING"
  | "GITHUB_API_URL_INVALID"
  | "GITHUB_REPOSITORY_INVALID"
  | "GITHUB_INPUT_INVALID"
  | "GITHUB_API_FAILED"
  | "GITHUB_RATE_LIMITED"
  | "GITHUB_NO_STATUS"
  | "GITHUB_API_MALFORMED"
  | "GITHUB_TAG_MISMATCH"
  | "GITHUB_RELEASE_AMBIGUOUS"
  | "GITHUB_RELEASE_MISMATCH"
  | "GITHUB_RELEASE_HAS_ASSETS"
  | "GITHUB_RELEASE_NOT_IMMUTABLE"
  | "GITHUB_RELEASE_IMMUTABLE_REJECTED"
  | "IMMUTABLE_RELEASES_DISABLED";

/**
 * A GitHub Release or repository-setting step failed closed. Codes:
 * `GITHUB_TOKEN_MISSING` (no `GH_TOKEN`; nothing was called),
 * `GITHUB_API_URL_INVALID`, `GITHUB_REPOSITORY_INVALID` (`GITHUB_REPOSITORY` not `owner/repo`),
 * `GITHUB_INPUT_INVALID` (version, SHA or references malformed),
 * `GITHUB_API_FAILED` (unexpected HTTP status; {@link GitHubReleaseError.httpStatus}),
 * `GITHUB_RATE_LIMITED` (still rate limited after the bounded retries, or asked for a longer wait: try again later),
 * `GITHUB_NO_STATUS` (no HTTP status), `GITHUB_API_MALFORMED` (unreadable body),
 * `GITHUB_TAG_MISMATCH` (remote tag absent or not at the release SHA),
 * `GITHUB_RELEASE_AMBIGUOUS` (more than one release for the tag),
 * `GITHUB_RELEASE_MISMATCH` (an existing release differs: tag, body references, prerelease),
 * `GITHUB_RELEASE_HAS_ASSETS`, `GITHUB_RELEASE_NOT_IMMUTABLE`,
 * `GITHUB_RELEASE_IMMUTABLE_REJECTED` (a 422 when publishing: terminal),
 * `IMMUTABLE_RELEASES_DISABLED` (repository setting off or unreadable).
 */
export class GitHubReleaseError extends HermesPluginKitError<GitHubReleaseErrorCode> {
  /** The HTTP status behind the failure, when there was one. */
  readonly httpStatus: number | undefined;

  constructor(code: GitHubReleaseErrorCode, message: string, options: { httpStatus?: number } = {}) {
    super(code, message);
    this.httpStatus = options.httpStatus;
  }
}

export type { GitHubEnv } from "../src/github/api.js";

/** Options shared by the GitHub steps. */
export interface GitHubStepOptions {
  /** Environment (default `process.env`). */
  env?: GitHubEnv;
  /** `fetch` implementation for octokit (default the global `fetch`). */
  fetchImpl?: typeof fetch;
  /** Timeout of each request in ms (default 20 000). */
  timeoutMs?: number;
}

/** `owner/repo` from `GITHUB_REPOSITORY`. */
export interface GitHubRepository {
  owner: string;
  repo: string;
}

const REPOSITORY_RE = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})$/;
const MAX_RELEASE_PAGES = 10;

/**
 * Parse `GITHUB_REPOSITORY` (`owner/repo`).
 * @throws GitHubReleaseError `GITHUB_REPOSITORY_INVALID`.
 */
export function githubRepositoryFromEnv(env: GitHubEnv): GitHubRepository {
  const value = env["GITHUB_REPOSITORY"];
  const match = typeof value === "string" ? REPOSITORY_RE.exec(value) : null;
  if (match === null || match[2] === "." || match[2] === "..") {
    throw new GitHubReleaseError("GITHUB_REPOSITORY_INVALID", `GITHUB_REPOSITORY must be <owner>/<repo>, found ${value === undefined ? "nothing" : JSON.stringify(value)}`);
  }
  return { owner: match[1]!, repo: match[2]! };
}

/**
 * Build the API client from `GH_TOKEN` and `GITHUB_API_URL`; the token check
 * comes first, before anything is called.
 * @throws GitHubReleaseError `GITHUB_TOKEN_MISSING`, `GITHUB_API_URL_INVALID`.
 */
export function githubClientFromEnv(options: GitHubStepOptions): GitHubClient {
  const made = githubClientFromEnvironment(options.env ?? process.env, { fetchImpl: options.fetchImpl, timeoutMs: options.timeoutMs });
  if ("client" in made) return made.client;
  if (made.problem === "token-missing") throw new GitHubReleaseError("GITHUB_TOKEN_MISSING", "GH_TOKEN is empty or unset; aborting before any GitHub API call");
  throw new GitHubReleaseError("GITHUB_API_URL_INVALID", made.reason);
}

/** Map a non-expected answer to a coded error. */
export function githubApiFailure(what: string, answer: GitHubApiAnswer): GitHubReleaseError {
  if (answer.status === null) return new GitHubReleaseError("GITHUB_NO_STATUS", `GitHub API returned no HTTP status for ${what} (${answer.reason}); failing closed`);
  if (answer.rateLimited !== undefined) {
    return new GitHubReleaseError("GITHUB_RATE_LIMITED", `GitHub API was ${describeRateLimit(answer.status, answer.rateLimited)} for ${what}; failing closed (try again later)`, { httpStatus: answer.status });
  }
  return new GitHubReleaseError("GITHUB_API_FAILED", `GitHub API failed closed (HTTP ${answer.status}) for ${what}`, { httpStatus: answer.status });
}

function objectOf(answer: GitHubApiAnswer, what: string): Record<string, JsonValue> {
  if (answer.status === null || answer.malformed || answer.data === null || typeof answer.data !== "object" || Array.isArray(answer.data)) {
    throw new GitHubReleaseError("GITHUB_API_MALFORMED", `GitHub API returned an unreadable document for ${what}`);
  }
  return answer.data as Record<string, JsonValue>;
}

function arrayOf(answer: GitHubApiAnswer, what: string): JsonValue[] {
  if (answer.status === null || answer.malformed || !Array.isArray(answer.data)) {
    throw new GitHubReleaseError("GITHUB_API_MALFORMED", `GitHub API returned an unreadable list for ${what}`);
  }
  return answer.data;
}

// ---------------------------------------------------------------------------
// Release body

/** The two digest references a release body carries. */
export interface ReleaseReferences {
  bundle_reference: string;
  receipt_reference: string;
}

/**
 * The release body: a deterministic Markdown text whose only digest
 * references are `bundle_reference` and `receipt_reference`, each on its own
 * line `- <key>: \`<reference>\``.
 */
export function releaseBody(title: string, references: ReleaseReferences): string {
  return [
    title,
    "",
    "Metadata-only release: no assets. The tested bytes live in a private OCI repository;",
    "consumers pin these two digest references (registry tags are discovery aids only):",
    "",
    `- bundle_reference: \`${references.bundle_reference}\``,
    `- receipt_reference: \`${references.receipt_reference}\``,
    "",
  ].join("\n");
}

/**
 * Read the two references back from a release body: exactly one labelled line
 * each and no other `sha256:` digest anywhere in the body (CRLF tolerated).
 * @returns the references, or `undefined` when the body does not hold exactly them.
 */
export function readReleaseReferences(body: unknown): ReleaseReferences | undefined {
  if (typeof body !== "string") return undefined;
  const lines = body.replace(/\r\n/g, "\n").split("\n");
  const found: Partial<Record<keyof ReleaseReferences, string[]>> = {};
  for (const line of lines) {
    const match = /^- (bundle_reference|receipt_reference): `([^`\s]+)`$/.exec(line);
    if (match !== null) (found[match[1] as keyof ReleaseReferences] ??= []).push(match[2]!);
  }
  const digests = body.match(/sha256:/g) ?? [];
  if (found.bundle_reference?.length !== 1 || found.receipt_reference?.length !== 1 || digests.length !== 2) return undefined;
  return { bundle_reference: found.bundle_reference[0]!, receipt_reference: found.receipt_reference[0]! };
}

// ---------------------------------------------------------------------------
// Remote tag

/**
 * The commit `refs/tags/<tag>` points at on GitHub (annotated tags peeled
 * through `git/tags/{sha}`, at most 5 levels), or `undefined` when absent.
 * @throws GitHubReleaseError `GITHUB_API_FAILED`, `GITHUB_NO_STATUS`, `GITHUB_API_MALFORMED`.
 */
export async function githubTagCommit(client: GitHubClient, repository: GitHubRepository, tag: string): Promise<string | undefined> {
  const answer = await callGitHubApi(client, "GET /repos/{owner}/{repo}/git/ref/{ref}", { ...repository, ref: `tags/${tag}` });
  if (answer.status === 404) return undefined;
  if (answer.status !== 200) throw githubApiFailure(`ref tags/${tag}`, answer);
  const ref = objectOf(answer, `ref tags/${tag}`);
  if (ref["ref"] !== `refs/tags/${tag}`) {
    throw new GitHubReleaseError("GITHUB_API_MALFORMED", `GitHub API answered ref ${JSON.stringify(ref["ref"])} for refs/tags/${tag}`);
  }
  let object = ref["object"];
  for (let depth = 0; depth < 5; depth += 1) {
    if (object === null || typeof object !== "object" || Array.isArray(object) || typeof object["sha"] !== "string" || !isGitSha(object["sha"])) {
      throw new GitHubReleaseError("GITHUB_API_MALFORMED", `GitHub API answered an unreadable object for refs/tags/${tag}`);
    }
    if (object["type"] === "commit") return object["sha"];
    if (object["type"] !== "tag") throw new GitHubReleaseError("GITHUB_TAG_MISMATCH", `refs/tags/${tag} points at a ${JSON.stringify(object["type"])}, not a commit`);
    const tagAnswer = await callGitHubApi(client, "GET /repos/{owner}/{repo}/git/tags/{tag_sha}", { ...repository, tag_sha: object["sha"] });
    if (tagAnswer.status !== 200) throw githubApiFailure(`tag object ${object["sha"]}`, tagAnswer);
    object = objectOf(tagAnswer, `tag object ${object["sha"]}`)["object"];
  }
  throw new GitHubReleaseError("GITHUB_TAG_MISMATCH", `refs/tags/${tag} nests tag objects more than 5 deep`);
}

// ---------------------------------------------------------------------------
// The step

/** Input of {@link createGitHubRelease}. */
export interface GitHubReleaseInput {
  /** Stable SemVer `V`; the tag is `v<V>`. */
  version: string;
  /** The release commit (40 lowercase hex) the remote tag must point at. */
  releaseSha: string;
  /** Digest-pinned bundle reference. */
  bundleReference: string;
  /** Digest-pinned receipt reference. */
  receiptReference: string;
  /** Package name for the title `<name> <V>` (default `hermes-plugin-kit`). */
  packageName?: string;
  /**
   * Commit the remote tag points at, peeled (e.g. `git ls-remote` through
   * `release/git.ts`), or `undefined` when absent. Default: read through the
   * GitHub API (`git/ref/tags/v<V>`).
   */
  remoteTagCommit?: () => Promise<string | undefined>;
}

/** Result of {@link createGitHubRelease} (printed as JSON by the CLI). */
export interface GitHubReleaseResult {
  repository: string;
  tag: string;
  release_id: number;
  html_url: string | null;
  immutable: true;
  assets: 0;
  bundle_reference: string;
  receipt_reference: string;
  /** `created` (draft created and published now), `published-draft` (a verified earlier draft published now), `verified` (resume: already published, only verified). */
  outcome: "created" | "published-draft" | "verified";
}

interface ReleaseView {
  id: number;
  tagName: string;
  draft: boolean;
  prerelease: boolean;
  immutable: unknown;
  body: unknown;
  assets: number;
  htmlUrl: string | null;
}

function releaseView(document: Record<string, JsonValue>, what: string): ReleaseView {
  const id = document["id"];
  const assets = document["assets"];
  if (typeof id !== "number" || !Number.isSafeInteger(id) || typeof document["tag_name"] !== "string" || typeof document["draft"] !== "boolean") {
    throw new GitHubReleaseError("GITHUB_API_MALFORMED", `GitHub API returned an unreadable release for ${what}`);
  }
  return {
    id,
    tagName: document["tag_name"],
    draft: document["draft"],
    prerelease: document["prerelease"] === true,
    immutable: document["immutable"],
    body: document["body"],
    assets: Array.isArray(assets) ? assets.length : -1,
    htmlUrl: typeof document["html_url"] === "string" ? document["html_url"] : null,
  };
}

function validateInput(input: GitHubReleaseInput): { tag: string; references: ReleaseReferences; title: string } {
  if (!isStableSemver(input.version)) throw new GitHubReleaseError("GITHUB_INPUT_INVALID", `version must be a stable SemVer, found ${JSON.stringify(input.version)}`);
  if (!isGitSha(input.releaseSha)) throw new GitHubReleaseError("GITHUB_INPUT_INVALID", `release SHA must be 40 lowercase hex, found ${JSON.stringify(input.releaseSha)}`);
  let bundle: string;
  let receipt: string;
  try {
    bundle = parseReference(input.bundleReference).reference;
    receipt = parseReference(input.receiptReference).reference;
  } catch (error) {
    throw new GitHubReleaseError("GITHUB_INPUT_INVALID", `release references must be digest-pinned: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (bundle === receipt) throw new GitHubReleaseError("GITHUB_INPUT_INVALID", "bundle and receipt references must differ");
  const name = input.packageName ?? DEFAULT_PACKAGE;
  if (!/^[A-Za-z0-9@/._-]{1,214}$/.test(name)) throw new GitHubReleaseError("GITHUB_INPUT_INVALID", `package name ${JSON.stringify(name)} is not usable in a release title`);
  return { tag: `v${input.version}`, references: { bundle_reference: bundle, receipt_reference: receipt }, title: `${name} ${input.version}` };
}

/**
 * Create (or, on resume, verify) the immutable metadata-only release; see the
 * module comment for the sequence.
 *
 * @returns the verified release.
 * @throws GitHubReleaseError with one of the codes on {@link GitHubReleaseError}.
 */
export async function createGitHubRelease(input: GitHubReleaseInput, options: GitHubStepOptions = {}): Promise<GitHubReleaseResult> {
  const env = options.env ?? process.env;
  const { tag, references, title } = validateInput(input);
  const client = githubClientFromEnv(options);
  const repository = githubRepositoryFromEnv(env);
  const ctx: ReleaseContext = { client, repository, tag, references };

  const remote = input.remoteTagCommit !== undefined ? await input.remoteTagCommit() : await githubTagCommit(client, repository, tag);
  if (remote !== input.releaseSha) {
    throw new GitHubReleaseError(
      "GITHUB_TAG_MISMATCH",
      `remote tag ${tag} must point at the release SHA ${input.releaseSha}, found ${remote === undefined ? "no tag" : remote}`,
    );
  }

  // Resume: a published release for the tag is only verified.
  const byTag = await callGitHubApi(client, "GET /repos/{owner}/{repo}/releases/tags/{tag}", { ...repository, tag });
  if (byTag.status === 200) {
    const view = releaseView(objectOf(byTag, `release ${tag}`), `release ${tag}`);
    if (view.draft) return publishDraft(ctx, view, "published-draft");
    return releaseResult(ctx, view.id, await verifyPublished(ctx, view.id), "verified");
  }
  if (byTag.status !== 404) throw githubApiFailure(`release for ${tag}`, byTag);

  const matches = await releasesInList(ctx);
  if (matches.length > 1) {
    throw new GitHubReleaseError("GITHUB_RELEASE_AMBIGUOUS", `found ${matches.length} releases for ${tag} (ids ${matches.map((m) => m.id).join(", ")}); refusing to choose, edit or delete`);
  }
  const existing = matches[0];
  if (existing !== undefined) {
    if (!existing.draft) return releaseResult(ctx, existing.id, await verifyPublished(ctx, existing.id), "verified");
    return publishDraft(ctx, existing, "published-draft");
  }

  const body = releaseBody(title, references);
  const created = await callGitHubApi(client, "POST /repos/{owner}/{repo}/releases", {
    ...repository,
    tag_name: tag,
    name: title,
    body,
    draft: true,
    prerelease: false,
    generate_release_notes: false,
  });
  if (created.status !== 201) throw githubApiFailure(`creating the draft release for ${tag}`, created);
  const draft = releaseView(objectOf(created, `draft release ${tag}`), `draft release ${tag}`);
  if (!draft.draft) throw new GitHubReleaseError("GITHUB_RELEASE_MISMATCH", `release ${draft.id} for ${tag} was not created as a draft`);
  return publishDraft(ctx, draft, "created");
}

/** What every call of one GitHub Release step shares. */
interface ReleaseContext {
  client: GitHubClient;
  repository: GitHubRepository;
  tag: string;
  references: { bundle_reference: string; receipt_reference: string };
}

/** The release body holds exactly the two references, for the tag, not a prerelease. @throws GitHubReleaseError `GITHUB_RELEASE_MISMATCH`. */
function expectBody(ctx: ReleaseContext, view: ReleaseView, state: string): void {
  if (view.tagName !== ctx.tag) throw new GitHubReleaseError("GITHUB_RELEASE_MISMATCH", `${state} release ${view.id} is for tag ${JSON.stringify(view.tagName)}, expected ${ctx.tag}`);
  if (view.prerelease) throw new GitHubReleaseError("GITHUB_RELEASE_MISMATCH", `${state} release ${view.id} is a prerelease`);
  const found = readReleaseReferences(view.body);
  if (found === undefined || found.bundle_reference !== ctx.references.bundle_reference || found.receipt_reference !== ctx.references.receipt_reference) {
    throw new GitHubReleaseError(
      "GITHUB_RELEASE_MISMATCH",
      `${state} release ${view.id} for ${ctx.tag} must hold exactly the bundle reference ${ctx.references.bundle_reference} and the receipt reference ${ctx.references.receipt_reference}, found ${found === undefined ? "other or additional references" : `${found.bundle_reference} and ${found.receipt_reference}`}; it is never edited`,
    );
  }
}

/** The release has zero assets (its list and its count). @throws GitHubReleaseError `GITHUB_RELEASE_HAS_ASSETS` and the API codes. */
async function expectNoAssets(ctx: ReleaseContext, view: ReleaseView, state: string): Promise<void> {
  const answer = await callGitHubApi(ctx.client, "GET /repos/{owner}/{repo}/releases/{release_id}/assets", { ...ctx.repository, release_id: view.id, per_page: 100 });
  if (answer.status !== 200) throw githubApiFailure(`assets of release ${view.id}`, answer);
  const assets = arrayOf(answer, `assets of release ${view.id}`);
  if (assets.length !== 0 || view.assets !== 0) {
    throw new GitHubReleaseError("GITHUB_RELEASE_HAS_ASSETS", `${state} release ${view.id} for ${ctx.tag} must have zero assets, found ${Math.max(assets.length, view.assets)}`);
  }
}

/** Verify a published release: not a draft, the body, zero assets, immutable. @returns its HTML URL. */
async function verifyPublished(ctx: ReleaseContext, id: number): Promise<GitHubReleaseResult["html_url"]> {
  const answer = await callGitHubApi(ctx.client, "GET /repos/{owner}/{repo}/releases/{release_id}", { ...ctx.repository, release_id: id });
  if (answer.status !== 200) throw githubApiFailure(`release ${id}`, answer);
  const view = releaseView(objectOf(answer, `release ${id}`), `release ${id}`);
  if (view.draft) throw new GitHubReleaseError("GITHUB_RELEASE_MISMATCH", `release ${id} for ${ctx.tag} is still a draft after publishing`);
  expectBody(ctx, view, "published");
  await expectNoAssets(ctx, view, "published");
  if (view.immutable !== true) {
    throw new GitHubReleaseError("GITHUB_RELEASE_NOT_IMMUTABLE", `published release ${id} for ${ctx.tag} must be immutable, found immutable ${JSON.stringify(view.immutable ?? null)}`);
  }
  return view.htmlUrl;
}

/** The step's result for release `id`. */
function releaseResult(ctx: ReleaseContext, id: number, htmlUrl: string | null, outcome: GitHubReleaseResult["outcome"]): GitHubReleaseResult {
  return {
    repository: `${ctx.repository.owner}/${ctx.repository.repo}`,
    tag: ctx.tag,
    release_id: id,
    html_url: htmlUrl,
    immutable: true,
    assets: 0,
    bundle_reference: ctx.references.bundle_reference,
    receipt_reference: ctx.references.receipt_reference,
    outcome,
  };
}

/** Verify a draft, publish it (a 422 is terminal), then verify the published release. */
async function publishDraft(ctx: ReleaseContext, view: ReleaseView, outcome: "created" | "published-draft"): Promise<GitHubReleaseResult> {
  expectBody(ctx, view, "draft");
  await expectNoAssets(ctx, view, "draft");
  const answer = await callGitHubApi(ctx.client, "PATCH /repos/{owner}/{repo}/releases/{release_id}", { ...ctx.repository, release_id: view.id, draft: false });
  if (answer.status === 422) {
    throw new GitHubReleaseError(
      "GITHUB_RELEASE_IMMUTABLE_REJECTED",
      `GitHub refused to publish release ${view.id} for ${ctx.tag} (HTTP 422); an immutable release is never retried, edited or recreated`,
      { httpStatus: 422 },
    );
  }
  if (answer.status !== 200) throw githubApiFailure(`publishing release ${view.id}`, answer);
  return releaseResult(ctx, view.id, await verifyPublished(ctx, view.id), outcome);
}

/** Every release for the tag in the (bounded) release list: drafts are not found by tag. @throws GitHubReleaseError `GITHUB_RELEASE_AMBIGUOUS` past the bound, and the API codes. */
async function releasesInList(ctx: ReleaseContext): Promise<ReleaseView[]> {
  const matches: ReleaseView[] = [];
  for (let page = 1; page <= MAX_RELEASE_PAGES; page += 1) {
    const answer = await callGitHubApi(ctx.client, "GET /repos/{owner}/{repo}/releases", { ...ctx.repository, per_page: 100, page });
    if (answer.status !== 200) throw githubApiFailure("the release list", answer);
    const list = arrayOf(answer, "the release list");
    for (const item of list) {
      if (item === null || typeof item !== "object" || Array.isArray(item)) throw new GitHubReleaseError("GITHUB_API_MALFORMED", "GitHub API returned an unreadable release list");
      if (item["tag_name"] === ctx.tag) matches.push(releaseView(item, `release list entry for ${ctx.tag}`));
    }
    if (list.length < 100) break;
    if (page === MAX_RELEASE_PAGES) throw new GitHubReleaseError("GITHUB_RELEASE_AMBIGUOUS", `more than ${MAX_RELEASE_PAGES * 100} releases: cannot prove there is no draft for ${ctx.tag}`);
  }
  return matches;
}
