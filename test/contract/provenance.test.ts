/**
 * The provenance statement (in-toto v1 + SLSA provenance v1): build, strict
 * parse, and the binding to the release's tested manifest and receipt, each
 * rule with a passing and a failing case and its exact code; a property test
 * for the parser.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  IN_TOTO_STATEMENT_V1,
  RELEASE_BUILD_TYPE,
  SLSA_PROVENANCE_V1,
  bindingFromReceipt,
  bindingFromTestedManifest,
  checkReleaseBinding,
  parseProvenanceStatement,
  provenanceStatement,
  type ProvenanceFacts,
} from "../../src/contract/provenance.js";
import { ProvenanceError } from "../../src/contract/provenance-error.js";
import type { TestedManifest } from "../../src/contract/schemas.js";
import { BUNDLE_DIGEST, POLICY, SOURCE_SHA, clone, packTinyPackage, receiptFor, tempDir, testedManifestFor } from "../support/contract-fixture.js";
import { rm } from "node:fs/promises";

const MANIFEST_DIGEST = "sha256:" + "1".repeat(64);

function facts(overrides: Partial<ProvenanceFacts> = {}): ProvenanceFacts {
  return {
    registryRepository: POLICY.registryRepository,
    bundleDigest: BUNDLE_DIGEST,
    sourceRepository: "https://github.com/acme/demo-plugin",
    sourceSha: SOURCE_SHA,
    tag: "v0.8.0",
    workflow: { path: ".github/workflows/release.yml", ref: "refs/heads/main" },
    runId: "12345",
    runAttempt: 1,
    testedManifestDigest: MANIFEST_DIGEST,
    ...overrides,
  };
}

describe("provenanceStatement", () => {
  it("builds an in-toto v1 statement whose one subject is the bundle digest named by the repository", () => {
    const statement = provenanceStatement(facts()) as Record<string, any>;
    expect(statement["_type"]).toBe(IN_TOTO_STATEMENT_V1);
    expect(statement["predicateType"]).toBe(SLSA_PROVENANCE_V1);
    expect(statement["subject"]).toEqual([{ name: "ghcr.io/acme/demo-plugin", digest: { sha256: "b".repeat(64) } }]);
    const def = statement["predicate"]["buildDefinition"];
    expect(def["buildType"]).toBe(RELEASE_BUILD_TYPE);
    expect(def["externalParameters"]).toEqual({
      workflow: { repository: "https://github.com/acme/demo-plugin", path: ".github/workflows/release.yml", ref: "refs/heads/main" },
      release: { tag: "v0.8.0" },
    });
    expect(def["internalParameters"]).toEqual({ run_id: "12345", run_attempt: 1 });
    expect(def["resolvedDependencies"]).toEqual([
      { uri: "git+https://github.com/acme/demo-plugin@refs/tags/v0.8.0", digest: { gitCommit: SOURCE_SHA } },
      { name: "release-manifest.json", digest: { sha256: "1".repeat(64) } },
    ]);
    expect(statement["predicate"]["runDetails"]).toEqual({
      builder: { id: "https://github.com/acme/demo-plugin/.github/workflows/release.yml@refs/heads/main" },
      metadata: { invocationId: "https://github.com/acme/demo-plugin/actions/runs/12345/attempts/1" },
    });
    expect(parseProvenanceStatement(statement)).toEqual(facts());
  });

  it("accepts a local file:// source repository", () => {
    const local = facts({ sourceRepository: "file:///tmp/demo/origin.git" });
    expect(parseProvenanceStatement(provenanceStatement(local))).toEqual(local);
  });

  it.each([
    ["a bundle digest that is not sha256", { bundleDigest: "sha512:" + "b".repeat(128) }],
    ["a non-hex source sha", { sourceSha: "z".repeat(40) }],
    ["a tag that is not v<semver>", { tag: "0.8.0" }],
    ["a run id with a leading zero", { runId: "012" }],
    ["a run attempt of 0", { runAttempt: 0 }],
    ["a workflow outside .github/workflows", { workflow: { path: "release.yml", ref: "refs/heads/main" } }],
    ["a short ref", { workflow: { path: ".github/workflows/release.yml", ref: "main" } }],
    ["an http source repository", { sourceRepository: "http://github.com/acme/demo-plugin" }],
    ["a source repository with @", { sourceRepository: "https://github.com/acme/demo@plugin" }],
  ] as Array<[string, Partial<ProvenanceFacts>]>)("refuses to build with %s: PROVENANCE_STATEMENT_INVALID", async (_label, overrides) => {
    await expect(() => provenanceStatement(facts(overrides))).toThrowWithCode("PROVENANCE_STATEMENT_INVALID");
  });
});

describe("parseProvenanceStatement", () => {
  const mutations: Array<[string, (s: Record<string, any>) => void]> = [
    ["an extra top-level key", (s) => (s["extra"] = 1)],
    ["two subjects", (s) => s["subject"].push({ name: "x", digest: { sha256: "c".repeat(64) } })],
    ["no subject", (s) => (s["subject"] = [])],
    ["a subject with a sha512 digest too", (s) => (s["subject"][0]["digest"]["sha512"] = "d".repeat(128))],
    ["another statement type", (s) => (s["_type"] = "https://in-toto.io/Statement/v0.1")],
    ["another predicate type", (s) => (s["predicateType"] = "https://slsa.dev/provenance/v0.2")],
    ["another build type", (s) => (s["predicate"]["buildDefinition"]["buildType"] = "https://actions.github.io/buildtypes/workflow/v1")],
    ["an extra predicate key", (s) => (s["predicate"]["byproducts"] = [])],
    ["a run attempt as a string", (s) => (s["predicate"]["buildDefinition"]["internalParameters"]["run_attempt"] = "1")],
    ["a source dependency of another repository", (s) => (s["predicate"]["buildDefinition"]["resolvedDependencies"][0]["uri"] = "git+https://github.com/evil/x@refs/tags/v0.8.0")],
    ["a builder id of another workflow", (s) => (s["predicate"]["runDetails"]["builder"]["id"] = "https://github.com/acme/demo-plugin/.github/workflows/other.yml@refs/heads/main")],
    ["an invocation id of another run", (s) => (s["predicate"]["runDetails"]["metadata"]["invocationId"] = "https://github.com/acme/demo-plugin/actions/runs/9/attempts/1")],
    ["a third dependency", (s) => s["predicate"]["buildDefinition"]["resolvedDependencies"].push({ name: "x", digest: { sha256: "e".repeat(64) } })],
    ["not an object", (s) => Object.keys(s).forEach((k) => delete s[k])],
  ];
  it.each(mutations)("refuses %s: PROVENANCE_STATEMENT_INVALID", async (_label, mutate) => {
    const statement = clone(provenanceStatement(facts())) as Record<string, any>;
    mutate(statement);
    await expect(() => parseProvenanceStatement(statement)).toThrowWithCode("PROVENANCE_STATEMENT_INVALID");
  });

  it("property: any JSON value either parses to facts that rebuild it exactly or is refused with PROVENANCE_STATEMENT_INVALID", () => {
    const base = provenanceStatement(facts());
    const arbitraryLeafPaths = [["subject", 0, "name"], ["predicate", "buildDefinition", "externalParameters", "release", "tag"], ["predicate", "buildDefinition", "internalParameters", "run_id"], ["_type"]];
    fc.assert(
      fc.property(fc.constantFrom(...arbitraryLeafPaths), fc.jsonValue(), (path, value) => {
        const statement = clone(base) as Record<string, any>;
        let node: any = statement;
        for (const key of path.slice(0, -1)) node = node[key as string];
        node[path[path.length - 1] as string] = value;
        try {
          const parsed = parseProvenanceStatement(statement);
          expect(provenanceStatement(parsed)).toEqual(statement);
        } catch (error) {
          expect(error).toBeInstanceOf(ProvenanceError);
          expect((error as ProvenanceError).code).toBe("PROVENANCE_STATEMENT_INVALID");
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("checkReleaseBinding", () => {
  let dir: string;
  let manifest: TestedManifest;
  beforeAll(async () => {
    dir = await tempDir("hpk-provenance-");
    manifest = await testedManifestFor(await packTinyPackage(dir, "demo-plugin", "0.8.0"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("passes for the statement of exactly this release (from the tested manifest and from the receipt)", () => {
    const binding = bindingFromTestedManifest(manifest, MANIFEST_DIGEST, BUNDLE_DIGEST);
    expect(() => checkReleaseBinding(facts(), binding)).not.toThrow();
    const receipt = receiptFor(manifest);
    expect(() => checkReleaseBinding(facts(), bindingFromReceipt(receipt))).not.toThrow();
  });

  it.each([
    ["a statement for another digest", { bundleDigest: "sha256:" + "f".repeat(64) }, "PROVENANCE_SUBJECT_MISMATCH"],
    ["a statement naming another repository", { registryRepository: "ghcr.io/evil/demo-plugin" }, "PROVENANCE_SUBJECT_MISMATCH"],
    ["another tested manifest", { testedManifestDigest: "sha256:" + "9".repeat(64) }, "PROVENANCE_TESTED_MANIFEST_MISMATCH"],
    ["a source SHA other than the receipt's", { sourceSha: "c".repeat(40) }, "PROVENANCE_SOURCE_SHA_MISMATCH"],
    ["another tag", { tag: "v0.9.0" }, "PROVENANCE_TAG_MISMATCH"],
    ["another workflow file", { workflow: { path: ".github/workflows/other.yml", ref: "refs/heads/main" } }, "PROVENANCE_WORKFLOW_MISMATCH"],
    ["a run id other than the receipt's", { runId: "777" }, "PROVENANCE_RUN_ID_MISMATCH"],
  ] as Array<[string, Partial<ProvenanceFacts>, string]>)("fails closed on %s: %s", async (_label, overrides, code) => {
    const receipt = receiptFor(manifest);
    await expect(() => checkReleaseBinding(facts(overrides), bindingFromReceipt(receipt))).toThrowWithCode(code);
    await expect(() => checkReleaseBinding(facts(overrides), bindingFromTestedManifest(manifest, MANIFEST_DIGEST, BUNDLE_DIGEST))).toThrowWithCode(code);
  });
});
