/**
 * RegistryTarget against Debian's real docker-registry on 127.0.0.1: anonymous,
 * htpasswd Basic, and the Bearer token flow (GHCR-style).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BOOTSTRAP_ARTIFACT_TYPE, RELEASE_ARTIFACT_TYPE } from "../../src/contract/constants.js";
import {
  LayoutTarget,
  RegistryTarget,
  copy,
  descriptorOf,
  fetchBlobToFile,
  fetchManifest,
  openTarget,
  readLayout,
  tagIfAbsent,
  writeLayout,
  type Descriptor,
  type RegistryCredentials,
} from "../../src/oci/index.js";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";

describeRegistry("RegistryTarget against docker-registry", () => {
  let work: string;
  const registries: Record<string, RunningRegistry> = {};
  let layoutDir: string;
  let manifest: Descriptor;
  let otherDir: string;
  let other: Descriptor;

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), "hpk-reg-"));
    const [none, basic, bearer] = await Promise.all([
      startRegistry({ auth: "none" }),
      startRegistry({ auth: "basic" }),
      startRegistry({ auth: "bearer" }),
    ]);
    Object.assign(registries, { none, basic, bearer });
    const files = new Map<string, string>();
    for (const [name, size] of [["release-manifest.json", 300], ["dist/pkg-1.0.0.tgz", 300_000]] as const) {
      const file = path.join(work, name.replace("/", "_"));
      await writeFile(file, randomBytes(size));
      files.set(name, file);
    }
    layoutDir = path.join(work, "layout");
    manifest = (await writeLayout(layoutDir, RELEASE_ARTIFACT_TYPE, files)).manifest;
    otherDir = path.join(work, "bootstrap");
    other = (await writeLayout(otherDir, BOOTSTRAP_ARTIFACT_TYPE, new Map())).manifest;
  });

  afterAll(async () => {
    await Promise.all(Object.values(registries).map((r) => r.stop()));
    await rm(work, { recursive: true, force: true });
  });

  function target(kind: string, repo: string, credentials?: RegistryCredentials | null, extra: Record<string, unknown> = {}): RegistryTarget {
    const reg = registries[kind] as RunningRegistry;
    const creds = credentials === null ? undefined : (credentials ?? (reg.username ? { username: reg.username, password: reg.password as string } : undefined));
    return new RegistryTarget({ registry: reg.host, repository: repo, plainHttp: true, retry: { maxAttempts: 2, baseDelayMs: 10 }, ...(creds ? { credentials: creds } : {}), ...extra });
  }

  for (const kind of ["none", "basic", "bearer"] as const) {
    it(`pushes a layout, resolves, lists, and fetches back verified (${kind})`, async () => {
      const reg = target(kind, "owner/kit");
      const src = await LayoutTarget.open(layoutDir);
      const pushed = await copy(src, reg, "payload", { tag: "candidate-1" });
      expect(pushed).toEqual(manifest);
      expect(await reg.resolve("candidate-1")).toEqual(manifest);
      expect(await reg.resolve(manifest.digest)).toEqual(manifest);
      expect(await reg.tags()).toContain("candidate-1");
      const bytes = await fetchManifest(reg, manifest);
      expect(bytes.equals(await readFile(path.join(layoutDir, "blobs", "sha256", manifest.digest.slice(7))))).toBe(true);
      const dest = path.join(work, `back-${kind}`);
      const back = await LayoutTarget.open(dest, { create: true });
      await copy(reg, back, manifest.digest, { tag: "payload" });
      const read = await readLayout(dest);
      expect(read.manifest).toEqual(manifest);
      const layer = read.layers[0]?.descriptor as Descriptor;
      const out = path.join(work, `file-${kind}`);
      await fetchBlobToFile(reg, layer, out);
      expect((await readFile(out)).equals(await readFile(read.blobPath(layer.digest)))).toBe(true);
      await reg.close();
    });
  }

  it("tagIfAbsent: same digest no write, other digest OCI_TAG_CONFLICT, tag unchanged", async () => {
    const reg = target("bearer", "owner/tia");
    await copy(await LayoutTarget.open(layoutDir), reg, "payload", { tag: null });
    await copy(await LayoutTarget.open(otherDir), reg, "payload", { tag: null });
    expect(await tagIfAbsent(reg, manifest, "v1.0.0")).toBe("tagged");
    expect(await tagIfAbsent(reg, manifest, "v1.0.0")).toBe("already-tagged");
    await expect(tagIfAbsent(reg, other, "v1.0.0")).toThrowWithCode("OCI_TAG_CONFLICT");
    await expect(tagIfAbsent(reg, other, "v1.0.0:x")).toThrowWithCode("OCI_TAG_INVALID");
    expect((await reg.resolve("v1.0.0")).digest).toBe(manifest.digest);
    await reg.close();
  });

  it("bearer: caches one token per scope and refuses anonymous and wrong credentials", async () => {
    const reg = registries["bearer"] as RunningRegistry;
    const before = reg.tokenRequests.length;
    const t = target("bearer", "owner/cache");
    await copy(await LayoutTarget.open(layoutDir), t, "payload", { tag: "a" });
    await t.resolve("a");
    await t.tags();
    const mine = reg.tokenRequests.slice(before);
    expect(mine.every((r) => r.kind === "authenticated" && r.service === "hermes-test-registry")).toBe(true);
    expect(mine.length).toBeLessThanOrEqual(2);
    expect(mine.some((r) => r.scopes.includes("repository:owner/cache:pull,push"))).toBe(true);

    const anon = target("bearer", "owner/cache", null);
    await expect(anon.tags()).toThrowWithCode("OCI_AUTH_FAILED");
    expect(reg.tokenRequests.at(-1)?.kind).toBe("anonymous");
    const wrong = target("bearer", "owner/cache", { username: reg.username as string, password: "wrong" });
    await expect(wrong.resolve("a")).toThrowWithCode("OCI_AUTH_FAILED");
    // What was refused, by whom, and what to check; never the password.
    const refusal = await wrong.resolve("a").catch((e: Error) => e.message);
    expect(refusal).toMatch(/^token endpoint http:\/\/127\.0\.0\.1:\d+ refused the credentials \(HTTP 401\); fix: check the credentials you set for 127\.0\.0\.1:\d+ \(REGISTRY_USERNAME\/REGISTRY_PASSWORD, REGISTRY_TOKEN, or the Docker config entry or credential helper\) and that they may read \(and, to push, write\) owner\/cache$/);
    expect(refusal).not.toContain("wrong");
    expect(reg.tokenRequests.at(-1)?.kind).toBe("refused");
    await Promise.all([t.close(), anon.close(), wrong.close()]);
  });

  it("ping: /v2/ answers with credentials, refuses without them (basic, bearer)", async () => {
    for (const kind of ["basic", "bearer"] as const) {
      const ok = target(kind, "owner/kit");
      await ok.ping();
      const anon = target(kind, "owner/kit", null);
      await expect(kind === "basic" ? anon.ping() : anon.tags()).toThrowWithCode("OCI_AUTH_FAILED");
      await Promise.all([ok.close(), anon.close()]);
    }
  });

  it("bearer with anonymousPull: anonymous tokens can pull but not push (a public package)", async () => {
    const open = await startRegistry({ auth: "bearer", anonymousPull: true });
    try {
      const creds = { username: open.username as string, password: open.password as string };
      const writer = new RegistryTarget({ registry: open.host, repository: "owner/public", plainHttp: true, credentials: creds });
      await copy(await LayoutTarget.open(otherDir), writer, "payload", { tag: "v1" });
      const anon = new RegistryTarget({ registry: open.host, repository: "owner/public", plainHttp: true, retry: { maxAttempts: 1 } });
      expect(await anon.tags()).toEqual(["v1"]);
      await expect(anon.tag(other, "v2")).toThrowWithCode("OCI_AUTH_FAILED");
      expect(open.tokenRequests.some((r) => r.kind === "anonymous")).toBe(true);
      await Promise.all([writer.close(), anon.close()]);
    } finally {
      await open.stop();
    }
  });

  it("HTTPS: works with the registry's CA trusted, refuses an untrusted certificate and plain HTTP to it", async () => {
    const secure = await startRegistry({ auth: "basic", tls: true });
    try {
      const creds = { username: secure.username as string, password: secure.password as string };
      const trusted = await openTarget(`${secure.host}/owner/tls`, { credentials: creds, registry: { ca: secure.caCert as string } });
      await copy(await LayoutTarget.open(layoutDir), trusted, "payload", { tag: "v1" });
      expect(await trusted.resolve("v1")).toEqual(manifest);
      const out = path.join(work, "tls-layer");
      const layer = (await readLayout(layoutDir)).layers[0]?.descriptor as Descriptor;
      await fetchBlobToFile(trusted, layer, out);
      expect((await readFile(out)).length).toBe(layer.size);
      const untrusted = await openTarget(`${secure.host}/owner/tls`, { credentials: creds, registry: { retry: { maxAttempts: 1 } } });
      await expect(untrusted.tags()).toThrowWithCode("OCI_TLS_FAILED");
      await expect(untrusted.tags()).rejects.toThrow(/found a certificate this machine does not trust; fix: for a registry signed by a private CA set NODE_EXTRA_CA_CERTS=<ca\.pem>.*--plain-http$/);
      const plain = await openTarget(`${secure.host}/owner/tls`, { credentials: creds, plainHttp: true, registry: { retry: { maxAttempts: 1 } } });
      await expect(plain.tags()).toThrowWithCode("OCI_HTTP_ERROR");
      await Promise.all([trusted, untrusted, plain].map((t) => (t as RegistryTarget).close()));
    } finally {
      await secure.stop();
    }
  });

  it("basic: refuses missing and wrong credentials", async () => {
    const reg = registries["basic"] as RunningRegistry;
    const none = target("basic", "owner/kit", null);
    await expect(none.tags()).toThrowWithCode("OCI_AUTH_FAILED");
    const wrong = target("basic", "owner/kit", { username: reg.username as string, password: "nope" });
    await expect(wrong.tags()).toThrowWithCode("OCI_AUTH_FAILED");
    await Promise.all([none.close(), wrong.close()]);
  });

  it("uploads large blobs in PATCH chunks and refuses wrong bytes without storing them", async () => {
    const reg = target("none", "owner/chunks", undefined, { chunkSize: 64 * 1024 });
    const bytes = randomBytes(200 * 1024 + 7);
    const desc = descriptorOf("application/octet-stream", bytes);
    await reg.push(desc, Readable.from([bytes.subarray(0, 100_000), bytes.subarray(100_000)]));
    expect(await reg.exists(desc)).toBe(true);
    const out = path.join(work, "chunked.bin");
    await fetchBlobToFile(reg, desc, out);
    expect((await readFile(out)).equals(bytes)).toBe(true);

    const other = randomBytes(200 * 1024 + 7);
    const wrongDesc = descriptorOf("application/octet-stream", randomBytes(200 * 1024 + 7));
    await expect(reg.push(wrongDesc, Readable.from([other]))).toThrowWithCode("OCI_DIGEST_MISMATCH");
    expect(await reg.exists(wrongDesc)).toBe(false);
    const small = descriptorOf("application/octet-stream", Buffer.from("small blob"));
    await expect(reg.push(small, Readable.from([Buffer.from("SMALL BLOB")]))).toThrowWithCode("OCI_DIGEST_MISMATCH");
    expect(await reg.exists(small)).toBe(false);
    await expect(reg.fetch(small)).toThrowWithCode("OCI_NOT_FOUND");
    await reg.close();
  });

  it("follows real tag-list pagination", async () => {
    const reg = target("none", "owner/pages", undefined, { tagPageSize: 2 });
    await copy(await LayoutTarget.open(otherDir), reg, "payload", { tag: null });
    for (const t of ["t1", "t2", "t3", "t4", "t5"]) await reg.tag(other, t);
    expect((await reg.tags()).sort()).toEqual(["t1", "t2", "t3", "t4", "t5"]);
    await reg.close();
  });

  it("openTarget: plain HTTP only for loopback; unknown repository strings refused", async () => {
    await expect(openTarget("registry.example.com/owner/kit", { plainHttp: true })).toThrowWithCode("OCI_PLAIN_HTTP_REFUSED");
    await expect(openTarget("not a repository")).toThrowWithCode("OCI_REPOSITORY_INVALID");
    expect(() => new RegistryTarget({ registry: "127.0.0.1:5000", repository: "owner/../etc", plainHttp: true })).toThrow(/invalid registry repository/);
    expect(() => new RegistryTarget({ registry: "127.0.0.1:5000", repository: "Owner/Kit", plainHttp: true })).toThrow(/invalid registry repository/);
    const reg = registries["none"] as RunningRegistry;
    const t = await openTarget(`${reg.host}/owner/kit`, { plainHttp: true });
    expect(await t.tags()).toContain("candidate-1");
    const https = await openTarget(`${reg.host}/owner/kit`);
    await expect(https.tags()).toThrowWithCode("OCI_TLS_FAILED");
    await (t as RegistryTarget).close();
    await (https as RegistryTarget).close();
    expect(await readdir(work)).toContain("layout");
  });
});
