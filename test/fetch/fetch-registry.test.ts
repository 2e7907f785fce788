/**
 * Acceptance of `fetch` against a real registry (Debian's docker-registry on
 * loopback, bearer auth, anonymous reads refused) and real git: the round
 * trip, every tampering case of docs/fetch.md "Error codes" with its own code (the output
 * directory is never created and nothing outside it is touched), and the
 * privacy gate stopping the fetch before any blob is downloaded.
 */
import { createHash } from "node:crypto";
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { canonicalJson, canonicalJsonBytes } from "../../src/contract/canonical-json.js";
import { BOOTSTRAP_ARTIFACT_TYPE, OCI_MANIFEST_MEDIA_TYPE, TITLE_ANNOTATION } from "../../src/contract/constants.js";
import { downloadRelease, fetchRelease, type DownloadOptions, type OpenReadTarget } from "../../src/fetch/fetch.js";
import { GHCR_REGISTRY_OVERRIDE_ENV } from "../../src/fetch/privacy.js";
import { bufferStream } from "../../src/oci/descriptor.js";
import { writeLayout } from "../../src/oci/layout.js";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { openTarget } from "../../src/oci/open.js";
import { copy } from "../../src/oci/transfer.js";
import type { Descriptor, ReadOnlyTarget, Target } from "../../src/oci/target.js";
import { startGitHubEmulator, type GitHubEmulator, type PackageState } from "../support/github-emulator.js";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";
import {
  createReleaseFixture,
  stageFixture,
  variantWithChecksums,
  variantWithRefsAtOtherCommit,
  variantWithTruncatedBundle,
  type ReleaseFixture,
  type StagedRelease,
} from "../support/release-fixture.js";

const REPO_PATH = "acme/demo-plugin";

let registry: RunningRegistry;
let repository: string;
let target: Target;
let fixture: ReleaseFixture;
let staged: StagedRelease;
let work: string;
let api: GitHubEmulator;
let blobFetches = 0;
const cleanups: Array<() => Promise<void>> = [];

function credentials() {
  return { username: registry.username as string, password: registry.password as string };
}

/** The real openTarget, counting every `fetch` (manifest or blob) made through it. */
const countingOpen: OpenReadTarget = async (repo, options) => {
  const inner = await openTarget(repo.repository, options);
  const wrapped: ReadOnlyTarget = {
    resolve: (r) => inner.resolve(r),
    fetch: (d) => {
      blobFetches += 1;
      return inner.fetch(d);
    },
    exists: (d) => inner.exists(d),
    tags: () => inner.tags(),
  };
  return wrapped;
};

function options(reference: string, extra: Partial<DownloadOptions> = {}): DownloadOptions {
  return { reference, repository, plainHttp: true, credentials: credentials(), progress: null, openTarget: countingOpen, ...extra };
}

function bundleRef(digest = staged.bundle.digest): string {
  return `${repository}@${digest}`;
}

/** A fresh output path `D` under `<work>/case-N/` plus a sibling sentinel directory that must stay untouched. */
let caseCounter = 0;
async function outputCase(): Promise<{ dir: string; out: string; snapshot: () => Promise<string[]> }> {
  caseCounter += 1;
  const dir = join(work, `case-${caseCounter}`);
  await mkdir(join(dir, "sibling"), { recursive: true });
  await writeFile(join(dir, "sibling", "keep.txt"), "keep\n");
  const snapshot = async () => (await readdir(dir, { recursive: true })).map(String).sort();
  return { dir, out: join(dir, "D"), snapshot };
}

/** Run a fetch that must fail with `code`: D not created, nothing else in the case directory touched, temp files gone. */
async function expectFetchFails(reference: string, code: string, extra: Partial<DownloadOptions> = {}): Promise<void> {
  const { dir, out, snapshot } = await outputCase();
  // The private temp directory (and the scratch git repository) live in <case>/tmp: it must be empty again.
  await mkdir(join(dir, "tmp"));
  const before = await snapshot();
  await expect(() => fetchRelease({ ...options(reference, { tmpDir: join(dir, "tmp"), ...extra }), outputDir: out })).toThrowWithCode(code);
  expect(await snapshot()).toEqual(before);
  await expect(readdir(out)).rejects.toThrow();
}

/** Bundle manifest object as staged. */
function bundleManifest(): Record<string, unknown> {
  return JSON.parse(staged.bundleManifestBytes.toString("utf8")) as Record<string, unknown>;
}

function layersOf(m: Record<string, unknown>): Array<Record<string, unknown>> {
  return m["layers"] as Array<Record<string, unknown>>;
}

/** Push a manifest object (canonical bytes) by digest; returns its digest. */
async function pushManifest(manifest: unknown): Promise<string> {
  const bytes = canonicalJsonBytes(manifest);
  const desc: Descriptor = { mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: "sha256:" + createHash("sha256").update(bytes).digest("hex"), size: bytes.length };
  await target.push(desc, bufferStream(bytes));
  return desc.digest;
}

/** Registry storage path of a blob's data file (distribution's filesystem driver layout). */
function blobDataPath(digest: string): string {
  const hex = digest.slice("sha256:".length);
  return join(registry.storageDir, "docker", "registry", "v2", "blobs", "sha256", hex.slice(0, 2), hex, "data");
}

/** Store manifest bytes directly in the registry's storage (for bytes the client refuses to push). */
async function storeManifestBytes(bytes: Buffer): Promise<string> {
  const digest = "sha256:" + createHash("sha256").update(bytes).digest("hex");
  const data = blobDataPath(digest);
  await mkdir(dirname(data), { recursive: true });
  await writeFile(data, bytes);
  const link = join(registry.storageDir, "docker", "registry", "v2", "repositories", ...REPO_PATH.split("/"), "_manifests", "revisions", "sha256", digest.slice(7), "link");
  await mkdir(dirname(link), { recursive: true });
  await writeFile(link, digest);
  return digest;
}

/** Stage a payload variant (its own blobs) as a bundle; returns the reference. */
async function stageVariant(variant: ReleaseFixture): Promise<string> {
  cleanups.push(variant.cleanup);
  const layoutDir = join(await mkdtemp(join(tmpdir(), "hpk-variant-layout-")), "layout");
  cleanups.push(() => rm(dirname(layoutDir), { recursive: true, force: true }));
  await writeLayout(layoutDir, "application/vnd.hermes-plugin-kit.release.v2", variant.files);
  const desc = await copy(await LayoutTarget.open(layoutDir), target, "payload", { tag: null });
  return bundleRef(desc.digest);
}

beforeAll(async () => {
  registry = await startRegistry({ auth: "bearer" });
  repository = `${registry.host}/${REPO_PATH}`;
  target = await openTarget(repository, { plainHttp: true, credentials: credentials() });
  fixture = await createReleaseFixture({ registryRepository: repository });
  staged = await stageFixture(fixture, target, repository);
  work = await mkdtemp(join(tmpdir(), "hpk-fetch-registry-"));
  api = await startGitHubEmulator();
}, 120_000);

afterAll(async () => {
  for (const c of cleanups) await c();
  await fixture?.cleanup();
  await api?.close();
  await registry?.stop();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describeRegistry("fetch from a real registry", () => {
  it("round trip: byte for byte, --json shape; a second fetch is a no-op", async () => {
    const { out } = await outputCase();
    const result = await fetchRelease({ ...options(bundleRef()), outputDir: out });
    expect(Object.keys(result).sort()).toEqual(["artifactType", "files", "install_time", "reference", "version"]);
    expect(result.install_time).toEqual([]);
    expect(result.version).toBe(fixture.version);
    expect(result.files).toHaveLength(4);
    for (const [path, local] of fixture.files) {
      const bytes = await readFile(local);
      expect((await readFile(join(out, path))).equals(bytes)).toBe(true);
      const entry = result.files.find((f) => f.path === path);
      expect(entry).toEqual({ path, sha256: createHash("sha256").update(bytes).digest("hex"), size: bytes.length });
    }
    const listing = (await readdir(out, { recursive: true })).map(String).sort();
    expect(await fetchRelease({ ...options(bundleRef()), outputDir: out })).toEqual(result);
    expect((await readdir(out, { recursive: true })).map(String).sort()).toEqual(listing);
  });

  it("the receipt artifact round-trips and verifies", async () => {
    const { out } = await outputCase();
    const result = await fetchRelease({ ...options(`${repository}@${staged.receipt.digest}`), outputDir: out, expect: "receipt" });
    expect(result.artifactType).toBe("application/vnd.hermes-plugin-kit.receipt.v2");
    expect((await readFile(join(out, "release-receipt.json"))).equals(staged.receiptBytes)).toBe(true);
  });

  it("manifest bytes changed in the registry -> OCI_DIGEST_MISMATCH", async () => {
    const data = blobDataPath(staged.bundle.digest);
    const original = await readFile(data);
    await appendFile(data, " ");
    try {
      const fresh = async (repo: Parameters<OpenReadTarget>[0], o: Parameters<OpenReadTarget>[1]) => openTarget(repo.repository, o);
      await expectFetchFails(bundleRef(), "OCI_DIGEST_MISMATCH", { openTarget: fresh });
    } finally {
      await writeFile(data, original);
    }
  });

  it("a layer bit-flipped in the registry -> OCI_DIGEST_MISMATCH", async () => {
    const layer = layersOf(bundleManifest()).find((l) => (l["annotations"] as Record<string, string>)[TITLE_ANNOTATION] === "release-source.bundle")!;
    const data = blobDataPath(layer["digest"] as string);
    const original = await readFile(data);
    const flipped = Buffer.from(original);
    flipped[0] = flipped[0]! ^ 0x01;
    await writeFile(data, flipped);
    try {
      await expectFetchFails(bundleRef(), "OCI_DIGEST_MISMATCH");
    } finally {
      await writeFile(data, original);
    }
  });

  it("a layer deleted from the registry -> OCI_NOT_FOUND saying the release is incomplete there (not that the pinned manifest is missing)", async () => {
    const layer = layersOf(bundleManifest()).find((l) => (l["annotations"] as Record<string, string>)[TITLE_ANNOTATION] === "release-payload.sha256")!;
    const data = blobDataPath(layer["digest"] as string);
    const original = await readFile(data);
    await rm(dirname(data), { recursive: true });
    try {
      await expectFetchFails(bundleRef(), "OCI_NOT_FOUND");
      const error = await fetchRelease({ ...options(bundleRef()), outputDir: join(tmpdir(), "hpk-never-created") }).then(() => null, (e: unknown) => e as Error);
      expect(error?.message).toContain(`the registry holds the pinned manifest ${bundleRef()} but not this blob it names, so the release is incomplete in this repository`);
      expect(error?.message).toContain(layer["digest"] as string);
      expect(error?.message).not.toContain("holds no manifest");
    } finally {
      await mkdir(dirname(data), { recursive: true });
      await writeFile(data, original);
    }
  });

  it("a pinned digest the registry does not hold -> OCI_NOT_FOUND saying what to check and how to find a digest", async () => {
    const absent = bundleRef().replace(/@sha256:[0-9a-f]{64}$/, `@sha256:${"e".repeat(64)}`);
    await expectFetchFails(absent, "OCI_NOT_FOUND");
    const error = await fetchRelease({ ...options(absent), outputDir: join(tmpdir(), "hpk-never-created") }).then(() => null, (e: unknown) => e as Error);
    expect(error?.message).toContain(`the registry holds no manifest with the pinned digest of ${absent}; nothing was installed; fix: check the reference you copied`);
    expect(error?.message).toContain("hermes-plugin-kit resolve --reference <repository>:<tag>");
  });

  it("an extra layer -> FETCH_LAYER_INVENTORY", async () => {
    const m = bundleManifest();
    layersOf(m).push({ ...layersOf(m)[0]! });
    await expectFetchFails(bundleRef(await pushManifest(m)), "FETCH_LAYER_INVENTORY");
  });

  it("a missing layer -> FETCH_LAYER_INVENTORY", async () => {
    const m = bundleManifest();
    layersOf(m).pop();
    await expectFetchFails(bundleRef(await pushManifest(m)), "FETCH_LAYER_INVENTORY");
  });

  for (const title of ["../escape", "/absolute", "dist/../../x"]) {
    it(`layer title ${title} -> FETCH_LAYER_PATH_UNSAFE`, async () => {
      const m = bundleManifest();
      layersOf(m)[0]!["annotations"] = { [TITLE_ANNOTATION]: title };
      await expectFetchFails(bundleRef(await pushManifest(m)), "FETCH_LAYER_PATH_UNSAFE");
    });
  }

  it("a duplicated title -> FETCH_LAYER_PATH_DUPLICATE", async () => {
    const m = bundleManifest();
    layersOf(m)[1]!["annotations"] = { ...(layersOf(m)[0]!["annotations"] as object) };
    await expectFetchFails(bundleRef(await pushManifest(m)), "FETCH_LAYER_PATH_DUPLICATE");
  });

  it("a layer size + 1 -> OCI_SIZE_MISMATCH", async () => {
    const m = bundleManifest();
    layersOf(m)[0]!["size"] = (layersOf(m)[0]!["size"] as number) + 1;
    await expectFetchFails(bundleRef(await pushManifest(m)), "OCI_SIZE_MISMATCH");
  });

  it("a layer with another media type -> FETCH_LAYER_DESCRIPTOR_INVALID", async () => {
    const m = bundleManifest();
    layersOf(m)[2]!["mediaType"] = "application/vnd.oci.image.layer.v1.tar";
    await expectFetchFails(bundleRef(await pushManifest(m)), "FETCH_LAYER_DESCRIPTOR_INVALID");
  });

  it("a manifest with an extra key (subject) -> FETCH_MANIFEST_UNSUPPORTED", async () => {
    const m = { ...bundleManifest(), subject: { mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: staged.receipt.digest, size: staged.receipt.size } };
    await expectFetchFails(bundleRef(await pushManifest(m)), "FETCH_MANIFEST_UNSUPPORTED");
  });

  it("a manifest with an extra key (annotations) -> FETCH_MANIFEST_UNSUPPORTED", async () => {
    const m = { ...bundleManifest(), annotations: { "org.opencontainers.image.created": "2026-01-01T00:00:00Z" } };
    await expectFetchFails(bundleRef(await pushManifest(m)), "FETCH_MANIFEST_UNSUPPORTED");
  });

  it("a manifest of 1 MiB + 1 byte -> OCI_MANIFEST_TOO_LARGE", async () => {
    const base = { ...bundleManifest(), annotations: { pad: "" } };
    const overhead = Buffer.byteLength(canonicalJson(base));
    const bytes = Buffer.from(canonicalJson({ ...base, annotations: { pad: "x".repeat(1024 * 1024 + 1 - overhead) } }));
    expect(bytes.length).toBe(1024 * 1024 + 1);
    await expectFetchFails(bundleRef(await storeManifestBytes(bytes)), "OCI_MANIFEST_TOO_LARGE");
  });

  it("a reference by tag -> REFERENCE_NOT_PINNED", async () => {
    blobFetches = 0;
    await expectFetchFails(`${repository}:v${fixture.version}`, "REFERENCE_NOT_PINNED");
    await expectFetchFails(`${repository}:v${fixture.version}@${staged.bundle.digest}`, "REFERENCE_NOT_PINNED");
    expect(blobFetches).toBe(0);
  });

  it("a reference to another repository -> REFERENCE_REPOSITORY_MISMATCH", async () => {
    blobFetches = 0;
    await expectFetchFails(`${registry.host}/acme/other@${staged.bundle.digest}`, "REFERENCE_REPOSITORY_MISMATCH");
    expect(blobFetches).toBe(0);
  });

  it("a receipt where a bundle is expected -> FETCH_ARTIFACT_TYPE_MISMATCH (and the other way round)", async () => {
    await expectFetchFails(`${repository}@${staged.receipt.digest}`, "FETCH_ARTIFACT_TYPE_MISMATCH", { expect: "bundle" });
    await expectFetchFails(bundleRef(), "FETCH_ARTIFACT_TYPE_MISMATCH", { expect: "receipt" });
  });

  it("the bootstrap artifact -> FETCH_ARTIFACT_TYPE_UNSUPPORTED", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "hpk-bootstrap-")), "layout");
    cleanups.push(() => rm(dirname(dir), { recursive: true, force: true }));
    const written = await writeLayout(dir, BOOTSTRAP_ARTIFACT_TYPE, new Map());
    expect(written.manifest.digest).toBe("sha256:2c83e94c3884c6aea03e57999e7833e8444d8ea6860a5df81a8af216e9ec884e");
    const desc = await copy(await LayoutTarget.open(dir), target, "payload", { tag: "private-bootstrap" });
    await expectFetchFails(bundleRef(desc.digest), "FETCH_ARTIFACT_TYPE_UNSUPPORTED");
  });

  it("a bundle whose git refs point at another commit -> SOURCE_BUNDLE_SHA_MISMATCH", async () => {
    await expectFetchFails(await stageVariant(await variantWithRefsAtOtherCommit(fixture)), "SOURCE_BUNDLE_SHA_MISMATCH");
  });

  it("a truncated source bundle -> SOURCE_BUNDLE_GIT_FAILED", async () => {
    await expectFetchFails(await stageVariant(await variantWithTruncatedBundle(fixture)), "SOURCE_BUNDLE_GIT_FAILED");
  });

  it("a checksum file with a missing line -> PAYLOAD_CHECKSUM_INCOMPLETE", async () => {
    const variant = await variantWithChecksums(fixture, (t) => t.split("\n").slice(1).join("\n"));
    await expectFetchFails(await stageVariant(variant), "PAYLOAD_CHECKSUM_INCOMPLETE");
  });

  it("a checksum file with a duplicated line -> PAYLOAD_CHECKSUM_DUPLICATE", async () => {
    const variant = await variantWithChecksums(fixture, (t) => t + t.split("\n")[0] + "\n");
    await expectFetchFails(await stageVariant(variant), "PAYLOAD_CHECKSUM_DUPLICATE");
  });

  it("a checksum file with a ../secret line -> PAYLOAD_CHECKSUM_LINE_INVALID", async () => {
    const variant = await variantWithChecksums(fixture, (t) => t + `${"0".repeat(64)}  ../secret\n`);
    await expectFetchFails(await stageVariant(variant), "PAYLOAD_CHECKSUM_LINE_INVALID");
  });

  it("a checksum that does not match its file -> PAYLOAD_SHA256_MISMATCH", async () => {
    const variant = await variantWithChecksums(fixture, (t) => t.replace(/^[0-9a-f]{64}/, "0".repeat(64)));
    const reference = await stageVariant(variant);
    await expectFetchFails(reference, "PAYLOAD_SHA256_MISMATCH");
    // No pin was compared: the release's own files disagree, and the fix says what that means.
    const { out } = await outputCase();
    await expect(fetchRelease({ ...options(reference), outputDir: out })).rejects.toThrow(
      /, the checksum file says 0{64}; fix: the release's own files disagree with each other, and a fetch verifies every byte against the pinned digest, so the release was published this way: do not install it, and tell its publisher$/,
    );
  });

  it("D/dist a symlink to an outside directory -> INSTALL_UNSAFE_PATH; the outside directory stays empty", async () => {
    const { dir, out } = await outputCase();
    const outside = join(dir, "outside");
    await mkdir(outside);
    await mkdir(out);
    await symlink(outside, join(out, "dist"));
    const before = (await readdir(dir, { recursive: true })).map(String).sort();
    await expect(() => fetchRelease({ ...options(bundleRef()), outputDir: out })).toThrowWithCode("INSTALL_UNSAFE_PATH");
    expect(await readdir(outside)).toEqual([]);
    expect((await readdir(dir, { recursive: true })).map(String).sort()).toEqual(before);
  });

  it("D/dist/<file> existing with other bytes -> INSTALL_OVERWRITE_REFUSED; D unchanged", async () => {
    const { dir, out } = await outputCase();
    await mkdir(join(out, "dist"), { recursive: true });
    await writeFile(join(out, "dist", fixture.tarballName), "other bytes");
    const before = (await readdir(dir, { recursive: true })).map(String).sort();
    await expect(() => fetchRelease({ ...options(bundleRef()), outputDir: out })).toThrowWithCode("INSTALL_OVERWRITE_REFUSED");
    expect((await readdir(dir, { recursive: true })).map(String).sort()).toEqual(before);
    expect(await readFile(join(out, "dist", fixture.tarballName), "utf8")).toBe("other bytes");
  });

  it("downloads into a private temp directory that is removed afterwards", async () => {
    const parent = await mkdtemp(join(tmpdir(), "hpk-fetch-parent-"));
    cleanups.push(() => rm(parent, { recursive: true, force: true }));
    const download = await downloadRelease(options(bundleRef(), { tmpDir: parent }));
    const [entry] = await readdir(parent);
    expect((await stat(join(parent, entry!))).mode & 0o777).toBe(0o700);
    await download.cleanup();
    expect(await readdir(parent)).toEqual([]);
  });

  // Privacy: each case stops the fetch before any manifest or blob is fetched.
  const packageStates: Array<[string, PackageState, string]> = [
    ["public", "public", "PRIVACY_PUBLIC"],
    ["internal", "internal", "PRIVACY_INTERNAL"],
    ["absent", "absent", "PRIVACY_ABSENT"],
    ["linked", "linked", "PRIVACY_LINKED"],
  ];
  for (const [label, state, code] of packageStates) {
    it(`privacy: a ${label} package -> ${code}, nothing downloaded`, async () => {
      api.setOwner("acme", "Organization");
      api.setPackage("acme", "demo-plugin", state);
      blobFetches = 0;
      const tagsBefore = await target.tags();
      await expectFetchFails(bundleRef(), code, { env: api.env({ [GHCR_REGISTRY_OVERRIDE_ENV]: registry.host }) });
      expect(blobFetches).toBe(0);
      // A read never bootstraps or writes anything (scenario 31).
      expect(await target.tags()).toEqual(tagsBefore);
    });
  }

  for (const status of [401, 403, 429, 500] as const) {
    it(`privacy: HTTP ${status} from the packages API -> PRIVACY_API_FAILED (429: PRIVACY_RATE_LIMITED), nothing downloaded`, async () => {
      api.setOwner("acme", "Organization");
      api.setPackage("acme", "demo-plugin", "private");
      api.fail(/packages\/container/, status);
      blobFetches = 0;
      try {
        await expectFetchFails(bundleRef(), status === 429 ? "PRIVACY_RATE_LIMITED" : "PRIVACY_API_FAILED", { env: api.env({ [GHCR_REGISTRY_OVERRIDE_ENV]: registry.host }) });
      } finally {
        api.clearFailures();
      }
      expect(blobFetches).toBe(0);
    });
  }

  it("privacy: a private unlinked package passes the API check and the fetch succeeds", async () => {
    api.setOwner("acme", "Organization");
    api.setPackage("acme", "demo-plugin", "private");
    const { out } = await outputCase();
    const result = await fetchRelease({ ...options(bundleRef(), { env: api.env({ [GHCR_REGISTRY_OVERRIDE_ENV]: registry.host }) }), outputDir: out });
    expect(result.files).toHaveLength(4);
  });

  it("privacy: a registry that serves the tag list anonymously -> PRIVACY_ANONYMOUS_READ, nothing downloaded", async () => {
    const open = await startRegistry({ auth: "bearer", anonymousPull: true });
    try {
      const repo = `${open.host}/${REPO_PATH}`;
      const openCreds = { username: open.username as string, password: open.password as string };
      await stageFixture(await createReleaseFixtureFor(repo), await openTarget(repo, { plainHttp: true, credentials: openCreds }), repo).then((s) => {
        staged2 = s;
      });
      blobFetches = 0;
      const { out, snapshot } = await outputCase();
      const before = await snapshot();
      await expect(
        () => fetchRelease({ reference: `${repo}@${staged2!.bundle.digest}`, repository: repo, plainHttp: true, credentials: openCreds, progress: null, openTarget: countingOpen, outputDir: out }),
      ).toThrowWithCode("PRIVACY_ANONYMOUS_READ");
      expect(blobFetches).toBe(0);
      expect(await snapshot()).toEqual(before);
    } finally {
      await open.stop();
    }
  });
});

let staged2: StagedRelease | undefined;

async function createReleaseFixtureFor(repo: string): Promise<ReleaseFixture> {
  const f = await createReleaseFixture({ registryRepository: repo });
  cleanups.push(f.cleanup);
  return f;
}
