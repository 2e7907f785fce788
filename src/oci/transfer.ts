/**
 * Verified reads and graph moves over any {@link Target} (oras-go's
 * `oras.Copy` / `content.FetchAll` shapes):
 *
 * - `fetchManifest`: a manifest's bytes, refused above 1 MiB before reading,
 *   size and digest verified.
 * - `fetchBlobToFile`: a blob streamed through SHA-256 into `<file>.partial`,
 *   renamed into place only after it verified; never buffered whole.
 * - `copy`: manifest + config + layers from one target to another, skipping
 *   blobs the destination has, verifying each blob on the way.
 * - `tagIfAbsent`: the registry overwrite rules (docs/release-run.md, "`release publish`": a tag is bound once and never moved).
 */
import { setMaxListeners } from "node:events";
import { constants as fsConstants } from "node:fs";
import { open, rename, rm, type FileHandle } from "node:fs/promises";
import type { Readable } from "node:stream";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { MAX_MANIFEST_BYTES } from "../contract/constants.js";
import { interruption, throwIfInterrupted } from "../contract/errors.js";
import { describeValue, isDigest, isDiscoveryTag, tagShapeProblem } from "../contract/grammar.js";
import {
  DescriptorVerifier,
  bufferStream,
  checkDescriptor,
  readAllBounded,
  verifiesDescriptor,
} from "./descriptor.js";
import { requireObjectWith, requireOptionalFunction, requireOptionalNumber, requireOptionalSignal, requireOptions, requireStringArgument } from "./arguments.js";
import { OciError, isOciError, manifestTooLarge } from "./errors.js";
import { sleep } from "./retry.js";
import { parseManifest } from "./manifest.js";
import type { BlobFile } from "./blob-file.js";
import type { Descriptor, ReadOnlyTarget, Target } from "./target.js";

/** Bytes buffered before a batched write of a fetched blob (1 MiB: measured ~25% faster than 256 KiB). */
const FILE_SINK_BUFFER_BYTES = 1024 * 1024;

/**
 * A writable that appends to an open file with batched `writev` calls (one
 * thread-pool round trip per buffered batch). The caller closes the handle.
 */
class FileSink extends Writable {
  private written = 0;

  constructor(
    private readonly handle: FileHandle,
    private readonly onWritten?: (bytes: number) => void,
  ) {
    super({ highWaterMark: FILE_SINK_BUFFER_BYTES });
  }

  private done(bytes: number, callback: (error?: Error | null) => void): void {
    this.written += bytes;
    this.onWritten?.(this.written);
    callback();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.handle.write(chunk).then(() => this.done(chunk.length, callback), callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    const buffers = chunks.map((c) => c.chunk);
    const bytes = buffers.reduce((n, b) => n + b.length, 0);
    this.handle.writev(buffers).then(() => this.done(bytes, callback), callback);
  }
}

/** Options of {@link fetchBlobToFile}. */
export interface FetchBlobOptions {
  /**
   * Called after each batch reaches the partial file with the bytes written so
   * far and `desc.size` (for a progress display on a TTY; the bytes are not
   * verified until the promise resolves).
   */
  onProgress?: (writtenBytes: number, totalBytes: number) => void;
  /**
   * Stop the transfer: the call rejects with InterruptedError `INTERRUPTED` (the abort's reason, when it is
   * one) once the partial file is removed, never renaming it into place. The request is told to stop (the
   * stream is destroyed, the target's `fetchToFile` gets the signal); one that cannot stop at once (a request
   * still waiting for its answer) is abandoned holding only the open handle of the removed partial file,
   * which it closes when it ends: it never creates a file again.
   */
  signal?: AbortSignal;
}

function ensureVerifying(stream: Readable, desc: Descriptor, label: string): DescriptorVerifier {
  if (verifiesDescriptor(stream, desc)) return stream as DescriptorVerifier;
  const verifier = new DescriptorVerifier(desc, label);
  stream.on("error", (error) => verifier.destroy(error));
  verifier.on("error", () => stream.destroy());
  // A verifier destroyed before the end (a stopped copy) releases the source too.
  verifier.on("close", () => {
    if (!stream.destroyed && !stream.readableEnded) stream.destroy();
  });
  stream.pipe(verifier);
  return verifier;
}

/**
 * Fetch a manifest's bytes from `target`, verified against `desc`.
 * `desc.size` above {@link MAX_MANIFEST_BYTES} (1 MiB) is refused before any read.
 * @returns the exact manifest bytes.
 * @throws OciError `OCI_MANIFEST_TOO_LARGE`, `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`,
 *   `OCI_DESCRIPTOR_INVALID`, and the target's errors (`OCI_NOT_FOUND`, ...).
 */
export async function fetchManifest(target: ReadOnlyTarget, desc: Descriptor): Promise<Buffer> {
  return readManifest(target, desc, undefined);
}

/** {@link fetchManifest}, its request stopped by `signal` (InterruptedError `INTERRUPTED` once aborted). */
async function readManifest(target: ReadOnlyTarget, desc: Descriptor, signal: AbortSignal | undefined): Promise<Buffer> {
  checkDescriptor(desc);
  if (desc.size > MAX_MANIFEST_BYTES) {
    throw manifestTooLarge(`OCI manifest ${desc.digest}`, `${desc.size} bytes`);
  }
  throwIfInterrupted(signal);
  const stream = ensureVerifying(await target.fetch(desc, signal), desc, `OCI manifest ${desc.digest}`);
  const release = destroyOnAbort(stream, signal);
  try {
    return await readAllBounded(stream, desc.size, `OCI manifest ${desc.digest}`);
  } finally {
    release();
  }
}

/**
 * Destroy `stream` when `signal` aborts (a target that ignores the signal still has its stream stopped);
 * @returns the function that stops watching (call it once the stream is done with).
 */
function destroyOnAbort(stream: Readable, signal: AbortSignal | undefined): () => void {
  if (signal === undefined) return () => undefined;
  const stop = (): void => {
    stream.destroy(interruption(signal));
  };
  if (signal.aborted) {
    stop();
    return () => undefined;
  }
  signal.addEventListener("abort", stop, { once: true });
  return () => signal.removeEventListener("abort", stop);
}

/**
 * Stream the blob `desc` from `target` through SHA-256 into
 * `<filePath>.partial` (mode 0600, created without following symlinks), and
 * rename it to `filePath` only when size and digest match. On any failure the
 * partial file is removed and `filePath` is untouched. Memory use does not
 * grow with the blob size.
 * @throws OciError `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`, `OCI_DESCRIPTOR_INVALID`,
 *   and the target's errors (`OCI_NOT_FOUND`, `OCI_HTTP_ERROR`, `OCI_TIMEOUT`, ...);
 *   InterruptedError `INTERRUPTED` (`options.signal` aborted; see {@link FetchBlobOptions.signal});
 *   OciError `OCI_ARGUMENT_INVALID` (before anything is written: `target` not a target, `filePath` not a non-empty
 *   string, `options` not an object of `{onProgress?, signal?}`, `signal` not an AbortSignal).
 */
export async function fetchBlobToFile(target: ReadOnlyTarget, desc: Descriptor, filePath: string, options: FetchBlobOptions = {}): Promise<void> {
  const call = "fetchBlobToFile(target, desc, filePath, options)";
  requireObjectWith(target, call, "target", "a Target (resolve, fetch, exists)", ["fetch"]);
  checkDescriptor(desc);
  requireStringArgument(filePath, call, "filePath", "the path of the file to write");
  requireOptions(options, call, ["onProgress", "signal"]);
  requireOptionalFunction(options.onProgress, call, "options.onProgress", "(writtenBytes, totalBytes) => void");
  requireOptionalSignal(options.signal, call);
  const signal = options.signal;
  throwIfInterrupted(signal);
  const partial = `${filePath}.partial`;
  try {
    const handle = await open(partial, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC | fsConstants.O_NOFOLLOW, 0o600);
    await untilAborted(writeBlob(target, desc, handle, options), signal);
    // The one step that creates a name: never after an abort.
    throwIfInterrupted(signal);
    await rename(partial, filePath);
  } catch (error) {
    await rm(partial, { force: true });
    throw interruption(signal) ?? error;
  }
}

/**
 * The transfer of {@link fetchBlobToFile} into the open `handle`, which it closes once nothing writes to it
 * any more (also when its caller stopped waiting after an abort).
 */
async function writeBlob(target: ReadOnlyTarget, desc: Descriptor, handle: FileHandle, options: FetchBlobOptions): Promise<void> {
  const { onProgress, signal } = options;
  let source: Readable | undefined;
  try {
    // The target's own verified fast path, when it has one; else the verifying stream.
    const written = typeof target.fetchToFile === "function" && (await target.fetchToFile(desc, handle.fd, onProgress, signal));
    if (written) return;
    throwIfInterrupted(signal);
    source = ensureVerifying(await target.fetch(desc), desc, `OCI blob ${desc.digest}`);
    throwIfInterrupted(signal);
    const sink = new FileSink(handle, onProgress === undefined ? undefined : (n) => onProgress(n, desc.size));
    await pipeline(source, sink, ...(signal === undefined ? [] : [{ signal }]));
  } catch (error) {
    source?.destroy();
    throw error;
  } finally {
    // Waits for the handle's pending writes (FileHandle.close).
    await handle.close();
  }
}

/**
 * `work`'s outcome, or InterruptedError `INTERRUPTED` as soon as `signal` aborts (`work` then goes on
 * unobserved; its failure is not reported).
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(interruption(signal));
    if (signal.aborted) {
      work.catch(() => undefined);
      stop();
      return;
    }
    signal.addEventListener("abort", stop, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", stop);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", stop);
        reject(error);
      },
    );
  });
}

/** Options of {@link copy}. */
export interface CopyOptions {
  /**
   * Tag to set on the destination. Default: `reference` when it is a tag,
   * none when it is a digest. `null` sets no tag.
   */
  tag?: string | null;
  /** Blobs transferred at once (default 3, at most 8). */
  concurrency?: number;
  /**
   * Attempts per blob transfer (default 3, at most 5). A streamed upload cannot
   * be replayed by the HTTP layer, so a transfer that failed transiently
   * (`OCI_RETRY_EXHAUSTED`, `OCI_TIMEOUT`, `OCI_REQUEST_TOO_LARGE` after the
   * target learned a smaller chunk) is fetched and pushed again; verification
   * failures are never retried.
   */
  blobAttempts?: number;
  /**
   * Called as blob bytes reach the destination: `(bytes, totalBytes)`, both
   * cumulative over the blobs of the graph (blobs the destination already
   * has count as done; a repeated transfer takes its bytes back first).
   */
  onProgress?: (bytes: number, totalBytes: number) => void;
  /**
   * Stop the copy (e.g. the run's Ctrl-C). An already-aborted signal rejects before any request. After the
   * abort no blob, manifest or tag request starts; the requests in flight (blob downloads, relays, uploads and
   * their `PATCH` chunks, `HEAD`s, the manifest `PUT`) are destroyed; open blob files and relay buffers are
   * released and a partial layout write is removed (nothing new under the layout's `blobs/`, `index.json`
   * untouched); then the call rejects with InterruptedError `INTERRUPTED` (the abort's reason, when it is one).
   * No tag is written after the abort. A request the destination had already received whole when the abort
   * came (a blob's closing `PUT`, the manifest `PUT`) may still take effect there: the destroy cannot take it
   * back, and the next copy skips what is present.
   */
  signal?: AbortSignal;
}

/** Failures after which a blob transfer is repeated with a fresh stream (never verification failures). */
const TRANSIENT_CODES: readonly string[] = ["OCI_RETRY_EXHAUSTED", "OCI_TIMEOUT", "OCI_REQUEST_TOO_LARGE"];

/** How one `copy` runs: bounds, and the progress counter. */
interface CopyRun {
  concurrency: number;
  attempts: number;
  /** Bytes of blobs to transfer (known so far) and done. */
  total: number;
  done: number;
  onProgress: ((bytes: number, totalBytes: number) => void) | undefined;
  /** The caller's abort (see {@link CopyOptions.signal}). */
  signal: AbortSignal | undefined;
}

function reportProgress(run: CopyRun, bytes: number): void {
  run.done += bytes;
  run.onProgress?.(run.done, run.total);
}

/**
 * Run `push` with `source`'s bytes counted as progress (when `run` reports it); a failed push takes its
 * bytes back, so that a repeated transfer does not count them twice.
 */
async function pushCounted(run: CopyRun, source: { onBytes: ((bytes: number) => void) | undefined }, push: () => Promise<void>): Promise<void> {
  let sent = 0;
  if (run.onProgress !== undefined) {
    source.onBytes = (bytes) => {
      sent += bytes;
      reportProgress(run, bytes);
    };
  }
  try {
    await push();
  } catch (error) {
    reportProgress(run, -sent);
    throw error;
  }
}

/** One upload of {@link transferBlob}'s fast path: the blob file opened, pushed with its progress, closed. */
async function pushFromFile(
  openBlobFile: (desc: Descriptor) => Promise<BlobFile>,
  pushBlobFile: (desc: Descriptor, file: BlobFile, signal?: AbortSignal) => Promise<void>,
  blob: Descriptor,
  run: CopyRun,
): Promise<void> {
  const file = await openBlobFile(blob);
  try {
    throwIfInterrupted(run.signal);
    await pushCounted(run, file, () => pushBlobFile(blob, file, run.signal));
  } finally {
    // Waits for a read in flight; its pooled buffers go with it.
    await file.close();
  }
}

async function transferBlob(src: ReadOnlyTarget, dst: Target, blob: Descriptor, run: CopyRun): Promise<void> {
  const signal = run.signal;
  for (let attempt = 1; ; attempt += 1) {
    try {
      throwIfInterrupted(signal);
      if (await dst.exists(blob, signal)) {
        reportProgress(run, blob.size);
        return;
      }
      throwIfInterrupted(signal);
      if (typeof src.openBlobRelay === "function" && typeof dst.pushBlobFile === "function") {
        // The registry-to-registry relay: the source's body read into reused buffers, verified as it
        // arrives, each buffer's bytes sent on before it is read into again; pushBlobFile confirms.
        const relay = await src.openBlobRelay(blob, signal);
        if (relay !== undefined) {
          // An abort closes the source connection; the relay's bodies then fail and its buffers are dropped.
          const onAbort = (): void => relay.close();
          signal?.addEventListener("abort", onAbort, { once: true });
          try {
            throwIfInterrupted(signal);
            await pushCounted(run, relay, () => (dst.pushBlobFile as NonNullable<Target["pushBlobFile"]>).call(dst, blob, relay, signal));
          } finally {
            signal?.removeEventListener("abort", onAbort);
            relay.close();
          }
          return;
        }
      }
      if (typeof src.openBlobFile === "function" && typeof dst.pushBlobFile === "function") {
        // The upload fast path: the blob file read into reused buffers, verified as it is sent;
        // pushBlobFile confirms the stored blob itself.
        await pushFromFile(src.openBlobFile.bind(src), dst.pushBlobFile.bind(dst), blob, run);
        return;
      }
      const stream = ensureVerifying(await src.fetch(blob, signal), blob, `OCI blob ${blob.digest}`);
      const release = destroyOnAbort(stream, signal);
      try {
        await pushCounted(run, stream, () => dst.push(blob, stream, signal));
      } finally {
        release();
        if (!stream.destroyed && !stream.readableEnded) stream.destroy();
      }
      throwIfInterrupted(signal);
      // Whatever the target said, the push counts only when the target now has the blob with its size.
      if (!(await dst.exists(blob, signal))) {
        throw new OciError("OCI_NOT_FOUND", `OCI blob ${blob.digest} (${blob.size} bytes) was pushed but the destination does not have it`);
      }
      return;
    } catch (error) {
      // After an abort every failure is the abort's (a destroyed request fails with whatever it was doing).
      throwIfInterrupted(signal);
      if (attempt >= run.attempts || !(error instanceof OciError) || !TRANSIENT_CODES.includes(error.code)) throw error;
      await sleep(100 * attempt, signal);
    }
  }
}

/**
 * Push a manifest whose blobs were transferred. A registry that answers
 * `MANIFEST_BLOB_UNKNOWN` (another writer re-linking the same blob at that
 * moment, on registries whose storage writes are not atomic) gets the blobs
 * confirmed again (pushed when missing) and the manifest again, a bounded
 * number of times.
 */
async function pushManifest(src: ReadOnlyTarget, dst: Target, desc: Descriptor, bytes: Buffer, blobs: readonly Descriptor[], run: CopyRun, tag: string | null): Promise<void> {
  const signal = run.signal;
  for (let attempt = 1; ; attempt += 1) {
    try {
      // No manifest write, and so no tag, starts after an abort.
      throwIfInterrupted(signal);
      const content = ensureVerifying(bufferStream(bytes), desc, `OCI manifest ${desc.digest}`);
      if (tag !== null && typeof dst.pushTagged === "function") {
        // One write stores and tags it (a registry's PUT by tag): no HEAD first, no PUT by digest.
        await dst.pushTagged(desc, content, tag, signal);
        return;
      }
      if (await dst.exists(desc, signal)) {
        content.destroy();
        return;
      }
      throwIfInterrupted(signal);
      await dst.push(desc, content, signal);
      return;
    } catch (error) {
      throwIfInterrupted(signal);
      if (attempt >= MANIFEST_ATTEMPTS || !isOciError(error, "OCI_MANIFEST_BLOB_UNKNOWN")) throw error;
      await sleep(100 * 2 ** attempt, signal);
      for (const blob of blobs) await transferBlob(src, dst, blob, { ...run, onProgress: undefined });
    }
  }
}

const MANIFEST_ATTEMPTS = 5;
const MAX_GRAPH_DEPTH = 4;

/**
 * Run `fn` over `items`, at most `limit` at a time. After the first failure
 * nothing new starts; the running ones are awaited (so nothing is still
 * writing when the caller cleans up), then the first failure is thrown.
 * @throws OciError `OCI_ARGUMENT_INVALID` (`items` not an array, `limit` not a number of at least 1, `fn` not a function).
 */
export async function forEachBounded<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  const call = "forEachBounded(items, limit, fn)";
  if (!Array.isArray(items)) throw new OciError("OCI_ARGUMENT_INVALID", `${call}: items must be an array, found ${describeValue(items)}`);
  if (limit === undefined) throw new OciError("OCI_ARGUMENT_INVALID", `${call}: limit must be a number of tasks at a time of at least 1, found nothing`);
  requireOptionalNumber(limit, call, "limit", "tasks at a time", 1);
  if (typeof fn !== "function") throw new OciError("OCI_ARGUMENT_INVALID", `${call}: fn must be a function (item) => Promise<void>, found ${describeValue(fn)}`);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const workers = Array.from({ length: Math.min(Math.max(1, limit), items.length) }, async () => {
    while (next < items.length && failure === undefined) {
      const item = items[next] as T;
      next += 1;
      try {
        await fn(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  });
  await Promise.all(workers);
  if (failure !== undefined) throw failure.error;
}

/**
 * Copy the manifest `desc`, its children and blobs; `tag` (top level only) is bound by the manifest's own write
 * when `dst` has `pushTagged`. @returns true when `tag` was bound here.
 */
async function copyGraph(src: ReadOnlyTarget, dst: Target, desc: Descriptor, depth: number, run: CopyRun, tag: string | null): Promise<boolean> {
  if (depth > MAX_GRAPH_DEPTH) throw new OciError("OCI_MANIFEST_INVALID", `OCI index nesting deeper than ${MAX_GRAPH_DEPTH}`);
  const manifestBytes = await readManifest(src, desc, run.signal);
  const parsed = parseManifest(manifestBytes, desc.mediaType);
  for (const child of parsed.manifests) await copyGraph(src, dst, child, depth + 1, run, null);
  const blobs: Descriptor[] = [];
  const seen = new Set<string>();
  for (const blob of [...(parsed.config === undefined ? [] : [parsed.config]), ...parsed.layers]) {
    if (seen.has(blob.digest)) continue;
    seen.add(blob.digest);
    blobs.push({ mediaType: blob.mediaType, digest: blob.digest, size: blob.size });
  }
  run.total += blobs.reduce((n, blob) => n + blob.size, 0);
  // Largest first (stable for equal sizes): a small config blob taking one of the bounded slots first
  // would start the last large layer only after it, and that layer would then end the copy alone.
  const order = blobs.map((blob, i) => ({ blob, i })).sort((a, b) => b.blob.size - a.blob.size || a.i - b.i).map((entry) => entry.blob);
  await forEachBounded(order, run.concurrency, (blob) => transferBlob(src, dst, blob, run));
  const manifestDesc: Descriptor = { mediaType: desc.mediaType, digest: desc.digest, size: desc.size };
  const tagged = tag !== null && typeof dst.pushTagged === "function";
  await pushManifest(src, dst, manifestDesc, manifestBytes, blobs, run, tagged ? tag : null);
  return tagged;
}

/** The keys of {@link CopyOptions}. */
const COPY_OPTION_KEYS: readonly string[] = ["tag", "concurrency", "blobAttempts", "onProgress", "signal"];

/**
 * Copy the manifest named by `reference` (a tag or `sha256:` digest) and every
 * blob it references (config, layers; child manifests of an index) from `src`
 * to `dst`. Blobs `dst` already has are skipped; every transferred byte is
 * verified against its descriptor (source side while streaming, destination
 * side by its own push check). Then tags `dst` (see {@link CopyOptions.tag}).
 * @returns the manifest descriptor `{mediaType, digest, size}`.
 * @throws OciError from either target (`OCI_NOT_FOUND`, `OCI_DIGEST_MISMATCH`,
 *   `OCI_SIZE_MISMATCH`, `OCI_MANIFEST_TOO_LARGE`, `OCI_MANIFEST_INVALID`, `OCI_TAG_INVALID`, ...);
 *   `OCI_ARGUMENT_INVALID` (before anything is read: `src`/`dst` not targets, `options` not an object of
 *   {@link CopyOptions}, `options.signal` not an AbortSignal); InterruptedError `INTERRUPTED` (`options.signal`
 *   aborted, before any request when it already was; see {@link CopyOptions.signal}).
 */
export async function copy(src: ReadOnlyTarget, dst: Target, reference: string, options: CopyOptions = {}): Promise<Descriptor> {
  const call = "copy(src, dst, reference, options)";
  requireObjectWith(src, call, "src", "a Target to read from (resolve, fetch)", ["resolve", "fetch"]);
  requireObjectWith(dst, call, "dst", "a Target to write to (exists, push, tag)", ["exists", "push", "tag"]);
  requireOptions(options, call, COPY_OPTION_KEYS);
  requireOptionalFunction(options.onProgress, call, "options.onProgress", "(doneBytes, totalBytes) => void");
  requireOptionalSignal(options.signal, call);
  if (!isDigest(reference) && !isDiscoveryTag(reference)) {
    throw new OciError("OCI_TAG_INVALID", `copy reference must be a tag or sha256 digest, found ${describeValue(reference)}`);
  }
  throwIfInterrupted(options.signal);
  // One listener on the caller's signal; the copy's own requests (up to 8 blobs at once, each with a request, a
  // relay and a stream to stop) listen to an inner one, so the caller's never collects dozens of listeners.
  const inner = options.signal === undefined ? undefined : new AbortController();
  const forward = (): void => inner?.abort(options.signal?.reason);
  if (inner !== undefined) setMaxListeners(64, inner.signal);
  options.signal?.addEventListener("abort", forward, { once: true });
  const signal = inner?.signal;
  try {
    return await copyReference(src, dst, reference, options, signal);
  } catch (error) {
    // A request the abort destroyed fails with what it was doing (a truncated body, a reset): the abort's error wins.
    throw interruption(signal) ?? error;
  } finally {
    options.signal?.removeEventListener("abort", forward);
  }
}

async function copyReference(src: ReadOnlyTarget, dst: Target, reference: string, options: CopyOptions, signal: AbortSignal | undefined): Promise<Descriptor> {
  const resolved = await src.resolve(reference, signal);
  if (isDigest(reference) && resolved.digest !== reference) {
    throw new OciError("OCI_DIGEST_MISMATCH", `resolving ${reference} returned ${resolved.digest}`);
  }
  const desc: Descriptor = { mediaType: resolved.mediaType, digest: resolved.digest, size: resolved.size };
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 3, 8));
  const attempts = Math.max(1, Math.min(options.blobAttempts ?? 3, 5));
  const tag = options.tag === undefined ? (isDigest(reference) ? null : reference) : options.tag;
  if (tag !== null && !isDiscoveryTag(tag)) throw new OciError("OCI_TAG_INVALID", `invalid OCI tag ${describeValue(tag)}: ${tagShapeProblem(tag)}`);
  const tagged = await copyGraph(src, dst, desc, 0, { concurrency, attempts, total: 0, done: 0, onProgress: options.onProgress, signal }, tag);
  if (tag !== null && !tagged) {
    throwIfInterrupted(signal);
    await dst.tag(desc, tag, signal);
  }
  return desc;
}

/**
 * Tag `desc` as `tag` on `target` only if the tag is absent (docs/release-run.md, "`release publish`"):
 * the tag grammar is checked first; the same digest already there is success
 * with no write (W3); another digest fails with `OCI_TAG_CONFLICT` and writes
 * nothing (W1/W2); after a write the tag must resolve to `desc.digest`.
 * Uses the target's own atomic `tagIfAbsent` when it has one (layout store).
 * @returns `"tagged"` (written) or `"already-tagged"` (no write).
 * @throws OciError `OCI_TAG_INVALID`, `OCI_TAG_CONFLICT`, `OCI_TAG_MISMATCH`, and the target's errors.
 */
export async function tagIfAbsent(target: Target, desc: Descriptor, tag: string): Promise<"tagged" | "already-tagged"> {
  if (!isDiscoveryTag(tag)) throw new OciError("OCI_TAG_INVALID", `invalid OCI tag ${describeValue(tag)}: ${tagShapeProblem(tag)}`);
  checkDescriptor(desc);
  if (typeof target.tagIfAbsent === "function") return target.tagIfAbsent(desc, tag);
  let existing: Descriptor | null = null;
  try {
    existing = await target.resolve(tag);
  } catch (error) {
    if (!isOciError(error, "OCI_NOT_FOUND")) throw error;
  }
  if (existing !== null) {
    if (existing.digest === desc.digest) return "already-tagged";
    throw new OciError("OCI_TAG_CONFLICT", `refusing to replace a different OCI digest at ${tag}: tag has ${existing.digest}, wanted ${desc.digest}`);
  }
  await target.tag(desc, tag);
  const after = await target.resolve(tag);
  if (after.digest !== desc.digest) {
    throw new OciError("OCI_TAG_MISMATCH", `OCI tag ${tag} does not match the expected digest: expected ${desc.digest}, found ${after.digest}`);
  }
  return "tagged";
}
