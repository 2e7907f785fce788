/**
 * The blob download fast path of `RegistryTarget.fetchToFile` (docs/oci.md "Blob downloads";
 * measured by `npm run bench:oci`): one HTTP/1.1 `GET` on its own connection whose
 * body is read (`onread` with a buffer generator) straight into the free tail
 * of a 512 KiB write buffer: no allocation per socket read, no copy between the
 * socket and the file. Every byte is hashed as it arrives; full buffers are
 * written by the thread pool at their file positions (at most 2 in flight per
 * blob; the socket pauses beyond). Few, reused buffers matter more than large
 * ones: each new buffer is fresh memory, one page fault per 4 KiB, and on a
 * virtual machine those faults cost more than the extra writes (measured at
 * 64 MiB in 4 blobs: 4 x 1 MiB in flight took 220-280 ms, 2 x 512 KiB 135-160 ms).
 *
 * Only the plain answer takes this path: `200` with one `Content-Length`
 * equal to the descriptor's size and no `Transfer-Encoding`. Anything else
 * (a redirect, 401, 404, 429, 5xx, a chunked body, a connection failure
 * before the head) is handed back untouched, with nothing written, so the
 * caller uses the general client (auth refresh, retries, error mapping).
 * Verification is the same as the streaming path (docs/oci.md, "Blob downloads"): more
 * than `size` bytes stop the read (`OCI_SIZE_MISMATCH`), an early end is
 * `OCI_SIZE_MISMATCH`, the SHA-256 must equal the digest
 * (`OCI_DIGEST_MISMATCH`); the caller renames the file only after success.
 */
import { createHash, type Hash } from "node:crypto";
import { write as fsWrite } from "node:fs";
import { isIP } from "node:net";
import net from "node:net";
import type tls from "node:tls";
import { interruption } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import { OciError } from "./errors.js";
import { tlsModule } from "./registry-http.js";
import type { Descriptor } from "./target.js";

/** Size of each write buffer, which the socket reads into (bytes). */
const BUFFER_BYTES = 512 * 1024;
/** A write buffer with less room than this is written before the next read (bytes). */
const MIN_READ_BYTES = 64 * 1024;
/** Read buffer of the response head (bytes); body bytes that arrive with the head are copied once. */
const HEAD_READ_BYTES = 64 * 1024;
/** Writes in flight per blob before the socket pauses. */
const MAX_WRITES_IN_FLIGHT = 2;
/** Largest response head accepted (bytes). */
const MAX_HEAD_BYTES = 64 * 1024;

/** One fast-path request. */
export interface BlobDownloadRequest {
  url: URL;
  /** Request headers (lowercase names); values must not contain CR or LF. */
  headers: Record<string, string>;
  /** TLS trust roots (PEM) when not Node's default store. */
  ca?: string[] | undefined;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}

/** A response head: status and header values by lowercase name. */
export interface ResponseHead {
  status: number;
  headers: Map<string, string[]>;
}

/** The outcome: the blob was written and verified, or another answer (nothing written). */
export type BlobDownloadAnswer = { kind: "written" } | { kind: "other"; head: ResponseHead | undefined };

/**
 * Parse an HTTP/1.1 response head (status line and header fields, RFC 9112
 * sections 4 and 5). Returns undefined for anything that is not plainly
 * well-formed (the caller then uses the general client).
 */
export function parseResponseHead(text: string): ResponseHead | undefined {
  const lines = text.split("\r\n");
  const status = /^HTTP\/1\.[01] ([0-9]{3})(?: .*)?$/.exec(lines[0] ?? "");
  if (status === null) return undefined;
  const headers = new Map<string, string[]>();
  for (const line of lines.slice(1)) {
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/.exec(line);
    if (m === null) return undefined;
    const name = (m[1] as string).toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), m[2] as string]);
  }
  return { status: Number(status[1]), headers };
}

/** The one value of `name`; two different values are refused (`OCI_RESPONSE_INVALID`). */
export function singleValue(head: ResponseHead, name: string): string | undefined {
  const values = head.headers.get(name);
  if (values === undefined) return undefined;
  if (values.some((v) => v !== values[0])) throw new OciError("OCI_RESPONSE_INVALID", `ambiguous response: two different ${name} headers`);
  return values[0];
}

/** The `GET` request head of the fast paths (`connection: close`, identity encoding). @throws OciError `OCI_DESCRIPTOR_INVALID` (a header value with CR or LF). */
export function requestText(url: URL, headers: Record<string, string>): string {
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`];
  for (const [name, value] of Object.entries(headers)) {
    if (/[\r\n]/.test(value) || !/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) throw new OciError("OCI_DESCRIPTOR_INVALID", `invalid request header ${describeValue(name)}`);
    lines.push(`${name}: ${value}`);
  }
  lines.push("accept-encoding: identity", "connection: close", "", "");
  return lines.join("\r\n");
}

/** Checks of a `200` head before any body byte is used; false when the general client should take it. */
function plainAnswer(head: ResponseHead, desc: Descriptor, label: string): boolean {
  if (head.status !== 200 || head.headers.has("transfer-encoding")) return false;
  const length = singleValue(head, "content-length");
  if (length === undefined) return false;
  if (!/^[0-9]{1,16}$/.test(length) || Number(length) !== desc.size) {
    throw new OciError("OCI_SIZE_MISMATCH", `${label}: expected ${desc.size} bytes, registry announced ${describeValue(length)}`);
  }
  const claimed = singleValue(head, "docker-content-digest");
  if (claimed !== undefined && claimed !== desc.digest) {
    throw new OciError("OCI_DIGEST_MISMATCH", `${label}: Docker-Content-Digest ${describeValue(claimed)} disagrees with the expected digest`);
  }
  return true;
}

/**
 * The body sink of one download: hashes, copies into write buffers, writes
 * them at their positions through the thread pool, and settles once every
 * byte is on disk and verified.
 */
class BodySink {
  private readonly hash: Hash = createHash("sha256");
  private received = 0;
  private buffer: Buffer | null = null;
  private filled = 0;
  private position = 0;
  private inFlight = 0;
  private readonly spare: Buffer[] = [];
  private ended = false;
  failure: Error | undefined;

  constructor(
    private readonly desc: Descriptor,
    private readonly fd: number,
    private readonly label: string,
    private readonly events: { pause(): void; resume(): void; settle(error?: Error): void; progress?: ((bytes: number, total: number) => void) | undefined },
  ) {}

  /**
   * The free tail of the current write buffer: where the socket reads next
   * (bytes read there are taken in place by {@link take}).
   */
  readRegion(): Buffer {
    if (this.buffer === null) {
      this.buffer = this.spare.pop() ?? Buffer.allocUnsafeSlow(BUFFER_BYTES);
      this.filled = 0;
    }
    return this.buffer.subarray(this.filled);
  }

  /**
   * Take bytes that arrived: read in place into {@link readRegion} (kept
   * there), or anywhere else (copied; valid only during this call).
   */
  take(view: Buffer): void {
    if (this.failure !== undefined || this.ended) return;
    if (this.received + view.length > this.desc.size) {
      this.fail(new OciError("OCI_SIZE_MISMATCH", `${this.label}: expected ${this.desc.size} bytes, received more (stopped at ${this.received + view.length})`));
      return;
    }
    this.received += view.length;
    this.hash.update(view);
    if (this.inPlace(view)) this.filled += view.length;
    else this.copyIn(view);
    if (BUFFER_BYTES - this.filled < MIN_READ_BYTES) this.flush();
    this.events.progress?.(this.received, this.desc.size);
    if (this.received === this.desc.size) {
      this.flush();
      this.ended = true;
      this.finishIfDone();
    } else if (this.inFlight >= MAX_WRITES_IN_FLIGHT) {
      this.events.pause();
    }
  }

  /** True when `view` starts where the current write buffer's free tail does (the socket read into it). */
  private inPlace(view: Buffer): boolean {
    const buffer = this.buffer;
    return buffer !== null && view.buffer === buffer.buffer && view.byteOffset === buffer.byteOffset + this.filled;
  }

  private copyIn(view: Buffer): void {
    for (let offset = 0; offset < view.length; ) {
      const region = this.readRegion();
      const n = Math.min(region.length, view.length - offset);
      view.copy(region, 0, offset, offset + n);
      this.filled += n;
      offset += n;
      if (this.filled === BUFFER_BYTES) this.flush();
    }
  }

  /** The connection ended: fewer bytes than the size is a truncation. */
  end(): void {
    if (this.failure !== undefined || this.ended) return;
    this.fail(new OciError("OCI_SIZE_MISMATCH", `${this.label}: expected ${this.desc.size} bytes, received ${this.received} (truncated)`));
  }

  fail(error: Error): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    if (this.inFlight === 0) this.events.settle(error);
  }

  private flush(): void {
    const buffer = this.buffer;
    if (buffer === null || this.filled === 0) return;
    const length = this.filled;
    const position = this.position;
    this.buffer = null;
    this.filled = 0;
    this.position += length;
    this.inFlight += 1;
    this.writeAt(buffer, 0, length, position);
  }

  private writeAt(buffer: Buffer, offset: number, length: number, position: number): void {
    fsWrite(this.fd, buffer, offset, length, position, (error, written) => {
      if (error === null && written < length) {
        this.writeAt(buffer, offset + written, length - written, position + written);
        return;
      }
      this.inFlight -= 1;
      this.spare.push(buffer);
      if (error !== null) {
        this.fail(error);
        return;
      }
      if (this.failure !== undefined) {
        if (this.inFlight === 0) this.events.settle(this.failure);
        return;
      }
      if (this.inFlight < MAX_WRITES_IN_FLIGHT) this.events.resume();
      this.finishIfDone();
    });
  }

  private finishIfDone(): void {
    if (!this.ended || this.inFlight > 0 || this.failure !== undefined) return;
    const found = "sha256:" + this.hash.digest("hex");
    if (found !== this.desc.digest) {
      this.failure = new OciError("OCI_DIGEST_MISMATCH", `${this.label}: expected digest ${this.desc.digest}, computed ${found}`);
      this.events.settle(this.failure);
      return;
    }
    this.events.settle();
  }
}

/**
 * Connect to `url` (TLS for https); each read lands in the buffer `nextBuffer` returns (`onread`); the
 * caller writes the request ({@link requestText}) once connected. Also used by the
 * registry-to-registry relay (`blob-relay.ts`).
 */
export function connect(url: URL, request: BlobDownloadRequest, nextBuffer: () => Buffer, onData: (n: number, buf: Buffer) => void, onConnect: () => void): net.Socket {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const onread = { buffer: nextBuffer, callback: (n: number, buf: Buffer): boolean => (onData(n, buf), true) };
  if (url.protocol === "https:") {
    // TLSSocket takes net.Socket's `onread` (its typings omit it): each callback holds one decrypted record.
    const options = { host, port, ALPNProtocols: ["http/1.1"], onread, ...(isIP(host) === 0 ? { servername: host } : {}), ...(request.ca === undefined ? {} : { ca: request.ca }) };
    return tlsModule().connect(options as tls.ConnectionOptions, onConnect);
  }
  return net.connect({ host, port, onread }, onConnect);
}

/** One step of reading the response head: more bytes needed, a final outcome, or the body's first bytes. */
export type HeadStep = { kind: "more"; buffered: Buffer } | { kind: "done"; outcome: BlobDownloadAnswer | Error } | { kind: "body"; rest: Buffer };

/** Add `bytes` to the head read so far (`buffered`) and decide: only the plain answer goes on to the body. */
export function headStep(buffered: Buffer, bytes: Buffer, desc: Descriptor, label: string): HeadStep {
  const head = buffered.length === 0 ? bytes : Buffer.concat([buffered, bytes]);
  const end = head.indexOf("\r\n\r\n");
  if (end < 0) {
    if (head.length > MAX_HEAD_BYTES) return { kind: "done", outcome: new OciError("OCI_RESPONSE_INVALID", `${label}: response head larger than ${MAX_HEAD_BYTES} bytes`) };
    return { kind: "more", buffered: head };
  }
  const parsed = parseResponseHead(head.subarray(0, end).toString("latin1"));
  try {
    if (parsed === undefined || !plainAnswer(parsed, desc, label)) return { kind: "done", outcome: { kind: "other", head: parsed } };
  } catch (error) {
    return { kind: "done", outcome: error as Error };
  }
  return { kind: "body", rest: head.subarray(end + 4) };
}

/**
 * The socket's failure events: before the body they end the attempt with
 * `other` (the general client takes over; a stalled head is `OCI_TIMEOUT`),
 * during the body they fail the sink (truncation, timeout).
 */
function watchSocket(socket: net.Socket, label: string, sink: () => BodySink | undefined, finish: (outcome: BlobDownloadAnswer | Error) => void): void {
  socket.on("timeout", () => {
    const error = new OciError("OCI_TIMEOUT", `${label}: body timed out`);
    const body = sink();
    if (body === undefined) finish(error);
    else body.fail(error);
    socket.destroy();
  });
  socket.on("error", (error) => {
    const body = sink();
    if (body === undefined) finish({ kind: "other", head: undefined });
    else body.fail(new OciError("OCI_SIZE_MISMATCH", `${label}: connection closed before all bytes arrived (truncated)`, { cause: error }));
  });
  for (const event of ["end", "close"]) {
    socket.on(event, () => {
      const body = sink();
      if (body === undefined) finish({ kind: "other", head: undefined });
      else body.end();
    });
  }
}

/**
 * Download the blob `desc` from `request.url` into the open file `fd`
 * (positions 0 .. size-1), verified; see the module comment.
 * @param signal aborting closes the connection; the call rejects once no write to `fd` is in flight.
 * @returns `written`, or `other` with the response head (undefined when the
 *   connection failed before a head arrived): nothing was written then.
 * @throws OciError `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`, `OCI_TIMEOUT`, `OCI_RESPONSE_INVALID`;
 *   Node file-system errors of the writes; InterruptedError `INTERRUPTED` (`signal` aborted).
 */
export function downloadBlob(request: BlobDownloadRequest, desc: Descriptor, fd: number, onProgress?: (bytes: number, total: number) => void, signal?: AbortSignal): Promise<BlobDownloadAnswer> {
  const label = `OCI blob ${desc.digest}`;
  const stopped = interruption(signal);
  if (stopped !== undefined) return Promise.reject(stopped);
  return new Promise<BlobDownloadAnswer>((resolve, reject) => {
    let settled = false;
    let head: Buffer = Buffer.alloc(0);
    let sink: BodySink | undefined;
    let paused = false;
    const finish = (outcome: BlobDownloadAnswer | Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(headTimer);
      signal?.removeEventListener("abort", onAbort);
      socket.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const flow = (pause: boolean): void => {
      if (paused === pause) return;
      paused = pause;
      if (pause) socket.pause();
      else socket.resume();
    };
    const events = { pause: () => flow(true), resume: () => flow(false), settle: (error?: Error) => finish(error ?? { kind: "written" }), progress: onProgress };
    const onHead = (bytes: Buffer): void => {
      const step = headStep(head, bytes, desc, label);
      if (step.kind === "more") {
        head = step.buffered;
        return;
      }
      clearTimeout(headTimer);
      if (step.kind === "done") return finish(step.outcome);
      socket.setTimeout(request.bodyTimeoutMs);
      sink = new BodySink(desc, fd, label, events);
      if (step.rest.length > 0) sink.take(step.rest);
    };
    const onData = (n: number, buf: Buffer): void => {
      if (settled) return;
      const view = buf.subarray(0, n);
      if (sink !== undefined) sink.take(view);
      else onHead(Buffer.from(view));
    };
    const headBuffer = Buffer.allocUnsafeSlow(HEAD_READ_BYTES);
    const nextBuffer = (): Buffer => (sink === undefined || settled ? headBuffer : sink.readRegion());
    const socket = connect(request.url, request, nextBuffer, onData, () => socket.write(requestText(request.url, request.headers)));
    const headTimer = setTimeout(() => finish({ kind: "other", head: undefined }), request.headersTimeoutMs);
    watchSocket(socket, label, () => sink, finish);
    // Before the body nothing was written: settle now; during it, once the writes in flight are done.
    function onAbort(): void {
      const error = interruption(signal) as Error;
      if (sink === undefined) finish(error);
      else sink.fail(error);
      socket.destroy();
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
