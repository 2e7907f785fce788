/**
 * The blob upload fast path (src/oci/blob-file.ts; `copy` from a layout to a registry): positional
 * reads into reused buffers, verified before the bytes that end the blob leave. Against files on
 * disk and the loopback stand-in (test/support/registry-standin.ts), which counts the body bytes
 * that arrive; docker-registry and skopeo read what this path pushed in registry.test.ts and
 * skopeo-interop.test.ts.
 */
import { randomBytes } from "node:crypto";
import { appendFile, chmod, mkdir, mkdtemp, rm, symlink, truncate, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BlobFile, LayoutTarget, RegistryTarget, copy, descriptorOf, writeLayout, type Descriptor } from "../../src/oci/index.js";
import { startStandIn, type StandIn } from "../support/registry-standin.js";

const MiB = 1024 * 1024;
let work: string;
let closers: StandIn[] = [];

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "hpk-blob-file-"));
});
afterEach(async () => {
  await Promise.all(closers.map((c) => c.close()));
  closers = [];
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

let counter = 0;
/** A fresh file of `bytes` and its descriptor. */
async function blobFile(bytes: Buffer): Promise<{ file: string; desc: Descriptor }> {
  counter += 1;
  const file = path.join(work, `blob-${counter}.bin`);
  await writeFile(file, bytes);
  return { file, desc: descriptorOf("application/octet-stream", bytes) };
}

/** Read a body whole; `release` hands each chunk back after copying it. Returns the bytes and the distinct buffers seen. */
async function drain(body: ReturnType<BlobFile["body"]>, release: boolean): Promise<{ bytes: Buffer; buffers: number; chunks: number }> {
  const parts: Buffer[] = [];
  const memories = new Set<ArrayBufferLike>();
  for await (const chunk of body as AsyncIterable<Buffer>) {
    memories.add(chunk.buffer);
    parts.push(Buffer.from(chunk));
    if (release) body.releaseChunk(chunk);
  }
  return { bytes: Buffer.concat(parts), buffers: memories.size, chunks: parts.length };
}

/** Every chunk a body emits before it ends or fails, and its error. */
async function drainUntilError(body: ReturnType<BlobFile["body"]>): Promise<{ emitted: number; error: unknown }> {
  let emitted = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) emitted += chunk.length;
  } catch (error) {
    return { emitted, error };
  }
  return { emitted, error: undefined };
}

describe("BlobFile", () => {
  it("reads a blob through bodies in order, verified at the end", async () => {
    const bytes = randomBytes(3 * MiB + 17);
    const { file, desc } = await blobFile(bytes);
    const blob = await BlobFile.open(file, desc);
    try {
      const first = await drain(blob.body(0, MiB + 5), true);
      expect(blob.verified).toBe(false);
      const rest = await drain(blob.body(MiB + 5, desc.size - MiB - 5), true);
      expect(Buffer.concat([first.bytes, rest.bytes]).equals(bytes)).toBe(true);
      expect(blob.verified).toBe(true);
    } finally {
      await blob.close();
    }
  });

  it("reuses its buffers when the consumer releases each chunk; without release every chunk is fresh memory", async () => {
    const bytes = randomBytes(9 * MiB);
    const { file, desc } = await blobFile(bytes);
    const reused = await BlobFile.open(file, desc);
    const released = await drain(reused.body(0, desc.size), true);
    await reused.close();
    expect(released.bytes.equals(bytes)).toBe(true);
    // One buffer read into while the previous chunk waits in the stream: at most a few, never one per chunk.
    expect(released.chunks).toBeGreaterThanOrEqual(9);
    expect(released.buffers).toBeLessThanOrEqual(3);
    const fresh = await BlobFile.open(file, desc);
    const kept = await drain(fresh.body(0, desc.size), false);
    await fresh.close();
    expect(kept.bytes.equals(bytes)).toBe(true);
    expect(kept.buffers).toBe(kept.chunks);
  });

  it("a chunk released twice, or released again after its buffer was read into anew, does not free a buffer still held", async () => {
    const bytes = randomBytes(8 * MiB + 3);
    const { file, desc } = await blobFile(bytes);
    const blob = await BlobFile.open(file, desc);
    const body = blob.body(0, desc.size);
    const held: Array<{ chunk: Buffer; offset: number }> = [];
    let offset = 0;
    let intact = true;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      held.push({ chunk, offset });
      offset += chunk.length;
      // The chunk before this one is still held: its bytes must be unchanged before it is released.
      const previous = held.at(-2);
      if (previous !== undefined) {
        intact &&= previous.chunk.equals(bytes.subarray(previous.offset, previous.offset + previous.chunk.length));
        body.releaseChunk(previous.chunk);
        body.releaseChunk(previous.chunk);
      }
      // Stale releases of every chunk released earlier.
      for (const old of held.slice(0, -2)) body.releaseChunk(old.chunk);
    }
    await blob.close();
    expect(offset).toBe(desc.size);
    expect(intact).toBe(true);
    expect(blob.verified).toBe(true);
  });

  it("an empty blob is checked when it is opened: a wrong digest is OCI_DIGEST_MISMATCH", async () => {
    const { file, desc } = await blobFile(Buffer.alloc(0));
    const blob = await BlobFile.open(file, desc);
    expect(blob.verified).toBe(true);
    expect((await drain(blob.body(0, 0), true)).bytes.length).toBe(0);
    await blob.close();
    const other = descriptorOf("application/octet-stream", Buffer.from("x")).digest;
    await expect(BlobFile.open(file, { ...desc, digest: other })).toThrowWithCode("OCI_DIGEST_MISMATCH");
  });

  it("bytes that do not hash to the digest: OCI_DIGEST_MISMATCH before the chunk that ends the blob is emitted", async () => {
    const bytes = randomBytes(2 * MiB + 100);
    const { file, desc } = await blobFile(bytes);
    const tampered = Buffer.from(bytes);
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] as number) ^ 1;
    await writeFile(file, tampered);
    const blob = await BlobFile.open(file, desc);
    const { emitted, error } = await drainUntilError(blob.body(0, desc.size));
    await blob.close();
    expect(error).toHaveProperty("code", "OCI_DIGEST_MISMATCH");
    expect(emitted).toBe(2 * MiB);
    expect(blob.verified).toBe(false);
  });

  it("a file cut short after it was opened: OCI_SIZE_MISMATCH (truncated)", async () => {
    const bytes = randomBytes(2 * MiB);
    const { file, desc } = await blobFile(bytes);
    const blob = await BlobFile.open(file, desc);
    await truncate(file, MiB + 3);
    const { emitted, error } = await drainUntilError(blob.body(0, desc.size));
    await blob.close();
    expect(error).toHaveProperty("code", "OCI_SIZE_MISMATCH");
    expect(String((error as Error).message)).toMatch(/truncated/);
    expect(emitted).toBe(MiB + 3);
  });

  it("a file that grew after it was opened: OCI_SIZE_MISMATCH before its last chunk is emitted", async () => {
    const bytes = randomBytes(MiB + 10);
    const { file, desc } = await blobFile(bytes);
    const blob = await BlobFile.open(file, desc);
    await appendFile(file, "x");
    const { emitted, error } = await drainUntilError(blob.body(0, desc.size));
    await blob.close();
    expect(error).toHaveProperty("code", "OCI_SIZE_MISMATCH");
    expect(String((error as Error).message)).toMatch(/grew/);
    expect(emitted).toBe(MiB);
  });

  it("opens only a regular file of the descriptor's size, never through a symlink", async () => {
    const { file, desc } = await blobFile(randomBytes(1000));
    await expect(BlobFile.open(file, { ...desc, size: 999 })).toThrowWithCode("OCI_SIZE_MISMATCH");
    await expect(BlobFile.open(path.join(work, "absent.bin"), desc)).toThrowWithCode("OCI_NOT_FOUND");
    const dir = path.join(work, "a-directory");
    await mkdir(dir);
    await expect(BlobFile.open(dir, desc)).toThrowWithCode("OCI_SIZE_MISMATCH");
    const link = path.join(work, "link.bin");
    await symlink(file, link);
    await expect(BlobFile.open(link, desc)).toThrowWithCode("ELOOP");
    await expect(BlobFile.open(file, { ...desc, digest: "sha256:abc" })).toThrowWithCode("OCI_DESCRIPTOR_INVALID");
    // control: the file itself opens
    const blob = await BlobFile.open(file, desc);
    await blob.close();
  });

  it("bodies must follow each other within the blob (OCI_ARGUMENT_INVALID)", async () => {
    const { file, desc } = await blobFile(randomBytes(4096));
    const blob = await BlobFile.open(file, desc);
    try {
      expect(() => blob.body(1, 10)).toThrowWithCode("OCI_ARGUMENT_INVALID");
      expect(() => blob.body(0, desc.size + 1)).toThrowWithCode("OCI_ARGUMENT_INVALID");
      expect(() => blob.body(0, -1)).toThrowWithCode("OCI_ARGUMENT_INVALID");
      await drain(blob.body(0, 100), true);
      expect(() => blob.body(0, 100)).toThrowWithCode("OCI_ARGUMENT_INVALID");
      expect((await drain(blob.body(100, desc.size - 100), true)).bytes.length).toBe(desc.size - 100);
    } finally {
      await blob.close();
    }
  });
});

describe("copy from a layout to a registry (the upload fast path)", () => {
  async function standIn(): Promise<StandIn> {
    const s = await startStandIn({});
    closers.push(s);
    return s;
  }
  const target = (s: StandIn, chunkSize?: number): RegistryTarget =>
    new RegistryTarget({ registry: s.host, repository: "acme/kit", plainHttp: true, retry: { maxAttempts: 2, baseDelayMs: 5 }, ...(chunkSize === undefined ? {} : { chunkSize }) });

  /** A layout of one 3 MiB layer whose blob file is then changed in its last byte (same size). */
  async function tamperedLayout(): Promise<{ dir: string; manifest: Descriptor; layer: Descriptor }> {
    counter += 1;
    const input = path.join(work, `layer-${counter}.bin`);
    const bytes = randomBytes(3 * MiB);
    await writeFile(input, bytes);
    const dir = path.join(work, `layout-${counter}`);
    const { manifest } = await writeLayout(dir, "application/vnd.hermes-plugin-kit.release.v2", new Map([["dist/layer.bin", input]]));
    const layer = descriptorOf("application/octet-stream", bytes);
    const blobPath = (await LayoutTarget.open(dir)).blobPath(layer.digest);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1;
    await chmod(blobPath, 0o644);
    await writeFile(blobPath, bytes);
    return { dir, manifest, layer };
  }

  it("a layout blob changed on disk (one PUT): OCI_DIGEST_MISMATCH, its last bytes never sent, nothing stored or tagged", async () => {
    const { dir, manifest, layer } = await tamperedLayout();
    const s = await standIn();
    await expect(copy(await LayoutTarget.open(dir), target(s), manifest.digest, { tag: "v1", blobAttempts: 1 })).toThrowWithCode("OCI_DIGEST_MISMATCH");
    const puts = s.requests.filter((r) => r.method === "PUT" && r.contentLength === layer.size);
    expect(puts).toHaveLength(1);
    expect((puts[0] as (typeof puts)[0]).receivedBytes).toBeLessThan(layer.size);
    expect(s.blobs.has(layer.digest)).toBe(false);
    expect(s.tags.size).toBe(0);
  });

  it("the same in chunks of 1 MiB: OCI_DIGEST_MISMATCH, the upload never committed", async () => {
    const { dir, manifest, layer } = await tamperedLayout();
    const s = await standIn();
    await expect(copy(await LayoutTarget.open(dir), target(s, MiB), manifest.digest, { tag: "v1", blobAttempts: 1 })).toThrowWithCode("OCI_DIGEST_MISMATCH");
    const patches = s.requests.filter((r) => r.method === "PATCH");
    expect(patches.length).toBeGreaterThanOrEqual(3);
    expect((patches.at(-1) as (typeof patches)[0]).receivedBytes).toBeLessThan(MiB);
    expect(s.requests.some((r) => r.method === "PUT" && r.url.includes(encodeURIComponent(layer.digest)))).toBe(false);
    expect(s.blobs.has(layer.digest)).toBe(false);
    expect(s.tags.size).toBe(0);
  });

  it("control: an intact layout goes up in one PUT per blob and in chunks, byte for byte", async () => {
    counter += 1;
    const input = path.join(work, `intact-${counter}.bin`);
    const bytes = randomBytes(3 * MiB + 7);
    await writeFile(input, bytes);
    const dir = path.join(work, `intact-layout-${counter}`);
    const { manifest } = await writeLayout(dir, "application/vnd.hermes-plugin-kit.release.v2", new Map([["dist/layer.bin", input]]));
    const layer = descriptorOf("application/octet-stream", bytes);
    for (const chunkSize of [undefined, MiB]) {
      const s = await standIn();
      await copy(await LayoutTarget.open(dir), target(s, chunkSize), manifest.digest, { tag: "v1" });
      expect(s.blobs.get(layer.digest)?.equals(bytes)).toBe(true);
      expect(s.tags.get("v1")).toBe(manifest.digest);
      expect(s.requests.filter((r) => r.method === "PATCH")).toHaveLength(chunkSize === undefined ? 0 : 4);
    }
  });

  it("uploads the largest blobs first (a small config blob does not hold a slot the last large layer waits for)", async () => {
    counter += 1;
    const sizes = [MiB, 3 * MiB, 2 * MiB];
    const inputs = new Map<string, string>();
    for (const [i, size] of sizes.entries()) {
      const file = path.join(work, `order-${counter}-${i}.bin`);
      await writeFile(file, randomBytes(size));
      inputs.set(`dist/l${i}.bin`, file);
    }
    const dir = path.join(work, `order-layout-${counter}`);
    const { manifest } = await writeLayout(dir, "application/vnd.hermes-plugin-kit.release.v2", inputs);
    const s = await standIn();
    await copy(await LayoutTarget.open(dir), target(s), manifest.digest, { tag: null, concurrency: 1 });
    const bodies = s.requests.filter((r) => r.method === "PUT" && r.url.includes("/blobs/uploads/")).map((r) => r.contentLength);
    expect(bodies).toEqual([3 * MiB, 2 * MiB, MiB, 2]);
  });

  it("the request writer hands each chunk back once the socket took it: 9 MiB go up through a few reused buffers", async () => {
    const bytes = randomBytes(9 * MiB);
    const { file, desc } = await blobFile(bytes);
    for (const chunkSize of [undefined, 2 * MiB]) {
      const s = await standIn();
      const blob = await BlobFile.open(file, desc);
      try {
        await target(s, chunkSize).pushBlobFile(desc, blob);
      } finally {
        await blob.close();
      }
      expect(s.blobs.get(desc.digest)?.equals(bytes)).toBe(true);
      expect(blob.allocatedBuffers).toBeGreaterThan(0);
      expect(blob.allocatedBuffers).toBeLessThanOrEqual(4);
    }
  });

  it("RegistryTarget.pushBlobFile refuses a manifest, another blob's file, or no BlobFile, before any request", async () => {
    const s = await standIn();
    const t = target(s);
    const { file, desc } = await blobFile(randomBytes(5000));
    const other = await blobFile(randomBytes(5000));
    const blob = await BlobFile.open(file, desc);
    try {
      await expect(t.pushBlobFile({ ...desc, mediaType: "application/vnd.oci.image.manifest.v1+json" }, blob)).toThrowWithCode("OCI_ARGUMENT_INVALID");
      await expect(t.pushBlobFile(other.desc, blob)).toThrowWithCode("OCI_ARGUMENT_INVALID");
      await expect(t.pushBlobFile(desc, { descriptor: desc } as unknown as BlobFile)).toThrowWithCode("OCI_ARGUMENT_INVALID");
      expect(s.requests).toHaveLength(0);
      // control
      await t.pushBlobFile(desc, blob);
      expect(s.blobs.has(desc.digest)).toBe(true);
    } finally {
      await blob.close();
    }
  });
});
