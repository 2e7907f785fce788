/**
 * The project's one streaming file hash: SHA-256 and size of a file, read in
 * 1 MiB chunks (never whole). Its own module so that the OCI transport can
 * use it without loading the release documents' schemas.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

/** SHA-256 (hex) and size in bytes of a file, streamed. */
export async function hashFile(path: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest("hex"), size };
}
