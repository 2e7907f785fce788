/**
 * Registries with a request-size cap, and pushes confirmed by `HEAD`.
 * The handed inputs: a registry answering 413/416 to any request body over
 * 4 MiB made a 9 MiB push fail (one PUT, no fallback); a registry that
 * answered 201 but stored 4 of 9 MiB made library `copy` report success.
 * Against the loopback stand-in (test/support/registry-standin.ts), for the
 * library (`RegistryTarget.push`, `copy`) and the CLI (`release stage
 * --chunk-size`); chunked uploads against docker-registry are in registry.test.ts.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LayoutTarget, RegistryTarget, copy, descriptorOf, tagIfAbsent, writeLayout, type Descriptor } from "../../src/oci/index.js";
import { runCli } from "../support/cli.js";
import { startStandIn, type StandIn, type StandInOptions } from "../support/registry-standin.js";
import { createReleaseFixture, type ReleaseFixture } from "../support/release-fixture.js";

const MiB = 1024 * 1024;
const CREDS = { username: "cap-user", password: "cap-secret-90d" };

let work: string;
let layoutDir: string;
let manifest: Descriptor;
let layer: Descriptor;
let bytes: Buffer;
let closers: StandIn[] = [];

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "hpk-upload-"));
  bytes = randomBytes(9 * MiB);
  await writeFile(path.join(work, "nine.bin"), bytes);
  layoutDir = path.join(work, "layout");
  manifest = (await writeLayout(layoutDir, "application/vnd.hermes-plugin-kit.release.v2", new Map([["dist/nine.bin", path.join(work, "nine.bin")]]))).manifest;
  layer = descriptorOf("application/octet-stream", bytes);
});
afterEach(async () => {
  await Promise.all(closers.map((c) => c.close()));
  closers = [];
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function standIn(options: StandInOptions): Promise<StandIn> {
  const s = await startStandIn(options);
  closers.push(s);
  return s;
}

function target(s: StandIn, extra: Partial<ConstructorParameters<typeof RegistryTarget>[0]> = {}): RegistryTarget {
  return new RegistryTarget({ registry: s.host, repository: "acme/kit", plainHttp: true, retry: { maxAttempts: 2, baseDelayMs: 5 }, ...extra });
}

describe("a registry refusing request bodies over 4 MiB", () => {
  for (const refuseStatus of [413, 416] as const) {
    it(`copy of a 9 MiB blob falls back to chunks within the cap (HTTP ${refuseStatus} before 100 Continue)`, async () => {
      const s = await standIn({ maxBodyBytes: 4 * MiB, refuseStatus });
      const desc = await copy(await LayoutTarget.open(layoutDir), target(s), manifest.digest, { tag: "v1" });
      expect(desc.digest).toBe(manifest.digest);
      expect(s.blobs.get(layer.digest)?.equals(bytes)).toBe(true);
      // 9 MiB refused -> chunks of 4 MiB (the largest power of two at most half of it).
      expect(s.requests.filter((r) => r.method === "PATCH").map((r) => r.contentLength)).toEqual([4 * MiB, 4 * MiB, 1 * MiB]);
      // One refused PUT, and its stream was never read: no second GET of the source blob was needed.
      expect(s.requests.filter((r) => r.method === "PUT" && (r.contentLength ?? 0) > 4 * MiB)).toHaveLength(1);
    });
  }

  it("refused after 100 Continue (the body already streamed): push says OCI_REQUEST_TOO_LARGE, a fresh push and copy succeed", async () => {
    const s = await standIn({ maxBodyBytes: 4 * MiB, refuseBeforeContinue: false });
    const t = target(s);
    await expect(t.push(layer, Readable.from([bytes]))).toThrowWithCode("OCI_REQUEST_TOO_LARGE");
    // The target learned the smaller maximum: the next push goes up in chunks.
    await t.push(layer, Readable.from([bytes]));
    expect(s.blobs.get(layer.digest)?.equals(bytes)).toBe(true);
    const s2 = await standIn({ maxBodyBytes: 4 * MiB, refuseBeforeContinue: false });
    await copy(await LayoutTarget.open(layoutDir), target(s2), manifest.digest, { tag: "v1" });
    expect(s2.blobs.get(layer.digest)?.equals(bytes)).toBe(true);
    expect(s2.tags.get("v1")).toBe(manifest.digest);
  });

  it("the configured maximum is never exceeded, and chunks honour OCI-Chunk-Min-Length", async () => {
    const s = await standIn({ chunkMinLength: 3 * MiB });
    await target(s, { chunkSize: 2 * MiB }).push(layer, Readable.from([bytes]));
    const patches = s.requests.filter((r) => r.method === "PATCH").map((r) => r.contentLength);
    expect(patches).toEqual([3 * MiB, 3 * MiB, 3 * MiB]);
    const s2 = await standIn({});
    await target(s2, { chunkSize: 2 * MiB }).push(layer, Readable.from([bytes]));
    expect(s2.requests.filter((r) => r.method === "PATCH").map((r) => r.contentLength)).toEqual([2 * MiB, 2 * MiB, 2 * MiB, 2 * MiB, 1 * MiB]);
    expect(s2.blobs.get(layer.digest)?.equals(bytes)).toBe(true);
  });

  it("a cap below the smallest allowed chunk fails with OCI_REQUEST_TOO_LARGE, naming the limit", async () => {
    const s = await standIn({ maxBodyBytes: 32 * 1024 });
    const error = (await copy(await LayoutTarget.open(layoutDir), target(s), manifest.digest, { tag: null }).catch((e: unknown) => e)) as { code: string; message: string };
    expect(error.code).toBe("OCI_REQUEST_TOO_LARGE");
    expect(error.message).toContain("no smaller chunk is allowed");
    expect(s.blobs.has(layer.digest)).toBe(false);
    // Each refused request was smaller than the one before it, down to the 64 KiB floor.
    const refused = s.requests.filter((r) => (r.contentLength ?? 0) > 32 * 1024).map((r) => r.contentLength ?? 0);
    expect(refused.at(-1)).toBe(64 * 1024);
  });

  it("a chunk size below 64 KiB is refused before any request (OCI_CHUNK_SIZE_INVALID)", async () => {
    const s = await standIn({});
    expect(() => target(s, { chunkSize: 1000 })).toThrow(expect.objectContaining({ code: "OCI_CHUNK_SIZE_INVALID" }));
    expect(s.requests).toHaveLength(0);
  });
});

describe("pushes are confirmed with HEAD", () => {
  it("the handed input: 201 but 4 of 9 MiB stored -> push and copy fail with OCI_SIZE_MISMATCH, nothing tagged", async () => {
    const s = await standIn({ storeOnly: 4 * MiB });
    await expect(target(s).push(layer, Readable.from([bytes]))).toThrowWithCode("OCI_SIZE_MISMATCH");
    const s2 = await standIn({ storeOnly: 4 * MiB });
    await expect(copy(await LayoutTarget.open(layoutDir), target(s2), manifest.digest, { tag: "v1" })).toThrowWithCode("OCI_SIZE_MISMATCH");
    expect(s2.tags.size).toBe(0);
  });

  it("a chunk acknowledged short (Range ends before the bytes sent) is OCI_SIZE_MISMATCH before the upload is committed", async () => {
    const s = await standIn({ acknowledgeShortBy: 1 });
    await expect(target(s, { chunkSize: 2 * MiB }).push(layer, Readable.from([bytes]))).toThrowWithCode("OCI_SIZE_MISMATCH");
    expect(s.requests.filter((r) => r.method === "PATCH")).toHaveLength(1);
    expect(s.requests.some((r) => r.method === "PUT")).toBe(false);
    expect(s.blobs.has(layer.digest)).toBe(false);
  });

  it("a registry that claims another digest for the stored blob fails with OCI_DIGEST_MISMATCH, nothing tagged", async () => {
    const other = descriptorOf("application/octet-stream", Buffer.from("other")).digest;
    const s = await standIn({ claimDigest: other });
    await expect(target(s).push(layer, Readable.from([bytes]))).toThrowWithCode("OCI_DIGEST_MISMATCH");
    const s2 = await standIn({ claimDigest: other });
    await expect(copy(await LayoutTarget.open(layoutDir), target(s2), manifest.digest, { tag: "v1" })).toThrowWithCode("OCI_DIGEST_MISMATCH");
    expect(s2.tags.size).toBe(0);
  });

  it("each blob is HEADed after its upload; the manifest is confirmed by its PUT's Docker-Content-Digest (control: all stored)", async () => {
    const s = await standIn({});
    await copy(await LayoutTarget.open(layoutDir), target(s), manifest.digest, { tag: null });
    const heads = s.requests.filter((r) => r.method === "HEAD").map((r) => r.url);
    const uploads = s.requests.filter((r) => r.method === "PUT").map((r) => r.url);
    const layerPut = uploads.findIndex((u) => u.includes(`digest=${encodeURIComponent(layer.digest)}`) || u.includes(`digest=${layer.digest}`));
    expect(layerPut).toBeGreaterThanOrEqual(0);
    expect(heads.filter((u) => u.endsWith(`/blobs/${layer.digest}`)).length).toBeGreaterThanOrEqual(2);
  });
});

/** The manifest requests the stand-in saw, as `METHOD reference`. */
function manifestRequests(s: StandIn): string[] {
  return s.requests.filter((r) => r.url.includes("/manifests/")).map((r) => `${r.method} ${r.url.slice(r.url.lastIndexOf("/") + 1)}`);
}

describe("manifest push requests (docs/oci.md, Registry client behaviour, Writes)", () => {
  it("copy with a tag: one PUT by tag, confirmed by the answer's Docker-Content-Digest; the manifest is served by digest too", async () => {
    const s = await standIn({});
    const t = target(s);
    await copy(await LayoutTarget.open(layoutDir), t, manifest.digest, { tag: "v1" });
    expect(manifestRequests(s)).toEqual(["PUT v1"]);
    expect(s.tags.get("v1")).toBe(manifest.digest);
    expect((await target(s).resolve(manifest.digest)).digest).toBe(manifest.digest);
  });

  it("copy without a tag: HEAD by digest (skip when present), PUT by digest; nothing more", async () => {
    const s = await standIn({});
    await copy(await LayoutTarget.open(layoutDir), target(s), manifest.digest, { tag: null });
    expect(manifestRequests(s)).toEqual([`HEAD ${manifest.digest}`, `PUT ${manifest.digest}`]);
  });

  it("a PUT answered without Docker-Content-Digest is confirmed by a HEAD of what was written", async () => {
    const s = await standIn({ manifestPutDigest: null });
    await copy(await LayoutTarget.open(layoutDir), target(s), manifest.digest, { tag: "v1" });
    expect(manifestRequests(s)).toEqual(["PUT v1", "HEAD v1"]);
    expect(s.tags.get("v1")).toBe(manifest.digest);
  });

  it("a PUT answered with another Docker-Content-Digest is OCI_DIGEST_MISMATCH (copy with and without a tag, tagIfAbsent)", async () => {
    const other = descriptorOf("application/octet-stream", Buffer.from("other")).digest;
    const s = await standIn({ manifestPutDigest: other });
    await expect(copy(await LayoutTarget.open(layoutDir), target(s), manifest.digest, { tag: "v1" })).toThrowWithCode("OCI_DIGEST_MISMATCH");
    const s2 = await standIn({ manifestPutDigest: other });
    await expect(copy(await LayoutTarget.open(layoutDir), target(s2), manifest.digest, { tag: null })).toThrowWithCode("OCI_DIGEST_MISMATCH");
    const s3 = await standIn({ manifestPutDigest: other });
    const t3 = target(s3);
    await copy(await LayoutTarget.open(layoutDir), t3, manifest.digest, { tag: null }).catch(() => undefined);
    await expect(tagIfAbsent(t3, manifest, "v1")).toThrowWithCode("OCI_DIGEST_MISMATCH");
  });

  it("tagIfAbsent: a HEAD of the tag, then one PUT by tag; the same digest already there: the HEAD alone", async () => {
    const s = await standIn({});
    const t = target(s);
    await copy(await LayoutTarget.open(layoutDir), t, manifest.digest, { tag: null });
    s.requests.length = 0;
    expect(await tagIfAbsent(t, manifest, "v1")).toBe("tagged");
    expect(manifestRequests(s)).toEqual(["HEAD v1", "PUT v1"]);
    expect(s.tags.get("v1")).toBe(manifest.digest);
    s.requests.length = 0;
    expect(await tagIfAbsent(t, manifest, "v1")).toBe("already-tagged");
    expect(manifestRequests(s)).toEqual(["HEAD v1"]);
  });

  it("tagIfAbsent: a tag naming another digest is OCI_TAG_CONFLICT and nothing is written (also when the HEAD names no digest)", async () => {
    for (const options of [{}, { manifestWithoutDigest: true }]) {
      const s = await standIn(options);
      const t = target(s);
      const otherDir = path.join(work, `other-${s.host.replace(/[^0-9]/g, "")}`);
      await writeFile(path.join(work, "other.bin"), "other release");
      const other = (await writeLayout(otherDir, "application/vnd.hermes-plugin-kit.release.v2", new Map([["dist/other.bin", path.join(work, "other.bin")]]))).manifest;
      await copy(await LayoutTarget.open(otherDir), t, other.digest, { tag: "v1" });
      await copy(await LayoutTarget.open(layoutDir), t, manifest.digest, { tag: null });
      s.requests.length = 0;
      await expect(tagIfAbsent(t, manifest, "v1")).toThrowWithCode("OCI_TAG_CONFLICT");
      expect(s.requests.filter((r) => r.method === "PUT")).toEqual([]);
      expect(s.tags.get("v1")).toBe(other.digest);
    }
  });
});

describe("copy progress", () => {
  it("reports cumulative bytes up to the total; blobs already there count as done", async () => {
    const s = await standIn({});
    const seen: Array<[number, number]> = [];
    await copy(await LayoutTarget.open(layoutDir), target(s), manifest.digest, { tag: null, onProgress: (bytes, total) => seen.push([bytes, total]) });
    const total = 9 * MiB + 2;
    expect(seen.at(-1)).toEqual([total, total]);
    expect(seen.every(([bytes], i) => i === 0 || bytes >= (seen[i - 1] as [number, number])[0])).toBe(true);
    expect(seen.length).toBeGreaterThan(3);
    const again: Array<[number, number]> = [];
    await copy(await LayoutTarget.open(layoutDir), target(s), manifest.digest, { tag: null, onProgress: (bytes, t) => again.push([bytes, t]) });
    expect(again.at(-1)).toEqual([total, total]);
  });
});

describe("a manifest refused with MANIFEST_BLOB_UNKNOWN", () => {
  it("is pushed again while its blobs answer HEAD (the storage race of a second writer), by digest and by tag", async () => {
    const s = await standIn({ manifestBlobUnknownTimes: 2 });
    await copy(await LayoutTarget.open(layoutDir), target(s), manifest.digest, { tag: "v1" });
    expect(s.tags.get("v1")).toBe(manifest.digest);
    // Two refusals, then the one PUT by tag that stores and tags it.
    expect(s.requests.filter((r) => r.method === "PUT" && r.url.includes("/manifests/")).length).toBe(3);
  });

  it("is OCI_MANIFEST_BLOB_UNKNOWN at once when a blob really is absent", async () => {
    const s = await standIn({});
    const bytes = (await import("node:fs/promises")).readFile(path.join(layoutDir, "blobs", "sha256", manifest.digest.slice(7)));
    const t = target(s);
    await expect(t.push(manifest, Readable.from([await bytes]))).toThrowWithCode("OCI_MANIFEST_BLOB_UNKNOWN");
    expect(s.requests.filter((r) => r.method === "PUT").length).toBe(1);
  });
});

describe("CLI: release stage --chunk-size", () => {
  let fixture: ReleaseFixture;
  let cwd: string;
  beforeAll(async () => {
    cwd = await mkdtemp(path.join(work, "cli-"));
  });
  afterAll(async () => {
    await fixture?.cleanup();
  });

  async function stage(s: StandIn, extra: string[]): Promise<Awaited<ReturnType<typeof runCli>>> {
    const repository = `${s.host}/acme/demo-plugin`;
    fixture = await createReleaseFixture({ registryRepository: repository, padSourceBytes: 600 * 1024 });
    await writeFile(path.join(cwd, "package.json"), JSON.stringify({ name: "demo-plugin", version: "0.7.0", hermesPluginKit: { repository } }) + "\n");
    const inputs = fixture.files;
    return runCli(
      [
        "release", "stage", "--plain-http", "--tag", `candidate-12345-${fixture.sourceSha}`,
        "--manifest", inputs.get("release-manifest.json") as string,
        "--artifact-dir", path.dirname([...inputs.entries()].find(([p]) => p.startsWith("dist/"))?.[1] as string),
        "--source-bundle", inputs.get("release-source.bundle") as string,
        "--payload-checksums", inputs.get("release-payload.sha256") as string,
        ...extra,
      ],
      { cwd, env: { REGISTRY_USERNAME: CREDS.username, REGISTRY_PASSWORD: CREDS.password } },
    );
  }

  it("stages through a registry capped at 256 KiB without a single refused request", async () => {
    const s = await standIn({ credentials: CREDS, anonymous: "absent-404", maxBodyBytes: 256 * 1024, refuseBeforeContinue: false });
    const result = await stage(s, ["--chunk-size", "256KiB"]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ upload: "tagged", bootstrapped: true });
    const bodies = s.requests.filter((r) => r.method === "PUT" || r.method === "PATCH").map((r) => r.contentLength ?? 0);
    expect(Math.max(...bodies)).toBeLessThanOrEqual(256 * 1024);
    expect(s.requests.filter((r) => r.method === "PATCH").length).toBeGreaterThanOrEqual(3);
  });

  it("without the flag it still converges (refusals after the body streamed are retried in smaller chunks)", async () => {
    const s = await standIn({ credentials: CREDS, anonymous: "absent-404", maxBodyBytes: 256 * 1024, refuseBeforeContinue: false });
    const result = await stage(s, []);
    expect(result.code, result.stderr).toBe(0);
  });

  it("every uploading step takes --chunk-size", async () => {
    for (const step of ["check-private", "stage", "publish", "run"]) {
      const help = await runCli(["release", step, "--help"], { cwd });
      expect(help.code, step).toBe(0);
      expect(help.stdout, step).toContain("--chunk-size <size>");
    }
  });

  it("a malformed --chunk-size is a usage error (exit 2) before any request", async () => {
    const s = await standIn({ credentials: CREDS });
    const repository = `${s.host}/acme/demo-plugin`;
    for (const value of ["1000", "4GB", "-1", "0x10000"]) {
      const result = await runCli(
        ["release", "stage", "--repository", repository, "--plain-http", "--tag", "candidate-1-x", "--manifest", "m", "--artifact-dir", "d", "--source-bundle", "b", "--payload-checksums", "c", "--chunk-size", value],
        { cwd },
      );
      expect(result.code, value).toBe(2);
      expect(result.stderr).toContain("--chunk-size");
    }
    expect(s.requests).toHaveLength(0);
  });
});
