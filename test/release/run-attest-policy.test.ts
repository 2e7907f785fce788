/**
 * `release run` when the release policy names the signing key
 * (docs/provenance.md, "release run and the policy's key"): package.json
 * `hermesPluginKit.provenance.key` of the release commit is the path of the
 * PEM public key in the repository. Without its private half, or with another
 * key, the run (and its dry run) refuses before anything is written; with it
 * (here through HERMES_PLUGIN_KIT_ATTEST_KEY_FILE) the attest step runs, the
 * attestation verifies with the policy's public key, and resume re-verifies it.
 * Real git, npm pack, gates and an `oci-layout:` store.
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEST_KEY_FILE_ENV } from "../../release/attest-key.js";
import { dryRunRelease } from "../../release/dry-run.js";
import { runRelease, type RunResult } from "../../release/run.js";
import { provenanceKeyDeclaredBy } from "../../src/contract/policy.js";
import { runCli } from "../support/cli.js";
import { fixturePackageJson } from "../support/git-fixture.js";
import { createRunFixture, REPO_ROOT, type RunFixture } from "../support/release-run-fixture.js";

const env: Record<string, string | undefined> = { ...process.env, SEMANTIC_RELEASE_ENABLED: "true", [ATTEST_KEY_FILE_ENV]: undefined };
let parent: string;
let rf: RunFixture;
let policyPrivate: string;
let released: Extract<RunResult, { released: true }>;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "hpk-run-policy-key-"));
  const repository = `oci-layout:${join(parent, "store")}`;
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  policyPrivate = join(parent, "release-key.pem");
  await writeFile(policyPrivate, privateKey.export({ format: "pem", type: "pkcs8" }), { mode: 0o600 });
  const hermesPluginKit = {
    repository,
    install: `ln -s ${JSON.stringify(join(REPO_ROOT, "node_modules"))} node_modules`,
    gates: { unit: "test -f index.js", public_contract: "test -f package.json", host_contract: "test -d node_modules/@modelcontextprotocol/sdk", build_metadata: "test -d lib" },
    provenance: { key: "keys/release.pub" },
  };
  rf = await createRunFixture(
    "policy-key-plugin",
    { message: "feat: attest every release with the committed key\n", files: { "package.json": fixturePackageJson({ name: "policy-key-plugin", packageJson: { hermesPluginKit } }), "keys/release.pub": publicKey.export({ format: "pem", type: "spki" }).toString() } },
    repository,
  );
}, 120_000);

afterAll(async () => {
  await rf?.cleanup();
  await rm(parent, { recursive: true, force: true });
});

describe("release run with a signing key named by the release policy", () => {
  it("without a private key: RUN_ATTEST_KEY_REQUIRED (run and dry run), saying where the policy came from and how to pass the key; nothing written", async () => {
    const error = await runRelease({ source: rf.repo.dir, workspace: rf.workspace, env, progress: null, runId: "11" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "RUN_ATTEST_KEY_REQUIRED" });
    expect((error as Error).message).toContain(`hermesPluginKit.provenance.key of package.json at ${rf.triggerSha}`);
    expect((error as Error).message).toContain(`pass --attest-key FILE or set ${ATTEST_KEY_FILE_ENV}`);
    await expect(readdir(rf.workspace)).rejects.toThrow();
    await expect(dryRunRelease({ source: rf.repo.dir, workspace: rf.workspace, env })).rejects.toThrowWithCode("RUN_ATTEST_KEY_REQUIRED");
    await expect(readdir(join(parent, "store"))).rejects.toThrow();
  });

  it("with another key: RUN_ATTEST_KEY_MISMATCH naming both keys' fingerprints; nothing written", async () => {
    const error = await runRelease({ source: rf.repo.dir, workspace: rf.workspace, env, progress: null, runId: "11", attestKey: rf.attestKey }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "RUN_ATTEST_KEY_MISMATCH" });
    expect((error as Error).message).toMatch(new RegExp(`the signing key ${rf.attestKey} \\(--attest-key\\) has public key sha256:[0-9a-f]{64}, but the release policy .* names keys/release.pub, sha256:[0-9a-f]{64}`));
    await expect(readdir(rf.workspace)).rejects.toThrow();
    const fromEnv = await runRelease({ source: rf.repo.dir, workspace: rf.workspace, env: { ...env, [ATTEST_KEY_FILE_ENV]: rf.attestKey }, progress: null, runId: "11" }).catch((e: unknown) => e);
    expect(fromEnv).toMatchObject({ code: "RUN_ATTEST_KEY_MISMATCH" });
    expect((fromEnv as Error).message).toContain(`(${ATTEST_KEY_FILE_ENV})`);
    await expect(readdir(rf.workspace)).rejects.toThrow();
  });

  it("with the matching key (from the environment variable naming its file): the dry run says so, attest runs, and the attestation verifies with the policy's public key", async () => {
    const keyEnv = { ...env, [ATTEST_KEY_FILE_ENV]: policyPrivate };
    const planned = await dryRunRelease({ source: rf.repo.dir, workspace: rf.workspace, env: keyEnv });
    expect(planned.checks.find((c) => c.check === "attest key")).toMatchObject({ status: "ok" });
    const result = await runRelease({ source: rf.repo.dir, workspace: rf.workspace, env: keyEnv, progress: null, runId: "11" });
    expect(result.released).toBe(true);
    released = result as Extract<RunResult, { released: true }>;
    expect(released.steps.find((s) => s.step === "attest")?.status).toBe("ran");
    expect(released.attestation_reference).toMatch(/@sha256:[0-9a-f]{64}$/);
    const verified = await runCli(["verify-provenance", "--reference", released.bundle_reference, "--key", join(rf.repo.dir, "keys", "release.pub"), "--receipt", released.receipt_file, "--json"]);
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, attestations: [released.attestation_reference] });
    const other = await runCli(["verify-provenance", "--reference", released.bundle_reference, "--key", rf.attestPub, "--json"]);
    expect(other.code).toBe(1);
    // The next steps pin the policy's key: the bundle fetch and fleet add require the signed attestation, and a comment says where the key is.
    const fetchBundle = released.next_steps.find((l) => l.includes(` fetch --reference ${released.bundle_reference} `));
    expect(fetchBundle).toContain(" --provenance --key keys/release.pub");
    expect(released.next_steps.find((l) => l.includes(" fleet add "))).toContain(" --provenance --key keys/release.pub");
    expect(released.next_steps.find((l) => l.includes(" --expect receipt"))).not.toContain("--provenance");
    expect(released.next_steps).toContain(`# --key keys/release.pub: the release's public key, keys/release.pub in the source repository at tag ${released.tag} (hermesPluginKit.provenance.key)`);
  }, 240_000);

  it("resume re-verifies the attestation: verified while it is in the store, PROVENANCE_NOT_FOUND once its referrer is gone; a resume with another key is refused first", async () => {
    expect(released).toBeDefined();
    const keyEnv = { ...env, [ATTEST_KEY_FILE_ENV]: policyPrivate };
    const again = await runRelease({ source: rf.repo.dir, workspace: rf.workspace, env: keyEnv, progress: null });
    expect(again.steps.find((s) => s.step === "attest")?.status).toBe("verified");
    await expect(runRelease({ source: rf.repo.dir, workspace: rf.workspace, env, progress: null, attestKey: rf.attestKey })).rejects.toThrowWithCode("RUN_ATTEST_KEY_MISMATCH");
    // Drop the referrers-tag-schema entry of the bundle from the store's index: the recorded attestation is no longer discoverable.
    const indexPath = join(parent, "store", "index.json");
    const index = JSON.parse(await readFile(indexPath, "utf8")) as { manifests: { annotations?: Record<string, string> }[] };
    const referrersTag = `sha256-${released.bundle_reference.split("@sha256:")[1]}`;
    const kept = index.manifests.filter((m) => m.annotations?.["org.opencontainers.image.ref.name"] !== referrersTag);
    expect(kept.length).toBe(index.manifests.length - 1);
    await writeFile(indexPath, JSON.stringify({ ...index, manifests: kept }));
    await expect(runRelease({ source: rf.repo.dir, workspace: rf.workspace, env: keyEnv, progress: null })).rejects.toThrowWithCode("PROVENANCE_NOT_FOUND");
  }, 240_000);
});

describe("provenanceKeyDeclaredBy (hermesPluginKit.provenance.key)", () => {
  it("accepts a repository-relative path and no section", () => {
    expect(provenanceKeyDeclaredBy({ provenance: { key: "keys/release.pub" } })).toBe("keys/release.pub");
    expect(provenanceKeyDeclaredBy({})).toBeUndefined();
  });

  it.each([
    ["an absolute path", { key: "/etc/release.pub" }],
    ["a parent segment", { key: "../outside.pub" }],
    ["a dot segment", { key: "keys/./release.pub" }],
    ["a backslash", { key: "keys\\release.pub" }],
    ["an empty path", { key: "" }],
    ["a number", { key: 7 }],
    ["an unknown field", { key: "keys/release.pub", identity: "x" }],
  ])("refuses %s with POLICY_INVALID", (_label, provenance) => {
    expect(() => provenanceKeyDeclaredBy({ provenance })).toThrowWithCode("POLICY_INVALID");
  });

  it("refuses a provenance section that is not an object with POLICY_INVALID", () => {
    expect(() => provenanceKeyDeclaredBy({ provenance: "keys/release.pub" })).toThrowWithCode("POLICY_INVALID");
  });
});

describe("release run --help", () => {
  it("describes the policy's key, the file variable and the two refusal codes", async () => {
    const help = await runCli(["release", "run", "--help"]);
    expect(help.code).toBe(0);
    const text = help.stdout.replace(/\s+/g, " ");
    for (const needle of ["--attest-key <file>", ATTEST_KEY_FILE_ENV, "hermesPluginKit.provenance.key", "RUN_ATTEST_KEY_REQUIRED", "RUN_ATTEST_KEY_MISMATCH"]) expect(text).toContain(needle);
  });
});
