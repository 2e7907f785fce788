import { createHash } from "node:crypto";
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkReplaceTarget, INSTALL_LOCK_FILE, installPayload, replaceInstall, type InstallFile } from "../../src/fetch/install.js";
import { spawnSync } from "node:child_process";

let root: string;
let files: InstallFile[];

async function source(name: string, content: string, localName = name.replaceAll("/", "_")): Promise<InstallFile> {
  const path = join(root, "verified", localName);
  await writeFile(path, content);
  return { path: name, source: path, sha256: createHash("sha256").update(content).digest("hex") };
}

async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    out.push(join(entry.parentPath, entry.name).slice(dir.length + 1) + (entry.isSymbolicLink() ? "@" : entry.isDirectory() ? "/" : ""));
  }
  return out.sort();
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-install-"));
  await mkdir(join(root, "verified"));
  files = [
    await source("release-manifest.json", "{}\n"),
    await source("release-source.bundle", "bundle"),
    await source("release-payload.sha256", "sums"),
    await source("dist/demo-1.0.0.tgz", "tarball"),
  ];
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("installPayload", () => {
  it("creates D (and missing parents) and writes every file, mode 0644", async () => {
    const out = join(root, "a", "b", "D");
    const result = await installPayload(out, files);
    expect(result.written.sort()).toEqual(files.map((f) => f.path).sort());
    expect(await tree(out)).toEqual(["dist/", "dist/demo-1.0.0.tgz", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);
    expect(await readFile(join(out, "dist/demo-1.0.0.tgz"), "utf8")).toBe("tarball");
    expect((await stat(join(out, "release-manifest.json"))).mode & 0o7777).toBe(0o644 & ~process.umask());
  });

  it("a second install is a no-op that leaves identical files untouched", async () => {
    const out = join(root, "D");
    await installPayload(out, files);
    const before = await lstat(join(out, "dist/demo-1.0.0.tgz"));
    const result = await installPayload(out, files);
    expect(result.written).toEqual([]);
    expect(result.unchanged.sort()).toEqual(files.map((f) => f.path).sort());
    const after = await lstat(join(out, "dist/demo-1.0.0.tgz"));
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
  });

  it("keeps unrelated files in an existing D", async () => {
    const out = join(root, "D");
    await mkdir(out);
    await writeFile(join(out, "mine.txt"), "keep");
    await installPayload(out, files);
    expect(await readFile(join(out, "mine.txt"), "utf8")).toBe("keep");
  });

  it("refuses D as a symlink", async () => {
    const real = join(root, "real");
    await mkdir(real);
    await symlink(real, join(root, "D"));
    await expect(() => installPayload(join(root, "D"), files)).toThrowWithCode("INSTALL_OUTPUT_SYMLINK");
    expect(await readdir(real)).toEqual([]);
  });

  it("refuses D/dist as a symlink to an outside directory, which stays empty; D unchanged", async () => {
    const out = join(root, "D");
    const outside = join(root, "outside");
    await mkdir(out);
    await mkdir(outside);
    await symlink(outside, join(out, "dist"));
    const before = await tree(out);
    await expect(() => installPayload(out, files)).toThrowWithCode("INSTALL_UNSAFE_PATH");
    expect(await readdir(outside)).toEqual([]);
    expect(await tree(out)).toEqual(before);
  });

  it("refuses a target that is a symlink, even to identical bytes", async () => {
    const out = join(root, "D");
    await mkdir(out);
    await symlink(files[0]!.source, join(out, "release-manifest.json"));
    await expect(() => installPayload(out, files)).toThrowWithCode("INSTALL_UNSAFE_PATH");
    expect(await tree(out)).toEqual(["release-manifest.json@"]);
  });

  it("refuses to overwrite D/dist/<file> holding other bytes; D unchanged", async () => {
    const out = join(root, "D");
    await mkdir(join(out, "dist"), { recursive: true });
    await writeFile(join(out, "dist/demo-1.0.0.tgz"), "other bytes");
    await expect(() => installPayload(out, files)).toThrowWithCode("INSTALL_OVERWRITE_REFUSED");
    expect(await tree(out)).toEqual(["dist/", "dist/demo-1.0.0.tgz"]);
    expect(await readFile(join(out, "dist/demo-1.0.0.tgz"), "utf8")).toBe("other bytes");
  });

  it("refuses a directory where a file goes, and a file where a directory goes", async () => {
    const out = join(root, "D");
    await mkdir(join(out, "release-manifest.json"), { recursive: true });
    await expect(() => installPayload(out, files)).toThrowWithCode("INSTALL_OVERWRITE_REFUSED");
    await rm(out, { recursive: true });
    await mkdir(out);
    await writeFile(join(out, "dist"), "x");
    await expect(() => installPayload(out, files)).toThrowWithCode("INSTALL_UNSAFE_PATH");
  });

  it("refuses D that is a regular file", async () => {
    await writeFile(join(root, "D"), "x");
    await expect(() => installPayload(join(root, "D"), files)).toThrowWithCode("INSTALL_UNSAFE_PATH");
  });

  it("refuses paths off the payload allow-list before touching anything", async () => {
    for (const path of ["../escape", "/absolute", "dist/../../x", "dist/sub/x-1.0.0.tgz"]) {
      const bad = { ...files[0]!, path };
      await expect(() => installPayload(join(root, "D"), [...files, bad])).toThrowWithCode("INSTALL_PATH_INVALID");
    }
    expect(await readdir(root)).toEqual(["verified"]);
  });

  it("rolls back what it created when a write fails: D not created", async () => {
    const bad = { ...files[3]!, sha256: "0".repeat(64) };
    const out = join(root, "new", "D");
    await expect(() => installPayload(out, [files[0]!, files[1]!, bad])).toThrowWithCode("INSTALL_FAILED");
    expect(await readdir(root)).toEqual(["verified"]);
  });

  it("rolls back in an existing D: only what it created is removed", async () => {
    const out = join(root, "D");
    await mkdir(out);
    await writeFile(join(out, "mine.txt"), "keep");
    const unreadable = { ...files[3]!, source: join(root, "verified", "missing") };
    await expect(() => installPayload(out, [files[0]!, unreadable])).toThrowWithCode("INSTALL_FAILED");
    expect(await tree(out)).toEqual(["mine.txt"]);
  });


  it("two concurrent installs of the same payload into a fresh D both succeed with the same bytes", async () => {
    const out = join(root, "race", "D");
    const results = await Promise.all([installPayload(out, files), installPayload(out, files), installPayload(out, files)]);
    for (const r of results) expect([...r.written, ...r.unchanged].sort()).toEqual(files.map((f) => f.path).sort());
    expect(results.flatMap((r) => r.written).sort()).toEqual(files.map((f) => f.path).sort());
    expect(await tree(out)).toEqual(["dist/", "dist/demo-1.0.0.tgz", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);
  });

  it("a concurrent install of different bytes loses with INSTALL_OVERWRITE_REFUSED and leaves the winner intact", async () => {
    const out = join(root, "race2", "D");
    const other = await source("dist/demo-1.0.0.tgz", "other tarball", "other.tgz");
    const settled = await Promise.allSettled([installPayload(out, files), installPayload(out, [files[0]!, other])]);
    const codes = settled.map((r) => (r.status === "rejected" ? (r.reason as { code?: string }).code : "ok"));
    expect(codes.filter((c) => c === "ok")).toHaveLength(1);
    expect(codes.filter((c) => c === "INSTALL_OVERWRITE_REFUSED")).toHaveLength(1);
    const winner = settled[0]!.status === "fulfilled" ? "tarball" : "other tarball";
    expect(await readFile(join(out, "dist/demo-1.0.0.tgz"), "utf8")).toBe(winner);
  });

  it("waits for another install's lock: a live holder -> INSTALL_LOCKED and nothing written; a dead holder's lock is broken", async () => {
    const out = join(root, "locked");
    await mkdir(out);
    await writeFile(join(out, INSTALL_LOCK_FILE), "1\n");
    await expect(() => installPayload(out, files, { lockTimeoutMs: 200 })).toThrowWithCode("INSTALL_LOCKED");
    expect(await tree(out)).toEqual([INSTALL_LOCK_FILE]);
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    await writeFile(join(out, INSTALL_LOCK_FILE), `${dead.stdout}\n`);
    const result = await installPayload(out, files, { lockTimeoutMs: 2000 });
    expect(result.written).toHaveLength(4);
    expect(await tree(out)).toEqual(["dist/", "dist/demo-1.0.0.tgz", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);
  });
});

describe("replaceInstall (fetch --replace)", () => {
  async function earlierRelease(out: string): Promise<void> {
    await installPayload(out, [files[0]!, await source("dist/demo-0.9.0.tgz", "old tarball", "old.tgz")]);
  }

  it("swaps a directory that holds an earlier release (a left-over install lock included) for exactly the new files", async () => {
    const out = join(root, "D");
    await earlierRelease(out);
    await writeFile(join(out, INSTALL_LOCK_FILE), "");
    await replaceInstall(out, files);
    expect(await tree(out)).toEqual(["dist/", "dist/demo-1.0.0.tgz", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);
  });

  it("refuses a directory that also holds files no release writes: INSTALL_REPLACE_REFUSED names them, D unchanged", async () => {
    const out = join(root, "D");
    await earlierRelease(out);
    await mkdir(join(out, "docs"));
    await writeFile(join(out, "docs", "thesis.txt"), "important");
    await writeFile(join(out, "dist", "notes.txt"), "mine");
    const before = await tree(out);
    const problem = await replaceInstall(out, files).then(
      () => undefined,
      (error: unknown) => error as { code: string; message: string },
    );
    expect(problem?.code).toBe("INSTALL_REPLACE_REFUSED");
    expect(problem?.message).toContain('"docs"');
    expect(problem?.message).toContain('"dist/notes.txt"');
    expect(await tree(out)).toEqual(before);
    expect(await readFile(join(out, "docs", "thesis.txt"), "utf8")).toBe("important");
  });

  it("refuses the current directory (and its parents) even when it holds only a release", async () => {
    const out = join(root, "D");
    await earlierRelease(out);
    const script = `import { checkReplaceTarget } from ${JSON.stringify(new URL("../../dist/src/fetch/install.js", import.meta.url).href)};
for (const dir of [".", ".."]) await checkReplaceTarget(dir).then(() => console.log("accepted"), (e) => console.log(e.code, /current directory/.test(e.message)));`;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: out, encoding: "utf8" });
    expect(run.stdout.trim().split("\n")).toEqual(["INSTALL_REPLACE_REFUSED true", "INSTALL_REPLACE_REFUSED true"]);
    expect(await tree(out)).toEqual(["dist/", "dist/demo-0.9.0.tgz", "release-manifest.json"]);
  });

  it("checkReplaceTarget accepts a directory that does not exist yet", async () => {
    await expect(checkReplaceTarget(join(root, "new"))).resolves.toBeUndefined();
  });
});
