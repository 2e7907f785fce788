/**
 * `copy(src, dst, reference, { signal })` (src/oci/transfer.ts, docs/oci.md "Stopping a copy"): an abort stops
 * the copy on every path (the layout-to-registry upload fast path, the registry-to-registry relay, the
 * registry-to-layout download) before, during and between blobs and before the manifest and tag writes. Each
 * case asserts InterruptedError `INTERRUPTED`, no tag, nothing half-written (no blob the destination did not
 * get whole, no temp file, `index.json` unchanged), no file left open and no connection left working: the
 * loopback stand-in (test/support/registry-standin.ts) counts the requests it is still answering and its open
 * connections; against docker-registry the process's own descriptors are counted (/proc/self/fd).
 */
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { InterruptedError } from "../../src/contract/errors.js";
import { LayoutTarget, RegistryTarget, copy, descriptorOf, isManifestMediaType, writeLayout, type Descriptor, type Target } from "../../src/oci/index.js";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";
import { startStandIn, type StandIn } from "../support/registry-standin.js";

const MiB = 1024 * 1024;
let work: string;
let layoutDir: string;
let manifest: Descriptor;
let bigA: Descriptor;
let bigB: Descriptor;
let small: Descriptor;
let closers: Array<{ close(): Promise<void> }> = [];
let targets: RegistryTarget[] = [];
/** The empty config blob `{}` every artifact manifest names. */
const config = descriptorOf("application/vnd.oci.empty.v1+json", Buffer.from("{}"));

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "hpk-copy-abort-"));
  const a = randomBytes(8 * MiB + 17);
  const b = randomBytes(6 * MiB + 5);
  bigA = descriptorOf("application/octet-stream", a);
  bigB = descriptorOf("application/octet-stream", b);
  small = descriptorOf("application/octet-stream", Buffer.from("small payload"));
  await writeFile(path.join(work, "a.bin"), a);
  await writeFile(path.join(work, "b.bin"), b);
  await writeFile(path.join(work, "small.bin"), "small payload");
  layoutDir = path.join(work, "layout");
  const files = new Map([
    ["dist/a.bin", path.join(work, "a.bin")],
    ["dist/b.bin", path.join(work, "b.bin")],
    ["dist/small.bin", path.join(work, "small.bin")],
  ]);
  manifest = (await writeLayout(layoutDir, "application/vnd.hermes-plugin-kit.release.v2", files)).manifest;
});
afterEach(async () => {
  await closeTargets();
  await Promise.all(closers.map((c) => c.close()));
  closers = [];
});

/** Close the registry targets made so far (their pooled connections). */
async function closeTargets(): Promise<void> {
  for (const t of targets.splice(0)) await t.close();
}
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function standIn(): Promise<StandIn> {
  const s = await startStandIn();
  closers.push(s);
  return s;
}

function target(host: string, extra: Partial<ConstructorParameters<typeof RegistryTarget>[0]> = {}): RegistryTarget {
  const t = new RegistryTarget({ registry: host, repository: "acme/kit", plainHttp: true, retry: { maxAttempts: 2, baseDelayMs: 5 }, ...extra });
  targets.push(t);
  return t;
}

/** A stand-in holding the layout's artifact at tag `v0`. */
async function filledStandIn(): Promise<StandIn> {
  const s = await standIn();
  await copy(await LayoutTarget.open(layoutDir), target(s.host), manifest.digest, { tag: "v0" });
  return s;
}

/** A new empty layout store. */
async function emptyStore(): Promise<{ dir: string; store: LayoutTarget }> {
  const dir = await mkdtemp(path.join(work, "store-"));
  return { dir, store: await LayoutTarget.open(path.join(dir, "s"), { create: true }) };
}

/** Every file under `dir` (relative paths, sorted), and `index.json`'s bytes when there is one. */
async function snapshot(dir: string): Promise<{ files: string[]; index: string | null }> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => !e.isDirectory()).map((e) => path.relative(dir, path.join(e.parentPath, e.name))).sort();
  const index = await readFile(path.join(dir, "index.json"), "utf8").catch(() => null);
  return { files, index };
}

/**
 * A store after an abort next to its snapshot `before`: `index.json` unchanged, no other new file (no `ingest/`
 * leftover, temp file or lock), every new file under `blobs/` a whole blob whose bytes hash to its name (one that
 * went through before the abort), and neither large layer there.
 */
async function expectNothingHalfWritten(storeDir: string, before: { files: string[]; index: string | null }): Promise<void> {
  const now = await snapshot(storeDir);
  expect(now.index).toBe(before.index);
  expect(now.files.filter((f) => !f.startsWith("blobs/") && !before.files.includes(f))).toEqual([]);
  for (const file of now.files.filter((f) => f.startsWith("blobs/") && !before.files.includes(f))) {
    expect(`sha256:${createHash("sha256").update(await readFile(path.join(storeDir, file))).digest("hex")}`).toBe(`sha256:${path.basename(file)}`);
  }
  expect(now.files).not.toContain(path.join("blobs", "sha256", bigA.digest.slice(7)));
  expect(now.files).not.toContain(path.join("blobs", "sha256", bigB.digest.slice(7)));
}

/** Paths of this process's open file descriptors that lie under `dir`. */
function openFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const to = readlinkSync(`/proc/self/fd/${fd}`);
      if (to.startsWith(dir)) out.push(to);
    } catch {
      // closed while listed
    }
  }
  return out;
}

/** Sockets this process holds open. */
function openSockets(): number {
  let n = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith("socket:")) n += 1;
    } catch {
      // closed while listed
    }
  }
  return n;
}

/** Wait until `check()` holds (polled; the other side of a closed connection learns of it a moment later). */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`still not true after 10 s: ${what}`);
}

/**
 * An onProgress that aborts `controller` once 5 MiB went through: mid-blob and mid-upload. Only the two large
 * layers (8 and 6 MiB) bring that many bytes, so neither is through; one of them has 2.5 MiB or more, more
 * than a relay or a blob file reads ahead of its upload (4 buffers of 512 KiB), so its upload is under way.
 */
function abortMidBlob(controller: AbortController): (bytes: number, total: number) => void {
  return (bytes) => {
    if (bytes >= 5 * MiB && !controller.signal.aborted) controller.abort();
  };
}

/** Run `after(desc)` once each call of `t[method]` resolved (a hook on a real target, as blob-relay.test.ts does). */
function after<K extends "push" | "pushBlobFile">(t: Target, method: K, hook: (desc: Descriptor) => void): void {
  const real = (t[method] as (...args: unknown[]) => Promise<void>).bind(t);
  (t as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    await real(...args);
    hook(args[0] as Descriptor);
  };
}

const blobRequests = (s: StandIn, digest: string) => s.requests.filter((r) => r.url.includes(digest));
/** The blob upload PUTs that got some of their bytes but not all (cut off by the abort). */
const cutOffUploads = (s: StandIn) =>
  s.requests.filter((r) => r.method === "PUT" && r.url.includes("/blobs/uploads/") && r.contentLength !== undefined && r.receivedBytes > 0 && r.receivedBytes < r.contentLength);
const manifestWrites = (s: StandIn) => s.requests.filter((r) => r.method === "PUT" && r.url.includes("/manifests/"));

describe("copy(..., { signal }): the option", () => {
  it("a signal that is not an AbortSignal -> OCI_ARGUMENT_INVALID before any request", async () => {
    const dst = await standIn();
    const bad = { aborted: "no" } as unknown as AbortSignal;
    const error = await copy(await LayoutTarget.open(layoutDir), target(dst.host), manifest.digest, { signal: bad }).catch((e: unknown) => e);
    expect(error).toThrowWithCode("OCI_ARGUMENT_INVALID");
    expect((error as Error).message).toMatch(/options\.signal must be an AbortSignal/);
    expect(dst.requests).toEqual([]);
  });

  it("a signal that never aborts: the copy completes and tags", async () => {
    const dst = await standIn();
    await copy(await LayoutTarget.open(layoutDir), target(dst.host), manifest.digest, { tag: "v1", signal: new AbortController().signal });
    expect(dst.tags.get("v1")).toBe(manifest.digest);
  });

  it("an already-aborted signal -> INTERRUPTED (the abort's own reason) before any request, registry to registry", async () => {
    const src = await filledStandIn();
    const dst = await standIn();
    const seenBefore = src.requests.length;
    const controller = new AbortController();
    const reason = new InterruptedError("SIGINT");
    controller.abort(reason);
    const error = await copy(target(src.host), target(dst.host), "v0", { signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    expect(error).toBe(reason);
    expect(src.requests.length).toBe(seenBefore);
    expect(dst.requests).toEqual([]);
  });

  it("an already-aborted signal -> INTERRUPTED, layout to layout: the store is untouched", async () => {
    const { dir } = await emptyStore();
    const before = await snapshot(path.join(dir, "s"));
    const controller = new AbortController();
    controller.abort();
    await expect(copy(await LayoutTarget.open(layoutDir), await LayoutTarget.open(path.join(dir, "s")), manifest.digest, { tag: "v1", signal: controller.signal })).rejects.toThrowWithCode("INTERRUPTED");
    expect(await snapshot(path.join(dir, "s"))).toEqual(before);
  });
});

describe("copy(..., { signal }): an abort mid-blob, against the stand-in", () => {
  it("layout -> registry (the upload fast path): the uploads are cut off, no blob stored whole, no manifest, no tag, no file left open", async () => {
    const dst = await standIn();
    const controller = new AbortController();
    const error = await copy(await LayoutTarget.open(layoutDir), target(dst.host), manifest.digest, { tag: "v1", signal: controller.signal, onProgress: abortMidBlob(controller) }).catch((e: unknown) => e);
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    // The blob files are closed before the promise settles.
    expect(openFilesUnder(layoutDir)).toEqual([]);
    expect(dst.blobs.has(bigA.digest)).toBe(false);
    expect(dst.blobs.has(bigB.digest)).toBe(false);
    expect(dst.tags.size).toBe(0);
    expect(manifestWrites(dst)).toEqual([]);
    // Cut off mid-upload: a large layer's PUT got some of its bytes, not all.
    await eventually(() => cutOffUploads(dst).length > 0, "an upload was cut off mid-body");
    await eventually(() => dst.activeRequests() === 0, "the stand-in answers no request (the uploads were destroyed)");
  });

  it("registry -> registry (the relay): the source's GET and the upload are closed, nothing stored, no tag", async () => {
    const src = await filledStandIn();
    const dst = await standIn();
    const controller = new AbortController();
    const error = await copy(target(src.host), target(dst.host), "v0", { tag: "v1", signal: controller.signal, onProgress: abortMidBlob(controller) }).catch((e: unknown) => e);
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    expect(dst.blobs.has(bigA.digest)).toBe(false);
    expect(dst.blobs.has(bigB.digest)).toBe(false);
    expect(dst.tags.size).toBe(0);
    expect(manifestWrites(dst)).toEqual([]);
    await eventually(() => cutOffUploads(dst).length > 0, "a relayed upload was cut off mid-body");
    // The relays' own connections (no pool) are closed: the source sends nothing more.
    await eventually(() => src.activeRequests() === 0, "the source answers no request (the relays' GETs were closed)");
    await eventually(() => dst.activeRequests() === 0, "the destination answers no request");
    await closeTargets();
    await eventually(() => src.openConnections() === 0 && dst.openConnections() === 0, "no connection left open once the targets closed their pools");
  });

  it("registry -> layout: the partial writes are removed (no half blob under blobs/), index.json unchanged, no file left open", async () => {
    const src = await filledStandIn();
    const { dir } = await emptyStore();
    const storeDir = path.join(dir, "s");
    const before = await snapshot(storeDir);
    const controller = new AbortController();
    const error = await copy(target(src.host), await LayoutTarget.open(storeDir), "v0", { tag: "v1", signal: controller.signal, onProgress: abortMidBlob(controller) }).catch((e: unknown) => e);
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    expect(openFilesUnder(dir)).toEqual([]);
    await expectNothingHalfWritten(storeDir, before);
    expect(await (await LayoutTarget.open(storeDir)).tags()).toEqual([]);
    await eventually(() => src.activeRequests() === 0, "the source answers no request (the downloads were destroyed)");
  });
});

describe("copy(..., { signal }): an abort between steps, against the stand-in", () => {
  it("between blobs: the blob in hand is finished, no request for the next one starts, no manifest, no tag", async () => {
    const dst = await standIn();
    const controller = new AbortController();
    const to = target(dst.host);
    after(to, "pushBlobFile", () => controller.abort());
    const error = await copy(await LayoutTarget.open(layoutDir), to, manifest.digest, { tag: "v1", concurrency: 1, signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    // Largest first: a.bin went up whole; nothing was asked about b.bin, small.bin or the config blob.
    expect(dst.blobs.has(bigA.digest)).toBe(true);
    expect(blobRequests(dst, bigB.digest)).toEqual([]);
    expect(blobRequests(dst, small.digest)).toEqual([]);
    expect(blobRequests(dst, config.digest)).toEqual([]);
    expect(dst.requests.filter((r) => r.method === "POST").length).toBe(1);
    expect(manifestWrites(dst)).toEqual([]);
    expect(dst.tags.size).toBe(0);
    expect(openFilesUnder(layoutDir)).toEqual([]);
  });

  it("before the manifest write (registry; one PUT by tag): every blob is there, no manifest request, no tag", async () => {
    const dst = await standIn();
    const controller = new AbortController();
    const to = target(dst.host);
    let pushed = 0;
    after(to, "pushBlobFile", () => {
      pushed += 1;
      if (pushed === 4) controller.abort();
    });
    const error = await copy(await LayoutTarget.open(layoutDir), to, manifest.digest, { tag: "v1", concurrency: 1, signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    expect(pushed).toBe(4);
    expect(dst.requests.filter((r) => r.url.includes("/manifests/"))).toEqual([]);
    expect(dst.tags.size).toBe(0);
  });

  it("before the tag write (layout; manifest then tag): the manifest blob is stored, index.json unchanged, no lock or temp file", async () => {
    const src = await filledStandIn();
    const { dir } = await emptyStore();
    const storeDir = path.join(dir, "s");
    const before = await snapshot(storeDir);
    const store = await LayoutTarget.open(storeDir);
    const controller = new AbortController();
    after(store, "push", (desc) => {
      if (isManifestMediaType(desc.mediaType)) controller.abort();
    });
    const error = await copy(target(src.host), store, "v0", { tag: "v1", signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    const now = await snapshot(storeDir);
    expect(now.index).toBe(before.index);
    expect(now.files).toContain(path.join("blobs", "sha256", manifest.digest.slice(7)));
    expect(now.files.filter((f) => !f.startsWith("blobs/") && !before.files.includes(f))).toEqual([]);
    expect(await store.tags()).toEqual([]);
  });
});

describeRegistry("copy(..., { signal }) against docker-registry", () => {
  let registryA: RunningRegistry;
  let registryB: RunningRegistry;
  beforeAll(async () => {
    [registryA, registryB] = await Promise.all([startRegistry(), startRegistry()]);
  });
  afterAll(async () => {
    await Promise.all([registryA?.stop(), registryB?.stop()]);
  });

  /** The tags of `t`'s repository (none when the repository does not exist). */
  async function tagsOf(t: RegistryTarget): Promise<string[]> {
    return t.tags().catch(() => []);
  }

  it("layout -> registry mid-blob: INTERRUPTED, no blob, no tag, no file or socket left open", async () => {
    const sockets = openSockets();
    const repository = `abort/upload-${randomBytes(3).toString("hex")}`;
    const to = target(registryA.host, { repository });
    const controller = new AbortController();
    const error = await copy(await LayoutTarget.open(layoutDir), to, manifest.digest, { tag: "v1", signal: controller.signal, onProgress: abortMidBlob(controller) }).catch((e: unknown) => e);
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    expect(openFilesUnder(layoutDir)).toEqual([]);
    const check = target(registryA.host, { repository });
    expect(await check.exists(bigA)).toBe(false);
    expect(await check.exists(bigB)).toBe(false);
    expect(await tagsOf(check)).toEqual([]);
    await closeTargets();
    await eventually(() => openSockets() <= sockets, `no socket left open (had ${sockets} before the copy)`);
  });

  it("registry -> registry (the relay) mid-blob: INTERRUPTED, nothing stored at the destination, no tag, no socket left open", async () => {
    const repository = `abort/relay-${randomBytes(3).toString("hex")}`;
    await copy(await LayoutTarget.open(layoutDir), target(registryA.host, { repository }), manifest.digest, { tag: "v0" });
    await closeTargets();
    const sockets = openSockets();
    const controller = new AbortController();
    const error = await copy(target(registryA.host, { repository }), target(registryB.host, { repository }), "v0", { tag: "v1", signal: controller.signal, onProgress: abortMidBlob(controller) }).catch((e: unknown) => e);
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    const check = target(registryB.host, { repository });
    expect(await check.exists(bigA)).toBe(false);
    expect(await check.exists(bigB)).toBe(false);
    expect(await tagsOf(check)).toEqual([]);
    await closeTargets();
    await eventually(() => openSockets() <= sockets, `no socket left open (had ${sockets} before the copy)`);
  });

  it("registry -> layout mid-blob: INTERRUPTED, no half blob, index.json unchanged, no tag, no file or socket left open", async () => {
    const repository = `abort/download-${randomBytes(3).toString("hex")}`;
    await copy(await LayoutTarget.open(layoutDir), target(registryA.host, { repository }), manifest.digest, { tag: "v0" });
    await closeTargets();
    const sockets = openSockets();
    const { dir } = await emptyStore();
    const storeDir = path.join(dir, "s");
    const before = await snapshot(storeDir);
    const controller = new AbortController();
    const error = await copy(target(registryA.host, { repository }), await LayoutTarget.open(storeDir), "v0", { tag: "v1", signal: controller.signal, onProgress: abortMidBlob(controller) }).catch((e: unknown) => e);
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    expect(openFilesUnder(dir)).toEqual([]);
    await expectNothingHalfWritten(storeDir, before);
    expect(await (await LayoutTarget.open(storeDir)).tags()).toEqual([]);
    await closeTargets();
    await eventually(() => openSockets() <= sockets, `no socket left open (had ${sockets} before the copy)`);
  });
});
