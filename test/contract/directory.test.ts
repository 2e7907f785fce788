/**
 * makeDirectory / checkDirectoryWritable (src/contract/directory.ts): every
 * level created once with a bounded loop, coded IO errors naming the path,
 * and nothing left behind on failure. `/proc/x` is the example that made
 * Node's recursive mkdir spin forever (procfs answers ENOENT).
 */
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IoError, checkDirectoryWritable, makeDirectory, makeDirectorySync } from "../../src/contract/directory.js";

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-directory-"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("makeDirectory", () => {
  it("creates the missing levels outermost first and reports them; an existing directory creates nothing", async () => {
    const dir = join(root, "a", "b", "c");
    expect(await makeDirectory(dir)).toEqual([join(root, "a"), join(root, "a", "b"), dir]);
    expect(existsSync(dir)).toBe(true);
    expect(await makeDirectory(dir)).toEqual([]);
  });

  it.each([
    ["/proc/x", "IO_DIRECTORY_UNWRITABLE", "/proc/x"],
    ["/proc/self/x/y", "IO_DIRECTORY_UNWRITABLE", "/proc/self"],
    ["/dev/null/x", "IO_NOT_A_DIRECTORY", "/dev/null"],
    ["/dev/null", "IO_NOT_A_DIRECTORY", "/dev/null"],
  ])("%s fails promptly with %s naming %s (no endless retry)", async (dir, code, path) => {
    await expect(makeDirectory(dir)).rejects.toThrowWithCode(IoError, code);
    const error = (() => {
      try {
        makeDirectorySync(dir, { purpose: "output directory (--output-dir)" });
      } catch (e) {
        return e as IoError;
      }
      return undefined;
    })();
    expect(error?.path).toBe(path);
    expect(error?.message).toContain(`output directory (--output-dir) ${dir}`);
    expect(error?.message).toMatch(/expected a directory .*; fix: /);
  });

  it("a regular file in the way (the path itself or a parent) is IO_NOT_A_DIRECTORY and nothing is created", async () => {
    const file = join(root, "file");
    await writeFile(file, "x");
    await expect(makeDirectory(file)).rejects.toThrowWithCode(IoError, "IO_NOT_A_DIRECTORY");
    await expect(makeDirectory(join(file, "x", "y"))).rejects.toThrowWithCode(IoError, "IO_NOT_A_DIRECTORY");
    expect(await readdir(root)).not.toContain("x");
  });

  it("checkDirectoryWritable leaves nothing behind, and fails like makeDirectory", async () => {
    const dir = join(root, "probe", "deep");
    checkDirectoryWritable(dir);
    expect(existsSync(join(root, "probe"))).toBe(false);
    expect(() => checkDirectoryWritable("/proc/x")).toThrowWithCode(IoError, "IO_DIRECTORY_UNWRITABLE");
  });
});
