/**
 * OCI referrers: a Sigstore-bundle referrer pushed onto a release bundle and
 * discovered again, for real on Debian's docker-registry 2.8 (no referrers
 * API: the `sha256-<hex>` tag schema), through a loopback stand-in that
 * speaks the referrers API (proxying that registry), and in the `oci-layout:`
 * store (tag schema in `index.json`). Idempotent pushes, filtering by
 * artifactType, and malformed or absent inputs with their codes.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OCI_INDEX_MEDIA_TYPE, RELEASE_ARTIFACT_TYPE } from "../../src/contract/constants.js";
import { LayoutTarget, RegistryTarget, copy, fetchManifest, writeLayout, type Descriptor, type Target } from "../../src/oci/index.js";
import { listReferrers, pushReferrer, referrerManifest, referrersTag, type ReferrerArtifact } from "../../src/oci/referrers.js";
import { startReferrersProxy, type ReferrersProxy } from "../support/referrers-proxy.js";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";

const SIGSTORE = "application/vnd.dev.sigstore.bundle.v0.3+json";
let work: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "hpk-referrers-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

function attestation(text: string, artifactType = SIGSTORE): ReferrerArtifact {
  return { artifactType, layerMediaType: artifactType, bytes: Buffer.from(text), annotations: { "dev.sigstore.bundle.content": "dsse-envelope" } };
}

/** Push a small release bundle into `target` and return its manifest descriptor. */
async function pushSubject(target: Target, name: string): Promise<Descriptor> {
  const inDir = await mkdtemp(path.join(work, "in-"));
  await writeFile(path.join(inDir, "manifest"), `{"name":"${name}"}\n`);
  const dir = path.join(work, `layout-${name}-${Date.now()}`);
  const { manifest } = await writeLayout(dir, RELEASE_ARTIFACT_TYPE, new Map([["release-manifest.json", path.join(inDir, "manifest")]]));
  await copy(await LayoutTarget.open(dir), target, manifest.digest, { tag: name });
  return { mediaType: manifest.mediaType, digest: manifest.digest, size: manifest.size };
}

/** The shared scenario over any target; `expected` is how referrers are kept there. */
async function roundTrip(target: Target, expected: "api" | "tag-schema"): Promise<void> {
  const subject = await pushSubject(target, `subject-${expected}`);
  const first = await pushReferrer(target, subject, attestation("bundle one"));
  expect(first.source).toBe(expected);
  expect(first.descriptor).toMatchObject({ artifactType: SIGSTORE, annotations: { "dev.sigstore.bundle.content": "dsse-envelope" } });
  const again = await pushReferrer(target, subject, attestation("bundle one"));
  expect(again.descriptor.digest).toBe(first.descriptor.digest);
  const second = await pushReferrer(target, subject, attestation("bundle two"));
  await pushReferrer(target, subject, attestation("other", "application/vnd.example.sbom+json"));

  const listed = await listReferrers(target, subject, { artifactType: SIGSTORE });
  expect(listed.source).toBe(expected);
  expect(listed.descriptors.map((d) => d.digest).sort()).toEqual([first.descriptor.digest, second.descriptor.digest].sort());
  expect((await listReferrers(target, subject)).descriptors).toHaveLength(3);

  // The referrer manifest carries the subject and the one layer.
  const manifest = JSON.parse((await fetchManifest(target, first.descriptor)).toString("utf8"));
  expect(manifest.subject).toEqual(subject);
  expect(manifest.artifactType).toBe(SIGSTORE);
  expect(manifest.layers).toHaveLength(1);
  expect(manifest.layers[0].mediaType).toBe(SIGSTORE);

  const tags = await target.tags();
  expect(tags.includes(referrersTag(subject.digest))).toBe(expected === "tag-schema");
  // A subject without referrers lists nothing.
  const lonely = await pushSubject(target, `lonely-${expected}`);
  expect((await listReferrers(target, lonely)).descriptors).toEqual([]);
}

describe("referrerManifest", () => {
  it("is deterministic and lists artifactType and annotations in its descriptor", () => {
    const subject = { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: "sha256:" + "a".repeat(64), size: 512 };
    const a = referrerManifest(subject, attestation("x"));
    const b = referrerManifest(subject, attestation("x"));
    expect(a.bytes.equals(b.bytes)).toBe(true);
    expect(Object.keys(JSON.parse(a.bytes.toString())).sort()).toEqual(["annotations", "artifactType", "config", "layers", "mediaType", "schemaVersion", "subject"]);
    expect(referrersTag(subject.digest)).toBe(`sha256-${"a".repeat(64)}`);
  });

  it("refuses a malformed subject digest: OCI_DESCRIPTOR_INVALID", async () => {
    await expect(() => referrersTag("sha256:abc")).toThrowWithCode("OCI_DESCRIPTOR_INVALID");
  });
});

describe("referrers in the oci-layout store", () => {
  it("keeps them with the tag schema in index.json", async () => {
    const store = await LayoutTarget.open(path.join(work, "store"), { create: true });
    await roundTrip(store, "tag-schema");
  });

  it("refuses an absent subject (OCI_NOT_FOUND) and a referrers tag that names a manifest (OCI_MANIFEST_INVALID)", async () => {
    const store = await LayoutTarget.open(path.join(work, "store-bad"), { create: true });
    const absent = { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: "sha256:" + "c".repeat(64), size: 10 };
    await expect(() => pushReferrer(store, absent, attestation("x"))).toThrowWithCode("OCI_NOT_FOUND");
    const subject = await pushSubject(store, "bad");
    const other = await pushSubject(store, "other");
    await store.tag(other, referrersTag(subject.digest));
    await expect(() => listReferrers(store, subject)).toThrowWithCode("OCI_MANIFEST_INVALID");
    await expect(() => pushReferrer(store, subject, attestation("x"))).toThrowWithCode("OCI_MANIFEST_INVALID");
  });
});

describeRegistry("referrers on Debian's docker-registry 2.8 and through a referrers-API stand-in", () => {
  let registry: RunningRegistry;
  let proxy: ReferrersProxy;
  beforeAll(async () => {
    registry = await startRegistry({ auth: "basic" });
    proxy = await startReferrersProxy(registry.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await registry?.stop();
  });
  const credentials = () => ({ username: registry.username as string, password: registry.password as string });

  it("docker-registry has no referrers API: the sha256-<hex> tag schema, for real", async () => {
    const target = new RegistryTarget({ registry: registry.host, repository: "acme/tag-schema", plainHttp: true, credentials: credentials() });
    await roundTrip(target, "tag-schema");
    const subject = await pushSubject(target, "index-check");
    await pushReferrer(target, subject, attestation("z"));
    const index = await target.resolve(referrersTag(subject.digest));
    expect(index.mediaType).toBe(OCI_INDEX_MEDIA_TYPE);
    expect(await target.referrers(subject)).toBeUndefined();
  });

  it("a registry with the referrers API: discovered through GET /v2/<name>/referrers/<digest>, no tag written", async () => {
    const target = new RegistryTarget({ registry: proxy.host, repository: "acme/api", plainHttp: true, credentials: credentials() });
    await roundTrip(target, "api");
    expect(proxy.requests.some((r) => /^GET \/v2\/acme\/api\/referrers\/sha256:[0-9a-f]{64}$/.test(r))).toBe(true);
    expect(proxy.requests.some((r) => r.includes("/manifests/sha256-"))).toBe(false);
  });

  it("a paged referrers API: every Link rel=\"next\" page is read", async () => {
    const paged = await startReferrersProxy(registry.url, { pageSize: 1 });
    try {
      const target = new RegistryTarget({ registry: paged.host, repository: "acme/paged", plainHttp: true, credentials: credentials() });
      await roundTrip(target, "api");
      expect(paged.requests.some((r) => /^GET \/v2\/acme\/paged\/referrers\/sha256:[0-9a-f]{64}\?page=2$/.test(r))).toBe(true);
    } finally {
      await paged.close();
    }
  });

  it.each([
    ["a next page on another origin", () => "http://127.0.0.9:1/elsewhere", "OCI_LINK_INVALID"],
    ["a next page that is the first again", (path: string) => path, "OCI_PAGINATION_LOOP"],
  ])("a referrers API with %s fails", async (_label, nextLink, code) => {
    const bad = await startReferrersProxy(registry.url, { pageSize: 1, nextLink });
    try {
      const target = new RegistryTarget({ registry: bad.host, repository: "acme/bad-pages", plainHttp: true, credentials: credentials() });
      const subject = await pushSubject(target, `bad-${code}`);
      await pushReferrer(target, subject, attestation("one"));
      // The second referrer makes a second page: both the push (which asks the API) and the listing refuse it.
      await expect(() => pushReferrer(target, subject, attestation("two"))).toThrowWithCode(code);
      await expect(() => listReferrers(target, subject)).toThrowWithCode(code);
      expect(bad.requests.some((r) => r.includes("127.0.0.9"))).toBe(false);
    } finally {
      await bad.close();
    }
  });

  it("the referrers API needs the registry's credentials too: OCI_AUTH_FAILED without them", async () => {
    const writer = new RegistryTarget({ registry: proxy.host, repository: "acme/auth", plainHttp: true, credentials: credentials() });
    const subject = await pushSubject(writer, "auth");
    const anonymous = new RegistryTarget({ registry: proxy.host, repository: "acme/auth", plainHttp: true, retry: { maxAttempts: 1 } });
    await expect(() => anonymous.referrers(subject)).toThrowWithCode("OCI_AUTH_FAILED");
  });
});
