/**
 * release/github-release.ts against the GitHub API emulator through the real
 * @octokit/rest client: draft -> verify -> publish -> verify immutable, zero
 * assets, exact references; resume only verifies; 422 is terminal.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { git } from "../../release/git.js";
import {
  GitHubReleaseError,
  createGitHubRelease,
  readReleaseReferences,
  releaseBody,
  type GitHubReleaseInput,
} from "../../release/github-release.js";
import { runCli } from "../support/cli.js";
import { startGitHubEmulator, type GitHubEmulator } from "../support/github-emulator.js";

const SHA = "1".repeat(40);
const OTHER_SHA = "2".repeat(40);
const BUNDLE = `127.0.0.1:5000/acme/widget@sha256:${"a".repeat(64)}`;
const RECEIPT = `127.0.0.1:5000/acme/widget@sha256:${"b".repeat(64)}`;
const INPUT: GitHubReleaseInput = { version: "1.2.3", releaseSha: SHA, bundleReference: BUNDLE, receiptReference: RECEIPT, packageName: "widget" };

let api: GitHubEmulator;
let env: Record<string, string>;
const errorTexts: string[] = [];

/** `promise`, with the message of any error it rejects with kept for the no-secret check. */
async function recorded(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof Error) errorTexts.push(error.message);
    throw error;
  }
}

const writes = () => api.requests.filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path.replace(/\/\d+$/, "/{id}")}`);

beforeAll(async () => {
  api = await startGitHubEmulator();
});
afterAll(async () => {
  await api.close();
  expect(errorTexts.join("\n")).not.toContain(api.token);
});

let repoCounter = 0;
let repo: string;
beforeEach(() => {
  repoCounter += 1;
  repo = `site${repoCounter}`;
  api.requests.length = 0;
  api.clearFailures();
  api.setImmutableReleases("acme", repo, true);
  api.setRef("acme", repo, "tags/v1.2.3", SHA);
  env = api.env({ GITHUB_REPOSITORY: `acme/${repo}` });
});

describe("release body", () => {
  it("round-trips exactly the two references and refuses any extra digest", () => {
    const body = releaseBody("widget 1.2.3", { bundle_reference: BUNDLE, receipt_reference: RECEIPT });
    expect(readReleaseReferences(body)).toEqual({ bundle_reference: BUNDLE, receipt_reference: RECEIPT });
    expect(readReleaseReferences(body.replace(/\n/g, "\r\n"))).toEqual({ bundle_reference: BUNDLE, receipt_reference: RECEIPT });
    expect(readReleaseReferences(`${body}\nalso sha256:${"c".repeat(64)}\n`)).toBeUndefined();
    expect(readReleaseReferences(body.replace("- receipt_reference", "- receipt"))).toBeUndefined();
    expect(readReleaseReferences(`${body}- bundle_reference: \`${BUNDLE}\`\n`)).toBeUndefined();
    expect(readReleaseReferences(null)).toBeUndefined();
  });
});

describe("createGitHubRelease", () => {
  it("creates a draft without assets, verifies it, publishes, and verifies immutable + zero assets + exact references", async () => {
    const result = await createGitHubRelease(INPUT, { env });
    expect(result).toMatchObject({ repository: `acme/${repo}`, tag: "v1.2.3", immutable: true, assets: 0, bundle_reference: BUNDLE, receipt_reference: RECEIPT, outcome: "created" });
    const [release] = api.releases("acme", repo);
    expect(release).toMatchObject({ tag_name: "v1.2.3", name: "widget 1.2.3", draft: false, immutable: true, assets: [] });
    expect(readReleaseReferences(release!.body)).toEqual({ bundle_reference: BUNDLE, receipt_reference: RECEIPT });
    expect(writes()).toEqual(["POST /repos/acme/" + repo + "/releases", "PATCH /repos/acme/" + repo + "/releases/{id}"]);
    const post = api.requests.find((r) => r.method === "POST")!;
    expect(post.body).toMatchObject({ tag_name: "v1.2.3", draft: true });
    expect(post.body).not.toHaveProperty("target_commitish");
    expect(api.requests.find((r) => r.method === "PATCH")!.body).toEqual({ draft: false });
    expect(api.requests.every((r) => r.authorized)).toBe(true);
  });

  it("a rerun only verifies: no POST, no PATCH, no DELETE", async () => {
    await createGitHubRelease(INPUT, { env });
    api.requests.length = 0;
    const again = await createGitHubRelease(INPUT, { env });
    expect(again.outcome).toBe("verified");
    expect(writes()).toEqual([]);
    expect(api.releases("acme", repo)).toHaveLength(1);
  });

  it("an annotated remote tag is peeled to the commit", async () => {
    api.setRef("acme", repo, "tags/v1.2.3", SHA, { annotated: true });
    expect((await createGitHubRelease(INPUT, { env })).outcome).toBe("created");
    expect(api.count("GET", /\/git\/tags\//)).toBe(1);
  });

  it("the remote tag missing or at another commit fails closed before any release call", async () => {
    api.setRef("acme", repo, "tags/v1.2.3", OTHER_SHA);
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_TAG_MISMATCH");
    api.deleteRef("acme", repo, "tags/v1.2.3");
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_TAG_MISMATCH");
    expect(api.count("GET", /releases/)).toBe(0);
    expect(writes()).toEqual([]);
  });

  it("a caller-supplied remote tag reader (git ls-remote) replaces the API lookup", async () => {
    api.deleteRef("acme", repo, "tags/v1.2.3");
    expect((await createGitHubRelease({ ...INPUT, remoteTagCommit: async () => SHA }, { env })).outcome).toBe("created");
    expect(api.count("GET", /\/git\//)).toBe(0);
    await expect(recorded(createGitHubRelease({ ...INPUT, remoteTagCommit: async () => OTHER_SHA }, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_TAG_MISMATCH");
  });

  it("a published release with other references is never edited (GITHUB_RELEASE_MISMATCH)", async () => {
    await createGitHubRelease({ ...INPUT, receiptReference: `127.0.0.1:5000/acme/widget@sha256:${"c".repeat(64)}` }, { env });
    api.requests.length = 0;
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_RELEASE_MISMATCH");
    expect(writes()).toEqual([]);
  });

  it("a published release with an asset fails closed (GITHUB_RELEASE_HAS_ASSETS), nothing deleted", async () => {
    const first = await createGitHubRelease(INPUT, { env });
    api.addAsset("acme", repo, first.release_id, "widget-1.2.3.tgz");
    api.requests.length = 0;
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_RELEASE_HAS_ASSETS");
    expect(writes()).toEqual([]);
  });

  it("a repository without immutable releases: the published release is not immutable and the step fails", async () => {
    api.setImmutableReleases("acme", repo, false);
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_RELEASE_NOT_IMMUTABLE");
    // A rerun still fails, and never edits.
    api.requests.length = 0;
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_RELEASE_NOT_IMMUTABLE");
    expect(writes()).toEqual([]);
  });

  it("a 422 when publishing is terminal: no retry, no delete, no recreate", async () => {
    api.fail(/\/releases\/\d+$/, 422, { method: "PATCH" });
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_RELEASE_IMMUTABLE_REJECTED");
    expect(writes()).toEqual([`POST /repos/acme/${repo}/releases`, `PATCH /repos/acme/${repo}/releases/{id}`]);
  });

  it("a draft left by a crashed run (POST answered without a status) is found, verified and published once", async () => {
    api.fail(`/repos/acme/${repo}/releases`, "drop-after", { method: "POST", times: 1 });
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_NO_STATUS");
    expect(api.releases("acme", repo)).toHaveLength(1);
    expect(api.releases("acme", repo)[0]!.draft).toBe(true);
    const resumed = await createGitHubRelease(INPUT, { env });
    expect(resumed.outcome).toBe("published-draft");
    expect(api.count("POST", `/repos/acme/${repo}/releases`)).toBe(1);
    expect(api.releases("acme", repo)).toHaveLength(1);
  });

  it("a publish answered without a status converges on rerun by verification", async () => {
    api.fail(/\/releases\/\d+$/, "drop-after", { method: "PATCH", times: 1 });
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_NO_STATUS");
    expect((await createGitHubRelease(INPUT, { env })).outcome).toBe("verified");
    expect(api.count("POST", `/repos/acme/${repo}/releases`)).toBe(1);
    expect(api.count("PATCH", /\/releases\/\d+$/)).toBe(1);
  });

  it("a draft with other references or an asset is refused, never edited or deleted", async () => {
    api.fail(`/repos/acme/${repo}/releases`, "drop-after", { method: "POST", times: 1 });
    await expect(recorded(createGitHubRelease({ ...INPUT, bundleReference: `127.0.0.1:5000/acme/widget@sha256:${"d".repeat(64)}` }, { env }))).rejects.toBeInstanceOf(GitHubReleaseError);
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_RELEASE_MISMATCH");
    const draft = api.releases("acme", repo)[0]!;
    draft.body = releaseBody("widget 1.2.3", { bundle_reference: BUNDLE, receipt_reference: RECEIPT });
    api.addAsset("acme", repo, draft.id, "release-receipt.json");
    api.requests.length = 0;
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_RELEASE_HAS_ASSETS");
    expect(writes()).toEqual([]);
  });

  it("two releases for the tag are ambiguous and fail closed", async () => {
    // Two racing creators each left a draft.
    const seed = { tag_name: "v1.2.3", target_commitish: "main", name: "x", body: "", draft: true, prerelease: false, immutable: false, created_at: "", published_at: null, assets: [] };
    api.releases("acme", repo).push({ ...seed, id: 1 }, { ...seed, id: 2 });
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_RELEASE_AMBIGUOUS");
    expect(writes()).toEqual([]);
  });

  it("drafts are found on any page of the release list (100 per page), and an unrelated long list still leads to one creation", async () => {
    const seed = (id: number, tag: string) => ({ id, tag_name: tag, target_commitish: "main", name: tag, body: "", draft: false, prerelease: false, immutable: true, created_at: "", published_at: "", assets: [] });
    // Our draft is the oldest release, behind 150 newer ones (page 2 of 100).
    api.fail(`/repos/acme/${repo}/releases`, "drop-after", { method: "POST", times: 1 });
    await expect(recorded(createGitHubRelease(INPUT, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_NO_STATUS");
    const draftId = api.releases("acme", repo)[0]!.id;
    for (let i = 0; i < 150; i += 1) api.releases("acme", repo).push(seed(draftId + 1 + i, `v0.0.${i}`));
    api.requests.length = 0;
    const resumed = await createGitHubRelease(INPUT, { env });
    expect(resumed).toMatchObject({ outcome: "published-draft", release_id: draftId });
    expect(api.requests.filter((r) => r.path === `/repos/acme/${repo}/releases` && r.method === "GET").map((r) => r.query)).toEqual(["per_page=100&page=1", "per_page=100&page=2"]);
    expect(api.count("POST", `/repos/acme/${repo}/releases`)).toBe(0);
  });

  it("a draft answered by the tag endpoint is verified and published, not recreated", async () => {
    api.fail(`/repos/acme/${repo}/releases`, "drop-after", { method: "POST", times: 1 });
    await expect(recorded(createGitHubRelease(INPUT, { env }))).rejects.toBeInstanceOf(GitHubReleaseError);
    const draft = api.releases("acme", repo)[0]!;
    api.fail(`/repos/acme/${repo}/releases/tags/v1.2.3`, { status: 200, body: JSON.stringify({ id: draft.id, tag_name: "v1.2.3", draft: true, prerelease: false, immutable: false, body: draft.body, assets: [], html_url: null }) }, { times: 1 });
    expect((await createGitHubRelease(INPUT, { env })).outcome).toBe("published-draft");
    expect(api.releases("acme", repo)).toHaveLength(1);
  });

  it.each([401, 403, 429, 500] as const)("HTTP %i from the API fails closed without a write", async (status) => {
    api.fail(`/repos/acme/${repo}/releases/tags/v1.2.3`, status);
    const error = await createGitHubRelease(INPUT, { env }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitHubReleaseError);
    expect((error as GitHubReleaseError).code).toBe(status === 429 ? "GITHUB_RATE_LIMITED" : "GITHUB_API_FAILED");
    expect((error as GitHubReleaseError).httpStatus).toBe(status);
    expect(writes()).toEqual([]);
  });

  it("missing token, repository or malformed inputs abort before any call", async () => {
    await expect(recorded(createGitHubRelease(INPUT, { env: { ...env, GH_TOKEN: "" } }))).toThrowWithCode(GitHubReleaseError, "GITHUB_TOKEN_MISSING");
    await expect(recorded(createGitHubRelease(INPUT, { env: { ...env, GITHUB_REPOSITORY: "acme" } }))).toThrowWithCode(GitHubReleaseError, "GITHUB_REPOSITORY_INVALID");
    await expect(recorded(createGitHubRelease({ ...INPUT, version: "1.2" }, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_INPUT_INVALID");
    await expect(recorded(createGitHubRelease({ ...INPUT, releaseSha: "ABC" }, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_INPUT_INVALID");
    await expect(recorded(createGitHubRelease({ ...INPUT, bundleReference: "127.0.0.1:5000/acme/widget:v1.2.3" }, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_INPUT_INVALID");
    await expect(recorded(createGitHubRelease({ ...INPUT, receiptReference: BUNDLE }, { env }))).toThrowWithCode(GitHubReleaseError, "GITHUB_INPUT_INVALID");
    expect(api.requests).toHaveLength(0);
  });
});

describe("hermes-plugin-kit release github-release (built CLI, real git remote)", () => {
  const IDENTITY = { GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@example.invalid", GIT_COMMITTER_NAME: "T", GIT_COMMITTER_EMAIL: "t@example.invalid", GIT_AUTHOR_DATE: "@1767225600 +0000", GIT_COMMITTER_DATE: "@1767225600 +0000" };
  let dir: string;
  let remote: string;
  let commit: string;
  let references: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "hpk-ghrel-"));
    remote = join(dir, "remote.git");
    const work = join(dir, "work");
    await git(["init", "--quiet", "--bare", remote], { cwd: dir });
    await git(["init", "--quiet", "-b", "main", work], { cwd: dir });
    await writeFile(join(work, "package.json"), JSON.stringify({ name: "widget", version: "1.2.3" }));
    await git(["add", "package.json"], { cwd: work });
    await git(["commit", "--quiet", "-m", "chore(release): v1.2.3"], { cwd: work, env: IDENTITY });
    await git(["tag", "-a", "-m", "v1.2.3", "v1.2.3"], { cwd: work, env: IDENTITY });
    await git(["push", "--quiet", remote, "main", "refs/tags/v1.2.3:refs/tags/v1.2.3"], { cwd: work });
    commit = (await git(["rev-parse", "HEAD"], { cwd: work })).stdout.trim();
    references = join(dir, "publication.json");
    await writeFile(references, JSON.stringify({ bundle_reference: BUNDLE, receipt_reference: RECEIPT }));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("creates then, on rerun, only verifies; the remote tag is read with git ls-remote (peeled)", async () => {
    api.deleteRef("acme", repo, "tags/v1.2.3");
    const args = ["release", "github-release", "--release-version", "1.2.3", "--release-sha", commit, "--references", references, "--git-remote", remote, "--package-name", "widget"];
    const first = await runCli(args, { cwd: dir, env });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ tag: "v1.2.3", immutable: true, assets: 0, outcome: "created", bundle_reference: BUNDLE, receipt_reference: RECEIPT });
    const second = await runCli(args, { cwd: dir, env });
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ outcome: "verified" });
    expect(api.count("POST", `/repos/acme/${repo}/releases`)).toBe(1);
    expect(api.count("GET", /\/git\//)).toBe(0);
    expect(first.stdout + first.stderr + second.stdout + second.stderr).not.toContain(api.token);
  });

  it("a remote tag at another commit fails with GITHUB_TAG_MISMATCH (exit 1) and creates nothing", async () => {
    const unnamed = await runCli(["release", "github-release", "--release-version", "1.2.3", "--release-sha", OTHER_SHA, "--references", references, "--git-remote", remote], { cwd: dir, env });
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain("--package-name");
    const result = await runCli(["release", "github-release", "--release-version", "1.2.3", "--release-sha", OTHER_SHA, "--references", references, "--git-remote", remote, "--package-name", "fixture-plugin"], { cwd: dir, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("GITHUB_TAG_MISMATCH");
    expect(api.releases("acme", repo)).toHaveLength(0);
  });

  it("usage errors exit 2: missing references, both forms at once, a references file with extra keys", async () => {
    const base = ["release", "github-release", "--release-version", "1.2.3", "--release-sha", commit];
    expect((await runCli(base, { cwd: dir, env })).code).toBe(2);
    expect((await runCli([...base, "--references", references, "--bundle-reference", BUNDLE], { cwd: dir, env })).code).toBe(2);
    const extra = join(dir, "extra.json");
    await writeFile(extra, JSON.stringify({ bundle_reference: BUNDLE, receipt_reference: RECEIPT, note: "x" }));
    expect((await runCli([...base, "--references", extra], { cwd: dir, env })).code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });
});
