/**
 * Provenance policy: resolution (defaults, incomplete and malformed
 * policies), the GitHub Actions certificate identity (issuer, repository,
 * owner, signer workflow, ref, run), and the statement against the
 * certificate or (key mode) against the policy. Each rule passes once and
 * fails with its exact code.
 */
import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  FULCIO_OID,
  GITHUB_ACTIONS_ISSUER,
  checkSignerIdentity,
  checkStatementAgainstPolicy,
  checkStatementAgainstSigner,
  resolveProvenancePolicy,
  type ProvenancePolicy,
  type SignerIdentity,
} from "../../src/contract/provenance-policy.js";
import type { ProvenanceFacts } from "../../src/contract/provenance.js";

/** A P-256 public key PEM: a key policy's key is checked like any key file (src/contract/key-pem.ts). */
const PEM = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "pem", type: "spki" }).toString();

function identity(overrides: { san?: string; issuer?: string; ext?: Record<string, string | undefined> } = {}): SignerIdentity {
  const ext: Record<string, string | undefined> = {
    [FULCIO_OID.sourceRepositoryUri]: "https://github.com/acme/demo-plugin",
    [FULCIO_OID.sourceRepositoryOwnerUri]: "https://github.com/acme",
    [FULCIO_OID.sourceRepositoryRef]: "refs/heads/main",
    [FULCIO_OID.runInvocationUri]: "https://github.com/acme/demo-plugin/actions/runs/12345/attempts/2",
    ...overrides.ext,
  };
  return {
    subjectAlternativeName: overrides.san ?? "https://github.com/acme/demo-plugin/.github/workflows/release.yml@refs/heads/main",
    issuer: overrides.issuer ?? GITHUB_ACTIONS_ISSUER,
    extensions: new Map(Object.entries(ext).filter((e): e is [string, string] => e[1] !== undefined)),
  };
}

function keyless(policy: ProvenancePolicy) {
  const resolved = resolveProvenancePolicy(policy);
  if (resolved.kind !== "keyless") throw new Error("expected keyless");
  return resolved;
}

const facts: ProvenanceFacts = {
  registryRepository: "ghcr.io/acme/demo-plugin",
  bundleDigest: "sha256:" + "b".repeat(64),
  sourceRepository: "https://github.com/acme/demo-plugin",
  sourceSha: "a".repeat(40),
  tag: "v0.8.0",
  workflow: { path: ".github/workflows/release.yml", ref: "refs/heads/main" },
  runId: "12345",
  runAttempt: 2,
  testedManifestDigest: "sha256:" + "1".repeat(64),
};

describe("resolveProvenancePolicy", () => {
  it("fills GitHub Actions defaults and derives the owner from --repo", () => {
    expect(resolveProvenancePolicy({ repo: "acme/demo-plugin" })).toEqual({
      kind: "keyless",
      host: "github.com",
      owner: "acme",
      repo: "acme/demo-plugin",
      sourceRef: "refs/heads/main",
      issuer: GITHUB_ACTIONS_ISSUER,
    });
    expect(resolveProvenancePolicy({ key: PEM, repo: "acme/x" })).toMatchObject({ kind: "key", key: PEM, owner: "acme", sourceRef: "refs/heads/main" });
    expect(resolveProvenancePolicy({ owner: "acme", signerWorkflow: "github.example.com/acme/ci/.github/workflows/release.yml" })).toMatchObject({
      host: "github.example.com",
      signerWorkflow: "acme/ci/.github/workflows/release.yml",
    });
  });

  it.each([
    ["keyless without owner or repo", {}],
    ["a repo that is not owner/name", { repo: "acme" }],
    ["an owner with a slash", { owner: "acme/x" }],
    ["owner and repo that disagree", { owner: "evil", repo: "acme/demo-plugin" }],
    ["a signer workflow outside .github/workflows", { repo: "acme/x", signerWorkflow: "acme/x/release.yml" }],
    ["a short source ref", { repo: "acme/x", sourceRef: "main" }],
    ["an http issuer", { repo: "acme/x", certOidcIssuer: "http://issuer" }],
    ["an issuer with --key", { key: PEM, certOidcIssuer: GITHUB_ACTIONS_ISSUER }],
  ] as Array<[string, ProvenancePolicy]>)("refuses %s: PROVENANCE_POLICY_INVALID", async (_label, policy) => {
    await expect(() => resolveProvenancePolicy(policy)).toThrowWithCode("PROVENANCE_POLICY_INVALID");
  });

  // A key the policy does not read would be ignored: with it, a release signed from another ref or repository passed.
  it.each([
    ["sourceReff (misspelt)", { key: "PEM", sourceReff: "refs/heads/evil" }, /^the provenance policy has "sourceReff", which it does not read \(it reads key, owner, repo, signerWorkflow, sourceRef, certOidcIssuer\); did you mean "sourceRef"\?/],
    ["repoo (misspelt)", { owner: "acme", repoo: "evil/evil" }, /did you mean "repo"\?/],
    ["the lock's source_ref", { repo: "acme/x", source_ref: "refs/heads/evil" }, /has "source_ref", .*did you mean "sourceRef"\?/],
    ["the lock's cert_oidc_issuer", { repo: "acme/x", cert_oidc_issuer: "https://x" }, /did you mean "certOidcIssuer"\?/],
    ["keyy (misspelt key, named rather than read as keyless)", { keyy: "PEM" }, /has "keyy", .*did you mean "key"\?/],
    ["an own __proto__ (JSON-parsed)", JSON.parse('{"key":"PEM","__proto__":{"repo":"evil/evil"}}'), /^a provenance policy has an own "__proto__" key, which no option is/],
    ["key: 5", { key: 5 }, /^the provenance policy's key must be a non-empty string \(a PEM public key\), found number 5$/],
    ["repo: an array", { repo: ["acme/x"] }, /^the provenance policy's repo must be a non-empty string, found an array$/],
    ["null", null, /^a provenance policy must be a plain object \(an object literal or parsed JSON\), found null; expected \{ key \}/],
    ["a Map", new Map([["repo", "acme/x"]]), /^a provenance policy must be a plain object .*, found an instance of Map/],
  ])("refuses %s: PROVENANCE_POLICY_INVALID naming it", async (_label, policy, message) => {
    // Through JSON, as a policy read from a file arrives (an own "__proto__" stays an own key); "PEM" is the real key.
    const subject = (policy instanceof Map ? policy : JSON.parse(JSON.stringify(policy).replaceAll('"PEM"', JSON.stringify(PEM)))) as ProvenancePolicy;
    await expect(() => resolveProvenancePolicy(subject)).toThrowWithCode("PROVENANCE_POLICY_INVALID");
    expect(() => resolveProvenancePolicy(subject)).toThrow(message);
  });

  it("a policy given through a prototype, or with a getter, is refused: what is checked must be what is used", async () => {
    const inherited = Object.create({ repo: "evil/evil" }) as ProvenancePolicy;
    inherited.owner = "acme";
    await expect(() => resolveProvenancePolicy(inherited)).toThrowWithCode("PROVENANCE_POLICY_INVALID");
    expect(() => resolveProvenancePolicy(inherited)).toThrow(/^a provenance policy must be a plain object .*, found an object with another prototype \(an inherited value is not read\)/);
    let reads = 0;
    const getter = { owner: "acme", get repo() { reads += 1; return reads === 1 ? "acme/x" : undefined; } } as ProvenancePolicy;
    await expect(() => resolveProvenancePolicy(getter)).toThrowWithCode("PROVENANCE_POLICY_INVALID");
    expect(() => resolveProvenancePolicy(getter)).toThrow(/^a provenance policy\.repo is a getter or setter: give the value itself/);
    expect(reads).toBe(0);
    // Passing: the same policy as plain data.
    expect(resolveProvenancePolicy({ owner: "acme", repo: "acme/x" })).toMatchObject({ kind: "keyless", owner: "acme", repo: "acme/x" });
  });
});

describe("checkSignerIdentity", () => {
  it("accepts the release workflow of the repository at main and returns the run", () => {
    expect(checkSignerIdentity(identity(), keyless({ repo: "acme/demo-plugin" }))).toEqual({
      sourceRepository: "https://github.com/acme/demo-plugin",
      workflowPath: ".github/workflows/release.yml",
      ref: "refs/heads/main",
      runId: "12345",
      runAttempt: 2,
    });
    expect(() => checkSignerIdentity(identity(), keyless({ owner: "acme" }))).not.toThrow();
    expect(() => checkSignerIdentity(identity(), keyless({ owner: "ACME", signerWorkflow: "acme/demo-plugin/.github/workflows/release.yml" }))).not.toThrow();
  });

  it.each([
    ["another issuer", identity({ issuer: "https://accounts.google.com" }), { repo: "acme/demo-plugin" }, "PROVENANCE_ISSUER_MISMATCH"],
    ["no issuer", identity({ issuer: "" }), { repo: "acme/demo-plugin" }, "PROVENANCE_ISSUER_MISMATCH"],
    ["another repository", identity({ ext: { [FULCIO_OID.sourceRepositoryUri]: "https://github.com/acme/other" } }), { repo: "acme/demo-plugin" }, "PROVENANCE_REPOSITORY_MISMATCH"],
    ["another owner", identity({ ext: { [FULCIO_OID.sourceRepositoryOwnerUri]: "https://github.com/evil" } }), { owner: "acme" }, "PROVENANCE_REPOSITORY_MISMATCH"],
    ["no source repository", identity({ ext: { [FULCIO_OID.sourceRepositoryUri]: undefined } }), { owner: "acme" }, "PROVENANCE_REPOSITORY_MISMATCH"],
    ["another workflow", identity({ san: "https://github.com/acme/demo-plugin/.github/workflows/other.yml@refs/heads/main" }), { repo: "acme/demo-plugin" }, "PROVENANCE_WORKFLOW_MISMATCH"],
    ["a workflow of another repository of the owner", identity({ san: "https://github.com/acme/tools/.github/workflows/sign.yml@refs/heads/main" }), { owner: "acme" }, "PROVENANCE_WORKFLOW_MISMATCH"],
    ["another ref in the SAN", identity({ san: "https://github.com/acme/demo-plugin/.github/workflows/release.yml@refs/heads/dev" }), { repo: "acme/demo-plugin" }, "PROVENANCE_REF_MISMATCH"],
    ["another source ref", identity({ ext: { [FULCIO_OID.sourceRepositoryRef]: "refs/tags/v1.0.0" } }), { repo: "acme/demo-plugin" }, "PROVENANCE_REF_MISMATCH"],
    ["no run invocation", identity({ ext: { [FULCIO_OID.runInvocationUri]: undefined } }), { repo: "acme/demo-plugin" }, "PROVENANCE_RUN_ID_MISMATCH"],
  ] as Array<[string, SignerIdentity, ProvenancePolicy, string]>)("refuses %s: %s", async (_label, id, policy, code) => {
    await expect(() => checkSignerIdentity(id, keyless(policy))).toThrowWithCode(code);
  });
});

describe("the statement against the certificate and against a key policy", () => {
  const signer = { sourceRepository: "https://github.com/acme/demo-plugin", workflowPath: ".github/workflows/release.yml", ref: "refs/heads/main", runId: "12345", runAttempt: 2 };

  it("accepts a statement that says what the certificate says", () => {
    expect(() => checkStatementAgainstSigner(facts, signer)).not.toThrow();
  });

  it.each([
    ["another source repository", { sourceRepository: "https://github.com/acme/other" }, "PROVENANCE_REPOSITORY_MISMATCH"],
    ["another workflow", { workflow: { path: ".github/workflows/other.yml", ref: "refs/heads/main" } }, "PROVENANCE_WORKFLOW_MISMATCH"],
    ["another ref", { workflow: { path: ".github/workflows/release.yml", ref: "refs/heads/dev" } }, "PROVENANCE_REF_MISMATCH"],
    ["another run id", { runId: "999" }, "PROVENANCE_RUN_ID_MISMATCH"],
    ["another attempt", { runAttempt: 1 }, "PROVENANCE_RUN_ID_MISMATCH"],
  ] as Array<[string, Partial<ProvenanceFacts>, string]>)("refuses a statement with %s: %s", async (_label, overrides, code) => {
    await expect(() => checkStatementAgainstSigner({ ...facts, ...overrides }, signer)).toThrowWithCode(code);
  });

  it("key mode: checks the statement's repository, owner, workflow and ref against the policy", async () => {
    const policy = (p: ProvenancePolicy) => {
      const resolved = resolveProvenancePolicy({ key: PEM, ...p });
      if (resolved.kind !== "key") throw new Error("expected key");
      return resolved;
    };
    expect(() => checkStatementAgainstPolicy(facts, policy({}))).not.toThrow();
    expect(() => checkStatementAgainstPolicy(facts, policy({ repo: "acme/demo-plugin", signerWorkflow: "acme/demo-plugin/.github/workflows/release.yml" }))).not.toThrow();
    await expect(() => checkStatementAgainstPolicy(facts, policy({ repo: "acme/other" }))).toThrowWithCode("PROVENANCE_REPOSITORY_MISMATCH");
    await expect(() => checkStatementAgainstPolicy(facts, policy({ owner: "evil" }))).toThrowWithCode("PROVENANCE_REPOSITORY_MISMATCH");
    await expect(() => checkStatementAgainstPolicy(facts, policy({ signerWorkflow: "acme/demo-plugin/.github/workflows/x.yml" }))).toThrowWithCode("PROVENANCE_WORKFLOW_MISMATCH");
    await expect(() => checkStatementAgainstPolicy(facts, policy({ sourceRef: "refs/heads/dev" }))).toThrowWithCode("PROVENANCE_REF_MISMATCH");
  });
});
