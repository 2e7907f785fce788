import { afterEach, describe, expect, it } from "vitest";
import { mkdir, readdir, writeFile, appendFile, readFile, rm } from "node:fs/promises";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { materializeRelease } from "../../release/materialize.js";
import { restoreSource } from "../../release/restore.js";
import { createReleaseTag } from "../../release/release-tag.js";
import { gitText } from "../../release/git.js";
import { createFixtureRepo, fixtureGit, fixtureLockfile, fixturePackageJson, type FixtureRepo } from "../support/git-fixture.js";

const ARMED = { SEMANTIC_RELEASE_ENABLED: "true" };
const repos: FixtureRepo[] = [];
afterEach(async () => {
  while (repos.length > 0) await repos.pop()?.cleanup();
});

async function materialized(): Promise<{ repo: FixtureRepo; trigger: string; out: string; bundle: string; source: string }> {
  const repo = await createFixtureRepo();
  repos.push(repo);
  await repo.commit("feat: add farewell", { "lib/farewell.js": "export const bye = 1;\n" });
  const trigger = await repo.head();
  const out = join(repo.root, "out");
  await mkdir(out);
  const r = await materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: out, environment: ARMED, dateSeconds: 1_767_312_000 });
  if (!r.released) throw new Error("not released");
  return { repo, trigger, out, bundle: join(out, "release-source.bundle"), source: r.source_sha };
}

/** A hand-made release: commit `chore(release): v0.8.0` with `files` on top of HEAD, tag, bundle of `refs`, checksum. */
async function handMade(files: Record<string, string>, extraRefs: string[] = []): Promise<{ repo: FixtureRepo; trigger: string; bundle: string }> {
  const repo = await createFixtureRepo();
  repos.push(repo);
  const trigger = await repo.commit("feat: something");
  await repo.commit("chore(release): v0.8.0", {
    "package.json": fixturePackageJson({ version: "0.8.0" }),
    "package-lock.json": fixtureLockfile("fixture-plugin", "0.8.0"),
    ...files,
  });
  await createReleaseTag(repo.dir, "0.8.0", await repo.head());
  await fixtureGit(repo.dir, ["branch", "release-candidate"]);
  const out = join(repo.root, "out");
  await mkdir(out);
  const bundle = join(out, "release-source.bundle");
  await fixtureGit(repo.dir, ["bundle", "create", "--quiet", bundle, "refs/heads/release-candidate", "refs/tags/v0.8.0", ...extraRefs]);
  const digest = createHash("sha256").update(await readFile(bundle)).digest("hex");
  await writeFile(join(out, "release-source.sha256"), `${digest}  release-source.bundle\n`);
  return { repo, trigger, bundle };
}

async function exists(path: string): Promise<boolean> {
  return readdir(path).then(
    () => true,
    () => false,
  );
}

describe("release restore", () => {
  it("unbundles into a clean checkout detached at the release commit and re-proves identity", async () => {
    const { repo, trigger, bundle, source } = await materialized();
    const dir = join(repo.root, "restored");
    const r = await restoreSource({ bundle, expectedSha: trigger, dir });
    expect(r).toMatchObject({ restored: true, dir, source_sha: source, trigger_sha: trigger, tag: "v0.8.0", version: "0.8.0" });
    expect(await fixtureGit(dir, ["rev-parse", "HEAD"])).toBe(source);
    expect(await fixtureGit(dir, ["status", "--porcelain", "--untracked-files=all"])).toBe("");
    expect(await fixtureGit(dir, ["for-each-ref", "--format=%(refname)"])).toBe("refs/heads/release-candidate\nrefs/tags/v0.8.0");
    expect(JSON.parse(await readFile(join(dir, "package.json"), "utf8")).version).toBe("0.8.0");
  });

  it("refuses a wrong trigger, a tampered bundle, a missing checksum line, a non-empty directory", async () => {
    const { repo, trigger, bundle, out } = await materialized();
    await expect(restoreSource({ bundle, expectedSha: "1".repeat(40), dir: join(repo.root, "r1") })).rejects.toMatchObject({ code: "RELEASE_IDENTITY_MISMATCH" });
    expect(await exists(join(repo.root, "r1"))).toBe(false);
    expect((await readdir(repo.root)).filter((n) => n.includes("restore-"))).toEqual([]);
    const busy = join(repo.root, "busy");
    await mkdir(busy);
    await writeFile(join(busy, "x"), "x");
    await expect(restoreSource({ bundle, expectedSha: trigger, dir: busy })).rejects.toMatchObject({ code: "RELEASE_OUTPUT_NOT_EMPTY" });
    await writeFile(join(out, "other.sha256"), "");
    await expect(restoreSource({ bundle, expectedSha: trigger, dir: join(repo.root, "r2"), checksumFile: join(out, "other.sha256") })).rejects.toMatchObject({ code: "RELEASE_BUNDLE_CHECKSUM" });
    await appendFile(bundle, "x");
    const dir = join(repo.root, "r3");
    await expect(restoreSource({ bundle, expectedSha: trigger, dir })).rejects.toMatchObject({ code: "RELEASE_BUNDLE_CHECKSUM" });
    expect(await exists(dir)).toBe(false);
  });

  it("refuses a bundle with a third ref before creating the checkout", async () => {
    const { repo, trigger, bundle } = await handMade({}, ["refs/heads/main"]);
    const dir = join(repo.root, "restored");
    await expect(restoreSource({ bundle, expectedSha: trigger, dir })).rejects.toMatchObject({ code: "RELEASE_BUNDLE_REFS", message: expect.stringContaining("refs/heads/main") });
    expect(await exists(dir)).toBe(false);
  });

  it("refuses a release commit that also touches src/", async () => {
    const { repo, trigger, bundle } = await handMade({ "src/sneaky.js": "export const x = 1;\n", "CHANGELOG.md": "# Changelog\n\n## 0.8.0\n" });
    await expect(restoreSource({ bundle, expectedSha: trigger, dir: join(repo.root, "restored") })).rejects.toMatchObject({
      code: "RELEASE_IDENTITY_MISMATCH",
      message: expect.stringContaining("src/sneaky.js"),
    });
    expect(await exists(join(repo.root, "restored"))).toBe(false);
  });

  it("refuses refs that name different commits", async () => {
    const split = await createFixtureRepo();
    repos.push(split);
    const trigger = await split.commit("feat: something");
    await split.commit("chore(release): v0.8.0", { "package.json": fixturePackageJson({ version: "0.8.0" }), "package-lock.json": fixtureLockfile("fixture-plugin", "0.8.0") });
    await fixtureGit(split.dir, ["tag", "v0.8.0"]);
    await fixtureGit(split.dir, ["branch", "release-candidate", trigger]);
    const out = join(split.root, "out");
    await mkdir(out);
    const bundle = join(out, "release-source.bundle");
    await fixtureGit(split.dir, ["bundle", "create", "--quiet", bundle, "refs/heads/release-candidate", "refs/tags/v0.8.0"]);
    await writeFile(join(out, "release-source.sha256"), `${createHash("sha256").update(await readFile(bundle)).digest("hex")}  release-source.bundle\n`);
    await expect(restoreSource({ bundle, expectedSha: trigger, dir: join(split.root, "restored") })).rejects.toMatchObject({ code: "RELEASE_BUNDLE_REFS" });
    expect(await exists(join(split.root, "restored"))).toBe(false);

  });

  it.each([
    ["a lightweight tag", ["tag", "v0.8.0"], "lightweight"],
    ["an annotated tag by another tagger", ["tag", "-a", "-m", "v0.8.0", "v0.8.0"], "tagger"],
    ["an annotated tag with another message", ["-c", "user.name=github-actions[bot]", "-c", "user.email=41898282+github-actions[bot]@users.noreply.github.com", "tag", "-a", "-m", "release", "v0.8.0"], "message"],
  ])("refuses %s on the release commit (release tags are the exact annotated tag)", async (_label, tagArgs, fact) => {
    const repo = await createFixtureRepo();
    repos.push(repo);
    const trigger = await repo.commit("feat: something");
    await repo.commit("chore(release): v0.8.0", { "package.json": fixturePackageJson({ version: "0.8.0" }), "package-lock.json": fixtureLockfile("fixture-plugin", "0.8.0") });
    const head = await repo.head();
    if (fact === "message") {
      const date = (await fixtureGit(repo.dir, ["log", "-1", "--format=%ct"])) + " +0000";
      await gitText(tagArgs, { cwd: repo.dir, env: { GIT_COMMITTER_DATE: date, GIT_COMMITTER_NAME: "github-actions[bot]", GIT_COMMITTER_EMAIL: "41898282+github-actions[bot]@users.noreply.github.com" } });
    } else await fixtureGit(repo.dir, tagArgs);
    await fixtureGit(repo.dir, ["branch", "release-candidate"]);
    const out = join(repo.root, "out");
    await mkdir(out);
    const bundle = join(out, "release-source.bundle");
    await fixtureGit(repo.dir, ["bundle", "create", "--quiet", bundle, "refs/heads/release-candidate", "refs/tags/v0.8.0"]);
    await writeFile(join(out, "release-source.sha256"), `${createHash("sha256").update(await readFile(bundle)).digest("hex")}  release-source.bundle\n`);
    await expect(restoreSource({ bundle, expectedSha: trigger, dir: join(repo.root, "restored") })).rejects.toMatchObject({ code: "RELEASE_IDENTITY_MISMATCH", message: expect.stringContaining(fact) });
    expect(await exists(join(repo.root, "restored"))).toBe(false);
    // The exact release tag on the same commit restores.
    await fixtureGit(repo.dir, ["tag", "-d", "v0.8.0"]);
    await createReleaseTag(repo.dir, "0.8.0", head);
    await rm(bundle);
    await fixtureGit(repo.dir, ["bundle", "create", "--quiet", bundle, "refs/heads/release-candidate", "refs/tags/v0.8.0"]);
    await writeFile(join(out, "release-source.sha256"), `${createHash("sha256").update(await readFile(bundle)).digest("hex")}  release-source.bundle\n`);
    await expect(restoreSource({ bundle, expectedSha: trigger, dir: join(repo.root, "restored") })).resolves.toMatchObject({ version: "0.8.0", source_sha: head });
  });

  it("accepts the hand-made release when it touches only the three files (control)", async () => {
    const { repo, trigger, bundle } = await handMade({ "CHANGELOG.md": "# Changelog\n\n## 0.8.0\n" });
    await expect(restoreSource({ bundle, expectedSha: trigger, dir: join(repo.root, "restored") })).resolves.toMatchObject({ version: "0.8.0" });
  });
});
