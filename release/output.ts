/**
 * What the release steps write on the maintainer's disk: output documents
 * (`--output`), written atomically as canonical JSON, and the private (0700)
 * work directories the steps download into.
 */
import { randomBytes } from "node:crypto";
import { chmod, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { canonicalJson } from "../src/contract/canonical-json.js";
import { PipelineError } from "./errors.js";
import { makeDirectory, makeTempDirectory } from "../src/contract/directory.js";

/**
 * Write `bytes` to `path` atomically: a temp file in the same directory
 * (mode 0644), fsync'd, then renamed over `path` (parents created).
 * @throws PipelineError `OUTPUT_WRITE_FAILED`.
 */
export async function writeOutputFile(path: string, bytes: Uint8Array | string): Promise<void> {
  const target = resolve(path);
  const temp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await makeDirectory(dirname(target), { purpose: "output directory" });
    const handle = await open(temp, "wx", 0o644);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw new PipelineError("OUTPUT_WRITE_FAILED", `cannot write ${target}: ${(error as NodeJS.ErrnoException).code ?? "error"}`, { cause: error });
  }
}

/** Canonical compact JSON plus one newline (docs/contract.md, canonical JSON). */
export function outputJsonBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), "utf8");
}

/** Make a fresh private (0700) temp directory. */
export async function privateTempDir(parent: string | undefined, prefix: string): Promise<string> {
  const dir = await makeTempDirectory(prefix, parent);
  await chmod(dir, 0o700);
  return dir;
}

