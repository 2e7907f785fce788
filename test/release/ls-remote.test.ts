/**
 * The one `git ls-remote` reader (release/git.ts): exact ref names only, tags
 * peeled, with real git and a bare origin.
 */
import { afterEach, describe, expect, it } from "vitest";
import { listedTag, lsRemote, remoteBranchCommit, remoteTagCommit } from "../../release/git.js";
import { createFixtureRepo, fixtureGit, type FixtureRepo } from "../support/git-fixture.js";

const repos: FixtureRepo[] = [];
afterEach(async () => {
  while (repos.length > 0) await repos.pop()?.cleanup();
});

describe("lsRemote", () => {
  it("reads only the exact ref: a branch x/refs/heads/main (which git's tail match also lists) is never main", async () => {
    const repo = await createFixtureRepo();
    repos.push(repo);
    const first = await repo.head();
    await repo.commit("fix: later", { "lib/later.js": "export {};\n" });
    const second = await repo.head();
    await fixtureGit(repo.dir, ["push", "--quiet", "origin", `${second}:refs/heads/main`, `${first}:refs/heads/a/refs/heads/main`]);
    const listed = await lsRemote(repo.dir, "origin", ["refs/heads/main"]);
    expect(listed.get("refs/heads/a/refs/heads/main")).toBe(first);
    expect(await remoteBranchCommit(repo.dir, "origin", "main")).toBe(second);
    expect(await remoteBranchCommit(repo.dir, "origin", "absent")).toBeUndefined();
  });

  it("peels an annotated tag, keeps its object, and answers undefined for an absent tag", async () => {
    const repo = await createFixtureRepo();
    repos.push(repo);
    const head = await repo.head();
    await fixtureGit(repo.dir, ["tag", "--annotate", "-m", "v9.9.9", "v9.9.9", head]);
    await fixtureGit(repo.dir, ["push", "--quiet", "origin", "refs/tags/v9.9.9:refs/tags/v9.9.9"]);
    const object = (await fixtureGit(repo.dir, ["rev-parse", "refs/tags/v9.9.9"])).trim();
    expect(object).not.toBe(head);
    const tag = listedTag(await lsRemote(repo.dir, "origin", ["refs/tags/v9.9.9", "refs/tags/v9.9.9^{}"]), "v9.9.9");
    expect(tag).toEqual({ commit: head, object });
    expect(await remoteTagCommit(repo.dir, "origin", "v9.9.9")).toBe(head);
    expect(await remoteTagCommit(repo.dir, "origin", "v0.0.1")).toBeUndefined();
  });
});
