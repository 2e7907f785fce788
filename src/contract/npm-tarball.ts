/**
 * The one reader of npm tarballs: `release check-dist`, `verify-manifest`,
 * `create-manifest` and `fetch` all list a tarball through
 * {@link readNpmTarballFile}, so what the reviewer checks is what npm
 * installs (docs/contract.md "Tarball reading: one reader, what npm installs").
 *
 * The gzip layer is read as strictly as the tar layer (`tar-ustar.ts`):
 * exactly one gzip member (RFC 1952 section 2.2) with no optional header
 * fields (npm pack sets none), whose trailer CRC-32 and size match the
 * decompressed bytes, and nothing after it: a second member or trailing
 * bytes are `TARBALL_TRAILING_DATA`, anything else `TARBALL_GZIP_INVALID`.
 */
import { createHash, type Hash } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { crc32, createInflateRaw, inflateRawSync } from "node:zlib";
import { parseStrictJson, type JsonObject } from "./canonical-json.js";
import { ReleaseContractError, type ReleaseContractErrorCode } from "./errors.js";
import { closeAsync, fstatAsync, openAsync, readAsync, readWhole } from "./fs-async.js";
import { resolveTarLimits, StrictTarParser, tarballError, type TarballMember, type TarLimits } from "./tar-ustar.js";

export type { TarballMember, TarLimits } from "./tar-ustar.js";

/** Largest `package/package.json` (and bundled dependency package.json) read (bytes). */
export const MAX_PACKAGE_JSON_BYTES = 1024 * 1024;
/** A bundled dependency's package.json (`node_modules/<name>/package.json`, nested or scoped): always kept for the install-time check. */
const BUNDLED_PACKAGE_JSON_RE = /^(?:node_modules\/(?:@[^/]+\/)?[^/]+\/)+package\.json$/;

/** Options of {@link readNpmTarballFile}. */
export interface ReadNpmTarballOptions {
  /** Members whose bytes are kept in {@link NpmTarball.kept} (besides `package.json`, always kept). */
  keep?: (path: string) => boolean;
  /** Most bytes kept in total for `keep` members (default 256 MiB); more is `TARBALL_TOO_LARGE`. */
  maxKeptBytes?: number;
  /** Bounds of the tar stream (see `DEFAULT_TAR_LIMITS`). */
  limits?: Partial<TarLimits>;
  /**
   * A tarball of at most this many bytes (default {@link WHOLE_TARBALL_BYTES}) is read whole and
   * inflated in one call when it decompresses to at most {@link WHOLE_TARBALL_UNPACKED_BYTES}; any
   * other is streamed. The same checks either way; `0` streams every tarball.
   */
  wholeFileBytes?: number;
  /**
   * The tarball pinned by a document (`by`, e.g. "the tested manifest" says ...): a file of another
   * size is refused before it is read (`ARTIFACT_SIZE_MISMATCH`), and one read whole whose SHA-256
   * differs before it is inflated (`ARTIFACT_SHA256_MISMATCH`), so another file costs no unpacking.
   * A streamed tarball's digest is known only at its end: the caller compares {@link NpmTarball.sha256}.
   */
  expected?: { sha256: string; size: number; by: string };
}

/** Default of {@link ReadNpmTarballOptions.wholeFileBytes} (bytes): an npm package is usually far smaller. */
export const WHOLE_TARBALL_BYTES = 1024 * 1024;
/** Most bytes a tarball read whole may decompress to (memory held at once); more, and it is streamed. */
export const WHOLE_TARBALL_UNPACKED_BYTES = 16 * 1024 * 1024;

/** A verified listing of an npm tarball. */
export interface NpmTarball {
  /** Every member: regular files under `package/`, in archive order (paths relative to `package/`). */
  members: TarballMember[];
  /** `package/package.json`, strictly parsed. */
  packageJson: JsonObject;
  /** Bytes of `package.json`, of bundled dependencies' package.json files and of every member `keep` selected, by relative path. */
  kept: Map<string, Buffer>;
  /** Sum of member sizes (bytes). */
  unpackedSize: number;
  /** SHA-256 (hex) of the tarball bytes that were read. */
  sha256: string;
  /** Size of the tarball in bytes. */
  size: number;
}

function fail(code: ReleaseContractErrorCode, message: string): never {
  throw tarballError(code, message);
}

/** Check the 10-byte gzip header (RFC 1952 section 2.3): deflate, no flags. */
function checkGzipHeader(header: Buffer, path: string): void {
  if (header.length < 10 || header[0] !== 0x1f || header[1] !== 0x8b) fail("TARBALL_GZIP_INVALID", `${path} is not gzip data`);
  if (header[2] !== 8) fail("TARBALL_GZIP_INVALID", `${path}: gzip compression method ${header[2]} is not deflate (8)`);
  if (header[3] !== 0) fail("TARBALL_GZIP_INVALID", `${path}: gzip header flags 0x${(header[3] as number).toString(16)} (name, comment, extra field or header CRC), which npm pack never writes`);
}

class TarSink extends Writable {
  crc = 0;
  size = 0;
  constructor(
    private readonly parser: StrictTarParser,
    private readonly maxBytes: number,
    private readonly path: string,
  ) {
    super({ highWaterMark: 1024 * 1024 });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    try {
      this.size += chunk.length;
      if (this.size > this.maxBytes) fail("TARBALL_TOO_LARGE", `${this.path} decompresses to more than ${this.maxBytes} bytes`);
      this.crc = crc32(chunk, this.crc);
      this.parser.push(chunk);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }
}

/** Keeps `package.json` and the selected members' bytes, within a byte budget. */
function keeper(options: ReadNpmTarballOptions): { kept: Map<string, Buffer>; onData: (member: TarballMember, chunk: Buffer) => void } {
  const parts = new Map<string, { chunks: Buffer[]; bytes: number }>();
  const kept = new Map<string, Buffer>();
  const budget = options.maxKeptBytes ?? 256 * 1024 * 1024;
  let total = 0;
  const onData = (member: TarballMember, chunk: Buffer) => {
    const isPackageJson = member.path === "package.json" || BUNDLED_PACKAGE_JSON_RE.test(member.path);
    if (!isPackageJson && options.keep?.(member.path) !== true) return;
    if (isPackageJson && member.size > MAX_PACKAGE_JSON_BYTES) fail("TARBALL_TOO_LARGE", `package/${member.path} has ${member.size} bytes, more than ${MAX_PACKAGE_JSON_BYTES}; fix: make that package.json smaller (a package.json is a few KiB; move data into files of the package), then rebuild with npm pack`);
    total += chunk.length;
    if (!isPackageJson && total > budget) fail("TARBALL_TOO_LARGE", `the members kept for checking exceed ${budget} bytes`);
    const entry = parts.get(member.path) ?? { chunks: [], bytes: 0 };
    entry.chunks.push(chunk);
    entry.bytes += chunk.length;
    parts.set(member.path, entry);
    if (entry.bytes === member.size) kept.set(member.path, Buffer.concat(entry.chunks, entry.bytes));
  };
  return { kept, onData };
}

/**
 * Read and verify an npm tarball: the strict gzip layer (module comment),
 * the strict tar layer (`tar-ustar.ts`), exactly one `package/package.json`
 * (strict JSON, at most {@link MAX_PACKAGE_JSON_BYTES}).
 *
 * @param path a regular file (a final symlink is not followed).
 * @throws ReleaseContractError `TARBALL_UNREADABLE` (not a regular file, I/O,
 *   package.json not JSON), `TARBALL_GZIP_INVALID`, `TARBALL_TRAILING_DATA`,
 *   `TARBALL_HEADER_INVALID`, `TARBALL_ENTRY_TYPE`, `TARBALL_PAX_INVALID`,
 *   `TARBALL_PATH_UNSAFE`, `TARBALL_DUPLICATE_MEMBER`, `TARBALL_TOO_LARGE`,
 *   `TARBALL_METADATA_MISSING` (no `package/package.json`); with `options.expected`,
 *   `ARTIFACT_SIZE_MISMATCH` before reading and `ARTIFACT_SHA256_MISMATCH` before inflating (read whole).
 */
export async function readNpmTarballFile(path: string, options: ReadNpmTarballOptions = {}): Promise<NpmTarball> {
  let fd: number;
  try {
    fd = await openAsync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch (error) {
    fail("TARBALL_UNREADABLE", `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`);
  }
  const { kept, onData } = keeper(options);
  const parser = new StrictTarParser(onData, options.limits);
  let members: TarballMember[];
  let hash: Hash;
  let size = 0;
  try {
    const st = await fstatAsync(fd);
    if (!st.isFile()) fail("TARBALL_UNREADABLE", `${path} is not a regular file`);
    const expected = options.expected;
    if (expected !== undefined && st.size !== expected.size) fail("ARTIFACT_SIZE_MISMATCH", `size mismatch for ${path}: ${expected.by} says ${expected.size} bytes, file has ${st.size}${notTheRecordedFile(expected.by)}`);
    if (st.size < 18) fail("TARBALL_GZIP_INVALID", `${path} has ${st.size} bytes, too few for gzip data`);
    const maxBytes = resolveTarLimits(options.limits).maxUnpackedBytes + 64 * 1024 * 1024;
    const whole = st.size <= (options.wholeFileBytes ?? WHOLE_TARBALL_BYTES) ? await inflateWhole(fd, st.size, Math.min(maxBytes, WHOLE_TARBALL_UNPACKED_BYTES), path, expected) : undefined;
    // Read whole, the tar layer is parsed as a streamed one is: before the gzip trailer is checked, then ended after.
    if (whole !== undefined) parser.push(whole.inflated);
    const layer = whole ?? (await inflateStreamed(fd, st.size, maxBytes, parser, path));
    if (layer.consumed !== st.size - 18) {
      fail("TARBALL_TRAILING_DATA", `${path}: the gzip data ends at byte ${10 + layer.consumed + 8} of ${st.size}; a second gzip member or trailing bytes follow`);
    }
    if (layer.trailer.readUInt32LE(0) !== layer.crc >>> 0 || layer.trailer.readUInt32LE(4) !== layer.size % 2 ** 32) {
      fail("TARBALL_GZIP_INVALID", `${path}: the gzip trailer (CRC-32, size) does not match the decompressed bytes`);
    }
    hash = layer.hash;
    size = st.size;
    members = parser.end();
  } finally {
    await closeAsync(fd);
  }
  const pj = kept.get("package.json");
  if (pj === undefined) fail("TARBALL_METADATA_MISSING", `${path} must contain exactly one regular package/package.json`);
  let packageJson: JsonObject;
  try {
    packageJson = parseStrictJson(pj, { rejectIntegralFloats: false });
  } catch (error) {
    fail("TARBALL_UNREADABLE", `cannot read metadata from ${path}: package/package.json is not strict JSON: ${(error as Error).message}; fix: make package.json strict JSON (no duplicate keys, no comments or trailing commas), then rebuild with npm pack`);
  }
  return { members, packageJson, kept, unpackedSize: members.reduce((n, m) => n + m.size, 0), sha256: hash.digest("hex"), size };
}

/** The gzip layer read: the member's deflate data consumed (bytes), its trailer, the CRC-32 and size of what it inflated to, the SHA-256 of the whole file. */
interface GzipLayer {
  consumed: number;
  trailer: Buffer;
  crc: number;
  size: number;
  hash: Hash;
}

/**
 * The tail of `ARTIFACT_SIZE_MISMATCH` / `ARTIFACT_SHA256_MISMATCH`: the file is not the one `by` (e.g. "the tested
 * manifest") records, and the fix for each way that happens (`npm pack` again writes other bytes).
 */
export function notTheRecordedFile(by: string): string {
  return `: this is not the file ${by} records (rebuilt, changed or replaced since it was recorded; npm pack run again writes other bytes); fix: use the file ${by} was made from, or, if this is the file that was tested, make ${by} again from it (release create-manifest); a downloaded release with this mismatch is broken: do not use it, and tell its publisher`;
}

/**
 * The gzip layer of a tarball read whole: one read, one inflate call bounded by `maxInflated`
 * bytes. Undefined when it inflates to more (the caller streams it instead, with the real bound).
 */
async function inflateWhole(fd: number, fileSize: number, maxInflated: number, path: string, expected: ReadNpmTarballOptions["expected"]): Promise<(GzipLayer & { inflated: Buffer }) | undefined> {
  const bytes = await readWhole(fd, fileSize);
  if (bytes.length !== fileSize) fail("TARBALL_UNREADABLE", `${path} changed while it was read (${bytes.length} of ${fileSize} bytes)`);
  const hash = createHash("sha256").update(bytes);
  if (expected !== undefined) {
    const sha256 = hash.copy().digest("hex");
    if (sha256 !== expected.sha256) fail("ARTIFACT_SHA256_MISMATCH", `SHA-256 mismatch for ${path}: ${expected.by} says ${expected.sha256}, bytes hash to ${sha256}${notTheRecordedFile(expected.by)}`);
  }
  checkGzipHeader(bytes.subarray(0, 10), path);
  // The trailer's ISIZE (RFC 1952 section 2.3.1, the size mod 2^32) says when inflating whole would
  // overrun the bound: then stream at once. It is only a hint here (checked against the real size
  // below); one that lies low costs at most `maxInflated` bytes inflated before the stream takes over.
  if (bytes.readUInt32LE(fileSize - 4) > maxInflated) return undefined;
  let result: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    result = inflateRawSync(bytes.subarray(10, fileSize - 8), { info: true, maxOutputLength: maxInflated }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") return undefined;
    fail("TARBALL_GZIP_INVALID", `${path}: the deflate data is corrupt or truncated (${(error as Error).message})`);
  }
  const inflated = result.buffer;
  return { consumed: result.engine.bytesWritten, trailer: bytes.subarray(fileSize - 8), crc: crc32(inflated), size: inflated.length, hash, inflated };
}

/** The bytes of `fd` from `start` to `end` (exclusive) in reads of at most 1 MiB, each added to `hash` as it is read. */
async function* bodyChunks(fd: number, start: number, end: number, hash: Hash): AsyncGenerator<Buffer> {
  // Bounded by the span: every pass reads at least one byte or ends the loop.
  for (let position = start; position < end; ) {
    const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, end - position));
    const n = await readAsync(fd, chunk, 0, chunk.length, position);
    if (n === 0) return;
    hash.update(chunk.subarray(0, n));
    position += n;
    yield chunk.subarray(0, n);
  }
}

/** The gzip layer of a tarball streamed in 1 MiB reads through the tar parser, at most `maxBytes` inflated. */
async function inflateStreamed(fd: number, fileSize: number, maxBytes: number, parser: StrictTarParser, path: string): Promise<GzipLayer> {
  const hash = createHash("sha256");
  const header = Buffer.alloc(10);
  await readAsync(fd, header, 0, 10, 0);
  checkGzipHeader(header, path);
  hash.update(header);
  const inflate = createInflateRaw({ chunkSize: 256 * 1024 });
  const sink = new TarSink(parser, maxBytes, path);
  try {
    // The body is read by this generator, not by a file stream: a stream owns its descriptor, and the
    // pipeline destroying it on an error (TARBALL_TOO_LARGE) closed `fd` under the caller, whose close
    // then failed with EBADF in place of the real error (or, later, closed a reused descriptor).
    await pipeline(bodyChunks(fd, 10, fileSize - 8, hash), inflate, sink);
  } catch (error) {
    if (error instanceof ReleaseContractError) throw error;
    fail("TARBALL_GZIP_INVALID", `${path}: the deflate data is corrupt or truncated (${(error as Error).message})`);
  }
  const trailer = Buffer.alloc(8);
  await readAsync(fd, trailer, 0, 8, fileSize - 8);
  hash.update(trailer);
  return { consumed: inflate.bytesWritten, trailer, crc: sink.crc, size: sink.size, hash };
}
