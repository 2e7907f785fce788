/**
 * readRegularFile (src/contract/fs-async.ts): the one reader of the small files a command is pointed at
 * (release JSON, the policy file, a fleet lock and receipt, a Docker client config). Type and size are
 * the opened descriptor's; nothing but a regular file within the bound is read.
 */
import { spawnSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRegularFile } from "../../src/contract/fs-async.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hpk-fs-async-"));
  await writeFile(join(dir, "file.json"), "{}");
  await mkdir(join(dir, "sub"));
  await symlink(join(dir, "file.json"), join(dir, "link.json"));
  spawnSync("mkfifo", [join(dir, "fifo")]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("readRegularFile", () => {
  it("reads a regular file within the bound, and a link to one only when links are followed", async () => {
    // mode and owner are the opened file's (what a private key's checks read).
    await chmod(join(dir, "file.json"), 0o640);
    const file = { kind: "read", bytes: Buffer.from("{}"), mode: 0o100640, uid: process.getuid?.() ?? 0 };
    expect(await readRegularFile(join(dir, "file.json"), { maxBytes: 2 })).toEqual(file);
    expect(await readRegularFile(join(dir, "link.json"), { maxBytes: 2, followLinks: true })).toEqual(file);
    expect(await readRegularFile(join(dir, "link.json"), { maxBytes: 2 })).toEqual({ kind: "failed", code: "ELOOP" });
  });

  it("refuses, without reading: a larger file, a directory, a FIFO (no hang), a device (/dev/zero), a missing path", async () => {
    expect(await readRegularFile(join(dir, "file.json"), { maxBytes: 1 })).toEqual({ kind: "too-large", size: 2 });
    expect(await readRegularFile(join(dir, "sub"), { maxBytes: 10 })).toEqual({ kind: "not-regular", what: "a directory" });
    expect(await readRegularFile(join(dir, "fifo"), { maxBytes: 10 })).toEqual({ kind: "not-regular", what: "a FIFO, socket or device" });
    expect(await readRegularFile("/dev/zero", { maxBytes: 10, followLinks: true })).toEqual({ kind: "not-regular", what: "a FIFO, socket or device" });
    expect(await readRegularFile(join(dir, "missing.json"), { maxBytes: 10 })).toEqual({ kind: "failed", code: "ENOENT" });
  });
});

describe("hashFile (one descriptor: type from fstat, never blocking on a FIFO)", () => {
  it("hashes a regular file; refuses a FIFO, a device and a directory with ARTIFACT_NOT_REGULAR before reading", async () => {
    const { hashFile } = await import("../../src/contract/file-hash.js");
    expect(await hashFile(join(dir, "file.json"))).toEqual({ sha256: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", size: 2 });
    for (const [path, what] of [
      [join(dir, "fifo"), "a FIFO, socket or device"],
      ["/dev/null", "a FIFO, socket or device"],
      [join(dir, "sub"), "a directory"],
    ] as const) {
      const hashed = hashFile(path);
      await expect(hashed).rejects.toMatchObject({ code: "ARTIFACT_NOT_REGULAR" });
      await expect(hashed).rejects.toThrow(`${path} is ${what}, not a regular file, so it is not hashed; fix: check what replaced the file at this path, and pass a regular file`);
    }
  });
});
