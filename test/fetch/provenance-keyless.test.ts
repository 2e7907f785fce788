/**
 * Keyless provenance, fail-closed: attestations signed through `@sigstore/mock`'s
 * Fulcio and Rekor for GitHub Actions-shaped OIDC identities, stored as referrers
 * in an `oci-layout:` store (tag schema), verified with the trusted root built for
 * the mock. Every refusal docs/architecture.md, "Provenance" (and docs/provenance.md) names is asserted
 * with its own code through the library API (`verifyReferenceProvenance`,
 * `fetchRelease`) and through the CLI (`verify-provenance --reference`,
 * `fetch --provenance`), and nothing is installed. A fleet lock pins the
 * identity policy (`fleet add --provenance --repo`) and `fleet verify` enforces it.
 */
import { chmod, cp, lstat, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJsonBytes } from "../../src/contract/canonical-json.js";
import { SIGSTORE_BUNDLE_V03_MEDIA_TYPE, provenanceStatement, type ProvenanceFacts } from "../../src/contract/provenance.js";
import { parseTrustedRoot } from "../../src/contract/trusted-root.js";
import { fetchRelease } from "../../src/fetch/fetch.js";
import { verifyFleetLock } from "../../src/fetch/fleet.js";
import type { ProvenanceCheckOptions } from "../../src/fetch/provenance.js";
import { verifyReferenceProvenance } from "../../src/fetch/verify-reference.js";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { pushReferrer } from "../../src/oci/referrers.js";
import type { Descriptor } from "../../src/oci/target.js";
import type { ProvenanceSigner } from "../../release/provenance-sign.js";
import { runCli } from "../support/cli.js";
import { fixtureFacts, pushAttestation } from "../support/provenance-fixture.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture, type StagedRelease } from "../support/release-fixture.js";
import { startMockSigstore, type GitHubIdentity, type MockSigstore } from "../support/sigstore-mock.js";

let root: string;
let storeDir: string;
let pristine: string;
let repository: string;
let rootFile: string;
let fixture: ReleaseFixture;
let staged: StagedRelease;
let sigstore: MockSigstore;

const reference = () => `${repository}@${staged.bundle.digest}`;
const check = (): ProvenanceCheckOptions => ({ policy: { repo: "acme/demo-plugin" }, trustedRoot: parseTrustedRoot(Buffer.from(JSON.stringify(sigstore.trustedRoot))) });
const cliPolicy = () => ["--repo", "acme/demo-plugin", "--trusted-root", rootFile];

/** A keyless signer for the release workflow of acme/demo-plugin at main, in the release's run (overridable). */
function signer(identity: Partial<GitHubIdentity> = {}): ProvenanceSigner {
  const token = sigstore.token({ repository: "acme/demo-plugin", runId: fixture.manifest.evidence.workflow.run_id, runAttempt: String(fixture.manifest.evidence.workflow.run_attempt), ...identity });
  return { kind: "keyless", identityToken: async () => token, fulcioUrl: sigstore.url, rekorUrl: sigstore.url, rekorEntryType: "intoto" };
}

async function facts(overrides: Partial<ProvenanceFacts> = {}): Promise<ProvenanceFacts> {
  return fixtureFacts(fixture, repository, staged.bundle.digest, overrides);
}

async function fresh(): Promise<LayoutTarget> {
  await rm(storeDir, { recursive: true, force: true });
  await cp(pristine, storeDir, { recursive: true });
  await chmod(storeDir, 0o700);
  return LayoutTarget.open(storeDir);
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-provenance-keyless-"));
  storeDir = join(root, "store");
  pristine = join(root, "pristine");
  repository = `oci-layout:${storeDir}`;
  sigstore = await startMockSigstore();
  rootFile = join(root, "mock-trusted-root.json");
  await writeFile(rootFile, JSON.stringify(sigstore.trustedRoot));
  fixture = await createReleaseFixture({ registryRepository: repository });
  staged = await stageFixture(fixture, await LayoutTarget.open(storeDir, { create: true }), repository);
  await chmod(storeDir, 0o700);
  await cp(storeDir, pristine, { recursive: true });
});

afterAll(async () => {
  await sigstore?.close();
  await fixture?.cleanup();
  await rm(root, { recursive: true, force: true });
});

describe("keyless attestations in an oci-layout store", () => {
  it("the release workflow's attestation verifies (library and CLI) and fetch --provenance installs", async () => {
    const store = await fresh();
    const pushed = await pushAttestation(store, staged.bundle, await facts(), signer());
    const result = await verifyReferenceProvenance({ reference: reference(), repository, provenance: check() });
    expect(result).toMatchObject({ attestations: [`${repository}@${pushed.digest}`], signer: "certificate of acme/demo-plugin (https://token.actions.githubusercontent.com)", ignored: 0 });
    const out = join(root, "out-ok");
    const fetched = await runCli(["fetch", "--reference", reference(), "--repository", repository, "--output-dir", out, "--provenance", ...cliPolicy(), "--json"], { cwd: root });
    expect(fetched.stderr).toBe("");
    expect(JSON.parse(fetched.stdout).provenance).toMatchObject({ attestations: [`${repository}@${pushed.digest}`], discovery: "tag-schema", run_id: fixture.manifest.evidence.workflow.run_id });
    expect((await lstat(join(out, "release-manifest.json"))).isFile()).toBe(true);
  });

  type Case = [label: string, code: string, arrange: (store: LayoutTarget) => Promise<void>];
  const cases: Case[] = [
    ["no attestation", "PROVENANCE_NOT_FOUND", async () => undefined],
    ["a statement for another digest", "PROVENANCE_SUBJECT_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ bundleDigest: "sha256:" + "e".repeat(64) }), signer()))],
    [
      "a tampered DSSE payload (checked before the log, which saw another payload too)",
      "PROVENANCE_SIGNATURE_INVALID",
      async (s) => {
        const other = canonicalJsonBytes(provenanceStatement(await facts({ sourceSha: "c".repeat(40) })));
        await pushAttestation(s, staged.bundle, await facts(), signer(), (b) => (b["dsseEnvelope"]["payload"] = other.toString("base64")));
      },
    ],
    ["a certificate of another repository", "PROVENANCE_REPOSITORY_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ sourceRepository: "https://github.com/evil/demo-plugin" }), signer({ repository: "evil/demo-plugin" })))],
    ["a certificate of another workflow", "PROVENANCE_WORKFLOW_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ workflow: { path: ".github/workflows/other.yml", ref: "refs/heads/main" } }), signer({ workflowPath: ".github/workflows/other.yml" })))],
    ["a certificate of another ref", "PROVENANCE_REF_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ workflow: { path: ".github/workflows/release.yml", ref: "refs/heads/dev" } }), signer({ ref: "refs/heads/dev" })))],
    ["a certificate of another OIDC issuer", "PROVENANCE_ISSUER_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts(), signer({ issuer: "https://gitlab.com" })))],
    ["a statement that says another workflow than its certificate", "PROVENANCE_WORKFLOW_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ workflow: { path: ".github/workflows/other.yml", ref: "refs/heads/main" } }), signer()))],
    ["a run id other than the receipt's (certificate and statement agree)", "PROVENANCE_RUN_ID_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ runId: "4242" }), signer({ runId: "4242" })))],
    ["a certificate of another run than its statement", "PROVENANCE_RUN_ID_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts(), signer({ runId: "4243" })))],
    ["a source SHA other than the receipt's", "PROVENANCE_SOURCE_SHA_MISMATCH", async (s) => void (await pushAttestation(s, staged.bundle, await facts({ sourceSha: "d".repeat(40) }), signer()))],
    [
      "two attestations that disagree",
      "PROVENANCE_ATTESTATIONS_DISAGREE",
      async (s) => {
        await pushAttestation(s, staged.bundle, await facts(), signer());
        await pushAttestation(s, staged.bundle, await facts({ runAttempt: 2 }), signer({ runAttempt: "2" }));
      },
    ],
    [
      "an attestation larger than 1 MiB",
      "PROVENANCE_ATTESTATION_TOO_LARGE",
      async (s) => void (await pushReferrer(s, staged.bundle, { artifactType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE, layerMediaType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE, bytes: Buffer.alloc(1024 * 1024 + 1, 0x20) })),
    ],
  ];

  it.each(cases)("%s: %s (library and CLI), nothing installed", async (label, code, arrange) => {
    await arrange(await fresh());
    const out = join(root, `out-${label.replace(/[^a-z0-9]+/gi, "-")}`);
    await expect(() => verifyReferenceProvenance({ reference: reference(), repository, provenance: check() })).toThrowWithCode(code);
    await expect(() => fetchRelease({ reference: reference(), repository, outputDir: out, progress: null, provenance: check() })).toThrowWithCode(code);
    expect(await lstat(out).catch(() => null)).toBeNull();
    const verified = await runCli(["verify-provenance", "--reference", reference(), ...cliPolicy()], { cwd: root });
    expect(verified.stderr).toMatch(new RegExp(`^hermes-plugin-kit: .+ \\[${code}\\]\\n$`, "s"));
    expect(verified.code).toBe(1);
    const fetched = await runCli(["fetch", "--reference", reference(), "--repository", repository, "--output-dir", out, "--provenance", ...cliPolicy(), "--json"], { cwd: root });
    expect(JSON.parse(fetched.stdout)).toMatchObject({ ok: false, code });
    expect(fetched.code).toBe(1);
    expect(await lstat(out).catch(() => null)).toBeNull();
  });
});

describe("fleet pins a keyless policy", () => {
  it("fleet add --provenance --repo records the identity policy; fleet verify --trusted-root enforces it (CLI and library)", async () => {
    const receipt = join(root, "release-receipt.json");
    await writeFile(receipt, staged.receiptBytes);
    const lock = join(root, "fleet.lock.json");
    // Attested by the release workflow: verifies with the mock's root, and not with the public-good root.
    const store = await fresh();
    const pushed = await pushAttestation(store, staged.bundle, await facts(), signer());
    // fleet add checks the attestation before it pins: under the public-good root it is refused, nothing written.
    const untrusted = await runCli(["fleet", "add", "--lock", lock, "--receipt", receipt, "--repository", repository, "--provenance", "--repo", "acme/demo-plugin"], { cwd: root });
    expect(untrusted.stderr).toMatch(/\[PROVENANCE_CERTIFICATE_INVALID\]\n$/);
    await expect(readFile(lock)).rejects.toThrow(/ENOENT/);
    const added = await runCli(["fleet", "add", "--lock", lock, "--receipt", receipt, "--repository", repository, "--provenance", "--repo", "acme/demo-plugin", "--trusted-root", rootFile, "--json"], { cwd: root });
    expect(added.stderr).toBe("");
    expect(JSON.parse(added.stdout)).toMatchObject({ ok: true, changed: true, checked_against_registry: true });
    expect(JSON.parse(await readFile(lock, "utf8")).plugins[0].provenance).toEqual({ repo: "acme/demo-plugin" });
    const ok = await runCli(["fleet", "verify", "--lock", lock, "--trusted-root", rootFile, "--json"], { cwd: root });
    expect(ok.stderr).toBe("");
    expect(JSON.parse(ok.stdout).plugins[0].attestations).toEqual([`${repository}@${pushed.digest}`]);
    expect((await verifyFleetLock({ lockPath: lock, progress: null, trustedRoot: check().trustedRoot }))[0]?.attestations).toHaveLength(1);
    const publicGood = await runCli(["fleet", "verify", "--lock", lock], { cwd: root });
    expect(publicGood.stderr).toMatch(/\[PROVENANCE_CERTIFICATE_INVALID\]\n$/);
    expect(publicGood.code).toBe(1);

    // Attested only by another repository's workflow: refused with its code.
    const other = await fresh();
    await pushAttestation(other, staged.bundle, await facts({ sourceRepository: "https://github.com/evil/demo-plugin" }), signer({ repository: "evil/demo-plugin" }));
    const refused = await runCli(["fleet", "verify", "--lock", lock, "--trusted-root", rootFile], { cwd: root });
    expect(refused.stderr).toMatch(/\[PROVENANCE_REPOSITORY_MISMATCH\]\n$/);
    // A lock pins several plugins: the refusal names which one, whatever area raised it.
    expect(refused.stderr).toMatch(new RegExp(`^hermes-plugin-kit: plugin ${fixture.manifest.package} ${fixture.manifest.version}: `));
    expect(refused.code).toBe(1);
    await expect(() => verifyFleetLock({ lockPath: lock, progress: null, trustedRoot: check().trustedRoot })).toThrowWithCode("PROVENANCE_REPOSITORY_MISMATCH");
  });
});

describe("a Sigstore instance without a transparency log (the shape of GitHub's for private repositories)", () => {
  /** Fulcio certificate + RFC 3161 timestamp from the mock's TSA, no Rekor entry. */
  const timestamped = (): ProvenanceSigner => {
    const token = sigstore.token({ repository: "acme/demo-plugin", runId: fixture.manifest.evidence.workflow.run_id, runAttempt: String(fixture.manifest.evidence.workflow.run_attempt) });
    return { kind: "keyless", identityToken: async () => token, fulcioUrl: sigstore.url, tsaUrl: sigstore.url };
  };
  const noLog = () => ({ policy: { repo: "acme/demo-plugin" }, trustedRoot: parseTrustedRoot(Buffer.from(JSON.stringify(sigstore.trustedRootWithoutLog))) });

  it("verifies with that instance's trusted root (library and CLI); refused without the timestamp and under a root that expects a log", async () => {
    const noLogFile = join(root, "mock-trusted-root-without-log.json");
    await writeFile(noLogFile, JSON.stringify(sigstore.trustedRootWithoutLog));
    const store = await fresh();
    const pushed = await pushAttestation(store, staged.bundle, await facts(), timestamped());
    const bundle = JSON.parse((await readFile(join(storeDir, "blobs", "sha256", await layerOf(store, pushed)))).toString("utf8"));
    expect(bundle.verificationMaterial.tlogEntries ?? []).toEqual([]);
    expect(bundle.verificationMaterial.timestampVerificationData.rfc3161Timestamps).toHaveLength(1);

    expect((await verifyReferenceProvenance({ reference: reference(), repository, provenance: noLog() })).attestations).toEqual([`${repository}@${pushed.digest}`]);
    const cli = await runCli(["verify-provenance", "--reference", reference(), "--repo", "acme/demo-plugin", "--trusted-root", noLogFile, "--json"], { cwd: root });
    expect(cli.stderr).toBe("");
    expect(JSON.parse(cli.stdout)).toMatchObject({ ok: true, attestations: [`${repository}@${pushed.digest}`] });
    // The root of an instance with a log (and no timestamp authority) vouches for neither the missing entry nor the timestamp.
    await expect(() => verifyReferenceProvenance({ reference: reference(), repository, provenance: check() })).toThrowWithCode("PROVENANCE_TIMESTAMP_INVALID");

    // The same attestation with its timestamp removed: nothing vouches for the signing time.
    await fresh();
    await pushAttestation(await LayoutTarget.open(storeDir), staged.bundle, await facts(), timestamped(), (b) => (b["verificationMaterial"]["timestampVerificationData"]["rfc3161Timestamps"] = []));
    await expect(() => verifyReferenceProvenance({ reference: reference(), repository, provenance: noLog() })).toThrowWithCode("PROVENANCE_TIMESTAMP_INVALID");
    const refused = await runCli(["verify-provenance", "--reference", reference(), "--repo", "acme/demo-plugin", "--trusted-root", noLogFile], { cwd: root });
    expect(refused.stderr).toMatch(/\[PROVENANCE_TIMESTAMP_INVALID\]\n$/);
    expect(refused.code).toBe(1);
  });
});

/** The hex digest of the one layer of the referrer manifest `desc` in `store`. */
async function layerOf(store: LayoutTarget, desc: Descriptor): Promise<string> {
  const { fetchManifest } = await import("../../src/oci/transfer.js");
  const manifest = JSON.parse((await fetchManifest(store, desc)).toString("utf8"));
  return (manifest.layers[0].digest as string).slice("sha256:".length);
}
