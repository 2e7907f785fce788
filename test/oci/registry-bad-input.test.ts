/**
 * RegistryTarget against misbehaving registries (loopback servers written
 * here): every case fails closed with its own code and leaves no partial file.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readdir } from "node:fs/promises";
import type http from "node:http";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RegistryTarget, fetchBlobToFile, fetchManifest, type Descriptor, type RegistryTargetOptions } from "../../src/oci/index.js";
import { fakeRegistryScope, writeMany, type FakeRegistry } from "../support/registry-fake.js";
import { failureOf } from "../support/to-throw-with-code.js";


const sha = (b: Buffer | string): string => "sha256:" + createHash("sha256").update(b).digest("hex");
const MANIFEST = Buffer.from(
  '{"artifactType":"application/vnd.hermes-plugin-kit.private-bootstrap.v1","config":{"digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","mediaType":"application/vnd.oci.empty.v1+json","size":2},"layers":[],"mediaType":"application/vnd.oci.image.manifest.v1+json","schemaVersion":2}\n',
);
const MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json";
const BLOB = Buffer.from("0123456789abcdef".repeat(4096));
const BLOB_DESC: Descriptor = { mediaType: "application/octet-stream", digest: sha(BLOB), size: BLOB.length };

const scope = fakeRegistryScope("hpk-bad-");
const fake = scope.fake;

function client(server: FakeRegistry, extra: Partial<RegistryTargetOptions> = {}): RegistryTarget {
  return new RegistryTarget({
    registry: server.host,
    repository: "owner/kit",
    plainHttp: true,
    retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 3000 },
    timeoutMs: 2000,
    bodyTimeoutMs: 2000,
    ...extra,
  });
}

async function emptyDir(): Promise<string> {
  return mkdtemp(path.join(scope.work, "out-"));
}

function manifestResponse(res: http.ServerResponse, body: Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(200, { "content-type": MANIFEST_TYPE, "content-length": String(body.length), "docker-content-digest": sha(body), ...headers });
  res.end(body);
}

describe("manifests", () => {
  it("accepts a well-behaved manifest (control case)", async () => {
    const s = await fake((_req, res) => manifestResponse(res, MANIFEST));
    const t = client(s);
    expect(await t.resolve("v1")).toEqual({ mediaType: MANIFEST_TYPE, digest: sha(MANIFEST), size: MANIFEST.length });
    expect(s.requests[0]?.headers.accept).toContain(MANIFEST_TYPE);
    expect(s.requests[0]?.headers.accept).toContain("application/vnd.oci.image.index.v1+json");
  });

  it("refuses a manifest over 1 MiB announced by Content-Length, and one streamed without it", async () => {
    const big = 2 * 1024 * 1024;
    const s1 = await fake((_req, res) => {
      res.writeHead(200, { "content-type": MANIFEST_TYPE, "content-length": String(big) });
      void writeMany(res, big);
    });
    await expect(client(s1).resolve("v1")).toThrowWithCode("OCI_MANIFEST_TOO_LARGE");
    // What was found, the limit and where it comes from, and the fix.
    const announced = await failureOf(client(s1).resolve("v1"));
    expect(announced.message).toMatch(/is 2097152 bytes \(Content-Length\); expected at most 1048576 bytes \(1 MiB\), the ceiling this kit applies.*fix: check that the reference names a Hermes plugin release/);
    let written = 0;
    const s2 = await fake(async (_req, res) => {
      res.writeHead(200, { "content-type": MANIFEST_TYPE });
      written = await writeMany(res, 64 * 1024 * 1024);
    });
    const streamed = await failureOf(client(s2).resolve("v1"));
    expect(streamed.code).toBe("OCI_MANIFEST_TOO_LARGE");
    expect(streamed.message).toMatch(/is more than 1048576 bytes \(read without a Content-Length\); expected at most .*fix: /);
    await new Promise((r) => setTimeout(r, 50));
    expect(written).toBeLessThan(32 * 1024 * 1024);
  });

  it("refuses a manifest descriptor over 1 MiB before any request", async () => {
    const s = await fake((_req, res) => manifestResponse(res, MANIFEST));
    const desc = { mediaType: MANIFEST_TYPE, digest: sha("x"), size: 1024 * 1024 + 1 };
    await expect(client(s).fetch(desc)).toThrowWithCode("OCI_MANIFEST_TOO_LARGE");
    await expect(fetchManifest(client(s), desc)).rejects.toThrow(/is 1048577 bytes; expected at most 1048576 bytes .*fix: /);
    expect(s.requests.length).toBe(0);
  });

  it("refuses a Docker-Content-Digest that disagrees with the bytes", async () => {
    const s = await fake((_req, res) => manifestResponse(res, MANIFEST, { "docker-content-digest": sha("other") }));
    await expect(client(s).resolve("v1")).toThrowWithCode("OCI_DIGEST_MISMATCH");
  });

  it("refuses bytes that do not hash to the requested digest", async () => {
    const s = await fake((_req, res) => manifestResponse(res, MANIFEST, {}));
    await expect(client(s).resolve(sha("something else"))).toThrowWithCode("OCI_DIGEST_MISMATCH");
  });

  it("refuses HTML and empty 200 bodies", async () => {
    const html = Buffer.from("<html><body>Sign in</body></html>");
    const s1 = await fake((_req, res) => {
      res.writeHead(200, { "content-type": "text/html", "content-length": String(html.length) });
      res.end(html);
    });
    await expect(client(s1).resolve("v1")).toThrowWithCode("OCI_MANIFEST_INVALID");
    const s2 = await fake((_req, res) => {
      res.writeHead(200, { "content-type": MANIFEST_TYPE, "content-length": "0" });
      res.end();
    });
    await expect(client(s2).resolve("v1")).toThrowWithCode("OCI_MANIFEST_INVALID");
  });
});

describe("blobs", () => {
  /** Fetch `BLOB_DESC` into an empty directory: the refusal's code, and nothing written. */
  async function expectRefused(t: RegistryTarget, code: string): Promise<void> {
    const dir = await emptyDir();
    await expect(fetchBlobToFile(t, BLOB_DESC, path.join(dir, "blob"))).toThrowWithCode(code);
    expect(await readdir(dir)).toEqual([]);
  }

  it("streams a blob without Content-Length (control case)", async () => {
    const s = await fake((_req, res) => {
      res.writeHead(200);
      res.end(BLOB);
    });
    const dir = await emptyDir();
    await fetchBlobToFile(client(s), BLOB_DESC, path.join(dir, "blob"));
    expect(await readdir(dir)).toEqual(["blob"]);
  });

  it("refuses blob bytes that do not hash to the digest", async () => {
    const wrong = Buffer.from(BLOB).fill(0x7a, 0, 1);
    const s = await fake((_req, res) => {
      res.writeHead(200, { "content-length": String(wrong.length) });
      res.end(wrong);
    });
    await expectRefused(client(s), "OCI_DIGEST_MISMATCH");
  });

  it("refuses a Content-Length other than the descriptor size", async () => {
    const s = await fake((_req, res) => {
      res.writeHead(200, { "content-length": String(BLOB.length + 5) });
      res.end(Buffer.concat([BLOB, Buffer.from("extra")]));
    });
    await expectRefused(client(s), "OCI_SIZE_MISMATCH");
  });

  it("refuses a truncated blob (connection closed early, with and without Content-Length)", async () => {
    const s1 = await fake((_req, res) => {
      res.writeHead(200, { "content-length": String(BLOB.length) });
      res.write(BLOB.subarray(0, 1000), () => setTimeout(() => res.socket?.destroy(), 20));
    });
    await expectRefused(client(s1), "OCI_SIZE_MISMATCH");
    const s2 = await fake((_req, res) => {
      res.writeHead(200, { connection: "close" });
      res.write(BLOB.subarray(0, 1000), () => setTimeout(() => res.socket?.destroy(), 20));
    });
    await expectRefused(client(s2), "OCI_SIZE_MISMATCH");
  });

  it("stops reading at size + 1 when the registry sends more bytes without Content-Length", async () => {
    let written = 0;
    const s = await fake(async (_req, res) => {
      res.writeHead(200);
      res.write(BLOB);
      written = BLOB.length + (await writeMany(res, 256 * 1024 * 1024));
    });
    await expectRefused(client(s), "OCI_SIZE_MISMATCH");
    await new Promise((r) => setTimeout(r, 100));
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it("refuses an HTML 200 body for a blob", async () => {
    const s = await fake((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>login</html>");
    });
    await expectRefused(client(s), "OCI_SIZE_MISMATCH");
  });

  it("refuses a blob Docker-Content-Digest that disagrees", async () => {
    const s = await fake((_req, res) => {
      res.writeHead(200, { "content-length": String(BLOB.length), "docker-content-digest": sha("other") });
      res.end(BLOB);
    });
    await expectRefused(client(s), "OCI_DIGEST_MISMATCH");
  });
});

describe("redirects", () => {
  it("refuses a redirect to a non-loopback plain-HTTP host", async () => {
    const s = await fake((_req, res) => {
      res.writeHead(307, { location: "http://registry.example.com/blob" });
      res.end();
    });
    await expect(client(s).fetch(BLOB_DESC)).toThrowWithCode("OCI_REDIRECT_REFUSED");
    expect(s.requests.length).toBe(1);
  });

  it("follows a cross-origin loopback redirect without the Authorization header", async () => {
    const storage = await fake((_req, res) => {
      res.writeHead(200, { "content-length": String(BLOB.length) });
      res.end(BLOB);
    });
    const s = await fake((_req, res) => {
      res.writeHead(307, { location: `${storage.url}/blob?sig=1` });
      res.end();
    });
    const dir = await emptyDir();
    await fetchBlobToFile(client(s, { credentials: { token: "registry-token-xyz" } }), BLOB_DESC, path.join(dir, "b"));
    expect(s.requests[0]?.headers.authorization).toBe("Bearer registry-token-xyz");
    expect(storage.requests[0]?.headers.authorization).toBeUndefined();
    expect(storage.requests[0]?.url).toBe("/blob?sig=1");
  });

  it("refuses endless redirects", async () => {
    const s = await fake((req, res) => {
      res.writeHead(302, { location: `${req.url ?? "/"}x` });
      res.end();
    });
    await expect(client(s).fetch(BLOB_DESC)).toThrowWithCode("OCI_REDIRECT_REFUSED");
  });
});

describe("auth", () => {
  function bearerServer(opts: { tokenBody?: (res: http.ServerResponse) => void; realm?: string }): Promise<FakeRegistry> {
    let self: FakeRegistry | undefined;
    const promise = fake((req, res) => {
      if ((req.url ?? "").startsWith("/token")) {
        if (opts.tokenBody) opts.tokenBody(res);
        else {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ token: "tok-1", expires_in: 300 }));
        }
        return;
      }
      const realm = opts.realm ?? `${self?.url ?? ""}/token`;
      res.writeHead(401, { "www-authenticate": `Bearer realm="${realm}",service="fake",scope="repository:owner/kit:pull"`, "content-type": "application/json" });
      res.end('{"errors":[{"code":"UNAUTHORIZED","message":"no"}]}');
    });
    return promise.then((s) => {
      self = s;
      return s;
    });
  }

  it("fails with OCI_AUTH_FAILED on a 401 after a fresh token, sending Basic only to the token endpoint", async () => {
    const s = await bearerServer({});
    await expect(client(s, { credentials: { username: "u", password: "secret-pw" } }).tags()).toThrowWithCode("OCI_AUTH_FAILED");
    const tokenRequests = s.requests.filter((r) => r.url.startsWith("/token"));
    expect(tokenRequests.length).toBe(1);
    expect(tokenRequests[0]?.url).toContain("scope=repository%3Aowner%2Fkit%3Apull");
    expect(tokenRequests[0]?.headers.authorization).toBe("Basic " + Buffer.from("u:secret-pw").toString("base64"));
    const registryRequests = s.requests.filter((r) => !r.url.startsWith("/token"));
    expect(registryRequests.length).toBe(2);
    expect(registryRequests[1]?.headers.authorization).toBe("Bearer tok-1");
  });

  it("refuses a token response over 64 KiB", async () => {
    const s = await bearerServer({
      tokenBody: (res) => {
        res.writeHead(200, { "content-type": "application/json" });
        void writeMany(res, 100 * 1024);
      },
    });
    await expect(client(s).tags()).toThrowWithCode("OCI_BODY_TOO_LARGE");
  });

  it("refuses a token endpoint that answers without a token, and a plain-HTTP non-loopback realm", async () => {
    const s1 = await bearerServer({
      tokenBody: (res) => {
        res.writeHead(200, { "content-type": "text/html" });
        res.end("<html></html>");
      },
    });
    await expect(client(s1).tags()).toThrowWithCode("OCI_RESPONSE_INVALID");
    const s2 = await bearerServer({ realm: "http://auth.example.com/token" });
    await expect(client(s2).tags()).toThrowWithCode("OCI_PLAIN_HTTP_REFUSED");
  });

  it("maps a refused token request to OCI_AUTH_FAILED without echoing credentials", async () => {
    const s = await bearerServer({
      tokenBody: (res) => {
        res.writeHead(401);
        res.end("denied");
      },
    });
    let message = "";
    try {
      await client(s, { credentials: { username: "alice", password: "hunter2-secret" } }).tags();
    } catch (error) {
      message = `${(error as Error).message} ${JSON.stringify(error)}`;
      expect((error as { code: string }).code).toBe("OCI_AUTH_FAILED");
    }
    expect(message).not.toBe("");
    expect(message).not.toContain("hunter2-secret");
    expect(message).not.toContain(Buffer.from("alice:hunter2-secret").toString("base64"));
  });
});

describe("errors, retries and timeouts", () => {
  it("refuses an error body over 64 KiB", async () => {
    const s = await fake((_req, res) => {
      res.writeHead(404, { "content-type": "text/html" });
      void writeMany(res, 100 * 1024);
    });
    await expect(client(s).resolve("v1")).toThrowWithCode("OCI_BODY_TOO_LARGE");
  });

  it("reports a 404 as OCI_NOT_FOUND with the registry's error code only", async () => {
    const s = await fake((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"errors":[{"code":"MANIFEST_UNKNOWN","message":"<script>x</script>"}]}');
    });
    try {
      await client(s).resolve("v1");
      expect.unreachable();
    } catch (error) {
      expect((error as { code: string }).code).toBe("OCI_NOT_FOUND");
      expect((error as Error).message).toContain("MANIFEST_UNKNOWN");
      expect((error as Error).message).not.toContain("script");
    }
  });

  it("gives up on 500 and 429 storms after exactly the retry budget; a 429 storm says rate limited", async () => {
    for (const [status, code] of [[500, "OCI_RETRY_EXHAUSTED"], [503, "OCI_RETRY_EXHAUSTED"], [429, "OCI_RATE_LIMITED"]] as const) {
      const s = await fake((_req, res) => {
        res.writeHead(status, { "content-type": "text/plain" });
        res.end("busy");
      });
      const error = (await client(s).resolve("v1").then(() => ({ code: "NO_ERROR", message: "" }), (e: unknown) => e)) as { code: string; message: string };
      expect(error.code).toBe(code);
      if (status === 429) expect(error.message).toContain("rate limited");
      expect(s.requests.length).toBe(3);
    }
  });

  it("honours a plain-text 429 Retry-After within the budget, and refuses one beyond it", async () => {
    let calls = 0;
    const s = await fake((_req, res) => {
      calls += 1;
      if (calls === 1) {
        res.writeHead(429, { "content-type": "text/plain", "retry-after": "1" });
        res.end("slow down");
        return;
      }
      manifestResponse(res, MANIFEST);
    });
    const started = Date.now();
    expect((await client(s).resolve("v1")).digest).toBe(sha(MANIFEST));
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(calls).toBe(2);

    const s2 = await fake((_req, res) => {
      res.writeHead(429, { "content-type": "text/plain", "retry-after": "3600" });
      res.end("come back tomorrow");
    });
    const t0 = Date.now();
    await expect(client(s2).resolve("v1")).toThrowWithCode("OCI_RATE_LIMITED");
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(s2.requests.length).toBe(1);
  });

  it("retries connection resets, then gives up", async () => {
    let calls = 0;
    const s = await fake((_req, res) => {
      calls += 1;
      if (calls < 3) {
        res.socket?.destroy();
        return;
      }
      manifestResponse(res, MANIFEST);
    });
    expect((await client(s).resolve("v1")).digest).toBe(sha(MANIFEST));
    const s2 = await fake((_req, res) => {
      res.socket?.destroy();
    });
    await expect(client(s2).resolve("v1")).toThrowWithCode("OCI_RETRY_EXHAUSTED");
    expect(s2.requests.length).toBe(3);
  });

  it("times out a registry that never answers", async () => {
    const s = await fake(() => undefined);
    await expect(client(s, { timeoutMs: 150, retry: { maxAttempts: 2, baseDelayMs: 5 } }).resolve("v1")).toThrowWithCode("OCI_TIMEOUT");
    expect(s.requests.length).toBe(2);
  });

  it("times out a blob body that stalls, leaving no partial file", async () => {
    const s = await fake((_req, res) => {
      res.writeHead(200, { "content-length": String(BLOB.length) });
      res.write(BLOB.subarray(0, 100));
    });
    const dir = await emptyDir();
    await expect(fetchBlobToFile(client(s, { bodyTimeoutMs: 150 }), BLOB_DESC, path.join(dir, "b"))).toThrowWithCode("OCI_TIMEOUT");
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("tag-list pagination", () => {
  function pages(routes: Record<string, { tags: string[]; link?: string }>): Promise<FakeRegistry> {
    return fake((req, res) => {
      const page = routes[req.url ?? ""];
      if (page === undefined) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end('{"errors":[{"code":"NAME_UNKNOWN"}]}');
        return;
      }
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (page.link !== undefined) headers["link"] = page.link;
      res.writeHead(200, headers);
      res.end(JSON.stringify({ name: "owner/kit", tags: page.tags }));
    });
  }

  it("follows a relative, opaque Link as given and finds a tag only on page 2", async () => {
    const s = await pages({
      "/v2/owner/kit/tags/list?n=1000": { tags: ["a", "b"], link: '<../../opaque/cursor?token=Zz%2F9&x=1>; rel="next"' },
      "/v2/owner/opaque/cursor?token=Zz%2F9&x=1": { tags: ["only-on-page-2"] },
    });
    expect(await client(s).tags()).toEqual(["a", "b", "only-on-page-2"]);
  });

  it("detects a Link that loops back to page 1", async () => {
    const s = await pages({
      "/v2/owner/kit/tags/list?n=1000": { tags: ["a"], link: '</v2/owner/kit/tags/list?last=a>; rel="next"' },
      "/v2/owner/kit/tags/list?last=a": { tags: ["b"], link: '</v2/owner/kit/tags/list?n=1000>; rel="next"' },
    });
    await expect(client(s).tags()).toThrowWithCode("OCI_PAGINATION_LOOP");
    expect(s.requests.length).toBe(2);
  });

  it("refuses a Link without angle brackets, and one leaving the origin", async () => {
    const s = await pages({ "/v2/owner/kit/tags/list?n=1000": { tags: ["a"], link: '/v2/owner/kit/tags/list?last=a; rel="next"' } });
    await expect(client(s).tags()).toThrowWithCode("OCI_LINK_INVALID");
    const s2 = await pages({ "/v2/owner/kit/tags/list?n=1000": { tags: ["a"], link: '<http://other.example.com/v2/x>; rel="next"' } });
    await expect(client(s2).tags()).toThrowWithCode("OCI_LINK_INVALID");
    expect(s2.requests.length).toBe(1);
  });

  it("refuses an HTML tag list", async () => {
    const s = await fake((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html></html>");
    });
    await expect(client(s).tags()).toThrowWithCode("OCI_RESPONSE_INVALID");
  });
});

describe("copy retries a failed streamed upload", () => {
  /** A minimal in-memory registry speaking the push protocol; `failPuts` blob PUTs answer 503 (body read first). */
  async function pushRegistry(failPuts: number): Promise<{ server: FakeRegistry; blobs: Map<string, Buffer>; puts: () => number }> {
    const blobs = new Map<string, Buffer>();
    let puts = 0;
    let failuresLeft = failPuts;
    const server = await fake(async (req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      const body = async (): Promise<Buffer> => {
        const chunks: Buffer[] = [];
        req.resume();
        for await (const c of req) chunks.push(c as Buffer);
        return Buffer.concat(chunks);
      };
      const digest = url.pathname.split("/").pop() ?? "";
      if (req.method === "HEAD") {
        const b = blobs.get(digest);
        res.writeHead(b ? 200 : 404, b ? { "content-length": String(b.length), "docker-content-digest": digest } : {});
        res.end();
      } else if (req.method === "POST") {
        res.writeHead(202, { location: `/v2/owner/kit/blobs/uploads/u${Math.random().toString(16).slice(2)}`, "content-length": "0" });
        res.end();
      } else if (req.method === "PUT" && url.pathname.includes("/blobs/uploads/")) {
        const bytes = await body();
        puts += 1;
        if (failuresLeft > 0) {
          failuresLeft -= 1;
          res.writeHead(503, { "content-length": "4" });
          res.end("busy");
          return;
        }
        const d = url.searchParams.get("digest") ?? "";
        if (sha(bytes) !== d) {
          res.writeHead(400, { "content-type": "application/json" });
          res.end('{"errors":[{"code":"DIGEST_INVALID"}]}');
          return;
        }
        blobs.set(d, bytes);
        res.writeHead(201, { "docker-content-digest": d, "content-length": "0" });
        res.end();
      } else if (req.method === "PUT" && url.pathname.includes("/manifests/")) {
        const bytes = await body();
        blobs.set(sha(bytes), bytes);
        res.writeHead(201, { "docker-content-digest": sha(bytes), "content-length": "0" });
        res.end();
      } else {
        res.writeHead(404, { "content-length": "0" });
        res.end();
      }
    });
    return { server, blobs, puts: () => puts };
  }

  async function layoutWithBlob(): Promise<{ src: import("../../src/oci/index.js").LayoutTarget; manifest: Descriptor }> {
    const { writeLayout, LayoutTarget } = await import("../../src/oci/index.js");
    const { writeFile } = await import("node:fs/promises");
    const dir = await emptyDir();
    const file = path.join(dir, "payload.bin");
    await writeFile(file, BLOB);
    const { manifest } = await writeLayout(path.join(dir, "layout"), "application/vnd.hermes-plugin-kit.release.v2", new Map([["payload.bin", file]]));
    return { src: await LayoutTarget.open(path.join(dir, "layout")), manifest };
  }

  it("fetches and pushes the blob again after a 503 on the streamed PUT", async () => {
    const { copy } = await import("../../src/oci/index.js");
    const { server, blobs, puts } = await pushRegistry(1);
    const { src, manifest } = await layoutWithBlob();
    expect(await copy(src, client(server), "payload", { tag: null })).toEqual(manifest);
    expect(blobs.get(BLOB_DESC.digest)?.equals(BLOB)).toBe(true);
    expect(puts()).toBe(3);
  });

  it("gives up after the blob attempt budget", async () => {
    const { copy } = await import("../../src/oci/index.js");
    const { server, blobs, puts } = await pushRegistry(100);
    const { src } = await layoutWithBlob();
    await expect(copy(src, client(server), "payload", { tag: null, blobAttempts: 2, concurrency: 1 })).toThrowWithCode("OCI_RETRY_EXHAUSTED");
    expect(blobs.has(BLOB_DESC.digest)).toBe(false);
    expect(puts()).toBe(2);
  });
});
