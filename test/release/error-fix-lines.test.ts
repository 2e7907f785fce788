/**
 * Errors that said what failed but not how to go on now carry a `fix:` line: an invalid conventional commit
 * (RELEASE_HISTORY_INVALID), git missing from PATH (GIT_FAILED of the release steps, SOURCE_BUNDLE_GIT_FAILED of the
 * source bundle check: they showed a raw ENOENT), and a source checkout without an `origin` remote
 * (RUN_WORKSPACE_INVALID, release run and its dry run alike).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { classifyCommitMessage } from "../../release/history.js";
import { runProcess } from "../../release/git.js";
import { dryRunRelease } from "../../release/dry-run.js";
import { runRelease } from "../../release/run.js";
import { verifySourceBundleFile } from "../../src/fetch/source-bundle.js";
import { BASE_ENV_NAMES, childEnvironment } from "../../src/oci/subprocess.js";
import { createFixtureRepo, type FixtureRepo } from "../support/git-fixture.js";

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "hpk-fix-lines-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe("RELEASE_HISTORY_INVALID", () => {
  it("names the commit's first line, what was expected and the fix; a valid header passes", () => {
    expect(classifyCommitMessage("feat: a thing\n", "abc")).toMatchObject({ type: "feat", release: "minor" });
    expect(() => classifyCommitMessage("updated stuff\n", "abc123")).toThrowWithCode("RELEASE_HISTORY_INVALID");
    expect(() => classifyCommitMessage("updated stuff\n", "abc123")).toThrow(
      /^invalid conventional commit in release history: abc123 "updated stuff"; expected every commit since the baseline tag to have a Conventional Commits 1\.0\.0 header "<type>\[\(scope\)\]\[!\]: <subject>" with type one of build, chore, .*; fix: reword it before it reaches the release branch \(git commit --amend, or git rebase -i <baseline tag>, then push\); for a commit already on origin's main, review the history and tag a new baseline after it/,
    );
  });
});

describe("git not found on PATH", () => {
  it("a release step's git: GIT_FAILED says git was not found on PATH and how to install it, not a bare ENOENT; with git on PATH it runs", async () => {
    const ok = await runProcess("git", ["--version"], { cwd: work, env: childEnvironment(BASE_ENV_NAMES), timeoutMs: 30_000 });
    expect(ok.stdout).toMatch(/^git version/);
    const noGit = childEnvironment(BASE_ENV_NAMES, { PATH: join(work, "empty-bin") });
    const run = runProcess("git", ["--version"], { cwd: work, env: noGit, timeoutMs: 30_000 });
    await expect(run).rejects.toThrowWithCode("GIT_FAILED");
    await expect(runProcess("git", ["--version"], { cwd: work, env: noGit, timeoutMs: 30_000 })).rejects.toThrow(
      "git could not start: git was not found on PATH (ENOENT); fix: install git (Debian/Ubuntu: apt-get install git; macOS: xcode-select --install; else https://git-scm.com/downloads), or put the directory holding it on PATH",
    );
  });

  it("the source bundle check: SOURCE_BUNDLE_GIT_FAILED says git was not found on PATH, with the fix", async () => {
    const check = () => verifySourceBundleFile(join(work, "absent.bundle"), { sourceSha: "a".repeat(40), tag: "v1.0.0", packageName: "x", version: "1.0.0" }, { git: "hpk-no-such-git" });
    await expect(check()).rejects.toThrowWithCode("SOURCE_BUNDLE_GIT_FAILED");
    await expect(check()).rejects.toThrow(/^source bundle check could not run git: hpk-no-such-git was not found on PATH \(ENOENT\); .*fix: install git \(Debian\/Ubuntu: apt-get install git/);
  });
});

describe("a source checkout without an origin remote", () => {
  let repo: FixtureRepo;
  beforeAll(async () => {
    repo = await createFixtureRepo({ origin: false });
    await repo.commit("feat: more\n", { "lib/more.js": "export {};\n" });
  });
  afterAll(async () => {
    await repo.cleanup();
  });

  it("release run and --dry-run: RUN_WORKSPACE_INVALID says to add one (git remote add origin <url>)", async () => {
    const env = { ...process.env, SEMANTIC_RELEASE_ENABLED: "true" };
    const message = `the source checkout ${repo.dir} has no origin remote to promote to: release run clones the checkout and pushes the release to its origin; fix: add one (git remote add origin <url>), push main to it (git push -u origin main), then rerun`;
    const dry = dryRunRelease({ source: repo.dir, workspace: join(work, "dry-ws"), env });
    await expect(dry).rejects.toThrowWithCode("RUN_WORKSPACE_INVALID");
    await expect(dryRunRelease({ source: repo.dir, workspace: join(work, "dry-ws"), env })).rejects.toThrow(message);
    await expect(runRelease({ source: repo.dir, workspace: join(work, "run-ws"), env, progress: null })).rejects.toThrow(message);
  }, 120_000);
});
