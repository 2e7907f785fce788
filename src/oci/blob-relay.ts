/**
 * The registry-to-registry blob relay of `copy` (docs/oci.md "Blob relays"; measured by
 * `npm run bench:oci-copy`): the source blob's `GET` on a connection of its own whose body is read
 * (`onread`) straight into a few reused 512 KiB buffers, and the destination's upload request bodies
 * made of views of those buffers, each buffer read into again only after the upload's write callback
 * (the socket handed the bytes to the kernel). The mirror of the download fast path
 * (`blob-download.ts`) and of the upload fast path (`blob-file.ts`): no fresh 64 KiB buffer per socket
 * read, no copy between the two sockets.
 *
 * Bounded memory: at most {@link MAX_BUFFERS} buffers per relay; when none is free the source socket
 * pauses (its body timeout off while we hold it) until the upload releases one.
 *
 * Verification (OCI image-spec `descriptor.md`, size and digest): only the plain answer takes this path
 * (`200`, one `Content-Length` equal to the descriptor's size, no `Transfer-Encoding`, no other
 * `Docker-Content-Digest`); anything else is handed back with nothing read, so `copy` streams it through
 * the general client. Every byte is hashed as it arrives; more bytes than `size` (also in the read that
 * completes it) are `OCI_SIZE_MISMATCH`, an early end is `OCI_SIZE_MISMATCH`, a wrong SHA-256 is
 * `OCI_DIGEST_MISMATCH`. The bytes of the read that completes the blob become available to the upload
 * only after that check, so on any failure the destination never receives the blob's last bytes.
 */
import { createHash, type Hash } from "node:crypto";
import type net from "node:net";
import { Readable } from "node:stream";
import { interruption } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import { connect, headStep, requestText, type BlobDownloadRequest, type ResponseHead } from "./blob-download.js";
import { OciError } from "./errors.js";
import type { Descriptor } from "./target.js";

/** Size of each relay buffer (bytes). */
const BUFFER_BYTES = 512 * 1024;
/** A buffer with less free room than this is retired before the next read (bytes). */
const MIN_READ_BYTES = 64 * 1024;
/** Buffers per relay before the source socket pauses (4 x 512 KiB = 2 MiB per blob in flight). */
const MAX_BUFFERS = 4;
/** Read buffer of the response head (bytes). */
const HEAD_READ_BYTES = 64 * 1024;

/** One relay buffer: bytes `[0, filled)` arrived, `[0, taken)` were handed to the upload. */
interface Slot {
  buf: Buffer;
  filled: number;
  taken: number;
  /** Views handed out and not yet released. */
  lent: Set<Buffer>;
  /** No more bytes will be read into it. */
  retired: boolean;
}

/** The outcome of {@link BlobRelay.open}: a relay, or another answer (nothing read of its body). */
export type BlobRelayAnswer = { kind: "relay"; relay: BlobRelay } | { kind: "other"; head: ResponseHead | undefined };

/** A blob streaming from a source registry into reused buffers, verified as it arrives (see the module comment). */
export class BlobRelay {
  /** True once every byte arrived and matched the descriptor. */
  verified = false;
  private reportBytes: ((bytes: number) => void) | undefined;
  /**
   * Called with the length of each read that arrived and was hashed (progress displays); set while bytes
   * already arrived, it is called at once with their count.
   */
  get onBytes(): ((bytes: number) => void) | undefined {
    return this.reportBytes;
  }
  set onBytes(report: ((bytes: number) => void) | undefined) {
    this.reportBytes = report;
    if (report !== undefined && this.received > 0) report(this.received);
  }
  /** Relay buffers allocated so far (each at most 512 KiB): at most 4 while the upload releases its chunks. */
  allocatedBuffers = 0;
  private readonly hash: Hash = createHash("sha256");
  private received = 0;
  /** Bytes handed to upload bodies (the next body must start here). */
  private handed = 0;
  private readonly slots: Slot[] = [];
  private fill: Slot | null = null;
  private readonly spare: Buffer[] = [];
  private readonly bySlot = new WeakMap<ArrayBufferLike, Slot>();
  private failure: Error | undefined;
  private ended = false;
  private paused = false;
  private waiting: RelayBody | undefined;
  private socket: net.Socket | undefined;
  private parking: Buffer = Buffer.alloc(0);

  private constructor(
    readonly descriptor: Descriptor,
    private readonly label: string,
    private readonly bodyTimeoutMs: number,
  ) {}

  /**
   * Send the blob `GET` of `request` and wait for the answer's head: the plain answer becomes a relay whose
   * body keeps arriving (until its buffers are full) while the caller starts the upload.
   * An aborted `signal` closes the connection: before the head the call rejects, after it the relay fails (its
   * bodies error) with the abort's InterruptedError.
   * @returns the relay, or `other` with the head (undefined when the connection failed before one): nothing read.
   * @throws OciError `OCI_SIZE_MISMATCH` (a `Content-Length` other than the size), `OCI_DIGEST_MISMATCH`
   *   (another `Docker-Content-Digest`), `OCI_RESPONSE_INVALID`, `OCI_DESCRIPTOR_INVALID` (a header with CR/LF);
   *   InterruptedError `INTERRUPTED` (`signal` aborted before the head arrived; nothing is connected then).
   */
  static open(request: BlobDownloadRequest, desc: Descriptor, signal?: AbortSignal): Promise<BlobRelayAnswer> {
    const stopped = interruption(signal);
    if (stopped !== undefined) return Promise.reject(stopped);
    const relay = new BlobRelay(desc, `OCI blob ${desc.digest}`, request.bodyTimeoutMs);
    return new Promise<BlobRelayAnswer>((resolve, reject) => {
      let settled = false;
      let inBody = false;
      let head: Buffer = Buffer.alloc(0);
      const headBuffer = Buffer.allocUnsafeSlow(HEAD_READ_BYTES);
      relay.parking = headBuffer;
      const settle = (outcome: BlobRelayAnswer | Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(headTimer);
        if (outcome instanceof Error || outcome.kind === "other") socket.destroy();
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      const onData = (n: number, buf: Buffer): void => {
        if (inBody) {
          relay.take(buf.subarray(0, n));
          return;
        }
        if (settled) return;
        const step = headStep(head, Buffer.from(buf.subarray(0, n)), desc, relay.label);
        if (step.kind === "more") {
          head = step.buffered;
          return;
        }
        if (step.kind === "done") {
          settle(step.outcome instanceof Error ? step.outcome : { kind: "other", head: step.outcome.kind === "other" ? step.outcome.head : undefined });
          return;
        }
        inBody = true;
        socket.setTimeout(request.bodyTimeoutMs);
        relay.fill = relay.newSlot(true);
        settle({ kind: "relay", relay });
        if (step.rest.length > 0) relay.take(step.rest);
      };
      const nextBuffer = (): Buffer => (inBody ? relay.readRegion() : headBuffer);
      const socket = connect(request.url, request, nextBuffer, onData, () => socket.write(requestText(request.url, request.headers)));
      relay.socket = socket;
      const headTimer = setTimeout(() => settle({ kind: "other", head: undefined }), request.headersTimeoutMs);
      socket.on("timeout", () => {
        relay.fail(new OciError("OCI_TIMEOUT", `${relay.label}: the source's body timed out`));
        settle(new OciError("OCI_TIMEOUT", `${relay.label}: the source's answer timed out`));
        socket.destroy();
      });
      socket.on("error", (error) => {
        if (inBody) relay.fail(new OciError("OCI_SIZE_MISMATCH", `${relay.label}: the source's connection failed after ${relay.received} of ${desc.size} bytes (truncated)`, { cause: error }));
        settle({ kind: "other", head: undefined });
      });
      for (const event of ["end", "close"]) {
        socket.on(event, () => {
          if (inBody) relay.fail(new OciError("OCI_SIZE_MISMATCH", `${relay.label}: expected ${desc.size} bytes, the source sent ${relay.received} (truncated)`));
          settle({ kind: "other", head: undefined });
        });
      }
      if (signal !== undefined) {
        const onAbort = (): void => {
          const error = interruption(signal) as Error;
          relay.fail(error);
          settle(error);
          socket.destroy();
        };
        signal.addEventListener("abort", onAbort, { once: true });
        socket.once("close", () => signal.removeEventListener("abort", onAbort));
      }
    });
  }

  /**
   * The upload body of bytes `[offset, offset + length)`; `offset` must be where the previous body ended
   * (0 first). Its chunks are views of the relay's buffers: release each with
   * {@link RelayBody.releaseChunk} once the socket took it.
   * @throws OciError `OCI_ARGUMENT_INVALID` (a range out of order or beyond the blob).
   */
  body(offset: number, length: number): RelayBody {
    if (offset !== this.handed || !Number.isSafeInteger(length) || length < 0 || offset + length > this.descriptor.size) {
      throw new OciError(
        "OCI_ARGUMENT_INVALID",
        `${this.label}: a body of ${describeValue(length)} bytes at ${describeValue(offset)} cannot follow ${this.handed} bytes relayed of ${this.descriptor.size}`,
      );
    }
    return new RelayBody(this, length);
  }

  /** Stop: close the source connection; bodies still reading fail. Safe to call more than once. */
  close(): void {
    if (!this.ended) this.fail(new OciError("OCI_SIZE_MISMATCH", `${this.label}: the relay was closed after ${this.received} of ${this.descriptor.size} bytes`));
    this.socket?.destroy();
  }

  /** A slot for reading into: a spare buffer, a new one while fewer than the maximum exist (or `force`), else null. */
  private newSlot(force: boolean): Slot | null {
    let buf = this.spare.pop();
    if (buf === undefined) {
      if (this.allocatedBuffers >= MAX_BUFFERS && !force) return null;
      buf = Buffer.allocUnsafeSlow(Math.min(BUFFER_BYTES, Math.max(1, this.descriptor.size)));
      this.allocatedBuffers += 1;
    }
    const slot: Slot = { buf, filled: 0, taken: 0, lent: new Set(), retired: false };
    this.bySlot.set(buf.buffer, slot);
    this.slots.push(slot);
    return slot;
  }

  /**
   * Where the socket reads next: the free tail of the fill buffer. Node asks for the next buffer right after
   * each read, also when that read paused the socket: then (no fill buffer) it gets the 64 KiB parking buffer
   * (the head's), whose bytes {@link take} copies into a relay buffer once one is free again.
   */
  private readRegion(): Buffer {
    if (this.fill === null) return this.parking;
    return this.fill.buf.subarray(this.fill.filled);
  }

  /** Bytes that arrived: read in place into {@link readRegion}, or elsewhere (copied). */
  private take(view: Buffer): void {
    if (this.failure !== undefined || this.ended) return;
    const size = this.descriptor.size;
    if (this.received + view.length > size) {
      this.fail(new OciError("OCI_SIZE_MISMATCH", `${this.label}: expected ${size} bytes, the source sent more (stopped at ${this.received + view.length})`));
      this.socket?.destroy();
      return;
    }
    this.received += view.length;
    this.hash.update(view);
    const fill = this.fill;
    if (fill !== null && view.buffer === fill.buf.buffer && view.byteOffset === fill.buf.byteOffset + fill.filled) fill.filled += view.length;
    else this.copyIn(view);
    this.reportBytes?.(view.length);
    if (this.received === size) {
      const found = `sha256:${this.hash.digest("hex")}`;
      if (found !== this.descriptor.digest) {
        this.fail(new OciError("OCI_DIGEST_MISMATCH", `${this.label}: expected digest ${this.descriptor.digest}, computed ${found} from the source's bytes`));
        this.socket?.destroy();
        return;
      }
      this.verified = true;
      this.ended = true;
      this.retireFill();
      this.socket?.destroy();
    } else if (this.fill !== null && this.fill.buf.length - this.fill.filled < MIN_READ_BYTES) {
      this.retireFill();
      this.fill = this.newSlot(false);
      if (this.fill === null) this.pause();
    }
    this.wake();
  }

  private copyIn(view: Buffer): void {
    for (let offset = 0; offset < view.length; ) {
      this.fill ??= this.newSlot(true);
      const region = this.readRegion();
      const n = Math.min(region.length, view.length - offset);
      view.copy(region, 0, offset, offset + n);
      (this.fill as Slot).filled += n;
      offset += n;
      if ((this.fill as Slot).filled === (this.fill as Slot).buf.length) {
        this.retireFill();
        this.fill = this.newSlot(true);
      }
    }
  }

  private retireFill(): void {
    if (this.fill === null) return;
    this.fill.retired = true;
    const slot = this.fill;
    this.fill = null;
    this.recycle(slot);
  }

  private pause(): void {
    if (this.paused || this.socket === undefined) return;
    this.paused = true;
    // The source waits for us, not the other way round: no body timeout while paused.
    this.socket.setTimeout(0);
    this.socket.pause();
  }

  private resume(): void {
    if (!this.paused || this.socket === undefined) return;
    this.paused = false;
    this.socket.setTimeout(this.bodyTimeoutMs);
    this.socket.resume();
  }

  private fail(error: Error): void {
    if (this.failure !== undefined || this.ended) return;
    this.failure = error;
    this.wake();
  }

  /** Let a body waiting for bytes try again. */
  private wake(): void {
    const body = this.waiting;
    this.waiting = undefined;
    body?.pump();
  }

  /**
   * The next bytes for a body, at most `max`: a view (lent until released), null when none are here yet
   * (the body waits), or the failure. @internal
   */
  next(max: number, body: RelayBody): Buffer | null | Error {
    if (this.failure !== undefined) return this.failure;
    const slot = this.slots.find((s) => s.taken < s.filled);
    if (slot === undefined) {
      this.waiting = body;
      return null;
    }
    const n = Math.min(slot.filled - slot.taken, max);
    // The bytes that end the blob leave only once verified (take() verifies in the read that brings them).
    if (this.handed + n === this.descriptor.size && !this.verified) {
      this.waiting = body;
      return null;
    }
    const view = slot.buf.subarray(slot.taken, slot.taken + n);
    slot.taken += n;
    this.handed += n;
    slot.lent.add(view);
    return view;
  }

  /** A body no longer waits (destroyed). @internal */
  forget(body: RelayBody): void {
    if (this.waiting === body) this.waiting = undefined;
  }

  /** The upload is done with `view`: its buffer may be read into again once nothing else of it is out. @internal */
  release(view: Buffer): void {
    const slot = this.bySlot.get(view.buffer);
    if (slot === undefined || !slot.lent.delete(view)) return;
    this.recycle(slot);
  }

  private recycle(slot: Slot): void {
    if (!slot.retired || slot.taken < slot.filled || slot.lent.size > 0) return;
    const at = this.slots.indexOf(slot);
    if (at < 0) return;
    this.slots.splice(at, 1);
    this.bySlot.delete(slot.buf.buffer);
    this.spare.push(slot.buf);
    if (this.paused && !this.ended && this.failure === undefined) {
      // A read may have taken a buffer after the pause (the socket asked for one): then it is the fill buffer.
      this.fill ??= this.newSlot(false);
      this.resume();
    }
  }
}

/**
 * One upload request body of a {@link BlobRelay}: a readable stream of views of the relay's buffers.
 * Errors (as a stream error): the relay's `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`, `OCI_TIMEOUT`.
 */
export class RelayBody extends Readable {
  private remaining: number;
  /** True once a chunk was handed out: the body cannot be sent again. */
  started = false;

  /** @internal use {@link BlobRelay.body} */
  constructor(
    private readonly relay: BlobRelay,
    length: number,
  ) {
    super({ highWaterMark: BUFFER_BYTES });
    this.remaining = length;
  }

  override _read(): void {
    this.pump();
  }

  /** Push what the relay has, up to this body's end. @internal */
  pump(): void {
    while (!this.destroyed) {
      if (this.remaining === 0) {
        this.push(null);
        return;
      }
      const next = this.relay.next(this.remaining, this);
      if (next === null) return;
      if (next instanceof Error) {
        this.destroy(next);
        return;
      }
      this.started = true;
      this.remaining -= next.length;
      if (!this.push(next)) return;
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.relay.forget(this);
    callback(error);
  }

  /** The consumer is done with `chunk` (a chunk this body emitted): its buffer may be read into again. */
  releaseChunk(chunk: Buffer): void {
    this.relay.release(chunk);
  }
}
