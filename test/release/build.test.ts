import { afterEach, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { pack } from "tar-stream";
import { buildRelease, checkDist, filesAllowList } from "../../release/build.js";
import { readReleaseConfig } from "../../release/config.js";
import { materializeRelease } from "../../release/materialize.js";
import { restoreSource } from "../../release/restore.js";
import { createFixtureRepo, fixtureGit, type FixtureRepo } from "../support/git-fixture.js";

const repos: FixtureRepo[] = [];
afterEach(async () => {
  while (repos.length > 0) await repos.pop()?.cleanup();
});

async function fixture(options: Parameters<typeof createFixtureRepo>[0] = {}): Promise<FixtureRepo> {
  const repo = await createFixtureRepo({ origin: false, ...options });
  repos.push(repo);
  return repo;
}

const sha256 = async (path: string) => createHash("sha256").update(await readFile(path)).digest("hex");

/** A gzip tarball with the given members (name -> content, or {symlink}). */
async function craftTarball(path: string, members: Record<string, string | { symlink: string }> | [string, string][]): Promise<void> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on("data", (c: unknown) => {
    chunks.push(c as Buffer);
  });
  const done = new Promise<void>((resolve) => p.on("end", () => resolve()));
  for (const [name, content] of Array.isArray(members) ? members : Object.entries(members)) {
    if (typeof content === "string") p.entry({ name, mtime: new Date(0), mode: 0o644 }, content);
    else p.entry({ name, type: "symlink", linkname: content.symlink, mtime: new Date(0) });
  }
  p.finalize();
  await done;
  await writeFile(path, gzipSync(Buffer.concat(chunks)));
}

const PKG = JSON.stringify({ name: "fixture-plugin", version: "0.7.0", type: "module", main: "./index.js", exports: { ".": "./index.js" }, files: ["index.js", "lib"] });

describe("filesAllowList", () => {
  it("follows npm's files rules and always-packed files", () => {
    const allowed = filesAllowList({ main: "./main.cjs", bin: { tool: "./bin/tool.js" }, files: ["dist/src", "*.md", "lib/**/*.js", "!lib/secret.js", "schema/"] });
    for (const p of ["package.json", "README.md", "LICENSE", "licence.txt", "main.cjs", "bin/tool.js", "dist/src/a.js", "dist/src/deep/b.d.ts", "docs/guide.md", "lib/a/b.js", "schema/x.json"]) expect(allowed(p), p).toBe(true);
    for (const p of ["dist/other.js", "src/a.ts", "lib/a/b.ts", ".env", "package-lock.json", "dist/srcx/a.js"]) expect(allowed(p), p).toBe(false);
  });
});

describe("release build / check-dist", () => {
  it("packs once into an empty dist and the same commit packs to identical bytes", async () => {
    const repo = await fixture();
    const first = await buildRelease({ dir: repo.dir, artifactDir: join(repo.root, "dist-a") });
    expect(first).toMatchObject({ package: "fixture-plugin", version: "0.7.0", files: 5, artifact: { filename: "fixture-plugin-0.7.0.tgz" } });
    const second = await buildRelease({ dir: repo.dir, artifactDir: join(repo.root, "dist-b") });
    expect(second.artifact).toEqual(first.artifact);
    expect(await sha256(join(repo.root, "dist-b", "fixture-plugin-0.7.0.tgz"))).toBe(first.artifact.sha256);
  });

  it("restore + build on two fresh checkouts give byte-identical tarballs", async () => {
    const repo = await createFixtureRepo();
    repos.push(repo);
    const trigger = await repo.commit("feat: add farewell", { "lib/farewell.js": "export const bye = () => 'bye';\n" });
    const out = join(repo.root, "out");
    await mkdir(out);
    await materializeRelease({ dir: repo.dir, expectedSha: trigger, outputDir: out, environment: { SEMANTIC_RELEASE_ENABLED: "true" }, dateSeconds: 1_767_312_000 });
    const bundle = join(out, "release-source.bundle");
    const a = await restoreSource({ bundle, expectedSha: trigger, dir: join(repo.root, "a") });
    const b = await restoreSource({ bundle, expectedSha: trigger, dir: join(repo.root, "b") });
    const ba = await buildRelease({ dir: a.dir, artifactDir: join(repo.root, "a-dist") });
    const bb = await buildRelease({ dir: b.dir, artifactDir: join(repo.root, "b-dist") });
    expect(ba.artifact.filename).toBe("fixture-plugin-0.8.0.tgz");
    expect(bb.artifact).toEqual(ba.artifact);
    expect(await fixtureGit(a.dir, ["status", "--porcelain", "--untracked-files=all"])).toBe("");
  });

  it("refuses a non-empty artifact directory before packing", async () => {
    const repo = await fixture();
    const dist = join(repo.root, "dist");
    await mkdir(dist);
    await writeFile(join(dist, "old.tgz"), "x");
    await expect(buildRelease({ dir: repo.dir, artifactDir: dist })).rejects.toMatchObject({ code: "RELEASE_DIST_INVALID" });
  });

  it("fails closed on an extra file, a symlink, a renamed tarball, a missing dist", async () => {
    const repo = await fixture();
    const config = await readReleaseConfig(repo.dir);
    const dist = join(repo.root, "dist");
    const built = await buildRelease({ dir: repo.dir, artifactDir: dist });
    const tgz = join(dist, built.artifact.filename);
    await writeFile(join(dist, "private-notes.txt"), "secret");
    await expect(checkDist(config, dist, "0.7.0")).rejects.toMatchObject({ code: "DIST_UNEXPECTED_FILE" });
    await rename(join(dist, "private-notes.txt"), join(repo.root, "notes.txt"));
    await rename(tgz, join(repo.root, "real.tgz"));
    await symlink(join(repo.root, "real.tgz"), tgz);
    await expect(checkDist(config, dist, "0.7.0")).rejects.toMatchObject({ code: "RELEASE_DIST_INVALID" });
    await rename(join(repo.root, "real.tgz"), join(repo.root, "kept.tgz"));
    await expect(checkDist(config, join(repo.root, "no-such-dist"), "0.7.0")).rejects.toMatchObject({ code: "DIST_INVENTORY" });
    // A 0.7.0 tarball renamed to the 0.8.0 name: its package.json version differs from its file name.
    const renamed = join(repo.root, "renamed");
    await mkdir(renamed);
    await rename(join(repo.root, "kept.tgz"), join(renamed, "fixture-plugin-0.8.0.tgz"));
    await expect(checkDist(config, renamed, "0.8.0")).rejects.toMatchObject({ code: "TARBALL_VERSION_MISMATCH" });
  });

  it("refuses tarball members outside files (RELEASE_DIST_CONTENTS) and, through the strict reader, symlink members, unsafe paths, duplicates", async () => {
    const repo = await fixture();
    const config = await readReleaseConfig(repo.dir);
    const cases: [Record<string, string | { symlink: string }>, string, string][] = [
      [{ "package/package.json": PKG, "package/index.js": "export {};\n", "package/.env": "TOKEN=x\n" }, "RELEASE_DIST_CONTENTS", ".env"],
      [{ "package/package.json": PKG, "package/index.js": "export {};\n", "package/lib/link.js": { symlink: "/etc/passwd" } }, "TARBALL_ENTRY_TYPE", "symbolic link"],
      [{ "package/package.json": PKG, "package/index.js": "export {};\n", "package/../escape.js": "x" }, "TARBALL_PATH_UNSAFE", "'..'"],
      [{ "package/package.json": PKG, "other/index.js": "x" }, "TARBALL_PATH_UNSAFE", "under package/"],
      [{ "package/package.json": PKG, "package/index.js": "export {};\n", "package/./index.js": "export const evil = 1;\n" }, "TARBALL_PATH_UNSAFE", "'.'"],
    ];
    let n = 0;
    for (const [members, code, hint] of cases) {
      n += 1;
      const dist = join(repo.root, `crafted-${n}`);
      await mkdir(dist);
      await craftTarball(join(dist, "fixture-plugin-0.7.0.tgz"), members);
      await expect(checkDist(config, dist, "0.7.0"), hint).rejects.toMatchObject({ code, message: expect.stringContaining(hint) });
    }
    const dup = join(repo.root, "crafted-dup");
    await mkdir(dup);
    await craftTarball(join(dup, "fixture-plugin-0.7.0.tgz"), [
      ["package/package.json", PKG],
      ["package/index.js", "export {};\n"],
      ["package/index.js", "export const evil = 1;\n"],
    ]);
    await expect(checkDist(config, dup, "0.7.0")).rejects.toMatchObject({ code: "TARBALL_DUPLICATE_MEMBER", message: expect.stringContaining("twice") });
    const good = join(repo.root, "crafted-good");
    await mkdir(good);
    await craftTarball(join(good, "fixture-plugin-0.7.0.tgz"), { "package/package.json": PKG, "package/index.js": "export {};\n", "package/README.md": "# x\n" });
    await expect(checkDist(config, good, "0.7.0")).resolves.toMatchObject({ files: 3 });
  });

  it("refuses a prepare script that rewrites the committed source", async () => {
    const repo = await fixture({ packageJson: { scripts: { prepare: "echo rewritten >> README.md" } } });
    await expect(buildRelease({ dir: repo.dir, artifactDir: join(repo.root, "dist") })).rejects.toMatchObject({ code: "RELEASE_BUILD_TREE_CHANGED" });
  });

  it("refuses a tarball publint rejects (entry point missing)", async () => {
    const repo = await fixture({ packageJson: { main: "./missing.js", exports: { ".": "./missing.js" } } });
    await expect(buildRelease({ dir: repo.dir, artifactDir: join(repo.root, "dist") })).rejects.toMatchObject({ code: "RELEASE_DIST_LINT", message: expect.stringContaining("FILE_DOES_NOT_EXIST") });
  });
});
