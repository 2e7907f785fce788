/**
 * Descriptors and content verification: the verifying stream made from a
 * descriptor (oras-go's `content.VerifyReader` shape) and streaming SHA-256 of
 * files; the byte-level part (grammar check, digest of a buffer, manifest media
 * types) is `digest.ts`, re-exported here.
 *
 * A {@link DescriptorVerifier} counts and hashes the bytes passing through it:
 * it fails with `OCI_SIZE_MISMATCH` as soon as byte `size + 1` arrives (reading
 * stops there), and at end of stream unless exactly `size` bytes hashing to
 * `digest` went through. Consumers must not trust the bytes before the stream
 * finished cleanly. OCI image-spec `descriptor.md` (digest, size); docs/architecture.md, "OCI transport".
 */
import { hashFile } from "../contract/file-hash.js";
import { createHash, type Hash } from "node:crypto";
import type { Stats } from "node:fs";
import { lstat, readlink } from "node:fs/promises";
import { describeValue } from "../contract/grammar.js";
import { Readable, Transform, pipeline, type TransformCallback } from "node:stream";
import { checkDescriptor } from "./digest.js";
import { requireBytesArgument, requireReadable, requireStringArgument } from "./arguments.js";
import { OciError } from "./errors.js";
import type { Descriptor } from "./target.js";

export {
  DOCKER_MANIFEST_LIST_MEDIA_TYPE,
  DOCKER_MANIFEST_MEDIA_TYPE,
  MANIFEST_MEDIA_TYPES,
  checkDescriptor,
  descriptorOf,
  digestHex,
  digestOf,
  isManifestMediaType,
} from "./digest.js";

/** Read/write buffer size used for blob files and sockets (bytes). */
export const STREAM_HIGH_WATER_MARK = 256 * 1024;

/**
 * A pass-through stream that verifies the bytes of one descriptor.
 * Errors (as a stream error): `OCI_SIZE_MISMATCH` when more than `size` bytes
 * arrive (immediately, so the producer stops at `size + 1`) or fewer arrive
 * before the end; `OCI_DIGEST_MISMATCH` when the SHA-256 differs.
 * `verified` becomes true only after a clean end.
 */
export class DescriptorVerifier extends Transform {
  readonly descriptor: Descriptor;
  private readonly hash: Hash = createHash("sha256");
  private count = 0;
  private readonly label: string;
  /** True once the whole content arrived and matched. */
  verified = false;
  /** Called with the length of each chunk that passed the size check (progress displays). */
  onBytes: ((bytes: number) => void) | undefined;

  /** @param label what the bytes are, for messages (e.g. `blob sha256:...`). */
  constructor(desc: Descriptor, label?: string) {
    super({ readableHighWaterMark: STREAM_HIGH_WATER_MARK, writableHighWaterMark: STREAM_HIGH_WATER_MARK });
    this.descriptor = checkDescriptor(desc);
    this.label = label ?? `content ${desc.digest}`;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.descriptor.size) {
      callback(
        new OciError("OCI_SIZE_MISMATCH", `${this.label}: expected ${this.descriptor.size} bytes, received more (stopped at ${this.count})`),
      );
      return;
    }
    this.hash.update(chunk);
    this.onBytes?.(chunk.length);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    if (this.count !== this.descriptor.size) {
      callback(new OciError("OCI_SIZE_MISMATCH", `${this.label}: expected ${this.descriptor.size} bytes, received ${this.count} (truncated)`));
      return;
    }
    const found = "sha256:" + this.hash.digest("hex");
    if (found !== this.descriptor.digest) {
      callback(new OciError("OCI_DIGEST_MISMATCH", `${this.label}: expected digest ${this.descriptor.digest}, computed ${found}`));
      return;
    }
    this.verified = true;
    callback();
  }
}

/**
 * `source` piped through a {@link DescriptorVerifier} for `desc`; an error of
 * either side destroys both (so a socket stops being read).
 */
export function verifyingStream(source: Readable, desc: Descriptor, label?: string): DescriptorVerifier {
  const verifier = new DescriptorVerifier(desc, label);
  pipeline(source, verifier, () => {
    /* errors surface on `verifier` */
  });
  return verifier;
}

/** True when `stream` already verifies exactly `desc` (so it need not be hashed twice). */
export function verifiesDescriptor(stream: Readable, desc: Descriptor): boolean {
  return (
    stream instanceof DescriptorVerifier &&
    stream.descriptor.digest === desc.digest &&
    stream.descriptor.size === desc.size
  );
}

/**
 * Read a verifying stream whole into memory, refusing more than `maxBytes`
 * (for manifests and small JSON only; blobs are streamed to files).
 * @throws OciError `overflowCode` (default `OCI_SIZE_MISMATCH`) above `maxBytes`,
 *   `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`, or the stream's error; `OCI_ARGUMENT_INVALID` (`stream` not a
 *   readable stream, `maxBytes` not a non-negative number).
 */
export async function readAllBounded(
  stream: Readable,
  maxBytes: number,
  label: string,
  overflowCode: "OCI_SIZE_MISMATCH" | "OCI_MANIFEST_TOO_LARGE" | "OCI_BODY_TOO_LARGE" = "OCI_SIZE_MISMATCH",
): Promise<Buffer> {
  requireReadable(stream, "readAllBounded(stream, maxBytes, label)", "stream");
  if (typeof maxBytes !== "number" || !(maxBytes >= 0)) throw new OciError("OCI_ARGUMENT_INVALID", `readAllBounded(stream, maxBytes, label): maxBytes must be a number of bytes of at least 0, found ${describeValue(maxBytes)}`);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    total += buf.length;
    if (total > maxBytes) {
      stream.destroy();
      throw new OciError(overflowCode, `${label}: more than ${maxBytes} bytes`);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks, total);
}

/**
 * The OCI digest and size of a regular file: the project's one streaming
 * file hash (`hashFile` in src/contract/file-hash.ts), as `sha256:<hex>`.
 * @returns `{digest: "sha256:<hex>", size}` (bytes).
 * @throws OciError `OCI_ARGUMENT_INVALID` (`filePath` not a non-empty string); the file system's error.
 */
export async function digestFile(filePath: string): Promise<{ digest: string; size: number }> {
  requireStringArgument(filePath, "digestFile(filePath)", "filePath", "the path of the file to hash");
  const { sha256, size } = await hashFile(filePath);
  return { digest: "sha256:" + sha256, size };
}

/**
 * `OCI_LAYOUT_INVALID` for a blob path in a layout store that is not a regular file: what was found (a
 * symlink, which is never followed, with its target; a directory; a device) and the fix.
 */
export async function blobNotRegularFile(digest: string, filePath: string, st: Stats): Promise<OciError> {
  const found = st.isSymbolicLink()
    ? `a symlink (to ${describeValue(await readlink(filePath).catch(() => "?"))}; not followed: a blob is read only from the store itself)`
    : st.isDirectory()
      ? "a directory"
      : "not a regular file (a device, pipe or socket)";
  const fix = st.isSymbolicLink()
    ? "replace the link with the blob's bytes (a copy of the file, if it hashes to the digest), or copy the release into the store again"
    : "remove it and copy the release into the store again";
  return new OciError("OCI_LAYOUT_INVALID", `unsafe OCI blob ${digest}: expected a regular file at ${filePath} (OCI image-spec image-layout.md: blobs/<alg>/<encoded>), found ${found}; fix: ${fix}`);
}

/**
 * Blob file check (OCI image-spec "Descriptors": size and digest): `filePath` is a regular file, not a
 * symlink (B-1), of `desc.size` bytes (B-2) hashing to `desc.digest` (B-3).
 * @throws OciError `OCI_LAYOUT_INVALID` (missing or unsafe), `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`.
 */
export async function verifyBlobFile(filePath: string, desc: Descriptor): Promise<void> {
  checkDescriptor(desc);
  let st;
  try {
    st = await lstat(filePath);
  } catch {
    throw new OciError("OCI_LAYOUT_INVALID", `missing or unsafe OCI blob ${desc.digest}: not found`);
  }
  if (!st.isFile() || st.isSymbolicLink()) throw await blobNotRegularFile(desc.digest, filePath, st);
  if (st.size !== desc.size) {
    throw new OciError("OCI_SIZE_MISMATCH", `OCI blob size mismatch for ${desc.digest}: expected ${desc.size} bytes, found ${st.size}`);
  }
  const found = await digestFile(filePath);
  if (found.size !== desc.size) {
    throw new OciError("OCI_SIZE_MISMATCH", `OCI blob size mismatch for ${desc.digest}: expected ${desc.size} bytes, read ${found.size}`);
  }
  if (found.digest !== desc.digest) {
    throw new OciError("OCI_DIGEST_MISMATCH", `OCI blob SHA-256 mismatch: expected ${desc.digest}, computed ${found.digest}`);
  }
}

/**
 * Numeric `open(2)` flags for `fs.createReadStream`/`createWriteStream` (Node
 * accepts numbers there; its typings only list strings). Used for `O_NOFOLLOW`.
 */
export function numericFlags(flags: number): string {
  return flags as unknown as string;
}

/**
 * A readable stream over a buffer (one chunk).
 * @throws OciError `OCI_ARGUMENT_INVALID` (`bytes` not a Uint8Array).
 */
export function bufferStream(bytes: Uint8Array): Readable {
  requireBytesArgument(bytes, "bufferStream(bytes)", "bytes");
  return Readable.from([Buffer.from(bytes)], { objectMode: false });
}
