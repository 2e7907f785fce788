/**
 * Provenance against Debian's docker-registry 2.8 (private: Bearer auth,
 * anonymous reads refused; no referrers API, so the `sha256-<hex>` tag schema
 * is used for real):
 *
 * - keyless round trip: signed with `@sigstore/mock`'s Fulcio and Rekor for a
 *   GitHub Actions-shaped OIDC identity, pushed as a referrer, discovered
 *   through the tag schema, verified with the trusted root built for the mock,
 *   and refused for another workflow, repository, ref, issuer, trusted root or run
 *   (through the CLI and the library API, each with its own code);
 * - the same with a local key, through the CLI (`release attest`,
 *   `verify-provenance --reference`, `fetch --provenance`);
 * - the same registry behind a loopback stand-in that speaks the referrers API
 *   (paged, one descriptor per page): attestations written and discovered through the API.
 */
import { mkdtemp, rm, writeFile, lstat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseTrustedRoot } from "../../src/contract/trusted-root.js";
import { fetchRelease } from "../../src/fetch/fetch.js";
import type { ProvenanceFlags } from "../../src/fetch/provenance.js";
import { verifyReferenceProvenance } from "../../src/fetch/verify-reference.js";
import { RegistryTarget } from "../../src/oci/registry-target.js";
import { referrersTag } from "../../src/oci/referrers.js";
import { attestRelease } from "../../release/attest.js";
import { runCli } from "../support/cli.js";
import { fixtureFacts, makeTestKey, pushAttestation, type TestKey } from "../support/provenance-fixture.js";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture, type StagedRelease } from "../support/release-fixture.js";
import { startReferrersProxy, type ReferrersProxy } from "../support/referrers-proxy.js";
import { startMockSigstore, type MockSigstore } from "../support/sigstore-mock.js";

describeRegistry("provenance on docker-registry 2.8 (tag schema), keyless with @sigstore/mock and with a local key", () => {
  let registry: RunningRegistry;
  let sigstore: MockSigstore;
  let dir: string;
  let key: TestKey;
  let rootFile: string;
  let proxy: ReferrersProxy;
  let basicRegistry: RunningRegistry;
  const releases: Record<"keyless" | "run" | "key" | "api", { repository: string; fixture: ReleaseFixture; staged: StagedRelease }> = {} as never;
  const credentials = () => ({ username: registry.username as string, password: registry.password as string });
  const apiCredentials = () => ({ username: basicRegistry.username as string, password: basicRegistry.password as string });
  const apiEnv = () => ({ REGISTRY_USERNAME: basicRegistry.username as string, REGISTRY_PASSWORD: basicRegistry.password as string });
  const env = () => ({ REGISTRY_USERNAME: registry.username as string, REGISTRY_PASSWORD: registry.password as string });
  const reference = (kind: "keyless" | "run" | "key" | "api") => `${releases[kind].repository}@${releases[kind].staged.bundle.digest}`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "hpk-provenance-registry-"));
    registry = await startRegistry({ auth: "bearer" });
    sigstore = await startMockSigstore();
    rootFile = join(dir, "mock-trusted-root.json");
    await writeFile(rootFile, JSON.stringify(sigstore.trustedRoot));
    key = await makeTestKey(dir, "release");
    // A second registry (Basic auth: a Bearer realm stays on the registry's own origin, which the stand-in is not)
    // behind a loopback stand-in that speaks the referrers API, one descriptor per page.
    basicRegistry = await startRegistry({ auth: "basic" });
    proxy = await startReferrersProxy(basicRegistry.url, { pageSize: 1 });
    for (const kind of ["keyless", "run", "key", "api"] as const) {
      const host = kind === "api" ? proxy.host : registry.host;
      const repository = `${host}/acme/${kind}-plugin`;
      const fixture = await createReleaseFixture({ registryRepository: repository });
      const target = new RegistryTarget({ registry: host, repository: `acme/${kind}-plugin`, plainHttp: true, credentials: kind === "api" ? apiCredentials() : credentials() });
      releases[kind] = { repository, fixture, staged: await stageFixture(fixture, target, repository) };
    }
  });

  afterAll(async () => {
    for (const r of Object.values(releases)) await r.fixture.cleanup();
    await sigstore?.close();
    await proxy?.close();
    await basicRegistry?.stop();
    await registry?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const keylessAttest = (identity: { runId?: string; runAttempt?: string; workflowPath?: string } = {}) => {
    const { fixture } = releases.keyless;
    return attestRelease({
      policy: fixture.policy,
      repository: releases.keyless.repository,
      reference: reference("keyless"),
      plainHttp: true,
      credentials: credentials(),
      env: {},
      signer: {
        kind: "keyless",
        identityToken: async () => sigstore.token({ repository: "acme/demo-plugin", runId: identity.runId ?? fixture.manifest.evidence.workflow.run_id, runAttempt: identity.runAttempt ?? "1", ...(identity.workflowPath === undefined ? {} : { workflowPath: identity.workflowPath }) }),
        fulcioUrl: sigstore.url,
        rekorUrl: sigstore.url,
        rekorEntryType: "intoto",
      },
      sourceRepository: "https://github.com/acme/demo-plugin",
      runAttempt: 1,
      verifyPolicy: { repo: "acme/demo-plugin" },
      trustedRoot: parseTrustedRoot(Buffer.from(JSON.stringify(sigstore.trustedRoot))),
    });
  };

  it("keyless: Fulcio certificate + Rekor entry for the release workflow, stored with the tag schema, verified offline with the mock's root", async () => {
    const attested = await keylessAttest();
    expect(attested).toMatchObject({ outcome: "attested", discovery: "tag-schema" });
    expect(sigstore.requests).toEqual(["POST /api/v2/signingCert", "POST /api/v1/log/entries"]);
    const target = new RegistryTarget({ registry: registry.host, repository: "acme/keyless-plugin", plainHttp: true, credentials: credentials() });
    expect(await target.tags()).toContain(referrersTag(releases.keyless.staged.bundle.digest));
    expect(await target.referrers(releases.keyless.staged.bundle)).toBeUndefined();
    // Rerun: the verifying attestation is kept, nothing is signed again.
    expect((await keylessAttest()).outcome).toBe("already-attested");
    expect(sigstore.requests).toHaveLength(2);

    const cli = await runCli(["verify-provenance", "--reference", reference("keyless"), "--repo", "acme/demo-plugin", "--trusted-root", rootFile, "--plain-http", "--json"], { env: env() });
    expect(cli.stderr).toBe("");
    expect(JSON.parse(cli.stdout)).toMatchObject({
      ok: true,
      attestations: [attested.attestation_reference],
      discovery: "tag-schema",
      signer: "certificate of acme/demo-plugin (https://token.actions.githubusercontent.com)",
      source_repository: "https://github.com/acme/demo-plugin",
      run_id: releases.keyless.fixture.manifest.evidence.workflow.run_id,
    });
    const out = join(dir, "keyless-out");
    const fetched = await runCli(["fetch", "--reference", reference("keyless"), "--repository", releases.keyless.repository, "--output-dir", out, "--plain-http", "--provenance", "--owner", "acme", "--trusted-root", rootFile, "--json"], { env: env() });
    expect(fetched.stderr).toBe("");
    expect(JSON.parse(fetched.stdout).provenance.attestations).toEqual([attested.attestation_reference]);
  });

  /** The CLI policy flags as `provenanceCheckFromFlags` takes them. */
  function libraryFlags(args: string[], root: string[]): ProvenanceFlags {
    const flags: Record<string, string> = {};
    for (const [i, arg] of [...args, ...root].entries()) {
      if (arg.startsWith("--")) flags[arg.slice(2).replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase())] = [...args, ...root][i + 1] as string;
    }
    return flags as ProvenanceFlags;
  }

  it.each([
    ["another workflow", ["--repo", "acme/demo-plugin", "--signer-workflow", "acme/demo-plugin/.github/workflows/other.yml"], "PROVENANCE_WORKFLOW_MISMATCH"],
    ["another repository", ["--repo", "acme/other-plugin"], "PROVENANCE_REPOSITORY_MISMATCH"],
    ["another owner", ["--owner", "evil"], "PROVENANCE_REPOSITORY_MISMATCH"],
    ["another ref", ["--repo", "acme/demo-plugin", "--source-ref", "refs/heads/release"], "PROVENANCE_REF_MISMATCH"],
    ["another issuer", ["--repo", "acme/demo-plugin", "--cert-oidc-issuer", "https://accounts.google.com"], "PROVENANCE_ISSUER_MISMATCH"],
    ["the public-good root instead of the mock's", ["--repo", "acme/demo-plugin", "--no-root"], "PROVENANCE_CERTIFICATE_INVALID"],
    ["a key where a certificate signed", ["--key", "KEY"], "PROVENANCE_KEY_MISMATCH"],
  ])("keyless, fails closed with %s: %s, nothing installed", async (label, flags, code) => {
    const args = flags.filter((f) => f !== "--no-root").map((f) => (f === "KEY" ? key.pubFile : f));
    const root = flags.includes("--no-root") || flags.includes("KEY") ? [] : ["--trusted-root", rootFile];
    const out = join(dir, `keyless-${label.replace(/[^a-z]+/g, "-")}`);
    const fetched = await runCli(["fetch", "--reference", reference("keyless"), "--repository", releases.keyless.repository, "--output-dir", out, "--plain-http", "--provenance", ...args, ...root], { env: env() });
    expect(fetched.code).toBe(1);
    expect(fetched.stderr).toMatch(new RegExp(`\\[${code}\\]\\n$`));
    expect(await lstat(out).catch(() => null)).toBeNull();
    const verified = await runCli(["verify-provenance", "--reference", reference("keyless"), "--plain-http", ...args, ...root], { env: env() });
    expect(verified.stderr).toMatch(new RegExp(`\\[${code}\\]\\n$`));
    expect(verified.code).toBe(1);
    // The library API keeps the same promise: the flags as a policy, the same code.
    const { provenanceCheckFromFlags } = await import("../../src/fetch/provenance.js");
    const check = await provenanceCheckFromFlags(libraryFlags(args, root));
    const { repository } = releases.keyless;
    await expect(() => verifyReferenceProvenance({ reference: reference("keyless"), repository, plainHttp: true, credentials: credentials(), provenance: check })).toThrowWithCode(code);
    await expect(() => fetchRelease({ reference: reference("keyless"), repository, plainHttp: true, credentials: credentials(), outputDir: out, progress: null, provenance: check })).toThrowWithCode(code);
    expect(await lstat(out).catch(() => null)).toBeNull();
  });

  it("keyless: a second verifying attestation from another run disagrees: PROVENANCE_ATTESTATIONS_DISAGREE", async () => {
    const { fixture, staged, repository } = releases.keyless;
    const target = new RegistryTarget({ registry: registry.host, repository: "acme/keyless-plugin", plainHttp: true, credentials: credentials() });
    const other = await fixtureFacts(fixture, repository, staged.bundle.digest, { runAttempt: 2 });
    await pushAttestation(target, staged.bundle, other, { kind: "keyless", identityToken: async () => sigstore.token({ repository: "acme/demo-plugin", runId: other.runId, runAttempt: "2" }), fulcioUrl: sigstore.url, rekorUrl: sigstore.url, rekorEntryType: "intoto" });
    const trustedRoot = parseTrustedRoot(Buffer.from(JSON.stringify(sigstore.trustedRoot)));
    const check = { policy: { repo: "acme/demo-plugin" }, trustedRoot };
    await expect(() => verifyReferenceProvenance({ reference: reference("keyless"), repository, plainHttp: true, credentials: credentials(), provenance: check })).toThrowWithCode("PROVENANCE_ATTESTATIONS_DISAGREE");
  });

  it("keyless: a certificate of another run than the statement's and the receipt's fails: PROVENANCE_RUN_ID_MISMATCH", async () => {
    const { fixture, staged, repository } = releases.run;
    const target = new RegistryTarget({ registry: registry.host, repository: "acme/run-plugin", plainHttp: true, credentials: credentials() });
    const facts = await fixtureFacts(fixture, repository, staged.bundle.digest, { runAttempt: 1 });
    await pushAttestation(target, staged.bundle, facts, { kind: "keyless", identityToken: async () => sigstore.token({ repository: "acme/demo-plugin", runId: "777", runAttempt: "1" }), fulcioUrl: sigstore.url, rekorUrl: sigstore.url, rekorEntryType: "intoto" });
    const trustedRoot = parseTrustedRoot(Buffer.from(JSON.stringify(sigstore.trustedRoot)));
    await expect(() => verifyReferenceProvenance({ reference: reference("run"), repository, plainHttp: true, credentials: credentials(), provenance: { policy: { repo: "acme/demo-plugin" }, trustedRoot } })).toThrowWithCode("PROVENANCE_RUN_ID_MISMATCH");
  });

  it("local key through the CLI: release attest (tag schema on the registry), verify-provenance --reference, fetch --provenance", async () => {
    const { fixture, repository } = releases.key;
    const cwd = await mkdtemp(join(dir, "maintainer-"));
    await writeFile(join(cwd, "package.json"), JSON.stringify({ name: fixture.packageName, version: "0.0.0", hermesPluginKit: { repository } }));
    const attest = await runCli(["release", "attest", "--reference", reference("key"), "--key", key.keyFile, "--source-repository", "https://github.com/acme/demo-plugin", "--plain-http"], { cwd, env: { ...env(), GITHUB_REPOSITORY: undefined, GITHUB_REF: undefined, GITHUB_RUN_ATTEMPT: undefined } });
    expect(attest.stderr).toBe("");
    const result = JSON.parse(attest.stdout);
    expect(result).toMatchObject({ outcome: "attested", discovery: "tag-schema", bundle_reference: reference("key") });
    const again = await runCli(["release", "attest", "--reference", reference("key"), "--key", key.keyFile, "--source-repository", "https://github.com/acme/demo-plugin", "--plain-http"], { cwd, env: env() });
    expect(JSON.parse(again.stdout)).toMatchObject({ outcome: "already-attested", attestation_reference: result.attestation_reference });

    const verified = await runCli(["verify-provenance", "--reference", reference("key"), "--key", key.pubFile, "--repo", "acme/demo-plugin", "--plain-http"], { env: env() });
    expect(verified.stderr).toBe("");
    expect(verified.stdout).toContain(`attestation ${result.attestation_reference} (tag-schema)`);
    const out = join(dir, "key-out");
    const fetched = await runCli(["fetch", "--reference", reference("key"), "--repository", repository, "--output-dir", out, "--plain-http", "--provenance", "--key", key.pubFile], { env: env() });
    expect(fetched.stderr).toBe("");
    expect(fetched.stdout).toContain(`attestation ${result.attestation_reference} (tag-schema)`);
    // Without credentials the private repository refuses before any attestation is read.
    const anonymous = await runCli(["verify-provenance", "--reference", reference("key"), "--key", key.pubFile, "--plain-http"], { env: { REGISTRY_USERNAME: undefined, REGISTRY_PASSWORD: undefined, REGISTRY_TOKEN: undefined, GH_TOKEN: undefined } });
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toMatch(/\[(OCI_AUTH_FAILED|PRIVACY_[A-Z_]+)\]\n$/);
    // The same credentials from a Docker client config (--registry-config, as fetch takes it); never printed.
    const config = join(cwd, "docker-config.json");
    await writeFile(config, JSON.stringify({ auths: { [registry.host]: { auth: Buffer.from(`${registry.username}:${registry.password}`).toString("base64") } } }));
    const noEnv = { REGISTRY_USERNAME: undefined, REGISTRY_PASSWORD: undefined, REGISTRY_TOKEN: undefined, GH_TOKEN: undefined, DOCKER_CONFIG: undefined, HOME: cwd };
    const viaConfig = await runCli(["verify-provenance", "--reference", reference("key"), "--key", key.pubFile, "--plain-http", "--registry-config", config], { env: noEnv });
    expect(viaConfig.code, viaConfig.stderr).toBe(0);
    expect(viaConfig.stdout).toContain(`attestation ${result.attestation_reference} (tag-schema)`);
    expect(viaConfig.stdout + viaConfig.stderr).not.toContain(registry.password as string);
  });

  it("a registry with the referrers API (loopback stand-in, paged): release attest writes no referrers tag; verify-provenance and fetch --provenance discover through the API", async () => {
    const { fixture, repository, staged } = releases.api;
    // Before any attestation the API answers an empty index: PROVENANCE_NOT_FOUND, and it says where it looked.
    const none = await runCli(["verify-provenance", "--reference", reference("api"), "--key", key.pubFile, "--plain-http"], { env: apiEnv() });
    expect(none.stderr).toMatch(/found no referrers through the registry's referrers API.*\[PROVENANCE_NOT_FOUND\]\n$/);
    expect(none.code).toBe(1);
    const cwd = await mkdtemp(join(dir, "maintainer-api-"));
    await writeFile(join(cwd, "package.json"), JSON.stringify({ name: fixture.packageName, version: "0.0.0", hermesPluginKit: { repository } }));
    const attest = await runCli(["release", "attest", "--reference", reference("api"), "--key", key.keyFile, "--source-repository", "https://github.com/acme/demo-plugin", "--plain-http"], { cwd, env: { ...apiEnv(), GITHUB_REPOSITORY: undefined, GITHUB_REF: undefined, GITHUB_RUN_ATTEMPT: undefined } });
    expect(attest.stderr).toBe("");
    const result = JSON.parse(attest.stdout);
    expect(result).toMatchObject({ outcome: "attested", discovery: "api" });
    // A second copy of the same statement: the API answers two pages of one descriptor each.
    const target = new RegistryTarget({ registry: proxy.host, repository: "acme/api-plugin", plainHttp: true, credentials: apiCredentials() });
    const second = await pushAttestation(target, staged.bundle, await fixtureFacts(fixture, repository, staged.bundle.digest), { kind: "key", privateKey: key.privateKey });

    // Discovery from here on: the not-found diagnosis above may look at the referrers tag to name it; finding does not.
    proxy.requests.length = 0;
    const verified = await runCli(["verify-provenance", "--reference", reference("api"), "--key", key.pubFile, "--repo", "acme/demo-plugin", "--plain-http", "--json"], { env: apiEnv() });
    expect(verified.stderr).toBe("");
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, discovery: "api", attestations: [result.attestation_reference, `${repository}@${second.digest}`] });
    const out = join(dir, "api-out");
    const fetched = await runCli(["fetch", "--reference", reference("api"), "--repository", repository, "--output-dir", out, "--plain-http", "--provenance", "--key", key.pubFile, "--json"], { env: apiEnv() });
    expect(fetched.stderr).toBe("");
    expect(JSON.parse(fetched.stdout).provenance).toMatchObject({ discovery: "api", attestations: [result.attestation_reference, `${repository}@${second.digest}`] });
    const referrersPath = `/v2/acme/api-plugin/referrers/${staged.bundle.digest}`;
    expect(proxy.requests).toContain(`GET ${referrersPath}?page=1`);
    expect(proxy.requests.some((r) => r.includes(`/manifests/${referrersTag(staged.bundle.digest)}`))).toBe(false);
  });
});
