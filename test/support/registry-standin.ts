/**
 * A small in-memory OCI distribution registry on loopback (node:http) for the
 * misbehaviours Debian's docker-registry cannot show: a request-size cap
 * (413/416, before or after `100 Continue`), `OCI-Chunk-Min-Length`, upload
 * `Location`s and blob redirects on another origin (a second listener, e.g.
 * 127.0.0.2), a storage that answers 201 but keeps fewer bytes, rate limits
 * with `Retry-After`, Basic auth, and an anonymous 404 for an empty
 * repository (so the privacy gate bootstraps). Records every request with
 * the listener it reached and whether it carried `Authorization`/`Cookie`.
 */
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type net from "node:net";

/** Options of {@link startStandIn}. */
export interface StandInOptions {
  /** Basic credentials required for every request (anonymous reads: see `anonymous`). */
  credentials?: { username: string; password: string };
  /** With credentials: how anonymous requests are answered. `"absent-404"`: 404 while the repository is empty, then 401. Default 401. */
  anonymous?: "401" | "absent-404";
  /** Request bodies above this many bytes are refused with `refuseStatus`. */
  maxBodyBytes?: number;
  /** Status for an oversized body (default 413). */
  refuseStatus?: 413 | 416;
  /** Refuse an oversized body before `100 Continue` (default true); false: after it, with the body streamed. */
  refuseBeforeContinue?: boolean;
  /** `OCI-Chunk-Min-Length` on the upload session answer. */
  chunkMinLength?: number;
  /** Host (IP) of a second listener on the same port number; upload `Location`s point there when `uploadsOnSecond`. */
  secondHost?: string;
  /** The second listener takes requests without credentials (a storage host reached by an opaque upload state). */
  secondWithoutAuth?: boolean;
  /** Upload `Location`s name the second listener. */
  uploadsOnSecond?: boolean;
  /** Blob GET/HEAD on the first listener redirect to the second listener. */
  redirectBlobsToSecond?: boolean;
  /** Acknowledge each PATCH with a `Range` ending this many bytes short of what arrived. */
  acknowledgeShortBy?: number;
  /** Blob answers (201 and HEAD/GET) name this digest in `Docker-Content-Digest` instead of the stored one. */
  claimDigest?: string;
  /** Answer 201 to a finished upload but keep only this many bytes. */
  storeOnly?: number;
  /** The `Docker-Content-Digest` of a manifest PUT's 201: this digest instead of the stored one, or none (`null`). */
  manifestPutDigest?: string | null;
  /** Manifest HEAD/GET answers carry no `Docker-Content-Digest`. */
  manifestWithoutDigest?: boolean;
  /** Refuse this many manifest PUTs with `400 MANIFEST_BLOB_UNKNOWN` although their blobs are present (a storage race). */
  manifestBlobUnknownTimes?: number;
  /** Answer `status` (default 429) with `Retry-After: retryAfter` to requests for which `when` is true. */
  rateLimit?: { when: (req: SeenRequest, index: number) => boolean; retryAfter?: string; status?: number };
}

/** One request the stand-in saw. */
export interface SeenRequest {
  method: string;
  url: string;
  /** The listener's host, e.g. `127.0.0.1` or `127.0.0.2`. */
  listener: string;
  authorization: boolean;
  cookie: boolean;
  contentLength: number | undefined;
  /** Body bytes that arrived (counted as they arrive, also for a request the client abandoned). */
  receivedBytes: number;
}

/** A running stand-in registry. */
export interface StandIn {
  /** `127.0.0.1:PORT`. */
  host: string;
  /** `http://<secondHost>:PORT` when a second listener runs. */
  secondOrigin?: string;
  requests: SeenRequest[];
  blobs: Map<string, Buffer>;
  tags: Map<string, string>;
  /** Client connections open now (on every listener). */
  openConnections(): number;
  /** Requests whose answer is neither finished nor cut off by the client (a body still arriving or being sent). */
  activeRequests(): number;
  close(): Promise<void>;
}

const sha = (b: Buffer): string => "sha256:" + createHash("sha256").update(b).digest("hex");

function error(res: http.ServerResponse, status: number, code: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ errors: [{ code, message: code.toLowerCase() }] });
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

function readBody(req: http.IncomingMessage, seen?: SeenRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => {
      chunks.push(c);
      if (seen !== undefined) seen.receivedBytes += c.length;
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** Start the stand-in on 127.0.0.1 (and `secondHost`) with one port number. */
export async function startStandIn(options: StandInOptions = {}): Promise<StandIn> {
  const requests: SeenRequest[] = [];
  const blobs = new Map<string, Buffer>();
  const manifests = new Map<string, { bytes: Buffer; mediaType: string }>();
  const tags = new Map<string, string>();
  const uploads = new Map<string, Buffer[]>();
  let port = 0;
  const origin = (listener: string): string => `http://${listener}:${port}`;
  const expected = options.credentials === undefined ? undefined : "Basic " + Buffer.from(`${options.credentials.username}:${options.credentials.password}`).toString("base64");

  const refuseSize = (req: http.IncomingMessage): boolean => options.maxBodyBytes !== undefined && Number(req.headers["content-length"] ?? 0) > options.maxBodyBytes;

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse, listener: string, continued: boolean): Promise<void> => {
    const seen: SeenRequest = {
      method: req.method ?? "",
      url: req.url ?? "",
      listener,
      authorization: req.headers.authorization !== undefined,
      cookie: req.headers.cookie !== undefined,
      contentLength: req.headers["content-length"] === undefined ? undefined : Number(req.headers["content-length"]),
      receivedBytes: 0,
    };
    requests.push(seen);
    const url = new URL(req.url ?? "/", origin(listener));
    const limit = options.rateLimit;
    if (limit !== undefined && limit.when(seen, requests.length - 1)) {
      req.resume();
      error(res, limit.status ?? 429, "TOOMANYREQUESTS", limit.retryAfter === undefined ? {} : { "retry-after": limit.retryAfter });
      return;
    }
    const open = options.secondWithoutAuth === true && listener === options.secondHost;
    if (expected !== undefined && !open && req.headers.authorization !== expected) {
      req.resume();
      const empty = tags.size === 0 && manifests.size === 0;
      if (options.anonymous === "absent-404" && req.headers.authorization === undefined && empty && req.method === "GET") {
        error(res, 404, "NAME_UNKNOWN");
        return;
      }
      error(res, 401, "UNAUTHORIZED", { "www-authenticate": 'Basic realm="stand-in"' });
      return;
    }
    if (refuseSize(req)) {
      if (continued) await readBody(req);
      else req.resume();
      error(res, options.refuseStatus ?? 413, "SIZE_INVALID", { connection: "close" });
      return;
    }
    const m = /^\/v2\/(.+?)\/(blobs\/uploads\/?([^/]*)|blobs\/([^/]+)|manifests\/([^/]+)|tags\/list)$/.exec(url.pathname);
    if (url.pathname === "/v2/" || url.pathname === "/v2") {
      res.writeHead(200, { "content-length": "2" }).end("{}");
      return;
    }
    if (m === null) {
      req.resume();
      error(res, 404, "NOT_FOUND");
      return;
    }
    const name = m[1] as string;
    const body = await readBody(req, seen);
    if (m[2]?.startsWith("blobs/uploads")) return upload(req, res, url, name, m[3] ?? "", body, listener);
    if (m[4] !== undefined) return blob(req, res, m[4], listener, name);
    if (m[5] !== undefined) return manifest(req, res, m[5], body);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name, tags: [...tags.keys()] }));
  };

  const uploadHost = (listener: string): string => (options.uploadsOnSecond === true && options.secondHost !== undefined ? options.secondHost : listener);

  const upload = (req: http.IncomingMessage, res: http.ServerResponse, url: URL, name: string, id: string, body: Buffer, listener: string): void => {
    if (req.method === "POST") {
      const fresh = randomBytes(6).toString("hex");
      uploads.set(fresh, []);
      const headers: Record<string, string> = { location: `${origin(uploadHost(listener))}/v2/${name}/blobs/uploads/${fresh}?_state=abc`, "content-length": "0", range: "0-0" };
      if (options.chunkMinLength !== undefined) headers["oci-chunk-min-length"] = String(options.chunkMinLength);
      res.writeHead(202, headers).end();
      return;
    }
    const parts = uploads.get(id);
    if (parts === undefined) return error(res, 404, "BLOB_UPLOAD_UNKNOWN");
    const have = parts.reduce((n, p) => n + p.length, 0);
    const range = req.headers["content-range"];
    if (range !== undefined && !range.startsWith(`${have}-`)) return error(res, 416, "BLOB_UPLOAD_INVALID", { range: `0-${have - 1}` });
    parts.push(body);
    const size = have + body.length;
    if (req.method === "PATCH") {
      const acknowledged = size - 1 - (options.acknowledgeShortBy ?? 0);
      res.writeHead(202, { location: `${origin(uploadHost(listener))}/v2/${name}/blobs/uploads/${id}?_state=abc`, range: `0-${acknowledged}`, "content-length": "0" }).end();
      return;
    }
    const digest = url.searchParams.get("digest") ?? "";
    const all = Buffer.concat(parts);
    if (sha(all) !== digest) return error(res, 400, "DIGEST_INVALID");
    uploads.delete(id);
    blobs.set(digest, options.storeOnly === undefined ? all : all.subarray(0, options.storeOnly));
    res.writeHead(201, { location: `/v2/${name}/blobs/${digest}`, "docker-content-digest": options.claimDigest ?? digest, "content-length": "0" }).end();
  };

  const blob = (req: http.IncomingMessage, res: http.ServerResponse, digest: string, listener: string, name: string): void => {
    if (options.redirectBlobsToSecond === true && options.secondHost !== undefined && listener !== options.secondHost) {
      res.writeHead(307, { location: `${origin(options.secondHost)}/v2/${name}/blobs/${digest}`, "content-length": "0" }).end();
      return;
    }
    const bytes = blobs.get(digest);
    if (bytes === undefined) return error(res, 404, "BLOB_UNKNOWN");
    res.writeHead(200, { "content-length": String(bytes.length), "docker-content-digest": options.claimDigest ?? digest, "content-type": "application/octet-stream" });
    res.end(req.method === "HEAD" ? undefined : bytes);
  };

  let raced = 0;
  const manifest = (req: http.IncomingMessage, res: http.ServerResponse, reference: string, body: Buffer): void => {
    if (req.method === "PUT" && raced < (options.manifestBlobUnknownTimes ?? 0)) {
      raced += 1;
      return error(res, 400, "MANIFEST_BLOB_UNKNOWN");
    }
    if (req.method === "PUT") {
      const doc = JSON.parse(body.toString("utf8")) as { config?: { digest: string }; layers?: Array<{ digest: string }> };
      const missing = [doc.config, ...(doc.layers ?? [])].filter((d) => d !== undefined && !blobs.has(d.digest));
      if (missing.length > 0) return error(res, 400, "MANIFEST_BLOB_UNKNOWN");
      const digest = sha(body);
      manifests.set(digest, { bytes: body, mediaType: req.headers["content-type"] ?? "" });
      if (!reference.startsWith("sha256:")) tags.set(reference, digest);
      const claimed = options.manifestPutDigest === undefined ? digest : options.manifestPutDigest;
      res.writeHead(201, { ...(claimed === null ? {} : { "docker-content-digest": claimed }), "content-length": "0" }).end();
      return;
    }
    const digest = reference.startsWith("sha256:") ? reference : tags.get(reference);
    const found = digest === undefined ? undefined : manifests.get(digest);
    if (found === undefined || digest === undefined) return error(res, 404, "MANIFEST_UNKNOWN");
    res.writeHead(200, { "content-type": found.mediaType, "content-length": String(found.bytes.length), ...(options.manifestWithoutDigest === true ? {} : { "docker-content-digest": digest }) });
    res.end(req.method === "HEAD" ? undefined : found.bytes);
  };

  const servers: http.Server[] = [];
  const connections = new Set<net.Socket>();
  const active = new Set<http.ServerResponse>();
  const track = (res: http.ServerResponse): void => {
    active.add(res);
    res.once("close", () => active.delete(res));
  };
  const listen = async (listener: string): Promise<void> => {
    const server = http.createServer((req, res) => {
      track(res);
      handle(req, res, listener, true).catch(() => res.destroy());
    });
    server.on("connection", (socket: net.Socket) => {
      connections.add(socket);
      socket.once("close", () => connections.delete(socket));
    });
    server.on("checkContinue", (req, res) => {
      track(res);
      if (refuseSize(req) && options.refuseBeforeContinue !== false) {
        handle(req, res, listener, false).catch(() => res.destroy());
        return;
      }
      res.writeContinue();
      handle(req, res, listener, true).catch(() => res.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, listener, () => resolve());
    });
    if (port === 0) {
      const address = server.address();
      port = typeof address === "object" && address !== null ? address.port : 0;
    }
    servers.push(server);
  };
  await listen("127.0.0.1");
  if (options.secondHost !== undefined) await listen(options.secondHost);
  const out: StandIn = {
    host: `127.0.0.1:${port}`,
    requests,
    blobs,
    tags,
    openConnections: () => connections.size,
    activeRequests: () => active.size,
    async close() {
      for (const server of servers) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
  if (options.secondHost !== undefined) out.secondOrigin = origin(options.secondHost);
  return out;
}
