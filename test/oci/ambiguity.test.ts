/**
 * Ambiguity is refused, never resolved silently: one tag naming two
 * manifests in a layout store (the handed input: two digests with one
 * `org.opencontainers.image.ref.name` made `resolve` pick the last and the
 * release's tag-conflict check answer "same"), and the siblings in every
 * store and response: two descriptors for one digest, non-string annotations,
 * duplicate JSON keys, a tag listed twice, two different tokens, two realms,
 * two different values of one response header, two next pages.
 */
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LayoutTarget, RegistryTarget, parseChallenges, parseNextLink, readLayout, tagIfAbsent, writeLayout, type Descriptor } from "../../src/oci/index.js";
import { publishRelease } from "../../release/publish.js";
import { refuseTagConflict } from "../../release/registry-access.js";
import { stageRelease } from "../../release/stage.js";
import { fakeRegistryScope, type FakeRegistry } from "../support/registry-fake.js";
import { createPipelineFixture, preBindTag, stageInputs, storeIndex, type PipelineFixture } from "../support/release-pipeline-fixture.js";

const REF = "org.opencontainers.image.ref.name";
const MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json";
const sha = (b: Buffer | string): string => "sha256:" + createHash("sha256").update(b).digest("hex");

const scope = fakeRegistryScope("hpk-ambiguity-");
const fake = scope.fake;

/** A layout store holding two manifests (the bootstrap-like empty artifacts of two types). */
async function twoManifestStore(name: string): Promise<{ dir: string; a: Descriptor; b: Descriptor }> {
  const dir = path.join(scope.work, name);
  const store = await LayoutTarget.open(dir, { create: true });
  const a = (await writeLayout(path.join(scope.work, `${name}-a`), "application/vnd.example.a", new Map())).manifest;
  const b = (await writeLayout(path.join(scope.work, `${name}-b`), "application/vnd.example.b", new Map())).manifest;
  for (const [desc, src] of [[a, `${name}-a`], [b, `${name}-b`]] as const) {
    const source = await LayoutTarget.open(path.join(scope.work, src));
    await store.push(desc, await source.fetch(desc));
  }
  return { dir, a, b };
}

async function writeIndex(dir: string, manifests: unknown[]): Promise<void> {
  await writeFile(path.join(dir, "index.json"), JSON.stringify({ schemaVersion: 2, manifests }));
}

const entry = (d: Descriptor, tag?: string, extra: Record<string, unknown> = {}) => ({
  mediaType: d.mediaType,
  digest: d.digest,
  size: d.size,
  ...(tag === undefined ? {} : { annotations: { [REF]: tag } }),
  ...extra,
});

describe("a layout store", () => {
  it("the handed input: two digests under ref name v1 -> resolve, tagIfAbsent and the release's conflict check refuse (OCI_TAG_AMBIGUOUS)", async () => {
    const { dir, a, b } = await twoManifestStore("handed");
    await writeIndex(dir, [entry(a, "v1"), entry(b, "v1")]);
    const before = await readFile(path.join(dir, "index.json"));
    const store = await LayoutTarget.open(dir);
    await expect(store.resolve("v1")).toThrowWithCode("OCI_TAG_AMBIGUOUS");
    // Before the fix this answered "same" for the last entry's digest.
    await expect(refuseTagConflict(store, "v1", b.digest)).toThrowWithCode("OCI_TAG_AMBIGUOUS");
    await expect(refuseTagConflict(store, "v1", a.digest)).toThrowWithCode("OCI_TAG_AMBIGUOUS");
    await expect(tagIfAbsent(store, b, "v1")).toThrowWithCode("OCI_TAG_AMBIGUOUS");
    expect((await readFile(path.join(dir, "index.json"))).equals(before)).toBe(true);
    // tag() replaces every entry of the name: the repair.
    await store.tag(a, "v1");
    expect((await store.resolve("v1")).digest).toBe(a.digest);
  });

  it("readLayout (the layout a release stages) refuses two entries named payload (OCI_LAYOUT_INVALID)", async () => {
    const dir = path.join(scope.work, "payload");
    const a = (await writeLayout(dir, "application/vnd.example.a", new Map())).manifest;
    const b = (await writeLayout(path.join(scope.work, "payload-b"), "application/vnd.example.b", new Map())).manifest;
    expect((await readLayout(dir)).manifest.digest).toBe(a.digest);
    await writeIndex(dir, [entry(a, "payload"), entry(b, "payload")]);
    await expect(readLayout(dir)).toThrowWithCode("OCI_LAYOUT_INVALID");
  });

  it("the same descriptor twice under one name is not ambiguous (control)", async () => {
    const { dir, a } = await twoManifestStore("same");
    await writeIndex(dir, [entry(a, "v1"), entry(a, "v1")]);
    const store = await LayoutTarget.open(dir);
    expect((await store.resolve("v1")).digest).toBe(a.digest);
    expect(await tagIfAbsent(store, a, "v1")).toBe("already-tagged");
  });

  it("one digest described with two sizes or media types is refused (OCI_LAYOUT_INVALID)", async () => {
    const { dir, a } = await twoManifestStore("digest");
    await writeIndex(dir, [entry(a, "v1"), { ...entry(a, "v2"), size: a.size + 1 }]);
    const store = await LayoutTarget.open(dir);
    await expect(store.resolve(a.digest)).toThrowWithCode("OCI_LAYOUT_INVALID");
    await writeIndex(dir, [entry(a, "v1"), { ...entry(a, "v2"), mediaType: "application/vnd.oci.image.index.v1+json" }]);
    await expect(store.resolve(a.digest)).toThrowWithCode("OCI_LAYOUT_INVALID");
  });

  it("a non-string annotation or a duplicate annotation key is refused, not dropped (OCI_LAYOUT_INVALID)", async () => {
    const { dir, a, b } = await twoManifestStore("annotations");
    await writeIndex(dir, [entry(a, "v1"), { ...entry(b), annotations: { [REF]: 1 } }]);
    await expect(LayoutTarget.open(dir)).toThrowWithCode("OCI_LAYOUT_INVALID");
    const twice = `{"schemaVersion":2,"manifests":[{"mediaType":"${MANIFEST_TYPE}","digest":"${a.digest}","size":${a.size},"annotations":{"${REF}":"v1","${REF}":"v2"}}]}`;
    await writeFile(path.join(dir, "index.json"), twice);
    await expect(LayoutTarget.open(dir)).toThrowWithCode("OCI_LAYOUT_INVALID");
  });
});

describe("release publish over an ambiguous store", () => {
  let pf: PipelineFixture;
  let reference: string;
  beforeAll(async () => {
    pf = await createPipelineFixture();
    reference = (await stageRelease({ ...stageInputs(pf.fixture), repository: pf.repository, tag: pf.candidateTag })).bundle_reference;
  });
  afterAll(async () => {
    await pf.cleanup();
  });

  it("v<V> named twice (the staged digest and another) fails with OCI_TAG_AMBIGUOUS and writes nothing", async () => {
    const other = await preBindTag(pf.storeDir, "v0.8.0-other", path.join(pf.root, "scratch"));
    const index = JSON.parse(await storeIndex(pf.storeDir)) as { schemaVersion: number; manifests: Array<Record<string, unknown>> };
    const bundle = reference.split("@")[1] as string;
    const staged = index.manifests.find((m) => m["digest"] === bundle) as Record<string, unknown>;
    const otherEntry = index.manifests.find((m) => m["digest"] === other) as Record<string, unknown>;
    index.manifests.push({ ...staged, annotations: { [REF]: "v0.8.0" } }, { ...otherEntry, annotations: { [REF]: "v0.8.0" } });
    await writeFile(path.join(pf.storeDir, "index.json"), JSON.stringify(index));
    const before = await storeIndex(pf.storeDir);
    const output = path.join(pf.root, "receipt.json");
    await expect(publishRelease({ policy: pf.fixture.policy, repository: pf.repository, reference, output })).toThrowWithCode("OCI_TAG_AMBIGUOUS");
    expect(await storeIndex(pf.storeDir)).toBe(before);
    await expect(readFile(output)).toThrowWithCode("ENOENT");
  });
});

describe("registry responses", () => {
  const client = (s: FakeRegistry, extra: Partial<ConstructorParameters<typeof RegistryTarget>[0]> = {}) =>
    new RegistryTarget({ registry: s.host, repository: "acme/kit", plainHttp: true, retry: { maxAttempts: 1 }, ...extra });

  it("a tag listed twice, on one page or across pages, is refused (OCI_RESPONSE_INVALID)", async () => {
    const one = await fake((_req, res) => void res.writeHead(200, { "content-type": "application/json" }).end('{"name":"acme/kit","tags":["v1","v2","v1"]}'));
    await expect(client(one).tags()).toThrowWithCode("OCI_RESPONSE_INVALID");
    const pages = await fake((req, res) => {
      const last = (req.url ?? "").includes("last=");
      res.writeHead(200, { "content-type": "application/json", ...(last ? {} : { link: '</v2/acme/kit/tags/list?last=v1&n=1>; rel="next"' }) });
      res.end(JSON.stringify({ name: "acme/kit", tags: ["v1"] }));
    });
    await expect(client(pages).tags()).toThrowWithCode("OCI_RESPONSE_INVALID");
    const ok = await fake((_req, res) => void res.writeHead(200, { "content-type": "application/json" }).end('{"name":"acme/kit","tags":["v1","v2"]}'));
    expect(await client(ok).tags()).toEqual(["v1", "v2"]);
  });

  it("a tag-list page with a duplicate key is refused (OCI_RESPONSE_INVALID)", async () => {
    const s = await fake((_req, res) => void res.writeHead(200, { "content-type": "application/json" }).end('{"name":"acme/kit","tags":["v1"],"tags":["evil"]}'));
    await expect(client(s).tags()).toThrowWithCode("OCI_RESPONSE_INVALID");
  });

  it("two different next pages in one Link header are refused (OCI_LINK_INVALID)", () => {
    expect(() => parseNextLink('</a?n=1>; rel="next", </b?n=1>; rel="next"')).toThrow(expect.objectContaining({ code: "OCI_LINK_INVALID" }));
    expect(parseNextLink('</a?n=1>; rel="next", </a?n=1>; rel="next"')).toBe("/a?n=1");
  });

  it("a token response with two different tokens, or a duplicate key, is refused (OCI_RESPONSE_INVALID)", async () => {
    for (const body of ['{"token":"one","access_token":"two"}', '{"token":"one","token":"two"}']) {
      let self = "";
      const s = await fake((req, res) => {
        if ((req.url ?? "").startsWith("/token")) return void res.writeHead(200, { "content-type": "application/json" }).end(body);
        res.writeHead(401, { "www-authenticate": `Bearer realm="${self}/token",service="s"` }).end();
      });
      self = s.url;
      await expect(client(s, { credentials: { username: "u", password: "p" } }).tags()).toThrowWithCode("OCI_RESPONSE_INVALID");
    }
  });

  it("a challenge naming two realms, or two Bearer challenges with different realms, is refused", async () => {
    expect(() => parseChallenges('Bearer realm="https://a/token",realm="https://b/token"')).toThrow(expect.objectContaining({ code: "OCI_RESPONSE_INVALID" }));
    const s = await fake((_req, res) => {
      res.writeHead(401, [["www-authenticate", 'Bearer realm="http://127.0.0.1:1/a"'], ["www-authenticate", 'Bearer realm="http://127.0.0.1:1/b"']].flat());
      res.end();
    });
    await expect(client(s, { credentials: { username: "u", password: "p" } }).tags()).toThrowWithCode("OCI_RESPONSE_INVALID");
  });

  it("two different Location or Docker-Content-Digest headers are refused, never resolved to the first", async () => {
    const body = Buffer.from('{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},"layers":[]}');
    const digests = await fake((_req, res) => {
      res.writeHead(200, ["content-type", MANIFEST_TYPE, "docker-content-digest", sha(body), "docker-content-digest", sha("other"), "content-length", String(body.length)]);
      res.end(body);
    });
    await expect(client(digests).resolve("v1")).toThrowWithCode("OCI_RESPONSE_INVALID");
    const redirect = await fake((_req, res) => {
      res.writeHead(307, ["location", "/v2/acme/kit/blobs/x", "location", "https://cdn.example/x"]);
      res.end();
    });
    const blob: Descriptor = { mediaType: "application/octet-stream", digest: sha("x"), size: 1 };
    await expect(client(redirect).fetch(blob)).toThrowWithCode("OCI_RESPONSE_INVALID");
  });
});
