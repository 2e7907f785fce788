import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/contract/canonical-json.js";
import {
  BOOTSTRAP_ARTIFACT_TYPE,
  EMPTY_CONFIG_DESCRIPTOR,
  OCI_MANIFEST_MEDIA_TYPE,
  RECEIPT_ARTIFACT_TYPE,
  RELEASE_ARTIFACT_TYPE,
  TITLE_ANNOTATION,
} from "../../src/contract/constants.js";
import { checkManifestDescriptor, checkReleaseManifest } from "../../src/fetch/manifest-checks.js";
import type { ReadOnlyTarget } from "../../src/oci/target.js";
import { fetchManifest } from "../../src/oci/transfer.js";

function layer(title: string, fill = "1", size = 10): Record<string, unknown> {
  return { mediaType: "application/octet-stream", digest: "sha256:" + fill.repeat(64), size, annotations: { [TITLE_ANNOTATION]: title } };
}

function bundle(): Record<string, unknown> {
  return {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST_MEDIA_TYPE,
    artifactType: RELEASE_ARTIFACT_TYPE,
    config: { ...EMPTY_CONFIG_DESCRIPTOR },
    layers: [layer("dist/demo-1.0.0.tgz", "1"), layer("release-manifest.json", "2"), layer("release-payload.sha256", "3"), layer("release-source.bundle", "4")],
  };
}

function receipt(): Record<string, unknown> {
  return { ...bundle(), artifactType: RECEIPT_ARTIFACT_TYPE, layers: [layer("release-receipt.json", "5")] };
}

function bytesOf(manifest: unknown): Buffer {
  return Buffer.from(typeof manifest === "string" ? manifest : canonicalJson(manifest));
}

function digestOf(bytes: Uint8Array): string {
  return "sha256:" + createHash("sha256").update(bytes).digest("hex");
}

/** A read-only target serving `bytes` for any descriptor, counting the reads. */
function serving(bytes: Buffer): ReadOnlyTarget & { fetches: number } {
  const target = {
    fetches: 0,
    resolve: async () => ({ mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: digestOf(bytes), size: bytes.length }),
    fetch: async () => {
      target.fetches += 1;
      return Readable.from([bytes]);
    },
    exists: async () => true,
    tags: async () => [],
  };
  return target;
}

function check(manifest: unknown, options: { expectedKind?: "bundle" | "receipt"; packageName?: string } = {}) {
  const bytes = bytesOf(manifest);
  return checkReleaseManifest(bytes, { expectedDigest: digestOf(bytes), ...options });
}

describe("checkReleaseManifest", () => {
  it("accepts a 4-layer bundle and a 1-layer receipt", () => {
    const b = check(bundle(), { expectedKind: "bundle", packageName: "demo" });
    expect(b.kind).toBe("bundle");
    expect(b.layers.map((l) => l.title)).toEqual(["dist/demo-1.0.0.tgz", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);
    expect(b.layers[0]!.descriptor).toEqual(layer("dist/demo-1.0.0.tgz", "1"));
    const r = check(receipt());
    expect(r.kind).toBe("receipt");
    expect(r.artifactType).toBe(RECEIPT_ARTIFACT_TYPE);
  });

  it("G3: the transport refuses bytes that do not hash to the pinned digest, and more than 1 MiB; checkReleaseManifest takes its bytes", async () => {
    const bytes = bytesOf(bundle());
    const digest = digestOf(bytes);
    const changed = Buffer.concat([bytes, Buffer.from(" ")]);
    const pinned = (size: number) => ({ mediaType: OCI_MANIFEST_MEDIA_TYPE, digest, size });
    await expect(fetchManifest(serving(changed), pinned(changed.length))).toThrowWithCode("OCI_DIGEST_MISMATCH");
    await expect(fetchManifest(serving(changed), pinned(bytes.length))).toThrowWithCode("OCI_SIZE_MISMATCH");
    const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
    const unread = serving(big);
    await expect(fetchManifest(unread, { mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: digestOf(big), size: big.length })).toThrowWithCode("OCI_MANIFEST_TOO_LARGE");
    expect(unread.fetches).toBe(0);
    const exact = Buffer.concat([bytes, Buffer.alloc(1024 * 1024 - bytes.length, 0x20)]);
    const fetched = await fetchManifest(serving(exact), { mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: digestOf(exact), size: exact.length });
    expect(checkReleaseManifest(fetched, { expectedDigest: digestOf(exact) }).kind).toBe("bundle");
  });

  it("G4/J4: refuses invalid JSON, duplicate keys and non-objects", () => {
    const text = canonicalJson(bundle()).replace('{"artifactType"', '{"schemaVersion":2,"artifactType"');
    expect(() => check(text)).toThrowWithCode("FETCH_MANIFEST_INVALID_JSON");
    expect(() => check("[]")).toThrowWithCode("FETCH_MANIFEST_INVALID_JSON");
    expect(() => check("{")).toThrowWithCode("FETCH_MANIFEST_INVALID_JSON");
  });

  it("G4: refuses extra keys (subject, annotations), missing keys, schemaVersion other than 2, another media type", () => {
    expect(() => check({ ...bundle(), subject: layer("x") })).toThrowWithCode("FETCH_MANIFEST_UNSUPPORTED");
    expect(() => check({ ...bundle(), annotations: { a: "b" } })).toThrowWithCode("FETCH_MANIFEST_UNSUPPORTED");
    const missing = bundle();
    delete missing["config"];
    expect(() => check(missing)).toThrowWithCode("FETCH_MANIFEST_UNSUPPORTED");
    expect(() => check({ ...bundle(), schemaVersion: 1 })).toThrowWithCode("FETCH_MANIFEST_UNSUPPORTED");
    expect(() => check(canonicalJson(bundle()).replace('"schemaVersion":2', '"schemaVersion":2.0'))).toThrowWithCode("FETCH_MANIFEST_INVALID_JSON");
    expect(() => check({ ...bundle(), mediaType: "application/vnd.oci.image.index.v1+json" })).toThrowWithCode("FETCH_MANIFEST_UNSUPPORTED");
  });

  it("refuses the bootstrap artifact and unknown artifact types", () => {
    expect(() => check({ ...bundle(), artifactType: BOOTSTRAP_ARTIFACT_TYPE, layers: [] })).toThrowWithCode("FETCH_ARTIFACT_TYPE_UNSUPPORTED");
    expect(() => check({ ...bundle(), artifactType: "application/vnd.other" })).toThrowWithCode("FETCH_ARTIFACT_TYPE_UNSUPPORTED");
  });

  it("refuses a receipt where a bundle is expected and the other way round", () => {
    expect(() => check(receipt(), { expectedKind: "bundle" })).toThrowWithCode("FETCH_ARTIFACT_TYPE_MISMATCH");
    expect(() => check(bundle(), { expectedKind: "receipt" })).toThrowWithCode("FETCH_ARTIFACT_TYPE_MISMATCH");
  });

  it("G5: refuses a config other than the empty-config descriptor", () => {
    expect(() => check({ ...bundle(), config: { ...EMPTY_CONFIG_DESCRIPTOR, size: 3 } })).toThrowWithCode("FETCH_CONFIG_UNEXPECTED");
    expect(() => check({ ...bundle(), config: { ...EMPTY_CONFIG_DESCRIPTOR, annotations: {} } })).toThrowWithCode("FETCH_CONFIG_UNEXPECTED");
    expect(() => check({ ...bundle(), config: { ...EMPTY_CONFIG_DESCRIPTOR, mediaType: "application/vnd.oci.image.config.v1+json" } })).toThrowWithCode("FETCH_CONFIG_UNEXPECTED");
  });

  it("G6: refuses an extra or a missing layer", () => {
    const extra = bundle();
    (extra["layers"] as unknown[]).push(layer("release-receipt.json", "6"));
    expect(() => check(extra)).toThrowWithCode("FETCH_LAYER_INVENTORY");
    const fewer = bundle();
    (fewer["layers"] as unknown[]).pop();
    expect(() => check(fewer)).toThrowWithCode("FETCH_LAYER_INVENTORY");
    expect(() => check({ ...receipt(), layers: [] })).toThrowWithCode("FETCH_LAYER_INVENTORY");
  });

  it("O1: refuses another media type, extra descriptor keys, size 0, non-integer size, bad digest", () => {
    const cases: Array<(l: Record<string, unknown>) => void> = [
      (l) => (l["mediaType"] = "application/vnd.oci.image.layer.v1.tar"),
      (l) => (l["urls"] = ["http://x"]),
      (l) => (l["size"] = 0),
      (l) => (l["size"] = 1.5),
      (l) => (l["size"] = "10"),
      (l) => (l["digest"] = "sha512:" + "1".repeat(128)),
      (l) => delete l["annotations"],
    ];
    for (const mutate of cases) {
      const m = bundle();
      mutate((m["layers"] as Record<string, unknown>[])[1]!);
      expect(() => check(m)).toThrowWithCode("FETCH_LAYER_DESCRIPTOR_INVALID");
    }
  });

  it("O2: refuses annotations other than exactly one string title", () => {
    for (const annotations of [{}, { [TITLE_ANNOTATION]: 5 }, { [TITLE_ANNOTATION]: "release-manifest.json", other: "x" }]) {
      const m = bundle();
      (m["layers"] as Record<string, unknown>[])[1]!["annotations"] = annotations;
      expect(() => check(m)).toThrowWithCode("FETCH_LAYER_ANNOTATION_INVALID");
    }
  });

  it("G7: refuses unsafe titles", () => {
    for (const title of ["../escape", "/absolute", "dist/../../x", "dist/demo-1.0.0.tgz/../x", "x"]) {
      const m = bundle();
      (m["layers"] as Record<string, unknown>[])[0] = layer(title, "1");
      expect(() => check(m)).toThrowWithCode("FETCH_LAYER_PATH_UNSAFE");
    }
    const m = bundle();
    (m["layers"] as Record<string, unknown>[])[0] = layer("../evil.tgz", "1");
    expect(() => check(m)).toThrow(
      'unsafe OCI payload path on layer 0: expected a title on the payload allow-list (release-manifest.json, release-source.bundle, release-payload.sha256, release-receipt.json, or dist/<name>-<MAJOR.MINOR.PATCH>.tgz (no other directory, no \'..\', no absolute path); docs/fetch.md), found "../evil.tgz"; nothing was written',
    );
    expect(() => check(m, { packageName: "@acme/demo" })).toThrow("or dist/acme-demo-<MAJOR.MINOR.PATCH>.tgz");
    expect(() => check(bundle(), { packageName: "other" })).toThrowWithCode("FETCH_PACKAGE_MISMATCH");
  });

  it("G7: refuses a duplicated title", () => {
    const m = bundle();
    (m["layers"] as Record<string, unknown>[])[1] = layer("dist/demo-1.0.0.tgz", "2");
    expect(() => check(m)).toThrowWithCode("FETCH_LAYER_PATH_DUPLICATE");
  });

  it("G8: refuses a bundle with a receipt title or two tarballs, and a receipt with another title", () => {
    const withReceipt = bundle();
    (withReceipt["layers"] as Record<string, unknown>[])[0] = layer("release-receipt.json", "1");
    expect(() => check(withReceipt)).toThrowWithCode("FETCH_LAYER_PATHS_UNEXPECTED");
    const twoTarballs = bundle();
    (twoTarballs["layers"] as Record<string, unknown>[])[1] = layer("dist/demo-1.0.1.tgz", "2");
    expect(() => check(twoTarballs)).toThrowWithCode("FETCH_LAYER_PATHS_UNEXPECTED");
    expect(() => check({ ...receipt(), layers: [layer("release-manifest.json", "5")] })).toThrowWithCode("FETCH_LAYER_PATHS_UNEXPECTED");
  });
});

describe("checkManifestDescriptor", () => {
  const digest = "sha256:" + "a".repeat(64);
  it("accepts exactly the manifest media type, the digest and the size", () => {
    expect(() => checkManifestDescriptor({ mediaType: OCI_MANIFEST_MEDIA_TYPE, digest, size: 100 }, digest, 100)).not.toThrow();
  });
  it("refuses another digest, size or media type", () => {
    expect(() => checkManifestDescriptor({ mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: "sha256:" + "b".repeat(64), size: 100 }, digest)).toThrowWithCode("FETCH_MANIFEST_DIGEST_MISMATCH");
    expect(() => checkManifestDescriptor({ mediaType: OCI_MANIFEST_MEDIA_TYPE, digest, size: 101 }, digest, 100)).toThrowWithCode("FETCH_MANIFEST_DIGEST_MISMATCH");
    expect(() => checkManifestDescriptor({ mediaType: "application/vnd.docker.distribution.manifest.v2+json", digest, size: 100 }, digest)).toThrowWithCode("FETCH_MANIFEST_UNSUPPORTED");
    expect(() => checkManifestDescriptor({ mediaType: "application/vnd.oci.image.index.v1+json", digest, size: 100 }, digest)).toThrowWithCode("FETCH_MANIFEST_UNSUPPORTED");
  });
  it("leaves the 1 MiB ceiling to fetchManifest, the one place a manifest's size is checked", () => {
    expect(() => checkManifestDescriptor({ mediaType: OCI_MANIFEST_MEDIA_TYPE, digest, size: 1024 * 1024 + 1 }, digest)).not.toThrow();
  });
});
