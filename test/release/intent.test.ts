import { afterEach, describe, expect, it } from "vitest";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { checkBaseline, releaseIntent, type IntentResult } from "../../release/intent.js";
import { classifyCommitMessage } from "../../release/history.js";
import { createReleaseTag } from "../../release/release-tag.js";
import { createFixtureRepo, fixtureGit, type FixtureRepo } from "../support/git-fixture.js";

const ARMED = { SEMANTIC_RELEASE_ENABLED: "true" };
const repos: FixtureRepo[] = [];
afterEach(async () => {
  while (repos.length > 0) await repos.pop()?.cleanup();
});

async function repoWith(messages: string[], options: Parameters<typeof createFixtureRepo>[0] = {}): Promise<FixtureRepo> {
  const repo = await createFixtureRepo(options);
  repos.push(repo);
  let n = 0;
  for (const m of messages) {
    n += 1;
    await repo.commit(m, { [`lib/change-${n}.js`]: `export const n = ${n};\n` });
  }
  return repo;
}

async function intentOf(repo: FixtureRepo): Promise<Extract<IntentResult, { previous_version: string }>> {
  const r = await releaseIntent({ dir: repo.dir, environment: ARMED });
  if (!("previous_version" in r)) throw new Error("unexpectedly disarmed");
  return r;
}

describe("classifyCommitMessage (strict pass)", () => {
  it.each([
    ["fix: repair", "patch"],
    ["perf: faster", "patch"],
    ["feat: add", "minor"],
    ["feat(api)!: drop", "major"],
    ["chore!: drop node 18", "major"],
    ["docs: words", null],
    ["revert: feat: add export", "patch"],
    ['Revert "feat: add export" (#41)', "patch"],
    ['Revert "feat: add export"\n\nThis reverts commit 0123456789abcdef0123456789abcdef01234567.\n', "patch"],
    ["feat: squash (#12)\n\n* feat: a\n\n* fix: b\n\n---------\n\nCo-authored-by: A <a@example.invalid>\nCo-authored-by: B <b@example.invalid>\nBREAKING CHANGE: removes the old API\n", "major"],
    ["fix: x\n\nBREAKING-CHANGE: renamed\n", "major"],
    ["fix: x\n\nthis is breaking change in wording only, nothing breaks\n", "patch"],
    ["fix: x\n\nbreaking the loop early is faster\n", "patch"],
    ["docs: x\n\nBREAKING CHANGE: even docs can break\n", "major"],
  ])("%j -> %s", (message, expected) => {
    expect(classifyCommitMessage(message).release).toBe(expected);
  });

  it.each(["updated stuff", "", "Feat: upper-case type", "feature: unknown type", "fix:no space", "fix: ", "fixup! fix: x", "Merge branch 'x'"])("refuses %j", (message) => {
    let code = "none";
    let text = "";
    try {
      classifyCommitMessage(message);
    } catch (error) {
      code = (error as { code: string }).code;
      text = (error as Error).message;
    }
    expect(code).toBe("RELEASE_HISTORY_INVALID");
    expect(text).toContain(message.trim() === "" ? "<empty>" : message.split("\n")[0]!.trim());
  });
});

describe("release intent", () => {
  it("is disarmed unless SEMANTIC_RELEASE_ENABLED is exactly true, touching nothing", async () => {
    for (const value of [undefined, "false", "TRUE", "1", "true "]) {
      const env = value === undefined ? {} : { SEMANTIC_RELEASE_ENABLED: value };
      await expect(releaseIntent({ dir: "/nonexistent/hpk", environment: env })).resolves.toEqual({ released: false, disarmed: true });
    }
  });

  it("fix -> patch; fix + feat -> minor; notes and previous version", async () => {
    const patch = await intentOf(await repoWith(["fix: repair greeting"]));
    expect(patch).toMatchObject({ released: true, previous_version: "0.7.0", version: "0.7.1", tag: "v0.7.1", release_class: "patch" });
    expect(patch.analysis).toEqual({ semantic_release: "patch", strict: "patch", chosen: "patch" });
    expect(patch.notes).toContain("repair greeting");
    const minor = await intentOf(await repoWith(["feat: add farewell", "fix: repair greeting"]));
    expect(minor).toMatchObject({ released: true, version: "0.8.0", release_class: "minor" });
    expect(minor.notes).toContain("add farewell");
    expect(minor.notes).not.toContain("http");
  });

  it("feat! and a BREAKING CHANGE footer -> major; 0.7.0 -> 1.0.0", async () => {
    const bang = await intentOf(await repoWith(["feat!: new api"]));
    expect(bang).toMatchObject({ version: "1.0.0", release_class: "major" });
    const footer = await intentOf(await repoWith(["feat: new api\n\nBREAKING CHANGE: the old api is gone\n"]));
    expect(footer).toMatchObject({ version: "1.0.0", release_class: "major" });
  });

  it("notes: no bogus links for a local repository, GitHub links when the repository is known, reverts listed with what they revert", async () => {
    const repo = await createFixtureRepo({ tagBaseline: false });
    repos.push(repo);
    const released = await repo.commit("feat: add export", { "lib/export.js": "export {};\n" });
    await fixtureGit(repo.dir, ["tag", "v0.7.0"]);
    await repo.commit("fix: repair greeting (#12) thanks @octo", { "lib/a.js": "export {};\n" });
    await repo.commit('Revert "feat: add export" (#41)', { "lib/export.js": null });
    const local = await intentOf(repo);
    expect(local.notes).toContain("repair greeting (#12) thanks @octo");
    expect(local.notes).not.toMatch(/\]\(/);
    expect(local.notes).toMatch(new RegExp(`### Reverts\\n\\n\\* Revert "feat: add export" \\(#41\\) [0-9a-f]{7} \\(reverts ${released.slice(0, 7)}\\)\\n$`));
    const hosted = await intentOf(await repoWith(["fix: repair greeting (#12)"], { packageJson: { repository: { type: "git", url: "git+https://github.com/acme/widget.git" } } }));
    expect(hosted.notes).toContain("[#12](https://github.com/acme/widget/issues/12)");
  });

  it("docs only -> no release; no commits since the baseline -> no release", async () => {
    const r = await intentOf(await repoWith(["docs: explain", "chore: tidy", "test: more"]));
    expect(r).toMatchObject({ released: false, version: null, release_class: null, previous_version: "0.7.0" });
    const empty = await intentOf(await repoWith([]));
    expect(empty).toMatchObject({ released: false, version: null, commits: [], analysis: { semantic_release: null, strict: null, chosen: null } });
  });

  it("commit forms that trip analyzers: chore!, GitHub revert, squash footer, BREAKING-CHANGE, prose", async () => {
    expect(await intentOf(await repoWith(["chore!: drop node 18"]))).toMatchObject({ release_class: "major" });
    const revert = await intentOf(await repoWith(['Revert "chore: initial import" (#41)']));
    expect(revert).toMatchObject({ released: true, release_class: "patch", version: "0.7.1" });
    expect(revert.analysis.semantic_release).toBeNull();
    expect(revert.analysis.disagreement).toContain("strict pass found patch");
    const squash = await intentOf(
      await repoWith(["feat: add export (#12)\n\n* feat: add export\n\n* fix: typo\n\n---------\n\nCo-authored-by: A <a@example.invalid>\nBREAKING CHANGE: export renamed\n"]),
    );
    expect(squash).toMatchObject({ release_class: "major", version: "1.0.0" });
    expect(await intentOf(await repoWith(["fix: x\n\nBREAKING-CHANGE: renamed\n"]))).toMatchObject({ release_class: "major" });
    const prose = await intentOf(await repoWith(["fix: x\n\nthis line mentions a breaking change as prose\n"]));
    expect(prose).toMatchObject({ release_class: "patch" });
    expect(prose.analysis).toEqual({ semantic_release: "patch", strict: "patch", chosen: "patch" });
    // Five real intents (git + semantic-release each): 56 s in a loaded CI run, over the 60 s default in another.
  }, 180_000);

  it("ignores a repository release config that would change the analysis", async () => {
    const repo = await repoWith([], {
      packageJson: { release: { analyzeCommits: [{ path: "@semantic-release/commit-analyzer", releaseRules: [{ type: "docs", release: "major" }] }], branches: ["other"] } },
    });
    await repo.commit("docs: words", { "lib/d.js": "export {};\n" });
    expect(await intentOf(repo)).toMatchObject({ released: false, analysis: { semantic_release: null, strict: null } });
  });

  it("fails closed on an invalid message in history, naming its first line", async () => {
    const repo = await repoWith(["feat: fine", "updated stuff\n\nmore words\n", "fix: fine"]);
    await expect(releaseIntent({ dir: repo.dir, environment: ARMED })).rejects.toMatchObject({ code: "RELEASE_HISTORY_INVALID", message: expect.stringContaining("updated stuff") });
  });

  it("ignores merge commits but checks the commits they bring", async () => {
    const repo = await repoWith(["fix: base"]);
    await fixtureGit(repo.dir, ["checkout", "--quiet", "-b", "topic"]);
    await repo.commit("feat: on topic", { "lib/topic.js": "export const t = 1;\n" });
    await fixtureGit(repo.dir, ["checkout", "--quiet", "main"]);
    await fixtureGit(repo.dir, ["merge", "--quiet", "--no-ff", "-m", "Merge branch 'topic'", "topic"]);
    expect(await intentOf(repo)).toMatchObject({ release_class: "minor" });
  });

  it("baseline: a tagged repo plus a feat commit reports version, tag and the 40-character HEAD", async () => {
    const repo = await repoWith(["feat: more"]);
    const tagged = await fixtureGit(repo.dir, ["rev-parse", "v0.7.0^{commit}"]);
    expect(await checkBaseline(repo.dir, "fixture-plugin")).toEqual({ package: "fixture-plugin", version: "0.7.0", tag: "v0.7.0", tag_sha: tagged, source_sha: await repo.head() });
    expect(await repo.head()).toMatch(/^[0-9a-f]{40}$/);
  });

  it("baseline: an annotated baseline tag (a previous release's) is peeled everywhere: baseline, history range, next-tag check", async () => {
    const repo = await repoWith([], { tagBaseline: false });
    const base = await repo.head();
    await createReleaseTag(repo.dir, "0.7.0", base);
    await repo.commit("feat: more", { "lib/more.js": "export {};\n" });
    expect(await checkBaseline(repo.dir, "fixture-plugin")).toMatchObject({ tag: "v0.7.0", tag_sha: base });
    const r = await intentOf(repo);
    expect(r).toMatchObject({ released: true, version: "0.8.0", commits: [{ subject: "feat: more" }] });
    await createReleaseTag(repo.dir, "0.8.0", await repo.head());
    await expect(releaseIntent({ dir: repo.dir, environment: ARMED })).toThrowWithCode("RELEASE_TAG_EXISTS");
  });

  it("baseline: missing tag, non-ancestor tag, untracked file, package mismatch", async () => {
    const untagged = await repoWith(["fix: x"], { tagBaseline: false });
    await expect(releaseIntent({ dir: untagged.dir, environment: ARMED })).toThrowWithCode("RELEASE_BASELINE_MISSING");
    await expect(releaseIntent({ dir: untagged.dir, environment: ARMED })).rejects.toThrow(/baseline tag v0\.7\.0 .*origin does not list it either.*git tag v0\.7\.0 <commit>.*git fetch --tags origin/);
    // Origin has the tag (a `git pull` of main alone leaves it behind): the fix is to fetch it, naming origin's commit.
    const behind = await repoWith(["fix: x"], { tagBaseline: false });
    const tagged = await behind.head();
    await fixtureGit(behind.dir, ["tag", "v0.7.0", tagged]);
    await fixtureGit(behind.dir, ["push", "--quiet", "origin", "v0.7.0"]);
    await fixtureGit(behind.dir, ["tag", "-d", "v0.7.0"]);
    await expect(releaseIntent({ dir: behind.dir, environment: ARMED })).rejects.toThrow(`baseline tag v0.7.0 (the version in package.json) is missing in ${behind.dir}, but origin has it (${tagged}): fetch it into the checkout you release from (git fetch --tags origin there; release run clones that checkout), then rerun`);

    const offBranch = await repoWith(["fix: x"], { tagBaseline: false });
    await fixtureGit(offBranch.dir, ["checkout", "--quiet", "--orphan", "side"]);
    await offBranch.commit("chore: unrelated");
    await fixtureGit(offBranch.dir, ["tag", "v0.7.0"]);
    await fixtureGit(offBranch.dir, ["checkout", "--quiet", "main"]);
    await expect(releaseIntent({ dir: offBranch.dir, environment: ARMED })).toThrowWithCode("RELEASE_BASELINE_NOT_ANCESTOR");

    const dirty = await repoWith(["fix: x"]);
    await writeFile(join(dirty.dir, "stray.txt"), "untracked\n");
    await expect(releaseIntent({ dir: dirty.dir, environment: ARMED })).toThrowWithCode("RELEASE_TREE_DIRTY");

    const named = await repoWith(["fix: x"]);
    await expect(releaseIntent({ dir: named.dir, environment: ARMED, expectedPackage: "other-name" })).toThrowWithCode("RELEASE_PACKAGE_MISMATCH");
  });

  it("stops when v<next> already exists on the remote on a commit off the branch, naming it, before any write", async () => {
    const repo = await repoWith(["fix: x"]);
    await fixtureGit(repo.dir, ["checkout", "--quiet", "-b", "stray", "v0.7.0"]);
    const stray = await repo.commit("fix: somewhere else", { "lib/stray.js": "export {};\n" });
    await fixtureGit(repo.dir, ["push", "--quiet", "origin", `${stray}:refs/tags/v0.7.1`]);
    await fixtureGit(repo.dir, ["checkout", "--quiet", "main"]);
    await fixtureGit(repo.dir, ["branch", "--quiet", "-D", "stray"]);
    const refsBefore = await fixtureGit(repo.dir, ["for-each-ref"]);
    await expect(releaseIntent({ dir: repo.dir, environment: ARMED })).rejects.toMatchObject({ code: "RELEASE_TAG_EXISTS", message: expect.stringContaining(stray) });
    expect(await fixtureGit(repo.dir, ["for-each-ref"])).toBe(refsBefore);
    expect(await fixtureGit(repo.dir, ["status", "--porcelain", "--untracked-files=all"])).toBe("");
  });
});
