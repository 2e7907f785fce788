/**
 * A loopback stand-in for a registry that speaks the OCI 1.1 referrers API
 * (distribution-spec "Listing Referrers", "Pushing Manifests with Subject"):
 * a proxy in front of a real Debian `docker-registry` (which has no such API).
 * Every request is forwarded as is (credentials included, so the registry's
 * own auth decides); a manifest PUT whose body has a `subject` is recorded
 * and answered with the `OCI-Subject` header; `GET /v2/<name>/referrers/<digest>`
 * answers the recorded referrers as an OCI image index, after checking the
 * caller's credentials against the registry (`GET /v2/` with the same
 * `Authorization`), in pages of `pageSize` descriptors linked by
 * `Link: <...?page=N>; rel="next"` ("Pagination"); `nextLink` replaces the
 * next link a page carries (for loops and foreign origins). Records every request.
 */
import { createHash } from "node:crypto";
import http from "node:http";

/** A running referrers-API proxy. */
export interface ReferrersProxy {
  /** `127.0.0.1:PORT`. */
  host: string;
  /** `METHOD path` of every request. */
  requests: string[];
  close(): Promise<void>;
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

interface Outgoing {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** Forward a request to the registry, keeping the Host header so the URLs it builds point back at the proxy. */
function forward(upstream: URL, req: Outgoing, body: Buffer): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const out = http.request({ hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    out.on("error", reject);
    out.end(body);
  });
}

/** How the stand-in pages its referrers answers. */
export interface ReferrersProxyOptions {
  /** Descriptors per page (default: all on one page). */
  pageSize?: number;
  /** The `Link` target of a page that has a next one (default `<path>?page=<n+1>`). */
  nextLink?: (path: string, page: number) => string;
}

/** Start the proxy in front of `upstreamUrl` (`http://127.0.0.1:PORT` of a docker-registry). */
export async function startReferrersProxy(upstreamUrl: string, options: ReferrersProxyOptions = {}): Promise<ReferrersProxy> {
  const upstream = new URL(upstreamUrl);
  const requests: string[] = [];
  const referrers = new Map<string, Array<Record<string, unknown>>>();
  const server = http.createServer((req, res) => {
    void (async () => {
      requests.push(`${req.method} ${req.url}`);
      const body = await readBody(req);
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const list = /^\/v2\/(.+)\/referrers\/(sha256:[0-9a-f]{64})$/.exec(path);
      if (list !== null && req.method === "GET") {
        const authorization = req.headers["authorization"];
        const auth = await forward(upstream, { method: "GET", url: "/v2/", headers: { host: req.headers.host, ...(authorization === undefined ? {} : { authorization }) } }, Buffer.alloc(0));
        if (auth.status !== 200) {
          res.writeHead(auth.status, { "www-authenticate": auth.headers["www-authenticate"] ?? "", "content-type": "application/json" }).end(auth.body);
          return;
        }
        const all = referrers.get(`${list[1]}@${list[2]}`) ?? [];
        const size = options.pageSize ?? Math.max(1, all.length);
        const page = Number(new URL(req.url ?? "/", "http://x").searchParams.get("page") ?? "0");
        const index = JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: all.slice(page * size, (page + 1) * size) });
        const headers: Record<string, string | number> = { "content-type": "application/vnd.oci.image.index.v1+json", "content-length": Buffer.byteLength(index) };
        if ((page + 1) * size < all.length) headers["link"] = `<${options.nextLink?.(path, page) ?? `${path}?page=${page + 1}`}>; rel="next"`;
        res.writeHead(200, headers).end(index);
        return;
      }
      const reply = await forward(upstream, { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers }, body);
      const manifestPut = /^\/v2\/(.+)\/manifests\/[^/]+$/.exec(path);
      const headers = { ...reply.headers };
      if (manifestPut !== null && req.method === "PUT" && reply.status === 201) {
        const doc = JSON.parse(body.toString("utf8")) as { subject?: { digest: string }; artifactType?: string; config?: { mediaType: string }; annotations?: Record<string, string>; mediaType?: string };
        if (doc.subject !== undefined) {
          const entry: Record<string, unknown> = {
            mediaType: doc.mediaType ?? "application/vnd.oci.image.manifest.v1+json",
            digest: `sha256:${createHash("sha256").update(body).digest("hex")}`,
            size: body.length,
            artifactType: doc.artifactType ?? doc.config?.mediaType,
          };
          if (doc.annotations !== undefined) entry["annotations"] = doc.annotations;
          const key = `${manifestPut[1]}@${doc.subject.digest}`;
          const known = referrers.get(key) ?? [];
          if (!known.some((e) => e["digest"] === entry["digest"])) referrers.set(key, [...known, entry]);
          headers["oci-subject"] = doc.subject.digest;
        }
      }
      delete headers["transfer-encoding"];
      if (req.method !== "HEAD") headers["content-length"] = String(reply.body.length);
      res.writeHead(reply.status, headers).end(reply.body);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    host: `127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
