/**
 * The project's one file hash: SHA-256 and size of a file, read in 1 MiB
 * chunks (never whole). Its own module so that the OCI transport can
 * use it without loading the release documents' schemas.
 */
import { createHash } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { ReleaseContractError } from "./errors.js";
import { closeAsync, fstatAsync, openAsync, readAsync } from "./fs-async.js";
import { describeValue } from "./grammar.js";
import { plainObjectProblem } from "./plain-options.js";

/** Options of {@link hashFile}. */
export interface HashFileOptions {
  /**
   * Refuse a final symlink: the file is opened with `O_NOFOLLOW`, so a link
   * fails with the system's `ELOOP` error instead of hashing its target
   * (installed files, fleet pins). Default: follow.
   */
  noFollow?: boolean;
}

/**
 * SHA-256 (hex) and size in bytes of a regular file, read in 1 MiB chunks through one descriptor: opened without
 * waiting on a FIFO (`O_NONBLOCK`), its type checked on the opened descriptor (`fstat`), so a path checked
 * earlier and swapped for a FIFO or device since can neither block nor feed the hash.
 * @throws ReleaseContractError `POLICY_INVALID` (before any read) when `path` is not a string or `options` not a
 *   plain object; `ARTIFACT_NOT_REGULAR` when the opened file is a directory, FIFO, socket or device; the file
 *   system's own error when the file cannot be opened or read.
 */
export async function hashFile(path: string, options: HashFileOptions = {}): Promise<{ sha256: string; size: number }> {
  if (typeof path !== "string") throw new ReleaseContractError("POLICY_INVALID", `hashFile(path, options): path must be a file path (a string), found ${describeValue(path)}`);
  const shape = plainObjectProblem(options, "options");
  if (shape !== undefined) throw new ReleaseContractError("POLICY_INVALID", `hashFile(path, options): ${shape}`);
  const hash = createHash("sha256");
  let size = 0;
  const fd = await openAsync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | (options.noFollow === true ? fsConstants.O_NOFOLLOW : 0));
  try {
    const st = await fstatAsync(fd);
    if (!st.isFile()) {
      throw new ReleaseContractError("ARTIFACT_NOT_REGULAR", `${path} is ${st.isDirectory() ? "a directory" : "a FIFO, socket or device"}, not a regular file, so it is not hashed; fix: check what replaced the file at this path, and pass a regular file`);
    }
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const n = await readAsync(fd, chunk, 0, chunk.length, size);
      if (n === 0) break;
      hash.update(chunk.subarray(0, n));
      size += n;
    }
  } finally {
    await closeAsync(fd);
  }
  return { sha256: hash.digest("hex"), size };
}
