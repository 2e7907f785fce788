/**
 * One HTTP(S) exchange for the registry client, on `node:http`/`node:https`
 * (native parser, no per-chunk copies; about 20 MiB less resident memory than
 * loading undici). Timeouts: `headersTimeoutMs` until the response head
 * arrives, then `bodyTimeoutMs` of socket inactivity while the body streams.
 * Errors carry a `code`: Node's socket codes (`ECONNRESET`, ...) or
 * `HEADERS_TIMEOUT` / `BODY_TIMEOUT`.
 */
import http from "node:http";
import type https from "node:https";
import { createRequire } from "node:module";
import type { Readable } from "node:stream";
import type tls from "node:tls";
import { interruption } from "../contract/errors.js";
import { OciError } from "./errors.js";

// `node:tls` and `node:https` load on first use: a plain-HTTP run (loopback
// registries) or a layout store never compiles them (docs/oci.md "Benchmark"; docs/architecture.md, "Areas").
const requireBuiltin = createRequire(import.meta.url);

/** `node:tls`, loaded on first use. */
export function tlsModule(): typeof tls {
  return requireBuiltin("node:tls") as typeof tls;
}

function httpsModule(): typeof https {
  return requireBuiltin("node:https") as typeof https;
}

/** Response head plus the body stream (an `http.IncomingMessage`). */
export interface HttpResponse {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  body: http.IncomingMessage;
  /** The URL that answered, when a redirect was followed to it (set by the session). */
  url?: URL;
}

/** Options of {@link sendRequest}. */
export interface HttpRequestOptions {
  method: string;
  headers: Record<string, string>;
  /** A buffer (replayable) or a stream (sent once). */
  body?: Buffer | Readable | undefined;
  /** Time allowed until the response head (ms). */
  headersTimeoutMs: number;
  /** Longest socket inactivity while the body streams (ms). */
  bodyTimeoutMs: number;
  agent: http.Agent;
  /**
   * Aborting destroys the request, and its response body while it streams (either fails with InterruptedError
   * `INTERRUPTED`, the abort's reason when it is one); an already-aborted signal sends nothing.
   */
  signal?: AbortSignal | undefined;
}

/** Keep-alive agents for plain and TLS connections of one client. */
export class HttpAgents {
  readonly http = new http.Agent({ keepAlive: true, maxSockets: 16 });
  private httpsAgent: https.Agent | undefined;
  /** The TLS trust roots when an extra CA was given (Node's store plus it); undefined: Node's default. */
  readonly ca: string[] | undefined;

  /** @param extraCa PEM certificates trusted in addition to Node's root store (private registries). */
  constructor(extraCa?: string | Buffer) {
    this.ca = extraCa === undefined ? undefined : [...tlsModule().rootCertificates, extraCa.toString()];
  }

  /** The TLS agent, made on first use. */
  get https(): https.Agent {
    this.httpsAgent ??= new (httpsModule().Agent)({
      keepAlive: true,
      maxSockets: 16,
      ...(this.ca === undefined ? {} : { ca: this.ca }),
    });
    return this.httpsAgent;
  }

  /** The agent for `url`'s protocol. */
  for(url: URL): http.Agent {
    return url.protocol === "https:" ? this.https : this.http;
  }

  /** Close pooled sockets. */
  destroy(): void {
    this.http.destroy();
    this.httpsAgent?.destroy();
  }
}

/** Socket error codes of a reset or refused connection (retried while a body can be replayed). */
export const RESET_CODES: ReadonlySet<string> = new Set(["ECONNRESET", "EPIPE", "ECONNREFUSED", "ECONNABORTED"]);
/** Error codes of a stalled request ({@link sendRequest}'s own, and the socket's). */
export const TIMEOUT_CODES: ReadonlySet<string> = new Set(["HEADERS_TIMEOUT", "BODY_TIMEOUT", "ETIMEDOUT"]);

/** The `code` of a Node/transport error, if any. */
export function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  if (e && typeof e.code === "string") return e.code;
  if (e && e.cause && typeof e.cause.code === "string") return e.cause.code;
  return undefined;
}

/**
 * True when a TLS connection got a plain-HTTP answer (a registry without TLS on that port): OpenSSL's
 * "wrong version number" or "packet length too long" (`EPROTO`, `ERR_SSL_WRONG_VERSION_NUMBER`,
 * `ERR_SSL_PACKET_LENGTH_TOO_LONG`), on the error or any of its causes.
 */
export function isPlainHttpAnswer(error: unknown): boolean {
  for (let e = error as { code?: unknown; message?: unknown; reason?: unknown; cause?: unknown } | null | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth += 1) {
    if (e.code === "ERR_SSL_WRONG_VERSION_NUMBER" || e.code === "ERR_SSL_PACKET_LENGTH_TOO_LONG") return true;
    const text = `${typeof e.message === "string" ? e.message : ""} ${typeof e.reason === "string" ? e.reason : ""}`;
    if (/wrong version number|packet length too long/i.test(text)) return true;
  }
  return false;
}

/**
 * The `OCI_TLS_FAILED` text for {@link isPlainHttpAnswer}: what happened (in words, not OpenSSL's), what was
 * expected, and the fix.
 */
export function plainHttpAnswerMessage(where: string, host: string): string {
  return (
    `${where}: the registry at ${host} answered plain HTTP to a TLS connection (OpenSSL: wrong version number); expected TLS (https://${host}); ` +
    "fix: for a loopback registry add --plain-http (library: plainHttp: true); for any other registry use its TLS address"
  );
}

/** True for Node/OpenSSL TLS and certificate error codes. */
export function isTlsErrorCode(code: string): boolean {
  return code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || code === "EPROTO" || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code);
}

/**
 * Map a stream/transport error of a response body to an {@link OciError}:
 * timeouts -> `OCI_TIMEOUT`, early close/reset -> `OCI_SIZE_MISMATCH`.
 */
export function bodyError(error: unknown, label: string): OciError {
  if (error instanceof OciError) return error;
  const code = errorCode(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) return new OciError("OCI_TIMEOUT", `${label}: body timed out`, { cause: error });
  return new OciError("OCI_SIZE_MISMATCH", `${label}: connection closed before all bytes arrived (truncated)`, { cause: error });
}

function codedError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** How long to wait for `100 Continue` before sending a streamed body anyway (ms; RFC 9110 section 10.1.1). */
export const CONTINUE_TIMEOUT_MS = 1000;

/**
 * Send one request; resolves with the response head as soon as it arrives.
 * A streamed body is announced with `Expect: 100-continue` and piped only
 * after `100 Continue` (or {@link CONTINUE_TIMEOUT_MS} without an answer): a
 * final answer that comes first (401, 413, 429, ...) leaves the stream
 * unread, so the caller can repeat the request; that connection is closed
 * once the response ends, since its request was never completed.
 */
export function sendRequest(url: URL, options: HttpRequestOptions): Promise<HttpResponse> {
  const signal = options.signal;
  const stopped = interruption(signal);
  if (stopped !== undefined) return Promise.reject(stopped);
  return new Promise((resolve, reject) => {
    const transport = url.protocol === "https:" ? httpsModule() : http;
    const body = options.body;
    const streamed = body !== undefined && !Buffer.isBuffer(body);
    const headers = streamed ? { ...options.headers, expect: "100-continue" } : options.headers;
    let settled = false;
    let bodyStarted = false;
    let continueTimer: NodeJS.Timeout | undefined;
    let stopBody = (): void => undefined;
    let response: http.IncomingMessage | undefined;
    const req = transport.request(url, { method: options.method, headers, agent: options.agent }, (res) => {
      settled = true;
      response = res;
      clearTimeout(headerTimer);
      clearTimeout(continueTimer);
      if (streamed && !req.writableFinished) {
        // Answered before the whole body was sent (before it started: the stream stays unread): stop
        // sending, and close the half-done connection once the answer has been read.
        bodyStarted = true;
        stopBody();
        res.once("close", () => req.destroy());
      }
      req.setTimeout(options.bodyTimeoutMs, () => {
        const error = codedError("BODY_TIMEOUT", "body timed out");
        res.destroy(error);
        req.destroy(error);
      });
      // The abort reaches the body while it streams; once the body is done the connection may be pooled again.
      res.once("close", () => signal?.removeEventListener("abort", onAbort));
      resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
    });
    const onAbort = (): void => {
      const error = interruption(signal) as Error;
      req.destroy(error);
      response?.destroy(error);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const headerTimer = setTimeout(() => {
      req.destroy(codedError("HEADERS_TIMEOUT", "response headers timed out"));
    }, options.headersTimeoutMs);
    req.on("error", (error) => {
      clearTimeout(headerTimer);
      clearTimeout(continueTimer);
      if (response === undefined) signal?.removeEventListener("abort", onAbort);
      if (!settled) {
        settled = true;
        reject(error);
      }
    });
    if (body === undefined) {
      req.end();
    } else if (Buffer.isBuffer(body)) {
      req.end(body);
    } else if (body.errored !== null || body.destroyed) {
      // The stream failed (e.g. verification) before the request started: do not wait for it.
      req.destroy(body.errored ?? codedError("ECONNABORTED", "request body stream was destroyed"));
    } else {
      const start = (): void => {
        if (bodyStarted) return;
        bodyStarted = true;
        clearTimeout(continueTimer);
        body.on("error", (error) => req.destroy(error));
        body.on("close", () => {
          if (!body.readableEnded) req.destroy(body.errored ?? codedError("ECONNABORTED", "request body stream closed early"));
        });
        stopBody = sendBody(body, req);
      };
      req.once("continue", start);
      req.flushHeaders();
      continueTimer = setTimeout(start, CONTINUE_TIMEOUT_MS);
    }
  });
}

/** A body whose chunks return to their owner's pool once written (`BlobFileBody`). */
interface ReleasingBody extends Readable {
  releaseChunk(chunk: Buffer): void;
  /** True once it began reading its source (before any chunk may have been emitted). */
  started: boolean;
}

/** True when a streamed request body's bytes were (or are being) read: a chunk was emitted, or a releasing body began reading its file. */
export function bodyReadStarted(body: Readable): boolean {
  return body.readableDidRead || (isReleasingBody(body) && body.started);
}

/** True when a streamed request body cannot be sent (again): {@link bodyReadStarted}, or destroyed. */
export function bodySpent(body: Readable): boolean {
  return bodyReadStarted(body) || body.destroyed;
}

function isReleasingBody(body: Readable): body is ReleasingBody {
  return typeof (body as Partial<ReleasingBody>).releaseChunk === "function";
}

/**
 * Send `body` into `req` until it ends (then end `req`); returns how to stop sending. A plain stream is
 * piped. A releasing body's chunks are written one by one, each released in its write's callback: only
 * then has the socket handed the bytes to the kernel, so the buffer may be read into again (a chunk
 * whose write failed is never released).
 */
function sendBody(body: Readable, req: http.ClientRequest): () => void {
  if (!isReleasingBody(body)) {
    body.pipe(req);
    return () => body.unpipe(req);
  }
  let stopped = false;
  const resume = (): void => {
    if (!stopped) body.resume();
  };
  const onData = (chunk: Buffer): void => {
    if (stopped) return;
    const more = req.write(chunk, (error) => {
      if (error === undefined || error === null) body.releaseChunk(chunk);
    });
    if (!more) {
      body.pause();
      req.once("drain", resume);
    }
  };
  const onEnd = (): void => {
    if (!stopped) req.end();
  };
  body.on("data", onData);
  body.once("end", onEnd);
  return () => {
    stopped = true;
    body.removeListener("data", onData);
    body.removeListener("end", onEnd);
    req.removeListener("drain", resume);
    body.pause();
  };
}

/**
 * The one value of response header `name` (lowercase), read from the raw
 * header list so that duplicates Node would merge or silently drop
 * (`Location`, `Retry-After`, ...) are seen: the same value repeated is that
 * value; two different values are refused.
 * @throws OciError `OCI_RESPONSE_INVALID` for two different values.
 */
export function headerValue(res: HttpResponse, name: string): string | undefined {
  const raw = res.body.rawHeaders;
  let found: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() !== name) continue;
    const value = (raw[i + 1] as string).trim();
    if (found !== undefined && found !== value) {
      discard(res);
      throw new OciError("OCI_RESPONSE_INVALID", `ambiguous response: two different ${name} headers`);
    }
    found = value;
  }
  return found;
}

/** Every value of response header `name` (lowercase), in order (for list headers such as `WWW-Authenticate`). */
export function headerValues(res: HttpResponse, name: string): string[] {
  const raw = res.body.rawHeaders;
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if ((raw[i] as string).toLowerCase() === name) out.push(raw[i + 1] as string);
  return out;
}

/**
 * Drop a response body: a small declared body is drained (the connection goes
 * back to the pool), anything else is destroyed unread. Errors are ignored.
 */
export function discard(res: HttpResponse): void {
  res.body.on("error", () => undefined);
  const declared = Number(res.headers["content-length"]);
  if (Number.isFinite(declared) && declared <= 64 * 1024 && !res.body.destroyed) res.body.resume();
  else res.body.destroy();
}
