/**
 * Credentials go only to the origin that asked for them: upload `Location`s,
 * blob redirects, token realms and pagination links on another origin get no
 * `Authorization` (and no `Cookie` is ever sent); a scheme downgrade is refused.
 * Library API (`RegistryTarget`, `copy`) and the CLI path (`release
 * check-private --bootstrap`, which serves stage and publish too).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import type http from "node:http";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LayoutTarget, RegistryTarget, copy, fetchBlobToFile, writeLayout, type Descriptor } from "../../src/oci/index.js";
import { refusedHop } from "../../src/oci/origin.js";
import { runCli } from "../support/cli.js";
import { startFakeRegistry, type FakeRegistry } from "../support/registry-fake.js";
import { startStandIn, type StandIn } from "../support/registry-standin.js";
import { failureOf } from "../support/to-throw-with-code.js";


const CREDS = { username: "origin-user", password: "origin-secret-3f1" };
const sha = (b: Buffer): string => "sha256:" + createHash("sha256").update(b).digest("hex");

let work: string;
let layoutDir: string;
let manifest: Descriptor;
let closers: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "hpk-origin-"));
  await writeFile(path.join(work, "a.bin"), Buffer.alloc(300 * 1024, 7));
  layoutDir = path.join(work, "layout");
  manifest = (await writeLayout(layoutDir, "application/vnd.hermes-plugin-kit.release.v2", new Map([["dist/a.bin", path.join(work, "a.bin")]]))).manifest;
});
afterEach(async () => {
  await Promise.all(closers.map((c) => c.close()));
  closers = [];
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function standIn(options: Parameters<typeof startStandIn>[0]): Promise<StandIn> {
  const s = await startStandIn(options);
  closers.push(s);
  return s;
}

async function fake(handler: Parameters<typeof startFakeRegistry>[0]): Promise<FakeRegistry> {
  const s = await startFakeRegistry(handler);
  closers.push(s);
  return s;
}

function target(host: string, extra: Partial<ConstructorParameters<typeof RegistryTarget>[0]> = {}): RegistryTarget {
  return new RegistryTarget({ registry: host, repository: "acme/kit", plainHttp: true, credentials: CREDS, retry: { maxAttempts: 2, baseDelayMs: 5 }, ...extra });
}

describe("upload Location on another origin", () => {
  it("copy uploads to 127.0.0.2 without the registry's credentials, and to 127.0.0.1 with them", async () => {
    const s = await standIn({ credentials: CREDS, secondHost: "127.0.0.2", uploadsOnSecond: true, secondWithoutAuth: true });
    const desc = await copy(await LayoutTarget.open(layoutDir), target(s.host), manifest.digest, { tag: "v1" });
    expect(desc.digest).toBe(manifest.digest);
    const second = s.requests.filter((r) => r.listener === "127.0.0.2");
    expect(second.map((r) => r.method)).toContain("PUT");
    expect(second.some((r) => r.authorization || r.cookie)).toBe(false);
    // The registry's own origin got them (after its Basic challenge), for the session POST and the manifest.
    const first = s.requests.filter((r) => r.listener === "127.0.0.1" && r.authorization).map((r) => r.method);
    expect(first).toContain("POST");
    expect(first).toContain("PUT");
  });

  it("a 401 from the other origin is refused (OCI_AUTH_FAILED), never answered with the credentials", async () => {
    const s = await standIn({ credentials: CREDS, secondHost: "127.0.0.2", uploadsOnSecond: true });
    await expect(copy(await LayoutTarget.open(layoutDir), target(s.host), manifest.digest, { tag: null })).toThrowWithCode("OCI_AUTH_FAILED");
    expect(s.requests.filter((r) => r.listener === "127.0.0.2").some((r) => r.authorization)).toBe(false);
  });

  it("an upload Location that downgrades to plain HTTP off loopback is refused before any byte is sent", async () => {
    const s = await fake((req, res) => {
      if (req.method === "HEAD") return void res.writeHead(404).end();
      if (req.method === "POST") return void res.writeHead(202, { location: "http://registry.example/upload/1?_state=abc", "content-length": "0" }).end();
      res.writeHead(500).end();
    });
    const blob = Buffer.from("blob bytes");
    const { Readable } = await import("node:stream");
    await expect(target(s.host).push({ mediaType: "application/octet-stream", digest: sha(blob), size: blob.length }, Readable.from([blob]))).toThrowWithCode("OCI_PLAIN_HTTP_REFUSED");
    expect(s.requests.map((r) => r.method)).toEqual(["HEAD", "POST"]);
  });
});

describe("chunked uploads on another origin", () => {
  it("every PATCH and the closing PUT to 127.0.0.2 carry no credentials", async () => {
    const s = await standIn({ credentials: CREDS, secondHost: "127.0.0.2", uploadsOnSecond: true, secondWithoutAuth: true });
    const desc = await copy(await LayoutTarget.open(layoutDir), target(s.host, { chunkSize: 64 * 1024 }), manifest.digest, { tag: "v1" });
    expect(desc.digest).toBe(manifest.digest);
    const second = s.requests.filter((r) => r.listener === "127.0.0.2");
    expect(second.filter((r) => r.method === "PATCH").length).toBeGreaterThanOrEqual(5);
    expect(second.some((r) => r.method === "PUT")).toBe(true);
    expect(second.some((r) => r.authorization || r.cookie)).toBe(false);
  });
});

describe("an HTTPS registry never steps down to plain HTTP, not even to loopback", () => {
  const blob = Buffer.from("blob bytes over TLS");
  const blobDesc: Descriptor = { mediaType: "application/octet-stream", digest: sha(blob), size: blob.length };
  let pem = "";
  let key: Buffer;

  beforeAll(async () => {
    const keyFile = path.join(work, "tls-key.pem");
    const certFile = path.join(work, "tls-cert.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", keyFile, "-out", certFile], { stdio: "ignore" });
    pem = await readFile(certFile, "utf8");
    key = await readFile(keyFile);
  });

  /** An HTTPS registry answering with `handler`, and a plain-HTTP loopback listener that must never be reached. */
  async function tlsRegistry(handler: (req: http.IncomingMessage, res: http.ServerResponse, plain: string) => void): Promise<{ target: RegistryTarget; plain: FakeRegistry }> {
    const plain = await fake((_req, res) => void res.writeHead(200, { "content-length": "0" }).end());
    const server = https.createServer({ key, cert: pem }, (req, res) => {
      req.resume();
      handler(req, res, plain.url);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push({ close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) });
    const port = (server.address() as { port: number }).port;
    return { target: new RegistryTarget({ registry: `127.0.0.1:${port}`, repository: "acme/kit", ca: pem, credentials: CREDS, retry: { maxAttempts: 1 } }), plain };
  }

  async function errorOf(p: Promise<unknown>): Promise<{ code: string; message: string }> {
    try {
      await p;
    } catch (error) {
      return error as { code: string; message: string };
    }
    return { code: "NO_ERROR", message: "" };
  }

  it("a blob redirect to http://127.0.0.1 is OCI_REDIRECT_REFUSED on the streaming and the file path, nothing written", async () => {
    const { target: t, plain } = await tlsRegistry((_req, res, to) => void res.writeHead(307, { location: `${to}/blob?sig=1`, "content-length": "0" }).end());
    const streamed = await errorOf(t.fetch(blobDesc));
    expect(streamed.code).toBe("OCI_REDIRECT_REFUSED");
    expect(streamed.message).toContain("downgrade");
    const dir = await mkdtemp(path.join(work, "tls-out-"));
    expect((await errorOf(fetchBlobToFile(t, blobDesc, path.join(dir, "blob")))).code).toBe("OCI_REDIRECT_REFUSED");
    expect(await readdir(dir)).toEqual([]);
    expect(plain.requests).toEqual([]);
  });

  it("an upload Location on http://127.0.0.1 is OCI_PLAIN_HTTP_REFUSED before a byte is sent", async () => {
    const { target: t, plain } = await tlsRegistry((req, res, to) => {
      if (req.method === "HEAD") return void res.writeHead(404, { "content-length": "0" }).end();
      if (req.method === "POST") return void res.writeHead(202, { location: `${to}/v2/acme/kit/blobs/uploads/1?_state=abc`, "content-length": "0" }).end();
      res.writeHead(500, { "content-length": "0" }).end();
    });
    const { Readable } = await import("node:stream");
    const error = await errorOf(t.push(blobDesc, Readable.from([blob])));
    expect(error.code).toBe("OCI_PLAIN_HTTP_REFUSED");
    expect(error.message).toContain("downgrade");
    expect(plain.requests).toEqual([]);
  });

  it("a Bearer realm on http://127.0.0.1 is OCI_PLAIN_HTTP_REFUSED before any token request", async () => {
    const { target: t, plain } = await tlsRegistry((_req, res, to) => void res.writeHead(401, { "www-authenticate": `Bearer realm="${to}/token",service="svc"`, "content-length": "0" }).end());
    const error = await errorOf(t.tags());
    expect(error.code).toBe("OCI_PLAIN_HTTP_REFUSED");
    expect(error.message).toContain("downgrade");
    expect(plain.requests).toEqual([]);
  });

  it("a tag-list Link to http://127.0.0.1 (another origin) is OCI_LINK_INVALID", async () => {
    const { target: t, plain } = await tlsRegistry((_req, res, to) => {
      res.writeHead(200, { "content-type": "application/json", link: `<${to}/v2/acme/kit/tags/list?last=a>; rel="next"` });
      res.end(JSON.stringify({ name: "acme/kit", tags: ["a"] }));
    });
    expect((await errorOf(t.tags())).code).toBe("OCI_LINK_INVALID");
    expect(plain.requests).toEqual([]);
  });
});

describe("blob redirects", () => {
  it("follows a blob redirect to another origin without Authorization", async () => {
    const s = await standIn({ credentials: CREDS, secondHost: "127.0.0.2", redirectBlobsToSecond: true, secondWithoutAuth: true });
    await copy(await LayoutTarget.open(layoutDir), target(s.host), manifest.digest, { tag: "v1" });
    s.requests.length = 0;
    const t = target(s.host);
    const layer = { mediaType: "application/octet-stream", digest: [...s.blobs.keys()].find((d) => s.blobs.get(d)?.length === 300 * 1024) as string, size: 300 * 1024 };
    const chunks: Buffer[] = [];
    for await (const chunk of await t.fetch(layer)) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).length).toBe(300 * 1024);
    const hops = s.requests.filter((r) => r.url.includes("/blobs/sha256:"));
    // 401 challenge, the authenticated GET (answered 307), then the other origin without credentials.
    expect(hops.map((r) => [r.listener, r.authorization])).toEqual([["127.0.0.1", false], ["127.0.0.1", true], ["127.0.0.2", false]]);
  });
});

describe("a blob redirect whose target answers 404", () => {
  const layerBytes = Buffer.alloc(1000, 3);
  const layer = { mediaType: "application/octet-stream", digest: sha(layerBytes), size: layerBytes.length };

  /** A registry that redirects blob GETs to `storage` with a signed query, as S3/CDN redirects do. */
  async function redirecting(storage: FakeRegistry): Promise<FakeRegistry> {
    return fake((req, res) => {
      const digest = /\/blobs\/(sha256:[0-9a-f]{64})$/.exec(req.url ?? "")?.[1];
      res.writeHead(307, { location: `${storage.url}/store/${digest}?X-Amz-Signature=signed-token-77aa`, "content-length": "0" });
      res.end();
    });
  }

  it("a target that serves the blob: the fetch succeeds (fast path and stream)", async () => {
    const storage = await fake((_req, res) => {
      res.writeHead(200, { "content-length": String(layerBytes.length) });
      res.end(layerBytes);
    });
    const t = target((await redirecting(storage)).host, { credentials: undefined });
    const out = path.join(work, "redirect-ok.bin");
    await fetchBlobToFile(t, layer, out);
    expect(await readFile(out)).toEqual(layerBytes);
  });

  it("says the redirect target answered 404, names its origin only (no signed query) and the fix; code OCI_NOT_FOUND", async () => {
    const storage = await fake((_req, res) => {
      res.writeHead(404, { "content-length": "0" });
      res.end();
    });
    const registry = await redirecting(storage);
    const t = target(registry.host, { credentials: undefined });
    const error = await failureOf(fetchBlobToFile(t, layer, path.join(work, "redirect-404.bin")));
    expect(error.code).toBe("OCI_NOT_FOUND");
    expect(error.message).toContain(`GET on ${storage.url} (another origin, where registry ${registry.host} sent it by a redirect or upload Location) answered HTTP 404: the redirect target answered 404`);
    expect(error.message).toMatch(/fix: the registry still points at this content but .* does not serve it/);
    expect(error.message).not.toMatch(/signed-token|X-Amz|\/store\//);
    expect(error.message).not.toMatch(/deleted/);
  });
});

describe("token realms", () => {
  function bearerRegistry(realm: () => string, seen: string[]): Parameters<typeof startFakeRegistry>[0] {
    return (req, res) => {
      const auth = req.headers.authorization;
      if (auth === "Bearer good-token") {
        res.writeHead(200, { "content-type": "application/json", "set-cookie": "registry_session=abc; Path=/" });
        return void res.end(JSON.stringify({ name: "acme/kit", tags: ["v1"] }));
      }
      seen.push(auth ?? "");
      res.writeHead(401, { "www-authenticate": `Bearer realm="${realm()}",service="svc"`, "set-cookie": "registry_session=abc; Path=/" });
      res.end();
    };
  }

  function tokenEndpoint(got: Array<string | undefined>): Parameters<typeof startFakeRegistry>[0] {
    return (req, res) => {
      got.push(req.headers.authorization);
      if (req.headers.authorization === undefined) return void res.writeHead(401).end();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ token: "good-token", expires_in: 300 }));
    };
  }

  it("a realm on another origin gets an anonymous token request; refused -> OCI_AUTH_FAILED naming trustedTokenRealms", async () => {
    const got: Array<string | undefined> = [];
    const realmServer = await fake(tokenEndpoint(got));
    const registry = await fake(bearerRegistry(() => `${realmServer.url}/token`, []));
    const t = target(registry.host);
    const error = (await t.tags().catch((e: unknown) => e)) as { code: string; message: string };
    expect(error.code).toBe("OCI_AUTH_FAILED");
    expect(error.message).toContain("trustedTokenRealms");
    expect(error.message).not.toContain(CREDS.password);
    expect(got).toEqual([undefined]);
  });

  it("a trusted realm origin receives the credentials; no Cookie is ever sent back", async () => {
    const got: Array<string | undefined> = [];
    const realmServer = await fake(tokenEndpoint(got));
    const registry = await fake(bearerRegistry(() => `${realmServer.url}/token`, []));
    const t = target(registry.host, { trustedTokenRealms: [realmServer.url] });
    expect(await t.tags()).toEqual(["v1"]);
    expect(await t.tags()).toEqual(["v1"]);
    expect(got).toEqual(["Basic " + Buffer.from(`${CREDS.username}:${CREDS.password}`).toString("base64")]);
    expect(registry.requests.some((r) => r.headers.cookie !== undefined)).toBe(false);
  });

  it("a realm on the registry's own origin receives the credentials", async () => {
    const got: Array<string | undefined> = [];
    const token = tokenEndpoint(got);
    let self = "";
    const registry = await fake((req, res, seen) => {
      if ((req.url ?? "").startsWith("/token")) return token(req, res, seen);
      return bearerRegistry(() => `${self}/token`, [])(req, res, seen);
    });
    self = registry.url;
    expect(await target(registry.host).tags()).toEqual(["v1"]);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatch(/^Basic /);
  });

  it("a realm with user info or a downgrade to plain HTTP off loopback is refused before any token request", async () => {
    for (const realm of ["http://user:pw@127.0.0.1:1/token", "http://auth.example/token"]) {
      const registry = await fake(bearerRegistry(() => realm, []));
      await expect(target(registry.host).tags()).toThrowWithCode("OCI_PLAIN_HTTP_REFUSED");
    }
  });
});

describe("the hop rule", () => {
  const u = (s: string): URL => new URL(s);
  it("refuses https -> http, user info, non-http schemes and plain HTTP off loopback; allows the rest", () => {
    expect(refusedHop(u("https://r.example/v2/"), u("http://127.0.0.1:5000/x"), true)).toContain("downgrade");
    expect(refusedHop(u("http://127.0.0.1/v2/"), u("http://u:p@127.0.0.1/x"), true)).toContain("user info");
    expect(refusedHop(u("http://127.0.0.1/v2/"), u("file:///etc/passwd"), true)).toContain("not http");
    expect(refusedHop(u("http://127.0.0.1/v2/"), u("http://10.0.0.1/x"), true)).toContain("plain HTTP");
    expect(refusedHop(u("http://127.0.0.1/v2/"), u("http://127.0.0.2:9/x"), false)).toContain("plain HTTP");
    expect(refusedHop(u("http://127.0.0.1/v2/"), u("https://cdn.example/x"), true)).toBeUndefined();
    expect(refusedHop(u("https://r.example/v2/"), u("https://cdn.example/x"), false)).toBeUndefined();
  });
});

describe("CLI: release check-private --bootstrap", () => {
  it("bootstraps through an upload Location on 127.0.0.2 without sending it the credentials", async () => {
    const s = await standIn({ credentials: CREDS, anonymous: "absent-404", secondHost: "127.0.0.2", uploadsOnSecond: true, secondWithoutAuth: true });
    const cwd = await mkdtemp(path.join(work, "cli-"));
    const repository = `${s.host}/acme/kit`;
    await writeFile(path.join(cwd, "package.json"), JSON.stringify({ name: "kit", version: "1.0.0", hermesPluginKit: { repository } }) + "\n");
    const result = await runCli(["release", "check-private", "--bootstrap", "--plain-http"], {
      cwd,
      env: { REGISTRY_USERNAME: CREDS.username, REGISTRY_PASSWORD: CREDS.password },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ kind: "registry", bootstrapped: true });
    expect(s.tags.has("private-bootstrap")).toBe(true);
    const second = s.requests.filter((r) => r.listener === "127.0.0.2");
    expect(second.length).toBeGreaterThan(0);
    expect(second.some((r) => r.authorization)).toBe(false);
    expect(result.stdout + result.stderr).not.toContain(CREDS.password);
  });
});
