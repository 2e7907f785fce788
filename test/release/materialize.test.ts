import { afterEach, describe, expect, it } from "vitest";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { attachTrigger, materializeRelease, prependChangelog, RELEASE_BOT_IDENTITY } from "../../release/materialize.js";
import { createFixtureRepo, fixtureGit, type FixtureRepo } from "../support/git-fixture.js";

const ARMED = { SEMANTIC_RELEASE_ENABLED: "true" };
const DATE = 1_767_312_000; // 2026-01-02T00:00:00Z
const repos: FixtureRepo[] = [];
afterEach(async () => {
  while (repos.length > 0) await repos.pop()?.cleanup();
});

async function fixture(messages: string[]): Promise<{ repo: FixtureRepo; trigger: string; out: string }> {
  const repo = await createFixtureRepo();
  repos.push(repo);
  let n = 0;
  for (const m of messages) {
    n += 1;
    await repo.commit(m, { [`lib/change-${n}.js`]: `export const n = ${n};\n` });
  }
  const out = join(repo.root, "out");
  await mkdir(out);
  return { repo, trigger: await repo.head(), out };
}

async function snapshot(repo: FixtureRepo): Promise<string> {
  const refs = await fixtureGit(repo.dir, ["for-each-ref", "--format=%(refname) %(objectname)"]);
  const status = await fixtureGit(repo.dir, ["status", "--porcelain", "--untracked-files=all"]);
  const head = await repo.head();
  return `${head}\n${refs}\n${status}`;
}

describe("prependChangelog", () => {
  it("keeps the title, puts the notes first, keeps older entries", () => {
    expect(prependChangelog("# Changelog\n\n## 0.7.0\n\n* initial\n", "## 0.8.0\n\n* new\n")).toBe("# Changelog\n\n## 0.8.0\n\n* new\n\n## 0.7.0\n\n* initial\n");
    expect(prependChangelog(undefined, "## 1.0.0\n")).toBe("# Changelog\n\n## 1.0.0\n");
    expect(prependChangelog("## 0.1.0\n", "## 0.2.0\n")).toBe("## 0.2.0\n\n## 0.1.0\n");
  });
});

describe("release materialize", () => {
  it("commits the version as the bot, tags it, bundles exactly two refs, pushes nothing", async () => {
    const { repo, trigger, out } = await fixture(["feat: add farewell", "fix: repair greeting"]);
    const originBefore = await fixtureGit(repo.dir, ["ls-remote", "origin"]);
    const r = await materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: out, environment: ARMED, dateSeconds: DATE });
    expect(r).toMatchObject({ released: true, previous_version: "0.7.0", version: "0.8.0", tag: "v0.8.0", release_class: "minor", trigger_sha: trigger });
    if (!r.released) throw new Error("not released");
    expect(await repo.head()).toBe(r.source_sha);
    expect(await fixtureGit(repo.dir, ["rev-parse", "HEAD^"])).toBe(trigger);
    expect(await fixtureGit(repo.dir, ["log", "-1", "--format=%an <%ae>|%cn <%ce>|%s|%ct"])).toBe(
      `${RELEASE_BOT_IDENTITY.name} <${RELEASE_BOT_IDENTITY.email}>|${RELEASE_BOT_IDENTITY.name} <${RELEASE_BOT_IDENTITY.email}>|chore(release): v0.8.0|${DATE}`,
    );
    expect(await fixtureGit(repo.dir, ["rev-parse", "v0.8.0^{commit}"])).toBe(r.source_sha);
    expect((await fixtureGit(repo.dir, ["diff", "--name-only", trigger, "HEAD"])).split("\n")).toEqual(["CHANGELOG.md", "package-lock.json", "package.json"]);
    const pkg = JSON.parse(await readFile(join(repo.dir, "package.json"), "utf8"));
    const lock = JSON.parse(await readFile(join(repo.dir, "package-lock.json"), "utf8"));
    expect([pkg.version, lock.version, lock.packages[""].version]).toEqual(["0.8.0", "0.8.0", "0.8.0"]);
    expect((await fixtureGit(repo.dir, ["diff", trigger, "HEAD", "--", "package.json"])).split("\n").filter((l) => /^[-+][^-+]/.test(l))).toEqual(['-  "version": "0.7.0",', '+  "version": "0.8.0",']);
    const changelog = await readFile(join(repo.dir, "CHANGELOG.md"), "utf8");
    expect(changelog.startsWith("# Changelog\n\n## 0.8.0")).toBe(true);
    expect(changelog).toContain("add farewell");
    expect(changelog).toContain("## 0.7.0\n\n* initial");
    const heads = await fixtureGit(out, ["bundle", "list-heads", join(out, "release-source.bundle")]);
    const tagObject = await fixtureGit(repo.dir, ["rev-parse", "refs/tags/v0.8.0"]);
    expect(heads.split("\n").sort()).toEqual([`${r.source_sha} refs/heads/release-candidate`, `${tagObject} refs/tags/v0.8.0`].sort());
    expect(await readFile(join(out, "release-source.sha256"), "utf8")).toBe(`${r.bundle_sha256}  release-source.bundle\n`);
    expect(await fixtureGit(repo.dir, ["branch", "--list", "release-candidate"])).toBe("");
    expect(await fixtureGit(repo.dir, ["ls-remote", "origin"])).toBe(originBefore);
  });

  it("tags annotated: tagger = the release identity, date = the release commit's, git describe names the release", async () => {
    const { repo, trigger, out } = await fixture(["feat: add farewell"]);
    const r = await materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: out, environment: ARMED, dateSeconds: DATE });
    if (!r.released) throw new Error("not released");
    expect(await fixtureGit(repo.dir, ["cat-file", "-t", "v0.8.0"])).toBe("tag");
    expect(await fixtureGit(repo.dir, ["cat-file", "tag", "v0.8.0"])).toBe(
      `object ${r.source_sha}\ntype commit\ntag v0.8.0\ntagger ${RELEASE_BOT_IDENTITY.name} <${RELEASE_BOT_IDENTITY.email}> ${DATE} +0000\n\nv0.8.0`,
    );
    // The baseline v0.7.0 is lightweight (as a maintainer may seed it): describe still names the new release.
    expect(await fixtureGit(repo.dir, ["describe", r.source_sha])).toBe("v0.8.0");
    expect(await fixtureGit(repo.dir, ["describe", "--exact-match", "HEAD"])).toBe("v0.8.0");
  });

  it("a redo from the same trigger writes byte-identical commit, tag object and bundle refs, even with tag signing configured", async () => {
    const { repo, trigger, out } = await fixture(["fix: same"]);
    await fixtureGit(repo.dir, ["config", "tag.gpgSign", "true"]);
    await fixtureGit(repo.dir, ["config", "tag.forceSignAnnotated", "true"]);
    const runs: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const r = await materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: out, environment: ARMED, dateSeconds: DATE });
      if (!r.released) throw new Error("not released");
      runs.push(`${r.source_sha} ${await fixtureGit(repo.dir, ["rev-parse", "refs/tags/v0.7.1"])}\n${await fixtureGit(out, ["bundle", "list-heads", join(out, "release-source.bundle")])}`);
      // Undo the local release as a crashed job's fresh clone would not have it.
      await fixtureGit(repo.dir, ["tag", "-d", "v0.7.1"]);
      await fixtureGit(repo.dir, ["reset", "--quiet", "--hard", trigger]);
      await rm(join(out, "release-source.bundle"));
      await rm(join(out, "release-source.sha256"));
    }
    expect(runs[1]).toBe(runs[0]);
  });

  it("refuses a second run on the same trigger (the tag exists) and changes nothing", async () => {
    const { repo, trigger, out } = await fixture(["fix: once"]);
    const first = await materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: out, environment: ARMED, dateSeconds: DATE });
    expect(first.released).toBe(true);
    const before = await snapshot(repo);
    const bundleBefore = await readFile(join(out, "release-source.bundle"));
    await expect(materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: out, environment: ARMED, dateSeconds: DATE })).rejects.toMatchObject({
      code: "RELEASE_TAG_EXISTS",
      message: expect.stringContaining("v0.7.1"),
    });
    // Same trigger checked out again (a fresh job at the trigger with the tag still present locally).
    await fixtureGit(repo.dir, ["checkout", "--quiet", "-B", "main", trigger]);
    const atTrigger = await snapshot(repo);
    await expect(materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: join(repo.root, "out2"), environment: ARMED, dateSeconds: DATE })).rejects.toMatchObject({
      code: "RELEASE_TAG_EXISTS",
    });
    expect(await snapshot(repo)).toBe(atTrigger);
    expect(before).not.toBe(atTrigger);
    expect(await readFile(join(out, "release-source.bundle"))).toEqual(bundleBefore);
  });

  it("fails closed before any write: HEAD is not the trigger, output exists, nothing to release, disarmed", async () => {
    const { repo, trigger, out } = await fixture(["fix: x"]);
    const before = await snapshot(repo);
    await expect(materializeRelease({ dir: repo.dir, expectedSha: "0".repeat(40), outputDir: out, environment: ARMED })).rejects.toMatchObject({ code: "RELEASE_HEAD_MISMATCH" });
    await writeFile(join(out, "release-source.bundle"), "old");
    await expect(materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: out, environment: ARMED })).rejects.toMatchObject({ code: "RELEASE_OUTPUT_NOT_EMPTY" });
    expect(await materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: out, environment: {} })).toEqual({ released: false, disarmed: true });
    expect(await snapshot(repo)).toBe(before);

    const docs = await fixture(["docs: words only"]);
    const docsBefore = await snapshot(docs.repo);
    expect(await materializeRelease({ dir: docs.repo.dir, expectedSha: docs.trigger, outputDir: docs.out, environment: ARMED })).toEqual({ released: false, previous_version: "0.7.0", trigger_sha: docs.trigger });
    expect(await snapshot(docs.repo)).toBe(docsBefore);
  });

  it("puts the three files back when the commit cannot be made", async () => {
    const { repo, trigger, out } = await fixture(["fix: x"]);
    const before = await snapshot(repo);
    const pkgBefore = await readFile(join(repo.dir, "package.json"));
    await writeFile(join(repo.dir, ".git", "index.lock"), "");
    await expect(materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: out, environment: ARMED })).rejects.toMatchObject({ code: "GIT_FAILED", message: expect.stringContaining("git add failed") });
    await rm(join(repo.dir, ".git", "index.lock"));
    expect(await readFile(join(repo.dir, "package.json"))).toEqual(pkgBefore);
    expect(await snapshot(repo)).toBe(before);
  });

  it("refuses a stale lockfile before writing", async () => {
    const { repo, out } = await fixture([]);
    await repo.commit("fix: lock drift", { "package-lock.json": JSON.stringify({ name: "fixture-plugin", version: "0.6.0", lockfileVersion: 3, packages: { "": { version: "0.6.0" } } }, null, 2) + "\n" });
    const trigger = await repo.head();
    const before = await snapshot(repo);
    await expect(materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: out, environment: ARMED })).rejects.toMatchObject({ code: "RELEASE_LOCKFILE_INVALID" });
    expect(await snapshot(repo)).toBe(before);
  });
});

describe("release attach-trigger", () => {
  it("force-creates main at the trigger from a detached checkout; refuses another ref or HEAD", async () => {
    const { repo, trigger } = await fixture(["fix: x"]);
    await repo.commit("fix: newer", { "lib/newer.js": "export {};\n" });
    await fixtureGit(repo.dir, ["checkout", "--quiet", "--detach", trigger]);
    await expect(attachTrigger({ dir: repo.dir, expectedSha: trigger, environment: { GITHUB_REF: "refs/heads/feature" } })).rejects.toMatchObject({ code: "RELEASE_HEAD_MISMATCH" });
    await expect(attachTrigger({ dir: repo.dir, expectedSha: "e".repeat(40), environment: {} })).rejects.toMatchObject({ code: "RELEASE_HEAD_MISMATCH" });
    expect(await fixtureGit(repo.dir, ["rev-parse", "--abbrev-ref", "HEAD"])).toBe("HEAD");
    expect(await attachTrigger({ dir: repo.dir, expectedSha: trigger, environment: { GITHUB_REF: "refs/heads/main" } })).toEqual({ branch: "main", head: trigger });
    expect(await fixtureGit(repo.dir, ["rev-parse", "--abbrev-ref", "HEAD"])).toBe("main");
    expect(await fixtureGit(repo.dir, ["rev-parse", "main"])).toBe(trigger);
  });
});
