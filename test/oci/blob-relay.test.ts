/**
 * The registry-to-registry relay (src/oci/blob-relay.ts; `copy` between two registries): the source's blob
 * body read into a few reused buffers and sent on to the destination, verified before the bytes that end the
 * blob leave. Against the loopback stand-in (test/support/registry-standin.ts, which counts the body bytes
 * that reach it) and a raw TCP source for the answers an HTTP server library will not send (a body cut
 * short, bytes past Content-Length); docker-registry to docker-registry in registry.test.ts's copy tests and
 * `npm run bench:oci-copy`.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BlobRelay, LayoutTarget, RegistryTarget, copy, descriptorOf, writeLayout, type Descriptor } from "../../src/oci/index.js";
import { describeRegistry, startRegistry } from "../support/registry.js";
import { startStandIn, type StandIn, type StandInOptions } from "../support/registry-standin.js";

const MiB = 1024 * 1024;
let work: string;
let layoutDir: string;
let manifest: Descriptor;
let big: Buffer;
let bigDesc: Descriptor;
let closers: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "hpk-blob-relay-"));
  big = randomBytes(9 * MiB + 123);
  bigDesc = descriptorOf("application/octet-stream", big);
  await writeFile(path.join(work, "big.bin"), big);
  await writeFile(path.join(work, "small.bin"), "small payload");
  layoutDir = path.join(work, "layout");
  const files = new Map([["dist/big.bin", path.join(work, "big.bin")], ["dist/small.bin", path.join(work, "small.bin")]]);
  manifest = (await writeLayout(layoutDir, "application/vnd.hermes-plugin-kit.release.v2", files)).manifest;
});
afterEach(async () => {
  await Promise.all(closers.map((c) => c.close()));
  closers = [];
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function standIn(options: StandInOptions = {}): Promise<StandIn> {
  const s = await startStandIn(options);
  closers.push(s);
  return s;
}

function target(host: string, extra: Partial<ConstructorParameters<typeof RegistryTarget>[0]> = {}): RegistryTarget {
  return new RegistryTarget({ registry: host, repository: "acme/kit", plainHttp: true, retry: { maxAttempts: 2, baseDelayMs: 5 }, ...extra });
}

/** A source stand-in holding the layout's artifact. */
async function filledSource(options: StandInOptions = {}): Promise<StandIn> {
  const s = await standIn(options);
  await copy(await LayoutTarget.open(layoutDir), target(s.host), manifest.digest, { tag: "v1" });
  return s;
}

/** The relays `t` opens (to look at their buffers). */
function recordRelays(t: RegistryTarget): BlobRelay[] {
  const opened: BlobRelay[] = [];
  const open = t.openBlobRelay.bind(t);
  t.openBlobRelay = async (desc) => {
    const relay = await open(desc);
    if (relay !== undefined) opened.push(relay);
    return relay;
  };
  return opened;
}

/** Body bytes that reached `s` in upload requests (POST/PATCH/PUT to blobs/uploads). */
function uploadedBytes(s: StandIn): number {
  return s.requests.filter((r) => r.url.includes("/blobs/uploads/")).reduce((n, r) => n + r.receivedBytes, 0);
}

/**
 * A raw HTTP/1.1 source answering every blob GET with `head` and `body` in one write, then closing; the
 * bytes past Content-Length and a body cut short are what an HTTP server library refuses to send.
 */
async function rawSource(answer: () => { head: string; body: Buffer }): Promise<{ host: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.once("data", () => {
      const { head, body } = answer();
      socket.end(Buffer.concat([Buffer.from(head, "latin1"), body]));
    });
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  const out = {
    host: `127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  closers.push(out);
  return out;
}

describe("copy between two registries", () => {
  it("relays every blob through at most 4 reused 512 KiB buffers; the destination has the artifact, tagged", async () => {
    const src = await filledSource();
    const dst = await standIn();
    const from = target(src.host);
    const relays = recordRelays(from);
    const progress: number[] = [];
    await copy(from, target(dst.host), "v1", { onProgress: (bytes) => progress.push(bytes) });
    expect(dst.tags.get("v1")).toBe(manifest.digest);
    expect(dst.blobs.get(bigDesc.digest)?.equals(big)).toBe(true);
    expect(relays.length).toBe(3);
    expect(relays.every((r) => r.verified)).toBe(true);
    // 9 MiB through reused buffers: no buffer per read (a read stream would take ~150 of 64 KiB).
    expect(Math.max(...relays.map((r) => r.allocatedBuffers))).toBeLessThanOrEqual(4);
    expect(progress.at(-1)).toBe(big.length + 13 + 2);
    // Each blob was read once from the source (no second, streamed GET).
    expect(src.requests.filter((r) => r.method === "GET" && r.url.includes(`/blobs/${bigDesc.digest}`)).length).toBe(1);
  });

  it("in PATCH chunks within the destination's cap, and through a blob redirect of the source", async () => {
    const src = await filledSource({ secondHost: "127.0.0.2", redirectBlobsToSecond: true });
    const dst = await standIn({ maxBodyBytes: 2 * MiB });
    const from = target(src.host);
    const relays = recordRelays(from);
    await copy(from, target(dst.host, { chunkSize: 2 * MiB }), "v1");
    expect(dst.blobs.get(bigDesc.digest)?.equals(big)).toBe(true);
    expect(relays.length).toBe(3);
    expect(dst.requests.filter((r) => r.method === "PATCH").length).toBeGreaterThanOrEqual(5);
    expect(src.requests.some((r) => r.listener === "127.0.0.2" && r.url.includes(bigDesc.digest))).toBe(true);
  });
});

describeRegistry("copy between two docker-registry instances", () => {
  it("relays every blob (basic auth on the source) and the destination serves the artifact byte for byte", async () => {
    const source = await startRegistry({ auth: "basic" });
    const destination = await startRegistry();
    closers.push({ close: () => source.stop() }, { close: () => destination.stop() });
    const credentials = { username: source.username as string, password: source.password as string };
    const from = target(source.host, { credentials });
    await copy(await LayoutTarget.open(layoutDir), from, manifest.digest, { tag: "v1" });
    const relays = recordRelays(from);
    const to = target(destination.host);
    await copy(from, to, "v1");
    // The first blob's GET meets the 401 and goes through the general client (which authenticates); the others are relayed.
    expect(relays.length).toBeGreaterThanOrEqual(2);
    expect(relays.every((r) => r.verified)).toBe(true);
    const chunks: Buffer[] = [];
    for await (const chunk of await target(destination.host).fetch(bigDesc)) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(big)).toBe(true);
    expect((await target(destination.host).resolve("v1")).digest).toBe(manifest.digest);
  });
});

describe("a lying source: the destination never receives the blob's last bytes", () => {
  it("other bytes of the right length -> OCI_DIGEST_MISMATCH, the destination stores nothing and got fewer than size bytes", async () => {
    const src = await filledSource();
    src.blobs.set(bigDesc.digest, Buffer.from(big).fill(7, big.length - 10));
    const dst = await standIn();
    await expect(copy(target(src.host), target(dst.host), "v1")).toThrowWithCode("OCI_DIGEST_MISMATCH");
    expect(dst.blobs.has(bigDesc.digest)).toBe(false);
    expect(dst.tags.size).toBe(0);
    const sent = uploadedBytes(dst);
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(big.length);
  });

  it("a body cut short -> OCI_SIZE_MISMATCH; fewer than size bytes reach the destination, nothing stored", async () => {
    const body = big.subarray(0, 3 * MiB);
    const src = await rawSource(() => ({ head: `HTTP/1.1 200 OK\r\nContent-Length: ${bigDesc.size}\r\n\r\n`, body }));
    const dst = await standIn();
    const relay = await target(src.host).openBlobRelay(bigDesc);
    expect(relay).toBeInstanceOf(BlobRelay);
    await expect(target(dst.host).pushBlobFile(bigDesc, relay as BlobRelay)).toThrowWithCode("OCI_SIZE_MISMATCH");
    (relay as BlobRelay).close();
    expect(dst.blobs.size).toBe(0);
    expect(uploadedBytes(dst)).toBeLessThanOrEqual(body.length);
  });

  it("bytes past Content-Length in the read that completes the blob -> OCI_SIZE_MISMATCH, the last bytes never sent", async () => {
    const small = randomBytes(40 * 1024);
    const desc = descriptorOf("application/octet-stream", small);
    const src = await rawSource(() => ({ head: `HTTP/1.1 200 OK\r\nContent-Length: ${small.length}\r\n\r\n`, body: Buffer.concat([small, Buffer.from("extra bytes")]) }));
    const dst = await standIn();
    const relay = await target(src.host).openBlobRelay(desc);
    await expect(target(dst.host).pushBlobFile(desc, relay as BlobRelay)).toThrowWithCode("OCI_SIZE_MISMATCH");
    (relay as BlobRelay).close();
    expect(dst.blobs.size).toBe(0);
    expect(uploadedBytes(dst)).toBe(0);
  });

  it("the honest raw source (control): the same blob, exact length, is relayed and stored", async () => {
    const small = randomBytes(40 * 1024);
    const desc = descriptorOf("application/octet-stream", small);
    const src = await rawSource(() => ({ head: `HTTP/1.1 200 OK\r\nContent-Length: ${small.length}\r\n\r\n`, body: small }));
    const dst = await standIn();
    const relay = await target(src.host).openBlobRelay(desc);
    await target(dst.host).pushBlobFile(desc, relay as BlobRelay);
    (relay as BlobRelay).close();
    expect(dst.blobs.get(desc.digest)?.equals(small)).toBe(true);
  });

  it("a Content-Length other than the size -> OCI_SIZE_MISMATCH before anything is sent", async () => {
    const src = await rawSource(() => ({ head: `HTTP/1.1 200 OK\r\nContent-Length: ${bigDesc.size + 1}\r\n\r\n`, body: Buffer.alloc(0) }));
    await expect(target(src.host).openBlobRelay(bigDesc)).toThrowWithCode("OCI_SIZE_MISMATCH");
  });

  it("a chunked answer is not relayed (undefined, nothing read): copy streams it through the general client", async () => {
    const src = await rawSource(() => ({ head: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", body: Buffer.from("0\r\n\r\n") }));
    expect(await target(src.host).openBlobRelay(bigDesc)).toBeUndefined();
  });
});
