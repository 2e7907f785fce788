/**
 * The blob download fast path (`RegistryTarget.fetchToFile`, used by
 * `fetchBlobToFile`): taken for the plain answer, verified byte for byte the
 * same way as the streaming path (nothing renamed into place unless size and
 * digest agree), and handing every other answer to the general client.
 */
import { createHash, randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import type http from "node:http";
import https from "node:https";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RegistryTarget, fetchBlobToFile, type Descriptor } from "../../src/oci/index.js";
import { parseResponseHead } from "../../src/oci/blob-download.js";
import { fakeRegistryScope } from "../support/registry-fake.js";

const sha = (b: Buffer): string => "sha256:" + createHash("sha256").update(b).digest("hex");
const BIG = randomBytes(20 * 1024 * 1024 + 17);
const BIG_DESC: Descriptor = { mediaType: "application/octet-stream", digest: sha(BIG), size: BIG.length };

const scope = fakeRegistryScope("hpk-fast-");
const fake = scope.fake;

/** A target whose general `fetch` is counted (the fast path never calls it). */
function counted(host: string, extra: Partial<ConstructorParameters<typeof RegistryTarget>[0]> = {}): { target: RegistryTarget; general: () => number } {
  const target = new RegistryTarget({ registry: host, repository: "acme/kit", plainHttp: true, retry: { maxAttempts: 2, baseDelayMs: 5 }, timeoutMs: 2000, bodyTimeoutMs: 1000, ...extra });
  let calls = 0;
  const original = target.fetch.bind(target);
  target.fetch = (desc) => {
    calls += 1;
    return original(desc);
  };
  return { target, general: () => calls };
}

async function outcome(target: RegistryTarget, desc: Descriptor): Promise<{ code: string; files: string[]; bytes?: Buffer }> {
  const dir = await mkdtemp(path.join(scope.work, "out-"));
  const file = path.join(dir, "blob");
  try {
    await fetchBlobToFile(target, desc, file);
    return { code: "OK", files: await readdir(dir), bytes: await readFile(file) };
  } catch (error) {
    return { code: (error as { code?: string }).code ?? String(error), files: await readdir(dir) };
  }
}

function blobAnswer(res: http.ServerResponse, body: Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(body.length), "docker-content-digest": sha(body), ...headers });
  res.end(body);
}

describe("the plain answer", () => {
  it("takes the fast path (no general fetch) and writes a 20 MiB blob byte for byte", async () => {
    const s = await fake((_req, res) => blobAnswer(res, BIG));
    const { target, general } = counted(s.host);
    const result = await outcome(target, BIG_DESC);
    expect(result.code).toBe("OK");
    expect(result.bytes?.equals(BIG)).toBe(true);
    expect(general()).toBe(0);
    expect(result.files).toEqual(["blob"]);
  });

  it("bytes beyond Content-Length on the same connection are OCI_SIZE_MISMATCH, nothing left behind", async () => {
    const s = await fake((req, res) => {
      // Raw answer: Content-Length says size, the socket carries more.
      req.socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${BIG.length}\r\n\r\n`);
      req.socket.end(Buffer.concat([BIG, Buffer.from("tail")]));
      void res;
    });
    expect(await outcome(counted(s.host).target, BIG_DESC)).toEqual({ code: "OCI_SIZE_MISMATCH", files: [] });
  });

  it("a truncated body, wrong bytes, a wrong Content-Length or Docker-Content-Digest fail with their codes, nothing left behind", async () => {
    const cases: Array<[string, (res: http.ServerResponse) => void]> = [
      ["OCI_SIZE_MISMATCH", (res) => {
        res.writeHead(200, { "content-length": String(BIG.length) });
        res.write(BIG.subarray(0, 5 * 1024 * 1024), () => res.socket?.destroy());
      }],
      ["OCI_DIGEST_MISMATCH", (res) => blobAnswer(res, Buffer.alloc(BIG.length, 1), { "docker-content-digest": BIG_DESC.digest })],
      ["OCI_SIZE_MISMATCH", (res) => blobAnswer(res, BIG.subarray(1), { "docker-content-digest": BIG_DESC.digest })],
      ["OCI_DIGEST_MISMATCH", (res) => blobAnswer(res, BIG, { "docker-content-digest": sha(Buffer.from("other")) })],
    ];
    for (const [code, answer] of cases) {
      const s = await fake((_req, res) => answer(res));
      expect(await outcome(counted(s.host).target, BIG_DESC), code).toEqual({ code, files: [] });
    }
  });

  it("a body that stalls is OCI_TIMEOUT, nothing left behind", async () => {
    const s = await fake((_req, res) => {
      res.writeHead(200, { "content-length": String(BIG.length) });
      res.write(BIG.subarray(0, 1024));
    });
    expect(await outcome(counted(s.host).target, BIG_DESC)).toEqual({ code: "OCI_TIMEOUT", files: [] });
  });
});

describe("other answers go to the general client, nothing written by the fast path", () => {
  it("a chunked body, and one delimited by the connection's end", async () => {
    for (const mode of ["chunked", "close"]) {
      const s = await fake((req, res) => {
        if (mode === "chunked") {
          res.writeHead(200, { "transfer-encoding": "chunked" });
          return void res.end(BIG);
        }
        req.socket.write("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n");
        req.socket.end(BIG);
      });
      const { target, general } = counted(s.host);
      const result = await outcome(target, BIG_DESC);
      expect(result.code).toBe("OK");
      expect(result.bytes?.equals(BIG)).toBe(true);
      expect(general()).toBe(1);
    }
  });

  it("a 401 is answered by the general client (Basic), later blobs take the fast path with the credentials", async () => {
    const expected = "Basic " + Buffer.from("u:p").toString("base64");
    const s = await fake((req, res) => {
      if (req.headers.authorization !== expected) return void res.writeHead(401, { "www-authenticate": 'Basic realm="r"', "content-length": "0" }).end();
      blobAnswer(res, BIG);
    });
    const { target, general } = counted(s.host, { credentials: { username: "u", password: "p" } });
    expect((await outcome(target, BIG_DESC)).code).toBe("OK");
    expect(general()).toBe(1);
    expect((await outcome(target, BIG_DESC)).code).toBe("OK");
    expect(general()).toBe(1);
  });

  it("a redirect to another origin is followed without Authorization; a downgrade off loopback is refused", async () => {
    const cdn = await fake((_req, res) => blobAnswer(res, BIG));
    const expected = "Basic " + Buffer.from("u:p").toString("base64");
    const s = await fake((req, res) => {
      if (req.headers.authorization !== expected) return void res.writeHead(401, { "www-authenticate": 'Basic realm="r"', "content-length": "0" }).end();
      res.writeHead(307, { location: `${cdn.url}/blob?sig=1`, "content-length": "0" }).end();
    });
    const { target } = counted(s.host, { credentials: { username: "u", password: "p" } });
    expect((await outcome(target, BIG_DESC)).code).toBe("OK");
    expect((await outcome(target, BIG_DESC)).code).toBe("OK");
    expect(cdn.requests.length).toBeGreaterThanOrEqual(2);
    expect(cdn.requests.some((r) => r.headers.authorization !== undefined || r.headers.cookie !== undefined)).toBe(false);
    const off = await fake((_req, res) => void res.writeHead(302, { location: "http://cdn.example/blob", "content-length": "0" }).end());
    expect((await outcome(counted(off.host).target, BIG_DESC)).code).toBe("OCI_REDIRECT_REFUSED");
  });
});

describe("over TLS", () => {
  it("the fast path verifies the registry's certificate against the configured CA", async () => {
    const key = path.join(scope.work, "key.pem");
    const cert = path.join(scope.work, "cert.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert], { stdio: "ignore" });
    const pem = await readFile(cert, "utf8");
    const server = https.createServer({ key: await readFile(key), cert: pem }, (_req, res) => blobAnswer(res, BIG));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    scope.track({ close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) });
    const port = (server.address() as { port: number }).port;
    const trusting = new RegistryTarget({ registry: `127.0.0.1:${port}`, repository: "acme/kit", ca: pem, retry: { maxAttempts: 1 } });
    let general = 0;
    const original = trusting.fetch.bind(trusting);
    trusting.fetch = (d) => {
      general += 1;
      return original(d);
    };
    const ok = await outcome(trusting, BIG_DESC);
    expect(ok.code).toBe("OK");
    expect(ok.bytes?.equals(BIG)).toBe(true);
    expect(general).toBe(0);
    const untrusting = new RegistryTarget({ registry: `127.0.0.1:${port}`, repository: "acme/kit", retry: { maxAttempts: 1 } });
    expect(await outcome(untrusting, BIG_DESC)).toEqual({ code: "OCI_TLS_FAILED", files: [] });
  });
});

describe("response heads", () => {
  it("parses a plain head, keeps repeated fields, and refuses malformed ones", () => {
    expect(parseResponseHead("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\nx-a: 2")).toEqual({
      status: 200,
      headers: new Map([["content-length", ["5"]], ["x-a", ["1", "2"]]]),
    });
    expect(parseResponseHead("HTTP/1.1 200 OK\r\n folded")).toBeUndefined();
    expect(parseResponseHead("HTTP/2 200")).toBeUndefined();
    expect(parseResponseHead("garbage")).toBeUndefined();
  });
});
