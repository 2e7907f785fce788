/**
 * The release history on real git repositories: ambiguous breaking markers
 * are errors naming the commit; reverts name what they revert and cancel
 * inside the range (GitHub's title and git's `This reverts commit <sha>.`).
 */
import { afterEach, describe, expect, it } from "vitest";
import { releaseIntent, type IntentResult } from "../../release/intent.js";
import { materializeRelease } from "../../release/materialize.js";
import { classifyCommitMessage, revertTargetOf } from "../../release/history.js";
import { createFixtureRepo, fixtureGit, type FixtureRepo } from "../support/git-fixture.js";

const ARMED = { SEMANTIC_RELEASE_ENABLED: "true" };
const repos: FixtureRepo[] = [];
afterEach(async () => {
  while (repos.length > 0) await repos.pop()?.cleanup();
});

let fileCounter = 0;
/** A repository whose `released` commits precede the baseline tag `v1.4.2`, then `unreleased` commits. */
async function history(released: string[], unreleased: string[]): Promise<{ repo: FixtureRepo; shas: string[] }> {
  const repo = await createFixtureRepo({ version: "1.4.2", tagBaseline: false });
  repos.push(repo);
  const shas: string[] = [];
  for (const m of released) shas.push(await repo.commit(m, { [`lib/f${(fileCounter += 1)}.js`]: "export {};\n" }));
  await fixtureGit(repo.dir, ["tag", "v1.4.2"]);
  for (const m of unreleased) shas.push(await repo.commit(m.replaceAll("<sha0>", shas[0] ?? "").replaceAll("<sha1>", shas[1] ?? ""), { [`lib/f${(fileCounter += 1)}.js`]: "export {};\n" }));
  return { repo, shas };
}

async function intentOf(repo: FixtureRepo): Promise<Extract<IntentResult, { previous_version: string }>> {
  const r = await releaseIntent({ dir: repo.dir, environment: ARMED });
  if (!("previous_version" in r)) throw new Error("unexpectedly disarmed");
  return r;
}

async function failure(promise: Promise<unknown>): Promise<{ code: string | undefined; message: string }> {
  try {
    await promise;
  } catch (error) {
    return { code: (error as { code?: string }).code, message: (error as Error).message };
  }
  return { code: undefined, message: "no error" };
}

describe("ambiguous breaking-change markers", () => {
  it.each([
    "feat: x\n\nBREAKING CHANGES: y\n",
    "feat: x\n\nBREAKING CHANGE y\n",
    "feat: x\n\nBreaking Change: y\n",
  ])("the handed input %j after v1.4.2 is an error naming the commit, never a silent 1.5.0", async (message) => {
    const { repo, shas } = await history([], [message]);
    const refsBefore = await fixtureGit(repo.dir, ["for-each-ref"]);
    const result = await failure(releaseIntent({ dir: repo.dir, environment: ARMED }));
    expect(result.code).toBe("RELEASE_BREAKING_AMBIGUOUS");
    expect(result.message).toContain(shas[0]);
    expect(result.message).toContain(JSON.stringify(message.split("\n")[2]));
    const materialized = await failure(materializeRelease({ dir: repo.dir, environment: ARMED, expectedSha: shas[0] as string, outputDir: repo.root }));
    expect(materialized.code).toBe("RELEASE_BREAKING_AMBIGUOUS");
    expect(await fixtureGit(repo.dir, ["for-each-ref"])).toBe(refsBefore);
    expect(await fixtureGit(repo.dir, ["status", "--porcelain", "--untracked-files=all"])).toBe("");
  });

  it.each([
    "fix: x\n\nbreaking change: y",
    "fix: x\n\nBREAKING_CHANGE: y",
    "fix: x\n\nBREAKING-CHANGES: y",
    "fix: x\n\nbreaking-change: y",
    "fix: x\n\nBREAKING CHANGE :y",
    "fix: x\n\nBREAKING CHANGE:y",
    "fix: x\n\nBREAKING  CHANGE: y",
    "fix: x\n\n* BREAKING CHANGE: y",
    "fix: x\n\n  BREAKING CHANGE: y",
    "fix: x\n\n> BREAKING CHANGE: y",
    "fix: x\n\nBREAKING: y",
    "fix: x\n\nBreakingChange: y",
    "feat: BREAKING CHANGE drop node 18",
    "feat: BREAKING: drop node 18",
    'Revert "feat: x"\n\nBREAKING CHANGES: y',
    "fix: x\n\nB\u200bREAKING CHANGE: y",
    "fix: x\n\nBREAKING\u00adCHANGE: y",
    "fix: x\n\n\uff22\uff32\uff25\uff21\uff2b\uff29\uff2e\uff27 CHANGE: y",
    "fix: x\n\nBREAK\u0130NG CHANGE: y",
    "fix: x\n\nBR\u0415AKING CHANGE: y",
    "fix: x\n\nBREAKING \u0421HANGE: y",
    "fix: x\n\nBREAKING CHANGE\uff1a y",
    "feat: \u0392REAKING CHANGE drop node 18",
  ])("sibling %j: RELEASE_BREAKING_AMBIGUOUS", async (message) => {
    await expect(() => classifyCommitMessage(message, "c".repeat(40))).toThrowWithCode("RELEASE_BREAKING_AMBIGUOUS");
  });

  it.each([
    ["fix: x\n\nBREAKING CHANGE: y", "major"],
    ["fix: x\n\nBREAKING-CHANGE: y", "major"],
    ["fix: x\n\nBREAKING CHANGE:\n  described below", "major"],
    ["feat: x\n\nBREAKING CHANGE:", "major"],
    ["fix: x\n\nBREAKING-CHANGE:\n", "major"],
    ["fix: x\n\nBREAKING CHANGE: ", "major"],
    ["fix: x\n\nbreaking the loop early is faster", "patch"],
    ["fix: x\n\nthis is not a breaking change", "patch"],
    ["docs: describe the breaking changes policy", null],
    ["fix: caf\u00e9 \u0417\u0430\u043f\u0443\u0441\u043a \uff21", "patch"],
  ])("exact tokens and prose still classify: %j -> %s", (message, release) => {
    expect(classifyCommitMessage(message).release).toBe(release);
  });
});

describe("a breaking footer without text", () => {
  it("the handed input: `BREAKING CHANGE:` with no text after v1.4.2 is a major (2.0.0), as semantic-release's default parser reads it; it was RELEASE_HISTORY_INVALID", async () => {
    const { repo } = await history([], ["feat: x\n\nBREAKING CHANGE:"]);
    const intent = await intentOf(repo);
    expect(intent).toMatchObject({ released: true, version: "2.0.0", release_class: "major" });
  });

  it("semantic-release's commit-analyzer with its default preset says major for the same commit (the behaviour matched)", async () => {
    const { analyzeCommits } = (await import("@semantic-release/commit-analyzer")) as unknown as { analyzeCommits: (config: object, context: object) => Promise<string | null> };
    const logger = { log: () => undefined, error: () => undefined };
    const commits = [{ hash: "a".repeat(40), message: "feat: x\n\nBREAKING CHANGE:" }];
    expect(await analyzeCommits({}, { cwd: process.cwd(), commits, logger })).toBe("major");
    const { COMMIT_PARSER_OPTIONS } = await import("../../release/history.js");
    expect(await analyzeCommits({ parserOpts: COMMIT_PARSER_OPTIONS }, { cwd: process.cwd(), commits, logger })).toBe("major");
  });
});

describe("reverts name what they revert", () => {
  it("the handed input: after v1.4.2, GitHub's title with no body releases 1.4.3 and names the reverted commit", async () => {
    const { repo, shas } = await history(["feat: add export"], ['Revert "feat: add export" (#41)']);
    const r = await intentOf(repo);
    expect(r).toMatchObject({ released: true, version: "1.4.3", release_class: "patch" });
    expect(r.commits).toEqual([{ sha: shas[1], subject: 'Revert "feat: add export" (#41)', release: "patch", reverts: shas[0] }]);
    expect(r.notes).toContain(`(reverts ${shas[0]!.slice(0, 7)})`);
  });

  it("the handed input: a feat and its GitHub-titled revert both unreleased cancel (no 1.5.0)", async () => {
    const { repo, shas } = await history([], ["feat: add export", 'Revert "feat: add export" (#41)']);
    const r = await intentOf(repo);
    expect(r).toMatchObject({ released: false, version: null, release_class: null });
    expect(r.commits).toEqual([
      { sha: shas[0], subject: "feat: add export", release: "minor", cancelled_by: shas[1] },
      { sha: shas[1], subject: 'Revert "feat: add export" (#41)', release: "patch", reverts: shas[0], cancelled_by: shas[0] },
    ]);
    expect(r.analysis).toEqual({ semantic_release: null, strict: null, chosen: null });
  });

  it("the handed input: `This reverts commit <sha>.` cancels too, and semantic-release agrees", async () => {
    const { repo, shas } = await history([], ["feat: add export", 'Revert "feat: add export"\n\nThis reverts commit <sha0>.\n']);
    const r = await intentOf(repo);
    expect(r).toMatchObject({ released: false, analysis: { semantic_release: null, strict: null, chosen: null } });
    expect(r.commits[1]).toMatchObject({ reverts: shas[0], cancelled_by: shas[0] });
  });

  it("what survives a cancelled pair still releases, and the notes leave the pair out", async () => {
    const { repo } = await history([], ["feat: add export", "fix: repair greeting", 'Revert "feat: add export" (#41)']);
    const r = await intentOf(repo);
    expect(r).toMatchObject({ released: true, version: "1.4.3", release_class: "patch" });
    expect(r.notes).toContain("repair greeting");
    expect(r.notes).not.toContain("add export");
  });

  it("a revert of a revert restores the original: feat, revert, revert of the revert -> minor", async () => {
    const { repo, shas } = await history([], ["feat: add export", 'Revert "feat: add export" (#41)', 'Revert "Revert "feat: add export" (#41)" (#42)']);
    const r = await intentOf(repo);
    expect(r).toMatchObject({ released: true, release_class: "minor", version: "1.5.0" });
    expect(r.commits.map((c) => c.cancelled_by ?? null)).toEqual([null, shas[2], shas[1]]);
  });

  it("git 2.43+'s Reapply \"<header>\" (its title for reverting a revert) restores the original, by title or by hash", async () => {
    const { repo, shas } = await history([], ["feat: add export", 'Revert "feat: add export" (#41)', 'Reapply "feat: add export" (#41)']);
    const r = await intentOf(repo);
    expect(r).toMatchObject({ released: true, release_class: "minor", version: "1.5.0" });
    expect(r.commits.map((c) => c.reverts ?? null)).toEqual([null, shas[0], shas[1]]);
    expect(r.commits.map((c) => c.cancelled_by ?? null)).toEqual([null, shas[2], shas[1]]);
    const byHash = await history([], ["feat: add export", 'Revert "feat: add export"\n\nThis reverts commit <sha0>.\n', 'Reapply "feat: add export"\n\nThis reverts commit <sha1>.\n']);
    const viaHash = await intentOf(byHash.repo);
    expect(viaHash).toMatchObject({ released: true, release_class: "minor" });
    expect(viaHash.commits[2]).toMatchObject({ reverts: byHash.shas[1], cancelled_by: byHash.shas[1] });
  });

  it("a Reapply of a revert released earlier releases a patch naming the revert", async () => {
    const { repo, shas } = await history(["feat: add export", 'Revert "feat: add export" (#41)'], ['Reapply "feat: add export" (#41)']);
    const r = await intentOf(repo);
    expect(r).toMatchObject({ released: true, release_class: "patch", version: "1.4.3" });
    expect(r.commits[0]).toMatchObject({ reverts: shas[1] });
  });

  it("`revert: <header>` with `Refs: <sha>` names the commit; a hash beats a reused header", async () => {
    const { repo, shas } = await history(["feat: add export", "feat: add export"], ["revert: feat: add export\n\nRefs: <sha0>\n"]);
    const r = await intentOf(repo);
    expect(r.commits[0]).toMatchObject({ reverts: shas[0], release: "patch" });
    const byHeader = await history(["feat: add export", "feat: add export"], ["revert: feat: add export"]);
    expect((await intentOf(byHeader.repo)).commits[0]).toMatchObject({ reverts: byHeader.shas[1] });
  });

  it("a revert that names nothing in its history fails closed, naming the revert", async () => {
    const { repo, shas } = await history([], ['Revert "feat: never existed" (#41)']);
    const result = await failure(releaseIntent({ dir: repo.dir, environment: ARMED }));
    expect(result.code).toBe("RELEASE_REVERT_UNRESOLVED");
    expect(result.message).toContain(shas[0]);
    expect(result.message).toContain('"feat: never existed"');
    const unknownHash = await history(["feat: a"], ["revert: something vague\n\nThis reverts commit 0123456789abcdef0123456789abcdef01234567.\n"]);
    expect((await failure(releaseIntent({ dir: unknownHash.repo.dir, environment: ARMED }))).code).toBe("RELEASE_REVERT_UNRESOLVED");
  });

  it("revertTargetOf reads every revert form", () => {
    expect(revertTargetOf('Revert "feat: a" (#41)')).toEqual({ header: "feat: a" });
    expect(revertTargetOf('Revert "feat: a"\n\nThis reverts commit abcdef1.\n')).toEqual({ header: "feat: a", hash: "abcdef1" });
    expect(revertTargetOf("revert: feat: a\n\nRefs: 0123abc\n")).toEqual({ header: "feat: a", hash: "0123abc" });
    expect(revertTargetOf('Reapply "feat: a" (#41)')).toEqual({ header: 'Revert "feat: a" (#41)' });
    expect(revertTargetOf('Reapply "feat: a"\n\nThis reverts commit abcdef1.\n')).toEqual({ header: 'Revert "feat: a"', hash: "abcdef1" });
    expect(revertTargetOf("feat: a\n\nThis reverts commit abcdef1.\n")).toBeUndefined();
  });
});
