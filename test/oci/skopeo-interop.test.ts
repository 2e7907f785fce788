/**
 * Interop with an independent implementation: skopeo sees the manifest our
 * client pushed (same digest), copies it into an OCI layout we can read, and
 * pushes our deterministic layout so our client can fetch and verify it.
 * Credentials go to skopeo through an auth file, never argv.
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RELEASE_ARTIFACT_TYPE } from "../../src/contract/constants.js";
import {
  LayoutTarget,
  RegistryTarget,
  copy,
  fetchBlobToFile,
  fetchManifest,
  readLayout,
  writeLayout,
  type Descriptor,
} from "../../src/oci/index.js";
import { describeRegistry, skopeoAvailable, startRegistry, type RunningRegistry } from "../support/registry.js";

function skopeo(args: string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve) => {
    execFile("skopeo", args, { encoding: "buffer", maxBuffer: 16 * 1024 * 1024, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof (error as { code?: unknown }).code === "number" ? ((error as { code: number }).code) : 1;
      resolve({ code, stdout, stderr: stderr.toString() });
    });
  });
}

describeRegistry("skopeo interop", () => {
  let work: string;
  let registry: RunningRegistry;
  let authfile: string;
  let layoutDir: string;
  let manifest: Descriptor;
  let client: RegistryTarget;

  beforeAll(async () => {
    if (!skopeoAvailable()) throw new Error("skopeo is required for the interop suite (apt-get install skopeo)");
    work = await mkdtemp(path.join(os.tmpdir(), "hpk-skopeo-"));
    registry = await startRegistry({ auth: "basic" });
    authfile = path.join(work, "auth.json");
    const auth = Buffer.from(`${registry.username}:${registry.password}`).toString("base64");
    await writeFile(authfile, JSON.stringify({ auths: { [registry.host]: { auth } } }), { mode: 0o600 });
    const files = new Map<string, string>();
    for (const [name, size] of [["release-manifest.json", 512], ["release-source.bundle", 70_000], ["dist/pkg-1.0.0.tgz", 150_000]] as const) {
      const file = path.join(work, name.replace("/", "_"));
      await writeFile(file, randomBytes(size));
      files.set(name, file);
    }
    layoutDir = path.join(work, "layout");
    manifest = (await writeLayout(layoutDir, RELEASE_ARTIFACT_TYPE, files)).manifest;
    client = new RegistryTarget({
      registry: registry.host,
      repository: "owner/interop",
      plainHttp: true,
      credentials: { username: registry.username as string, password: registry.password as string },
    });
  });

  afterAll(async () => {
    await client?.close();
    await registry?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("skopeo inspect --raw and skopeo copy docker:// -> oci: see the digest our client pushed", async () => {
    await copy(await LayoutTarget.open(layoutDir), client, "payload", { tag: "v1" });
    const ref = `docker://${registry.host}/owner/interop:v1`;
    const inspect = await skopeo(["inspect", "--raw", "--tls-verify=false", "--authfile", authfile, ref]);
    expect(inspect.code, inspect.stderr).toBe(0);
    expect("sha256:" + createHash("sha256").update(inspect.stdout).digest("hex")).toBe(manifest.digest);

    const ociDir = path.join(work, "skopeo-oci");
    const copied = await skopeo(["copy", "--src-tls-verify=false", "--src-authfile", authfile, ref, `oci:${ociDir}:v1`]);
    expect(copied.code, copied.stderr).toBe(0);
    const store = await LayoutTarget.open(ociDir);
    expect((await store.resolve("v1")).digest).toBe(manifest.digest);
    const read = await readLayout(ociDir, { refName: "v1" });
    expect(read.manifest.digest).toBe(manifest.digest);
    expect(read.layers.map((l) => l.path)).toEqual(["dist/pkg-1.0.0.tgz", "release-manifest.json", "release-source.bundle"]);
  });

  it("skopeo copy oci: (our layout) -> docker://, then our client fetches and verifies it", async () => {
    const dest = `docker://${registry.host}/owner/from-skopeo:v2`;
    const pushed = await skopeo(["copy", "--dest-tls-verify=false", "--dest-authfile", authfile, `oci:${layoutDir}:payload`, dest]);
    expect(pushed.code, pushed.stderr).toBe(0);
    const other = new RegistryTarget({
      registry: registry.host,
      repository: "owner/from-skopeo",
      plainHttp: true,
      credentials: { username: registry.username as string, password: registry.password as string },
    });
    const desc = await other.resolve("v2");
    expect(desc).toEqual(manifest);
    const bytes = await fetchManifest(other, desc);
    const layers = (JSON.parse(bytes.toString()) as { layers: Descriptor[] }).layers;
    const original = await readLayout(layoutDir);
    for (const layer of layers) {
      const out = path.join(work, `from-skopeo-${layer.digest.slice(7, 19)}`);
      await fetchBlobToFile(other, layer, out);
      expect((await readFile(out)).equals(await readFile(original.blobPath(layer.digest)))).toBe(true);
    }
    await other.close();
  });
});
