/**
 * The project's one streaming file hash: SHA-256 and size of a file, read in
 * 1 MiB chunks (never whole). Its own module so that the OCI transport can
 * use it without loading the release documents' schemas.
 */
import { createHash } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { open } from "node:fs/promises";

/** Options of {@link hashFile}. */
export interface HashFileOptions {
  /**
   * Refuse a final symlink: the file is opened with `O_NOFOLLOW`, so a link
   * fails with the system's `ELOOP` error instead of hashing its target
   * (installed files, fleet pins). Default: follow.
   */
  noFollow?: boolean;
}

/** SHA-256 (hex) and size in bytes of a file, streamed. */
export async function hashFile(path: string, options: HashFileOptions = {}): Promise<{ sha256: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  const handle = await open(path, fsConstants.O_RDONLY | (options.noFollow === true ? fsConstants.O_NOFOLLOW : 0));
  try {
    for await (const chunk of handle.createReadStream({ highWaterMark: 1024 * 1024, autoClose: false })) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
  } finally {
    await handle.close();
  }
  return { sha256: hash.digest("hex"), size };
}
