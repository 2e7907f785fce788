/**
 * Blob uploads of {@link RegistryTarget} (OCI Distribution Spec v1.1 "Pushing
 * blobs"): `POST` an upload session, then one monolithic `PUT ?digest=` when
 * the blob fits in one request, else `PATCH` chunks (`Content-Range`) and a
 * closing `PUT ?digest=`; then a `HEAD` that must show the blob with its size
 * and digest before the push counts as done.
 *
 * Request-size limits: no request body is larger than the configured maximum
 * (`chunkSize`), and chunks are at least the registry's `OCI-Chunk-Min-Length`
 * (except the last). A registry refusing a body as too large (413, or 416 to
 * a chunk) teaches the target a smaller maximum (the largest power of two at
 * most half the refused size, down to 64 KiB or the registry's minimum). Bodies are streamed after `100 Continue`, so such
 * an answer usually arrives before any byte was read and the upload simply
 * continues in smaller chunks; when the bytes were already spent the push
 * fails with `OCI_REQUEST_TOO_LARGE` and `copy` repeats the transfer with a
 * fresh stream (the learned maximum stays).
 *
 * The source is a verifying stream, or a {@link BlobSource}: a `BlobFile` (the upload fast path,
 * `blob-file.ts`) or a `BlobRelay` (a blob streaming from another registry, `blob-relay.ts`); each
 * request body is then a range of it in reused buffers, verified the same way (the bytes that end the
 * blob are sent only after size and digest matched).
 */
import { Readable } from "node:stream";
import type { BlobFile } from "./blob-file.js";
import type { BlobRelay } from "./blob-relay.js";
import { describeValue } from "../contract/grammar.js";
import { OciError } from "./errors.js";
import { bodyReadStarted, discard, headerValue, type HttpResponse } from "./registry-http.js";
import type { RegistrySession } from "./registry-session.js";
import { sleep } from "./retry.js";
import type { Descriptor } from "./target.js";

/** Smallest request body the learned maximum shrinks to (bytes). */
export const MIN_CHUNK_BYTES = 64 * 1024;
const REFUSED_SIZE_STATUS = new Set([413, 416]);
const CONFIRM_ATTEMPTS = 4;

/** Upload limits of one target: the configured maximum and what the registry taught it. */
export interface UploadLimits {
  /** Largest request body (bytes) the caller allows. */
  readonly chunkSize: number;
  /** Largest request body (bytes) the registry accepted after refusing a larger one, if it refused one. */
  learnedMax?: number;
}

/**
 * A source whose request bodies are ranges of reused buffers, verified before the bytes that end the blob
 * leave: a blob file of a local store (`blob-file.ts`) or a blob relayed from another registry (`blob-relay.ts`).
 */
export type BlobSource = BlobFile | BlobRelay;

/** Bytes read past one upload chunk, handed to the next. */
interface ChunkCarry {
  rest: Buffer | null;
}

/**
 * The next `length` bytes of `source` as a stream (one PATCH body), pulled with
 * `read()` (no promise per chunk); bytes beyond the chunk stay in `carry`.
 */
class UploadChunk extends Readable {
  private remaining: number;
  private waiting = false;

  constructor(
    private readonly source: Readable,
    length: number,
    private readonly carry: ChunkCarry,
  ) {
    super({ highWaterMark: 256 * 1024 });
    this.remaining = length;
    const fail = (error: Error): void => {
      this.destroy(error);
    };
    source.once("error", fail);
    this.once("close", () => source.removeListener("error", fail));
  }

  override _read(): void {
    for (;;) {
      if (this.remaining === 0) {
        this.push(null);
        return;
      }
      let buf = this.carry.rest ?? (this.source.read() as Buffer | null);
      this.carry.rest = null;
      if (buf === null) {
        if (this.source.readableEnded || this.source.destroyed) {
          this.push(null);
          return;
        }
        if (!this.waiting) {
          this.waiting = true;
          this.source.once("readable", () => {
            this.waiting = false;
            this._read();
          });
        }
        return;
      }
      if (buf.length > this.remaining) {
        this.carry.rest = buf.subarray(this.remaining);
        buf = buf.subarray(0, this.remaining);
      }
      this.remaining -= buf.length;
      if (!this.push(buf)) return;
    }
  }
}

/** Wait for `source` to become readable, end or fail. */
function readableOrEnd(source: Readable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (): void => {
      cleanup();
      resolve();
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const cleanup = (): void => {
      source.removeListener("readable", done);
      source.removeListener("end", done);
      source.removeListener("error", onError);
    };
    source.once("readable", done);
    source.once("end", done);
    source.once("error", onError);
  });
}

/**
 * After the last chunk: require that `source` has no more bytes and ends
 * cleanly, so the verifier's size/digest verdict arrives before the commit.
 * @throws OciError `OCI_SIZE_MISMATCH`, or the verifier's error.
 */
async function drainToEnd(source: Readable, carry: ChunkCarry, desc: Descriptor): Promise<void> {
  const tooMany = (): OciError => new OciError("OCI_SIZE_MISMATCH", `OCI blob ${desc.digest}: more than ${desc.size} bytes`);
  if (carry.rest !== null) throw tooMany();
  for (;;) {
    if (source.errored) throw source.errored;
    if (source.read() !== null) throw tooMany();
    if (source.readableEnded) return;
    await readableOrEnd(source);
  }
}

/** The registry's `OCI-Chunk-Min-Length` (bytes), or 0 when absent. @throws OciError `OCI_RESPONSE_INVALID` when not an integer. */
function chunkMinLength(res: HttpResponse): number {
  const value = headerValue(res, "oci-chunk-min-length");
  if (value === undefined) return 0;
  if (!/^[0-9]{1,15}$/.test(value)) throw new OciError("OCI_RESPONSE_INVALID", `OCI-Chunk-Min-Length is not a byte count: ${describeValue(value)}`);
  return Number(value);
}

/** The body size a request may have now: the configured maximum, lowered by what the registry refused. */
function maxBody(limits: UploadLimits): number {
  return Math.min(limits.chunkSize, limits.learnedMax ?? Number.POSITIVE_INFINITY);
}

/**
 * Learn from a body of `refused` bytes answered 413/416: the maximum becomes
 * the largest power of two at most half of it (at least 64 KiB and the registry's minimum).
 * @throws OciError `OCI_REQUEST_TOO_LARGE` when no smaller body is possible.
 */
function learnRefusal(limits: UploadLimits, refused: number, minChunk: number, registry: string, status: number): void {
  const floor = Math.max(MIN_CHUNK_BYTES, minChunk);
  // The largest power of two at most half the refused size: registries cap at round sizes (1, 4, 16 MiB, ...).
  const next = Math.max(floor, 2 ** Math.floor(Math.log2(Math.max(1, refused / 2))));
  if (next >= refused) {
    throw new OciError(
      "OCI_REQUEST_TOO_LARGE",
      `registry ${registry} refused a ${refused}-byte upload request (HTTP ${status}) and no smaller chunk is allowed (minimum ${floor} bytes: OCI-Chunk-Min-Length or 64 KiB); raise the registry's request limit`,
    );
  }
  limits.learnedMax = Math.min(limits.learnedMax ?? next, next);
}

/** Thrown when a refused body had already been streamed: `copy` repeats the transfer (the smaller maximum is kept). */
function spentRefusal(registry: string, refused: number, status: number, limits: UploadLimits): OciError {
  return new OciError(
    "OCI_REQUEST_TOO_LARGE",
    `registry ${registry} refused a ${refused}-byte upload request (HTTP ${status}) after its bytes were sent; push again with a fresh stream (chunks of at most ${maxBody(limits)} bytes now)`,
  );
}

/** The registry's own report of what it stored must not contradict `desc`. */
function checkPushedDigest(res: HttpResponse, desc: Descriptor): void {
  const claimed = headerValue(res, "docker-content-digest");
  if (claimed !== undefined && claimed !== desc.digest) {
    throw new OciError("OCI_DIGEST_MISMATCH", `registry stored ${describeValue(claimed)} for ${desc.digest}`);
  }
}

/** `POST` a new upload session: its `Location` and the registry's minimum chunk size. */
async function startUpload(session: RegistrySession, desc: Descriptor, signal: AbortSignal | undefined): Promise<{ location: URL; minChunk: number }> {
  const url = session.url("blobs/uploads/");
  const res = await session.send({ method: "POST", url, scope: "push", headers: { "content-length": "0" }, signal }, [202], `upload of ${desc.digest}`);
  discard(res);
  return { location: session.nextLocation(res, url), minChunk: chunkMinLength(res) };
}

/** One monolithic `PUT ?digest=`. @returns `"refused"` when answered 413/416 before the stream was read. */
async function putWhole(session: RegistrySession, desc: Descriptor, source: Readable | BlobSource, location: URL, limits: UploadLimits, minChunk: number, signal: AbortSignal | undefined): Promise<"done" | "refused"> {
  const put = new URL(location);
  put.searchParams.append("digest", desc.digest);
  const headers = { "content-type": "application/octet-stream", "content-length": String(desc.size) };
  const body = !(source instanceof Readable) ? source.body(0, desc.size) : source;
  const res = await session.exchange({ method: "PUT", url: put, scope: "push", headers, body, signal }, true);
  if (REFUSED_SIZE_STATUS.has(res.statusCode)) {
    discard(res);
    learnRefusal(limits, desc.size, minChunk, session.registry, res.statusCode);
    if (bodyReadStarted(body)) throw spentRefusal(session.registry, desc.size, res.statusCode, limits);
    if (body !== source) body.destroy();
    return "refused";
  }
  if (res.statusCode !== 201) throw await session.statusError(res, "PUT", put, `upload of ${desc.digest}`);
  discard(res);
  checkPushedDigest(res, desc);
  return "done";
}

/** The registry's `Range: 0-<last>` after a chunk must cover exactly the bytes sent so far. */
function checkAcknowledged(res: HttpResponse, sent: number, desc: Descriptor): void {
  const range = headerValue(res, "range");
  if (range === undefined) return;
  const m = /^(?:bytes=)?0-([0-9]{1,15})$/.exec(range);
  if (m === null || Number(m[1]) + 1 !== sent) {
    throw new OciError("OCI_SIZE_MISMATCH", `registry acknowledged ${describeValue(range)} of ${desc.digest} after ${sent} bytes were sent`);
  }
}

/** `PATCH` chunks from `verified`, then the closing `PUT ?digest=`. */
async function putChunks(session: RegistrySession, desc: Descriptor, source: Readable | BlobSource, first: URL, limits: UploadLimits, minChunk: number, signal: AbortSignal | undefined): Promise<void> {
  const carry: ChunkCarry = { rest: null };
  let location = first;
  let offset = 0;
  for (let requests = 0; offset < desc.size; requests += 1) {
    if (requests > 1_000_000) throw new OciError("OCI_REQUEST_TOO_LARGE", `upload of ${desc.digest} needs too many chunks`);
    const length = Math.min(Math.max(maxBody(limits), minChunk), desc.size - offset);
    const chunk = !(source instanceof Readable) ? source.body(offset, length) : new UploadChunk(source, length, carry);
    const headers = { "content-type": "application/octet-stream", "content-length": String(length), "content-range": `${offset}-${offset + length - 1}` };
    const res = await session.exchange({ method: "PATCH", url: location, scope: "push", headers, body: chunk, signal }, true);
    if (REFUSED_SIZE_STATUS.has(res.statusCode)) {
      discard(res);
      learnRefusal(limits, length, minChunk, session.registry, res.statusCode);
      if (bodyReadStarted(chunk)) throw spentRefusal(session.registry, length, res.statusCode, limits);
      chunk.destroy();
      continue;
    }
    if (res.statusCode !== 202) throw await session.statusError(res, "PATCH", location, `chunk upload of ${desc.digest}`);
    discard(res);
    offset += length;
    checkAcknowledged(res, offset, desc);
    location = session.nextLocation(res, location);
  }
  // The verifier reports size/digest at end of stream: drain it before committing. A file verified
  // itself before its last bytes were sent.
  if (!(source instanceof Readable)) {
    if (!source.verified) throw new OciError("OCI_SIZE_MISMATCH", `OCI blob ${desc.digest}: the upload ended before the source was read and verified`);
  } else {
    await drainToEnd(source, carry, desc);
  }
  const put = new URL(location);
  put.searchParams.append("digest", desc.digest);
  const res = await session.send({ method: "PUT", url: put, scope: "push", headers: { "content-length": "0" }, signal }, [201], `upload of ${desc.digest}`);
  discard(res);
  checkPushedDigest(res, desc);
}

/**
 * Upload the blob `desc` whose bytes `source` streams (already verifying) or holds (a
 * {@link BlobSource} of `desc`, read from its start); see the module comment. Does not confirm: call
 * {@link confirmStored}. An aborted `signal` destroys the request in flight (`POST`, `PUT` or `PATCH` chunk) and
 * starts no other.
 * @throws OciError `OCI_REQUEST_TOO_LARGE`, `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`,
 *   `OCI_RESPONSE_INVALID`, `OCI_PLAIN_HTTP_REFUSED`, and the session's HTTP errors; InterruptedError `INTERRUPTED`.
 */
export async function uploadBlob(session: RegistrySession, desc: Descriptor, source: Readable | BlobSource, limits: UploadLimits, signal?: AbortSignal): Promise<void> {
  let { location, minChunk } = await startUpload(session, desc, signal);
  if (desc.size <= maxBody(limits)) {
    if ((await putWhole(session, desc, source, location, limits, minChunk, signal)) === "done") return;
    // Refused before a byte was read: a fresh session, in chunks.
    ({ location, minChunk } = await startUpload(session, desc, signal));
  }
  await putChunks(session, desc, source, location, limits, minChunk, signal);
}

/**
 * Confirm with `HEAD` that the registry serves `reference` (a blob digest, or a
 * manifest digest or tag) as `desc`: 200 with `Content-Length` = `desc.size`
 * and no `Docker-Content-Digest` other than `desc.digest`. A 404 is asked
 * again a few times (registries whose storage writes are not atomic answer
 * one while another writer re-links the same content).
 * @throws OciError `OCI_NOT_FOUND` (absent after the upload), `OCI_SIZE_MISMATCH`,
 *   `OCI_DIGEST_MISMATCH`, `OCI_RESPONSE_INVALID` (no `Content-Length`), and the HTTP errors.
 */
export async function confirmStored(session: RegistrySession, desc: Descriptor, kind: "blobs" | "manifests", reference: string, accept?: string, signal?: AbortSignal): Promise<void> {
  const url = session.url(`${kind}/${reference}`);
  const headers: Record<string, string> = accept === undefined ? {} : { accept };
  for (let attempt = 1; ; attempt += 1) {
    const res = await session.exchange({ method: "HEAD", url, scope: "pull", headers, followRedirects: true, signal }, true);
    discard(res);
    if (res.statusCode === 404 && attempt < CONFIRM_ATTEMPTS) {
      await sleep(50 * 2 ** attempt, signal);
      continue;
    }
    if (res.statusCode === 404) {
      throw new OciError("OCI_NOT_FOUND", `registry ${session.registry} accepted ${reference} but does not serve it (HEAD answered 404 ${attempt} times)`);
    }
    if (res.statusCode !== 200) throw await session.statusError(res, "HEAD", url, `confirmation of ${reference}`);
    const length = headerValue(res, "content-length");
    if (length === undefined) throw new OciError("OCI_RESPONSE_INVALID", `HEAD ${reference} on ${session.registry} gave no Content-Length to confirm the upload`);
    if (Number(length) !== desc.size) {
      throw new OciError("OCI_SIZE_MISMATCH", `registry ${session.registry} stored ${describeValue(length)} bytes for ${reference}, expected ${desc.size}`);
    }
    const claimed = headerValue(res, "docker-content-digest");
    if (claimed !== undefined && claimed !== desc.digest) {
      throw new OciError("OCI_DIGEST_MISMATCH", `registry ${session.registry} serves ${describeValue(claimed)} at ${reference}, expected ${desc.digest}`);
    }
    return;
  }
}
