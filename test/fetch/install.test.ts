import { createHash } from "node:crypto";
import { chmod, lchown, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkInstallTarget, checkReplaceTarget, INSTALL_LOCK_FILE, installPayload, replaceInstall, type InstallFile } from "../../src/fetch/install.js";
import { InterruptedError } from "../../src/contract/errors.js";
import { spawn, spawnSync } from "node:child_process";

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

  it("refuses an existing D holding entries no release writes: INSTALL_OUTPUT_NOT_EMPTY names them, before and at install, D unchanged", async () => {
    const out = join(root, "D");
    await mkdir(join(out, ".git"), { recursive: true });
    await writeFile(join(out, "mine.txt"), "keep");
    await mkdir(join(out, "dist"));
    await writeFile(join(out, "dist", "notes.md"), "x");
    await expect(() => checkInstallTarget(out)).toThrowWithCode("INSTALL_OUTPUT_NOT_EMPTY");
    const refused = installPayload(out, files);
    await expect(() => refused).toThrowWithCode("INSTALL_OUTPUT_NOT_EMPTY");
    await expect(refused).rejects.toThrow(/holds ".git", "dist\/notes.md", "mine.txt"|holds .*"mine.txt".*which no release writes/);
    expect(await tree(out)).toEqual([".git/", "dist/", "dist/notes.md", "mine.txt"]);
  });

  it("accepts an existing empty D, and one holding only an earlier fetch's files (identical: a no-op)", async () => {
    const out = join(root, "D");
    await mkdir(out);
    await checkInstallTarget(out);
    await installPayload(out, files);
    await checkInstallTarget(out);
    expect((await installPayload(out, files)).written).toEqual([]);
  });

  it("refuses files of another release (version, tarball, or a receipt's recorded hash of a bundle file) into D: INSTALL_OVERWRITE_REFUSED naming both, D unchanged", async () => {
    const manifest = (version: string) => JSON.stringify({ package: "demo", version, artifacts: [{ filename: `demo-${version}.tgz`, sha256: "a".repeat(64), size: 7 }] });
    const out = join(root, "D");
    await installPayload(out, [await source("release-manifest.json", manifest("1.0.0"), "m1"), await source("dist/demo-1.0.0.tgz", "tarball")]);
    const before = await tree(out);
    // A receipt of 2.0.0 (another path, so no file-by-file conflict).
    const receipt2 = await source("release-receipt.json", JSON.stringify({ package: "demo", version: "2.0.0", artifacts: [{ filename: "demo-2.0.0.tgz", sha256: "b".repeat(64) }] }), "r2");
    const refused = installPayload(out, [receipt2]);
    await expect(() => refused).toThrowWithCode("INSTALL_OVERWRITE_REFUSED");
    await expect(refused).rejects.toThrow(/holds demo 1\.0\.0 .*are demo 2\.0\.0 .*differ in version/);
    // Each side named by where it is; the library's fix names its options, never a CLI flag.
    await expect(refused).rejects.toThrow(
      `they differ in version (1.0.0 in ${join(out, "release-manifest.json")}, 2.0.0 in release-receipt.json of the demo 2.0.0 being installed); nothing was written; fix: install into a new directory (another outputDir), or swap the whole directory for demo 2.0.0 after verification (fetchRelease with replace: true, or replaceInstall)`,
    );
    await expect(refused).rejects.toMatchObject({ cliMessage: expect.stringMatching(/; fix: fetch into a new directory \(another --output-dir\), or pass --replace to swap the whole directory for demo 2\.0\.0 after verification$/) });
    await expect(refused).rejects.not.toThrow("--replace");
    // Same version, but the receipt records other bytes for release-manifest.json: another release too.
    const receiptOther = await source("release-receipt.json", JSON.stringify({ package: "demo", version: "1.0.0", payload: [{ path: "release-manifest.json", sha256: "c".repeat(64) }] }), "r3");
    await expect(() => installPayload(out, [receiptOther])).toThrowWithCode("INSTALL_OVERWRITE_REFUSED");
    expect(await tree(out)).toEqual(before);
    // A receipt of the same release is installed next to it.
    const sha = createHash("sha256").update(manifest("1.0.0")).digest("hex");
    const receipt1 = await source("release-receipt.json", JSON.stringify({ package: "demo", version: "1.0.0", payload: [{ path: "release-manifest.json", sha256: sha }] }), "r1");
    expect((await installPayload(out, [receipt1])).written).toEqual(["release-receipt.json"]);
    // The other way round: a 2.0.0 bundle into D holding the 1.0.0 receipt and bundle; replaceInstall swaps it.
    const bundle2 = [await source("release-manifest.json", manifest("2.0.0"), "m2"), await source("dist/demo-2.0.0.tgz", "tarball 2")];
    await expect(() => installPayload(out, bundle2)).toThrowWithCode("INSTALL_OVERWRITE_REFUSED");
    await replaceInstall(out, bundle2);
    expect(await tree(out)).toEqual(["dist/", "dist/demo-2.0.0.tgz", "release-manifest.json"]);
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

  it("refuses a directory where a file goes, and a file where a directory goes: INSTALL_UNSAFE_PATH (as documented) naming what was found and the fix", async () => {
    const out = join(root, "D");
    await mkdir(join(out, "dist/demo-1.0.0.tgz"), { recursive: true });
    const dirForFile = installPayload(out, files);
    await expect(() => dirForFile).toThrowWithCode("INSTALL_UNSAFE_PATH");
    await expect(dirForFile).rejects.toThrow(
      `refusing an unsafe output path: expected dist/demo-1.0.0.tgz in ${out} to be absent or a regular file (a fetch writes only regular files and real directories, and never writes through or replaces anything else), found a directory at ${join(out, "dist/demo-1.0.0.tgz")}; fix: move ${join(out, "dist/demo-1.0.0.tgz")} out of the way if you put it there, or fetch into a new directory`,
    );
    await expect(dirForFile).rejects.not.toThrow(/different bytes/);
    await rm(out, { recursive: true });
    await mkdir(out);
    await writeFile(join(out, "dist"), "x");
    const fileForDir = installPayload(out, files);
    await expect(() => fileForDir).toThrowWithCode("INSTALL_UNSAFE_PATH");
    await expect(fileForDir).rejects.toThrow(`expected dist in ${out} to be absent or a real directory (a fetch writes only regular files and real directories, and never writes through or replaces anything else), found a regular file at ${join(out, "dist")}`);
    // A symlink is named with its target, which is not followed.
    await rm(out, { recursive: true });
    await mkdir(out);
    await symlink("/etc/passwd", join(out, "release-manifest.json"));
    await expect(installPayload(out, files)).rejects.toThrow(`found a symlink (to "/etc/passwd"; not followed) at ${join(out, "release-manifest.json")}`);
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
    await installPayload(out, [files[1]!]);
    const unreadable = { ...files[3]!, source: join(root, "verified", "missing") };
    await expect(() => installPayload(out, [files[0]!, files[1]!, unreadable])).toThrowWithCode("INSTALL_FAILED");
    expect(await tree(out)).toEqual(["release-source.bundle"]);
  });

  it("interrupted between files (signal aborted): INTERRUPTED, what it wrote removed, the lock released, D not created", async () => {
    const out = join(root, "new", "D");
    let reads = 0;
    // Aborted from the 5th look on: the lock is taken and the first file linked into place, then the second file stops.
    // A signal's shape (listeners included) as the argument check requires; its first look is that check's.
    const signal = { get aborted() { reads += 1; return reads > 5; }, reason: new InterruptedError("SIGINT"), addEventListener() {}, removeEventListener() {} } as unknown as AbortSignal;
    await expect(() => installPayload(out, files, { signal })).toThrowWithCode("INTERRUPTED");
    expect(reads).toBeGreaterThan(5);
    expect(await readdir(root)).toEqual(["verified"]);
  });

  describe("the output path: symlinked ancestors", () => {
    it("follows an existing ancestor symlink only you or root can change (like /tmp -> /private/tmp), also in a sticky world-writable directory", async () => {
      await mkdir(join(root, "real"));
      await symlink(join(root, "real"), join(root, "link"));
      await checkInstallTarget(join(root, "link", "D"));
      await installPayload(join(root, "link", "D"), files);
      expect(await tree(join(root, "real"))).toEqual(["D/", "D/dist/", "D/dist/demo-1.0.0.tgz", "D/release-manifest.json", "D/release-payload.sha256", "D/release-source.bundle"]);
      const sticky = join(root, "sticky");
      await mkdir(sticky);
      await chmod(sticky, 0o1777);
      await symlink(join(root, "real"), join(sticky, "link"));
      await installPayload(join(sticky, "link", "E"), files);
      expect((await readdir(join(root, "real"))).sort()).toEqual(["D", "E"]);
    });

    it("refuses an ancestor symlink in a directory others can write (not sticky): INSTALL_OUTPUT_SYMLINK, nothing written", async () => {
      const shared = join(root, "shared");
      await mkdir(join(root, "real"));
      await mkdir(shared);
      await chmod(shared, 0o777);
      await symlink(join(root, "real"), join(shared, "link"));
      const out = join(shared, "link", "sub", "D");
      await expect(() => checkInstallTarget(out)).toThrowWithCode("INSTALL_OUTPUT_SYMLINK");
      const refused = installPayload(out, files);
      await expect(() => refused).toThrowWithCode("INSTALL_OUTPUT_SYMLINK");
      await expect(refused).rejects.toThrow(/written through .*shared\/link, a symlink to .*real that sits in .*shared \(mode 0777\), which others can write/);
      expect(await readdir(join(root, "real"))).toEqual([]);
    });

    it.skipIf(process.getuid?.() !== 0)("refuses an ancestor symlink owned by another user (even in a sticky directory): INSTALL_OUTPUT_SYMLINK, nothing written", async () => {
      const sticky = join(root, "sticky");
      await mkdir(join(root, "real"));
      await mkdir(sticky);
      await chmod(sticky, 0o1777);
      await symlink(join(root, "real"), join(sticky, "theirs"));
      await lchown(join(sticky, "theirs"), 4242, 4242);
      await expect(() => installPayload(join(sticky, "theirs", "D"), files)).toThrowWithCode("INSTALL_OUTPUT_SYMLINK");
      expect(await readdir(join(root, "real"))).toEqual([]);
    });
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

  it("waits for another install's lock: a live holder -> INSTALL_LOCKED naming its PID and the fix, nothing written; a dead holder's lock is broken", async () => {
    const out = join(root, "locked");
    await mkdir(out);
    const live = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    try {
      await new Promise((r) => setTimeout(r, 100));
      await writeFile(join(out, INSTALL_LOCK_FILE), `${live.pid}\n`);
      const waited = installPayload(out, files, { lockTimeoutMs: 200 });
      await expect(() => waited).toThrowWithCode("INSTALL_LOCKED");
      await expect(waited).rejects.toThrow(`${join(out, INSTALL_LOCK_FILE)} is still held by PID ${live.pid} after 200 ms (expected a fetch installing into ${out} to release it when done); fix: wait for PID ${live.pid} to finish and rerun; if PID ${live.pid} is not a fetch installing into ${out}, remove ${join(out, INSTALL_LOCK_FILE)}`);
    } finally {
      live.kill();
    }
    expect(await tree(out)).toEqual([INSTALL_LOCK_FILE]);
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    await writeFile(join(out, INSTALL_LOCK_FILE), `${dead.stdout}\n`);
    const result = await installPayload(out, files, { lockTimeoutMs: 2000 });
    expect(result.written).toHaveLength(4);
    expect(await tree(out)).toEqual(["dist/", "dist/demo-1.0.0.tgz", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);
  });

  it("a lock the kit did not write is refused at once (no 30 s wait), naming what was found: a symlink, a directory, other content, an empty lock after the wait", async () => {
    const out = join(root, "foreign");
    await mkdir(out);
    const lock = join(out, INSTALL_LOCK_FILE);
    const refused = async (timeout = 30_000) => {
      const started = Date.now();
      const error = await installPayload(out, files, { lockTimeoutMs: timeout }).then(() => undefined, (e: { code?: string; message: string }) => e);
      expect(error?.code).toBe("INSTALL_LOCKED");
      if (timeout === 30_000) expect(Date.now() - started).toBeLessThan(5000);
      return error?.message ?? "";
    };
    await symlink("/etc/passwd", lock);
    const viaLink = await refused();
    expect(viaLink).toContain(`${lock} is not a lock the kit writes: expected a lock file holding the PID of its holder (a fetch installing into ${out})`);
    expect(viaLink).toContain(`found a symlink (to "/etc/passwd"; not followed); it is neither waited for nor removed; fix: if no hermes-plugin-kit process (a fetch installing into ${out}) is running, remove ${lock} (rm removes the link, not its target), and rerun`);
    await rm(lock);
    await mkdir(lock);
    expect(await refused()).toContain("found a directory;");
    await rm(lock, { recursive: true });
    await writeFile(lock, "hello\n");
    expect(await refused()).toContain('found a file holding "hello\\n";');
    await writeFile(lock, "");
    expect(await refused(200)).toContain(`${lock} is still empty after 200 ms: expected a lock file holding the PID of its holder`);
    // Nothing was followed, written or removed.
    expect(await readFile("/etc/passwd", "utf8")).toMatch(/^root:/);
    expect(await tree(out)).toEqual([INSTALL_LOCK_FILE]);
  });

  it.runIf(process.platform === "linux")("a lock whose PID runs a live program that is not the kit's is named as such (alive, not the holder), one whose process started after the lock was written as stale, both at once", async () => {
    const out = join(root, "stale");
    await mkdir(out);
    const lock = join(out, INSTALL_LOCK_FILE);
    const other = spawn("sleep", ["30"], { stdio: "ignore" });
    const node = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    try {
      await new Promise((r) => setTimeout(r, 100));
      await writeFile(lock, `${other.pid}\n`);
      const foreign = installPayload(out, files, { lockTimeoutMs: 30_000 });
      await expect(() => foreign).toThrowWithCode("INSTALL_LOCKED");
      await expect(foreign).rejects.toThrow(`${lock} names a live process that is not the kit's: expected a lock file holding the PID of its holder (a fetch installing into ${out}), which the kit writes when it takes the lock and removes when done, found PID ${other.pid}, a live process "sleep", which is no JavaScript runtime, so no hermes-plugin-kit process; the lock is not that process's, and whether the process that took it ended (its PID now reused) or something else wrote the file cannot be told, so it is neither waited for nor removed; fix: if no hermes-plugin-kit process (a fetch installing into ${out}) is running, remove ${lock}, and rerun`);
      // A node process that started an hour after the lock was written is not the one that wrote it.
      await writeFile(lock, `${node.pid}\n`);
      const hourAgo = new Date(Date.now() - 3_600_000);
      await utimes(lock, hourAgo, hourAgo);
      await expect(installPayload(out, files, { lockTimeoutMs: 30_000 })).rejects.toThrow(new RegExp(`is stale: .*found PID ${node.pid}, now process "node" started .*, after the lock was written \\(.*\\): the PID was reused`));
    } finally {
      other.kill();
      node.kill();
    }
    expect(await tree(out)).toEqual([INSTALL_LOCK_FILE]);
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

  it("refuses a directory whose release-receipt.json is a symlink: INSTALL_REPLACE_REFUSED says it is a symlink (not 'no release writes'), D unchanged", async () => {
    const out = join(root, "D");
    await earlierRelease(out);
    await writeFile(join(root, "elsewhere.json"), "{}");
    await symlink(join(root, "elsewhere.json"), join(out, "release-receipt.json"));
    const before = await tree(out);
    const refused = replaceInstall(out, files);
    await expect(() => refused).toThrowWithCode("INSTALL_REPLACE_REFUSED");
    await expect(refused).rejects.toThrow(/release-receipt\.json is a symlink \(to .*elsewhere\.json\), not a file a fetch writes/);
    await expect(refused).rejects.not.toThrow(/which no release writes/);
    expect(await tree(out)).toEqual(before);
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
