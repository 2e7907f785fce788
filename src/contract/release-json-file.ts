/**
 * Reading a release JSON file (a tested manifest or a receipt) with check J1 of docs/contract.md.
 * Its own module so that `verify-final-receipt` loads it without the tarball reader
 * (`manifest.ts` re-exports it).
 */
import type { JsonObject } from "./canonical-json.js";
import { ReleaseContractError, type ReleaseContractErrorCode } from "./errors.js";
import { describeUnreadFile, readRegularFile } from "./fs-async.js";
import { namingFile } from "./json-file.js";
import { parseReleaseJson } from "./release-document.js";

/** A missing release JSON file: where the commands that write one put it. */
const NO_SUCH_RELEASE_JSON =
  "no such file (ENOENT); pass the path of the file (`fetch --expect receipt` writes release-receipt.json into its --output-dir; `release build` writes release-manifest.json)";

function fail(code: ReleaseContractErrorCode, message: string): never {
  throw new ReleaseContractError(code, message);
}

/** Largest release JSON document read from a file (bytes): manifests and receipts are a few KiB. */
export const MAX_RELEASE_JSON_BYTES = 1024 * 1024;

/**
 * Read a release JSON file (check J1, docs/contract.md): it must be a regular file (not a
 * FIFO, device or directory; opened without following a final symlink) of at
 * most {@link MAX_RELEASE_JSON_BYTES}; otherwise `RELEASE_JSON_UNREADABLE`
 * (`RELEASE_JSON_TOO_LARGE` when over the limit). Then strict parsing codes
 * (`JSON_DUPLICATE_KEY`, `JSON_NOT_OBJECT`, ...).
 */
export async function readReleaseJsonFile(path: string): Promise<JsonObject> {
  const bytes = await readReleaseJsonBytesFile(path);
  return namingFile(path, () => parseReleaseJson(bytes));
}

/** The bytes of a release JSON file, with the checks of {@link readReleaseJsonFile}. */
export async function readReleaseJsonBytesFile(path: string): Promise<Buffer> {
  const found = await readRegularFile(path, { maxBytes: MAX_RELEASE_JSON_BYTES });
  switch (found.kind) {
    case "read":
      return found.bytes;
    case "failed":
      return fail("RELEASE_JSON_UNREADABLE", `cannot read release JSON: ${path}: ${found.code === "ENOENT" ? NO_SUCH_RELEASE_JSON : describeUnreadFile(found, MAX_RELEASE_JSON_BYTES)}`);
    case "not-regular":
      return fail("RELEASE_JSON_UNREADABLE", `cannot read release JSON: ${path} is not a regular file (${found.what}); pass the path of the JSON file itself`);
    case "too-large":
      return fail("RELEASE_JSON_TOO_LARGE", `cannot read release JSON: ${path} has ${found.size} bytes, more than ${MAX_RELEASE_JSON_BYTES}`);
  }
}
