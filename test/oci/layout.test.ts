import { mkdtemp, readFile, readdir, rm, stat, symlink, utimes, writeFile, unlink, truncate } from "node:fs/promises";
import { createHash } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOOTSTRAP_ARTIFACT_TYPE, RELEASE_ARTIFACT_TYPE } from "../../src/contract/constants.js";
import { readLayout, writeLayout, layoutBlobPath } from "../../src/oci/index.js";

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "hpk-layout-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function inputs(names: Record<string, string>): Promise<Map<string, string>> {
  const dir = await mkdtemp(path.join(work, "in-"));
  const files = new Map<string, string>();
  for (const [payload, content] of Object.entries(names)) {
    const file = path.join(dir, payload.replace(/\//g, "_"));
    await writeFile(file, content);
    files.set(payload, file);
  }
  return files;
}

describe("writeLayout", () => {
  it("writes the bootstrap artifact exactly (reference 2.10 test vectors)", async () => {
    const dir = path.join(work, "bootstrap");
    const { manifest, manifestBytes } = await writeLayout(dir, BOOTSTRAP_ARTIFACT_TYPE, new Map());
    expect(manifest).toEqual({
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      digest: "sha256:2c83e94c3884c6aea03e57999e7833e8444d8ea6860a5df81a8af216e9ec884e",
      size: 312,
    });
    expect(manifestBytes.toString()).toBe(
      '{"artifactType":"application/vnd.hermes-plugin-kit.private-bootstrap.v1","config":{"digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","mediaType":"application/vnd.oci.empty.v1+json","size":2},"layers":[],"mediaType":"application/vnd.oci.image.manifest.v1+json","schemaVersion":2}\n',
    );
    expect(await readFile(path.join(dir, "oci-layout"), "utf8")).toBe('{"imageLayoutVersion":"1.0.0"}\n');
    expect(await readFile(path.join(dir, "index.json"), "utf8")).toBe(
      '{"manifests":[{"annotations":{"org.opencontainers.image.ref.name":"payload"},"digest":"sha256:2c83e94c3884c6aea03e57999e7833e8444d8ea6860a5df81a8af216e9ec884e","mediaType":"application/vnd.oci.image.manifest.v1+json","size":312}],"schemaVersion":2}\n',
    );
    expect(await readFile(layoutBlobPath(dir, "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"), "utf8")).toBe("{}");
    expect((await readdir(path.join(dir, "blobs", "sha256"))).sort()).toEqual([
      "2c83e94c3884c6aea03e57999e7833e8444d8ea6860a5df81a8af216e9ec884e",
      "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
    ]);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const read = await readLayout(dir);
    expect(read.manifest.digest).toBe(manifest.digest);
    expect(read.layers).toEqual([]);
  });

  it("is a pure function of (artifactType, path -> bytes): input order and mtimes do not matter", async () => {
    const a = await inputs({ "release-manifest.json": "{}\n", "dist/pkg-1.0.0.tgz": "tarball", "b.txt": "bee" });
    const b = new Map([...a.entries()].reverse());
    for (const file of b.values()) await utimes(file, new Date(2001, 1, 1), new Date(2001, 1, 1));
    const one = await writeLayout(path.join(work, "det-1"), RELEASE_ARTIFACT_TYPE, a);
    const two = await writeLayout(path.join(work, "det-2"), RELEASE_ARTIFACT_TYPE, b);
    expect(two.manifest.digest).toBe(one.manifest.digest);
    expect(two.manifestBytes.equals(one.manifestBytes)).toBe(true);
    const parsed = JSON.parse(one.manifestBytes.toString());
    expect(parsed.layers.map((l: { annotations: Record<string, string> }) => l.annotations["org.opencontainers.image.title"])).toEqual([
      "b.txt",
      "dist/pkg-1.0.0.tgz",
      "release-manifest.json",
    ]);
    expect(parsed.layers[0]).toEqual({
      annotations: { "org.opencontainers.image.title": "b.txt" },
      digest: "sha256:" + createHash("sha256").update("bee").digest("hex"),
      mediaType: "application/octet-stream",
      size: 3,
    });
    expect(one.manifestBytes.toString()).not.toMatch(/created|source|gzip|tar/);
    const other = await writeLayout(path.join(work, "det-3"), RELEASE_ARTIFACT_TYPE, await inputs({ "release-manifest.json": "{}\n", "dist/pkg-1.0.0.tgz": "tarball", "b.txt": "bez" }));
    expect(other.manifest.digest).not.toBe(one.manifest.digest);
  });

  it("refuses an existing directory, unsafe paths, symlinked and empty inputs, writing nothing", async () => {
    const files = await inputs({ "a.txt": "a" });
    const existing = path.join(work, "exists");
    await writeLayout(existing, RELEASE_ARTIFACT_TYPE, files);
    await expect(writeLayout(existing, RELEASE_ARTIFACT_TYPE, files)).toThrowWithCode("OCI_LAYOUT_EXISTS");
    const file = files.get("a.txt") as string;
    for (const bad of ["../x", "/etc/passwd", "a//b", "./a", "", "a\\b"]) {
      const dir = path.join(work, `bad-${Math.random().toString(16).slice(2)}`);
      await expect(writeLayout(dir, RELEASE_ARTIFACT_TYPE, new Map([[bad, file]]))).toThrowWithCode("OCI_PATH_INVALID");
      await expect(stat(dir)).rejects.toThrow();
    }
    const link = path.join(work, "link-input");
    await symlink(file, link);
    const linkDir = path.join(work, "from-link");
    await expect(writeLayout(linkDir, RELEASE_ARTIFACT_TYPE, new Map([["a.txt", link]]))).toThrowWithCode("OCI_PATH_INVALID");
    await expect(stat(linkDir)).rejects.toThrow();
    const empty = path.join(work, "empty-input");
    await writeFile(empty, "");
    const emptyDir = path.join(work, "from-empty");
    await expect(writeLayout(emptyDir, RELEASE_ARTIFACT_TYPE, new Map([["a.txt", empty]]))).toThrowWithCode("OCI_PATH_INVALID");
    await expect(stat(emptyDir)).rejects.toThrow();
  });
});

describe("readLayout", () => {
  async function fresh(name: string): Promise<{ dir: string; blob: string }> {
    const files = await inputs({ "release-payload.sha256": "abc  x\n", "dist/p.tgz": "0123456789" });
    const dir = path.join(work, name);
    const written = await writeLayout(dir, RELEASE_ARTIFACT_TYPE, files);
    const manifest = JSON.parse(written.manifestBytes.toString());
    return { dir, blob: layoutBlobPath(dir, manifest.layers[0].digest) };
  }

  it("returns the verified manifest and titled layers", async () => {
    const { dir } = await fresh("read-ok");
    const layout = await readLayout(dir);
    expect(layout.artifactType).toBe(RELEASE_ARTIFACT_TYPE);
    expect(layout.layers.map((l) => l.path)).toEqual(["dist/p.tgz", "release-payload.sha256"]);
    expect(layout.layers[0]?.descriptor.size).toBe(10);
  });

  it("refuses a symlinked blob", async () => {
    const { dir, blob } = await fresh("read-symlink");
    const copy = path.join(work, "blob-copy");
    await writeFile(copy, await readFile(blob));
    await unlink(blob);
    await symlink(copy, blob);
    await expect(readLayout(dir)).toThrowWithCode("OCI_LAYOUT_INVALID");
  });

  it("refuses a missing blob", async () => {
    const { dir, blob } = await fresh("read-missing");
    await unlink(blob);
    await expect(readLayout(dir)).toThrowWithCode("OCI_LAYOUT_INVALID");
  });

  it("refuses a blob with other bytes of the same size", async () => {
    const { dir, blob } = await fresh("read-tampered");
    await writeFile(blob, "9876543210");
    await expect(readLayout(dir)).toThrowWithCode("OCI_DIGEST_MISMATCH");
  });

  it("refuses a truncated blob", async () => {
    const { dir, blob } = await fresh("read-truncated");
    await truncate(blob, 4);
    await expect(readLayout(dir)).toThrowWithCode("OCI_SIZE_MISMATCH");
  });

  it("refuses a bad index and a bad oci-layout marker", async () => {
    const { dir } = await fresh("read-index");
    const index = await readFile(path.join(dir, "index.json"), "utf8");
    await writeFile(path.join(dir, "index.json"), index.replace('"payload"', '"other"'));
    await expect(readLayout(dir)).toThrowWithCode("OCI_LAYOUT_INVALID");
    await writeFile(path.join(dir, "index.json"), '{"manifests":[],"manifests":[],"schemaVersion":2}');
    await expect(readLayout(dir)).toThrowWithCode("OCI_LAYOUT_INVALID");
    await writeFile(path.join(dir, "index.json"), index);
    await writeFile(path.join(dir, "oci-layout"), '{"imageLayoutVersion":"2.0.0"}');
    await expect(readLayout(dir)).toThrowWithCode("OCI_LAYOUT_INVALID");
  });
});
