/**
 * The blob upload fast path's source (docs/oci.md "Blob uploads"; measured by `npm run bench:oci`):
 * a blob file of a local store, opened once (`O_NOFOLLOW`, a regular file of exactly the
 * descriptor's size) and read at positions into a few reused 512 KiB buffers, the mirror of the
 * download fast path (`blob-download.ts`).
 *
 * Why: `fs.createReadStream` allocates a fresh buffer per read. A 64 MiB push then touches 64 MiB of
 * new memory, one page fault per 4 KiB (about 16,000); on a virtual machine that is most of the push's
 * CPU time (measured: reading and hashing 64 MiB took 390 ms of CPU through a read stream and 82 ms
 * through one reused buffer).
 *
 * A {@link BlobFileBody} is one request body: the bytes `[offset, offset + length)`. Its chunks are
 * views of pooled buffers; a chunk goes back to the pool only when its consumer calls
 * {@link BlobFileBody.releaseChunk} after the socket took it (the request writer in
 * `registry-http.ts` does, in the write's callback). A consumer that never releases gets fresh
 * buffers, as from a read stream.
 *
 * Verification (OCI image-spec `descriptor.md`, size and digest): every byte is hashed in order across
 * the bodies of one file (bodies must start where the previous one ended). Before the chunk that ends
 * the blob is handed on, the file must have no byte beyond `size` and the SHA-256 must equal the
 * digest; otherwise the body fails with `OCI_SIZE_MISMATCH` or `OCI_DIGEST_MISMATCH` and the last
 * bytes are never sent, so a registry never receives a complete wrong blob.
 */
import { createHash, type Hash } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { Readable } from "node:stream";
import { describeValue } from "../contract/grammar.js";
import { checkDescriptor } from "./digest.js";
import { OciError } from "./errors.js";
import type { Descriptor } from "./target.js";

/** Size of each pooled read buffer (bytes). */
const BUFFER_BYTES = 512 * 1024;
/** Buffers kept for reuse per file; more may exist while the socket holds them. */
const MAX_SPARE_BUFFERS = 4;

/** An open blob file: positional reads into reused buffers, hashed in order. Close it when done. */
export class BlobFile {
  private readonly hash: Hash = createHash("sha256");
  /** Bytes hashed so far (the next body must start here). */
  private hashed = 0;
  private readonly spare: Buffer[] = [];
  /** Every pooled buffer by its memory, so that a released view finds its whole buffer. */
  private readonly pooled = new WeakMap<ArrayBufferLike, Buffer>();
  /** The chunk each buffer holds now, until its consumer releases exactly that chunk. */
  private readonly lent = new Map<Buffer, Buffer>();
  /** True once every byte was read and matched the descriptor. */
  verified = false;
  /** Called with the length of each chunk read and hashed (progress displays). */
  onBytes: ((bytes: number) => void) | undefined;
  /** Read buffers allocated so far (each at most 512 KiB): stays small when consumers release chunks. */
  allocatedBuffers = 0;

  private constructor(
    readonly descriptor: Descriptor,
    private readonly handle: FileHandle,
    private readonly label: string,
  ) {}

  /**
   * Open `filePath` (symlinks refused) as the blob `desc`.
   * @throws OciError `OCI_DESCRIPTOR_INVALID`; `OCI_NOT_FOUND` (no such file); `OCI_SIZE_MISMATCH` (not a regular
   *   file of `desc.size` bytes); the system error of any other failure to open.
   */
  static async open(filePath: string, desc: Descriptor): Promise<BlobFile> {
    const checked = checkDescriptor(desc);
    const label = `OCI blob ${checked.digest}`;
    let handle: FileHandle;
    try {
      handle = await open(filePath, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
    } catch (error) {
      if ((error as { code?: unknown }).code === "ENOENT") throw new OciError("OCI_NOT_FOUND", `${label} not found at ${filePath}`, { cause: error });
      throw error;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile() || st.size !== checked.size) {
        throw new OciError("OCI_SIZE_MISMATCH", `${label}: expected a regular file of ${checked.size} bytes at ${filePath}, found ${st.isFile() ? `${st.size} bytes` : "not a regular file"}`);
      }
    } catch (error) {
      await handle.close();
      throw error;
    }
    const file = new BlobFile({ mediaType: checked.mediaType, digest: checked.digest, size: checked.size }, handle, label);
    // An empty blob has no read that ends it: its digest is checked here.
    if (checked.size === 0) {
      const found = `sha256:${file.hash.digest("hex")}`;
      if (found !== checked.digest) {
        await handle.close();
        throw new OciError("OCI_DIGEST_MISMATCH", `${label}: expected digest ${checked.digest}, computed ${found} (the empty blob)`);
      }
      file.verified = true;
    }
    return file;
  }

  /**
   * The request body of bytes `[offset, offset + length)`; `offset` must be where the previous body
   * ended (0 first).
   * @throws OciError `OCI_ARGUMENT_INVALID` (a range out of order or beyond the blob).
   */
  body(offset: number, length: number): BlobFileBody {
    if (offset !== this.hashed || !Number.isSafeInteger(length) || length < 0 || offset + length > this.descriptor.size) {
      throw new OciError(
        "OCI_ARGUMENT_INVALID",
        `${this.label}: a body of ${describeValue(length)} bytes at ${describeValue(offset)} cannot follow ${this.hashed} bytes read of ${this.descriptor.size}`,
      );
    }
    return new BlobFileBody(this, offset, length);
  }

  /** Wait for reads in flight, then close the file (safe to call more than once). */
  async close(): Promise<void> {
    await this.handle.close();
  }

  /** A buffer to read into: a spare one, or a new one. @internal */
  takeBuffer(): Buffer {
    const spare = this.spare.pop();
    if (spare !== undefined) return spare;
    const buffer = Buffer.allocUnsafeSlow(Math.min(BUFFER_BYTES, Math.max(1, this.descriptor.size)));
    this.allocatedBuffers += 1;
    this.pooled.set(buffer.buffer, buffer);
    return buffer;
  }

  /** Record that `buffer` now holds the chunk `view` (handed to a consumer). @internal */
  lend(buffer: Buffer, view: Buffer): void {
    this.lent.set(buffer, view);
  }

  /**
   * Take back the buffer of `view`, a chunk nobody holds any more. Only the chunk the buffer holds now
   * counts: a second release, or a release of an older chunk of a buffer read into again, is ignored.
   * @internal
   */
  giveBack(view: Buffer): void {
    const buffer = this.pooled.get(view.buffer);
    if (buffer === undefined || this.lent.get(buffer) !== view) return;
    this.lent.delete(buffer);
    if (this.spare.length < MAX_SPARE_BUFFERS) this.spare.push(buffer);
  }

  /**
   * Read up to `want` bytes at `position` into `buffer`, hash them, and check the descriptor when they
   * end the blob. @returns the bytes read. @internal
   * @throws OciError `OCI_SIZE_MISMATCH` (the file ended early or goes on past `size`), `OCI_DIGEST_MISMATCH`.
   */
  async readAt(buffer: Buffer, want: number, position: number): Promise<number> {
    const { bytesRead } = await this.handle.read(buffer, 0, want, position);
    if (bytesRead === 0) {
      throw new OciError("OCI_SIZE_MISMATCH", `${this.label}: expected ${this.descriptor.size} bytes, the file ended after ${position} (truncated while read)`);
    }
    this.hash.update(buffer.subarray(0, bytesRead));
    this.hashed += bytesRead;
    this.onBytes?.(bytesRead);
    if (this.hashed === this.descriptor.size) {
      const probe = Buffer.allocUnsafe(1);
      const { bytesRead: beyond } = await this.handle.read(probe, 0, 1, this.descriptor.size);
      if (beyond !== 0) throw new OciError("OCI_SIZE_MISMATCH", `${this.label}: expected ${this.descriptor.size} bytes, the file grew while read`);
      const found = `sha256:${this.hash.digest("hex")}`;
      if (found !== this.descriptor.digest) {
        throw new OciError("OCI_DIGEST_MISMATCH", `${this.label}: expected digest ${this.descriptor.digest}, computed ${found}`);
      }
      this.verified = true;
    }
    return bytesRead;
  }
}

/**
 * One request body of a {@link BlobFile}: a readable stream of pooled chunks (see the module comment).
 * Errors (as a stream error): `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`, or the read's system error.
 */
export class BlobFileBody extends Readable {
  private position: number;
  private readonly end: number;
  private reading = false;
  /** True once a read of the file began: the body cannot be sent again (its bytes were hashed). */
  started = false;

  /** @internal use {@link BlobFile.body} */
  constructor(
    private readonly file: BlobFile,
    offset: number,
    length: number,
  ) {
    super({ highWaterMark: BUFFER_BYTES });
    this.position = offset;
    this.end = offset + length;
  }

  override _read(): void {
    if (this.reading) return;
    if (this.position >= this.end) {
      this.push(null);
      return;
    }
    this.reading = true;
    this.started = true;
    const buffer = this.file.takeBuffer();
    const want = Math.min(buffer.length, this.end - this.position);
    this.file.readAt(buffer, want, this.position).then(
      (n) => {
        this.reading = false;
        if (this.destroyed) return;
        this.position += n;
        const chunk = buffer.subarray(0, n);
        this.file.lend(buffer, chunk);
        this.push(chunk);
        if (this.position >= this.end) this.push(null);
      },
      (error: unknown) => {
        this.reading = false;
        this.destroy(error as Error);
      },
    );
  }

  /** The consumer is done with `chunk` (a chunk this body emitted): its buffer may be read into again. */
  releaseChunk(chunk: Buffer): void {
    this.file.giveBack(chunk);
  }
}
