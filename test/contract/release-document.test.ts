import { beforeAll, describe, expect, it } from "vitest";
import { symlink, writeFile, appendFile, rename, rm, mkdir, readFile } from "node:fs/promises";
import { readNpmTarballFile } from "../../src/contract/npm-tarball.js";
import { join } from "node:path";
import {
  checkReceiptOfBundle,
  createTestedManifest,
  inspectDistDir,
  verifyFinalReceipt,
  verifyManifest,
  verifyManifestDist,
  readTarballPackageJsonFile,
  verifyTestedManifest,
  type JsonObject,
  type PublishedReceipt,
  type TestedManifest,
} from "../../src/contract/index.js";
import { describeList } from "../../src/contract/grammar.js";
import { canonicalJson } from "../../src/contract/canonical-json.js";
import { parseReleaseJson, receiptUnboundFields, verifyFinalReceiptBytes, verifyParsedFinalReceiptBytes, verifyReceiptReference } from "../../src/contract/release-document.js";
import { receiptReferenceOf } from "../../src/contract/artifact-document.js";
import { resolveConsumerExpectations } from "../../src/contract/policy.js";
import { BUNDLE_REFERENCE, POLICY, SOURCE_SHA, clone, packTinyPackage, passedGates, receiptFor, tempDir, testedManifestFor } from "../support/contract-fixture.js";

let root: string;
let dist: string;
let manifest: TestedManifest;
let receipt: PublishedReceipt;

beforeAll(async () => {
  root = await tempDir();
  dist = await packTinyPackage(root, "demo-plugin", "0.8.0");
  manifest = await testedManifestFor(dist);
  receipt = receiptFor(manifest);
});

type Doc = Record<string, any>;
const tested = () => clone(manifest) as unknown as Doc;
const published = () => clone(receipt) as unknown as Doc;

describe("tested manifest identity (reference 3.3, state tested)", () => {
  it("accepts the manifest createTestedManifest wrote and returns it unchanged", () => {
    expect(verifyTestedManifest(tested() as JsonObject, POLICY)).toEqual(manifest);
    expect(manifest.release_class).toBe("minor");
    expect(manifest.promotion).toEqual({ automatic_candidate: true, state: "automatic_candidate" });
    expect(manifest.artifacts[0]!.filename).toBe("demo-plugin-0.8.0.tgz");
  });

  const cases: [string, (d: Doc) => void, string][] = [
    ["I1 schema_version 3", (d) => (d.schema_version = 3), "RECEIPT_SCHEMA_UNSUPPORTED"],
    ["I1 schema_version \"2\"", (d) => (d.schema_version = "2"), "RECEIPT_SCHEMA_UNSUPPORTED"],
    ["I2 receipt_state published", (d) => (d.receipt_state = "published"), "RECEIPT_STATE_MISMATCH"],
    ["I3 other package", (d) => (d.package = "other"), "RECEIPT_PACKAGE_MISMATCH"],
    ["I4 other registry", (d) => (d.registry_repository = "ghcr.io/acme/other"), "RECEIPT_REGISTRY_MISMATCH"],
    ["I5 extra field", (d) => (d.extra = 1), "RECEIPT_FIELDS_MISMATCH"],
    ["I5 missing field", (d) => delete d.promotion, "RECEIPT_FIELDS_MISMATCH"],
    ["I6 version not a string", (d) => (d.version = 8), "RECEIPT_IDENTITY_INCOMPLETE"],
    ["I7 uppercase source_sha", (d) => (d.source_sha = "A".repeat(40)), "GIT_SHA_INVALID"],
    ["I7 leading-zero version", (d) => (d.version = "0.08.0"), "SEMVER_INVALID"],
    ["I7 version skip", (d) => (d.version = "0.9.0"), "RELEASE_NOT_ONE_BUMP"],
    ["I7 downgrade", (d) => (d.previous_version = "0.9.0"), "RELEASE_NOT_ONE_BUMP"],
    ["I8 tag", (d) => (d.tag = "v0.8.1"), "RECEIPT_TAG_MISMATCH"],
    ["I9 class", (d) => (d.release_class = "patch"), "RECEIPT_CLASS_MISMATCH"],
    ["I10 promotion", (d) => (d.promotion = { automatic_candidate: 1, state: "automatic_candidate" }), "RECEIPT_PROMOTION_MISMATCH"],
    ["I10 promotion extra key", (d) => (d.promotion.note = "x"), "RECEIPT_PROMOTION_MISMATCH"],
    ["I11 evidence key missing", (d) => delete d.evidence.host_contract, "EVIDENCE_INCOMPLETE"],
    ["I11 evidence extra key", (d) => (d.evidence.hermes_contract = {}), "EVIDENCE_INCOMPLETE"],
    ["I12 gate failed", (d) => (d.evidence.host_contract.result = "failed"), "GATE_NOT_PASSED"],
    ["I12 gate status skipped", (d) => (d.evidence.unit.status = "skipped"), "GATE_NOT_PASSED"],
    ["I12 gate extra key", (d) => (d.evidence.unit.note = "x"), "GATE_NOT_PASSED"],
    ["I12 gate command", (d) => (d.evidence.build_metadata.command = "just build"), "GATE_COMMAND_MISMATCH"],
    ["I12 gate other source", (d) => (d.evidence.public_contract.source_sha = "c".repeat(40)), "GATE_OTHER_SOURCE"],
    ["I13 mcp sdk version", (d) => (d.evidence.host_contract.mcp_sdk_version = "1.32"), "GATE_HOST_CONTRACT_INVALID"],
    ["I14 workflow name", (d) => (d.evidence.workflow.name = "ci.yml"), "WORKFLOW_EVIDENCE_INVALID"],
    ["I14 run id leading zero", (d) => (d.evidence.workflow.run_id = "0123"), "WORKFLOW_EVIDENCE_INVALID"],
    ["I14 run attempt boolean", (d) => (d.evidence.workflow.run_attempt = true), "WORKFLOW_EVIDENCE_INVALID"],
    ["I14 run attempt 0", (d) => (d.evidence.workflow.run_attempt = 0), "WORKFLOW_EVIDENCE_INVALID"],
    ["I14 workflow other source", (d) => (d.evidence.workflow.source_sha = "c".repeat(40)), "WORKFLOW_EVIDENCE_INVALID"],
    ["I15 two artifacts", (d) => d.artifacts.push(d.artifacts[0]), "ARTIFACTS_INVENTORY"],
    ["I15 no artifacts", (d) => (d.artifacts = []), "ARTIFACTS_INVENTORY"],
    ["F1 size 1.5", (d) => (d.artifacts[0].size = 1.5), "FILE_RECORD_INVALID"],
    ["F1 size true", (d) => (d.artifacts[0].size = true), "FILE_RECORD_INVALID"],
    ["F1 size 0", (d) => (d.artifacts[0].size = 0), "FILE_RECORD_INVALID"],
    ["F1 sha256 uppercase", (d) => (d.artifacts[0].sha256 = d.artifacts[0].sha256.toUpperCase()), "FILE_RECORD_INVALID"],
    ["F1 blob_digest on a tested record", (d) => (d.artifacts[0].blob_digest = `sha256:${d.artifacts[0].sha256}`), "FILE_RECORD_INVALID"],
    ["I16 filename", (d) => (d.artifacts[0].filename = "demo-plugin-0.8.1.tgz"), "ARTIFACT_FILENAME_MISMATCH"],
  ];
  it.each(cases)("%s fails with %s", async (_name, mutate, code) => {
    const doc = tested();
    mutate(doc);
    await expect(() => verifyTestedManifest(doc as JsonObject, POLICY)).toThrowWithCode(code);
  });

  it("I4 names the document and the fix by where the pinned repository came from (RECEIPT_REGISTRY_MISMATCH)", () => {
    const other = (d: Doc) => ((d.registry_repository = "ghcr.io/acme/other"), d as JsonObject);
    const messageOf = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        expect(e).toMatchObject({ code: "RECEIPT_REGISTRY_MISMATCH" });
        return (e as Error).message;
      }
      throw new Error("expected RECEIPT_REGISTRY_MISMATCH");
    };
    const fromReference = messageOf(() => verifyTestedManifest(other(tested()), { ...POLICY, sources: { repository: "the pinned reference" } }));
    expect(fromReference).toMatch(/^tested manifest registry mismatch: /);
    expect(fromReference).toContain(`must be ${JSON.stringify(POLICY.registryRepository)} (from the pinned reference), found "ghcr.io/acme/other"`);
    expect(fromReference).toContain('this release was made for "ghcr.io/acme/other" and verifies only from there');
    expect(fromReference).not.toContain("--repository");
    const fromFlag = messageOf(() => verifyFinalReceipt(other(published()), { ...POLICY, sources: { repository: "--repository" } }));
    expect(fromFlag).toMatch(/^release receipt registry mismatch: /);
    expect(fromFlag).toContain('the repository you pin is set with --repository (pin "ghcr.io/acme/other" only if you trust it)');
    const fromFile = messageOf(() => verifyTestedManifest(other(tested()), { ...POLICY, sources: { repository: "p.json (--policy) hermesPluginKit.repository" } }));
    expect(fromFile).toContain('(from p.json (--policy) hermesPluginKit.repository), found "ghcr.io/acme/other"; fix: pin the repository you trust in that file, or with --repository');
    // From a fleet lock: where the pin came from once, and the commands that move a plugin to another repository.
    const fromLock = messageOf(() => verifyFinalReceipt(other(published()), { ...POLICY, sources: { repository: "the repository of the plugin's pinned references in the fleet lock" } }));
    expect(fromLock.match(/fleet lock/g)).toHaveLength(2);
    expect(fromLock).toContain('a fleet lock entry stays in the repository it was pinned from (fleet upgrade moves it only to a newer release there): to pin a release of another repository, run fleet remove --name <plugin>, then fleet add --receipt <file> --repository ghcr.io/acme/other (only if you trust it)');
    expect(messageOf(() => verifyTestedManifest(other(tested()), POLICY))).toMatch(/found "ghcr\.io\/acme\/other"$/);
    // One local store written another way: the fix is the spelling the release wrote.
    const store = (d: Doc) => ((d.registry_repository = "oci-layout:/srv/store/demo"), d as JsonObject);
    for (const pinned of ["oci-layout:/srv/./store//demo/", "oci-layout:/srv/x/../store/demo"]) {
      const message = messageOf(() => verifyTestedManifest(store(tested()), { ...POLICY, registryRepository: pinned, sources: { repository: "the pinned reference" } }));
      expect(message).toContain(`the repository is compared exactly as the release wrote it, and ${JSON.stringify(pinned)} writes the store's path another way: fix: write it exactly as "oci-layout:/srv/store/demo"`);
    }
    // A relative path is not claimed to be the same store (it is never resolved); the release's spelling is offered.
    const relative = messageOf(() => verifyTestedManifest(store(tested()), { ...POLICY, registryRepository: "oci-layout:../../x", sources: { repository: "the pinned reference" } }));
    expect(relative).toContain('"oci-layout:../../x" is a relative store path, which is compared as written, never resolved: if you mean the store this release was made for, write it exactly as "oci-layout:/srv/store/demo"');
    // Another store altogether keeps the copied-release fix.
    expect(messageOf(() => verifyTestedManifest(store(tested()), { ...POLICY, registryRepository: "oci-layout:/srv/other", sources: { repository: "the pinned reference" } }))).toContain("this release was made for");
  });

  it("names a tested manifest as such in its identity messages (not \"release receipt\")", () => {
    const codeAndMessage = (f: () => unknown): [string, string] => {
      try {
        f();
      } catch (e) {
        return [(e as { code: string }).code, (e as Error).message];
      }
      throw new Error("expected a refusal");
    };
    const doc = tested();
    doc.tag = "v0.8.1";
    const disagree = (kind: string, fetch: string) =>
      `; the ${kind}'s own fields disagree with each other, which the release pipeline never writes: the file was edited after it was made, or the release was made wrong; fix: do not trust this file; verify the ${kind} the release published (${fetch}, by the reference you pinned), and if that one says the same, do not use this release and tell its publisher`;
    expect(codeAndMessage(() => verifyTestedManifest(doc as JsonObject, POLICY))).toEqual(["RECEIPT_TAG_MISMATCH", `tested manifest tag mismatch: tag must be "v0.8.0" (its version), found "v0.8.1"${disagree("tested manifest", "hermes-plugin-kit fetch --reference <bundle reference> --output-dir DIR")}`]);
    const receiptDoc = published();
    receiptDoc.tag = "v0.8.1";
    expect(codeAndMessage(() => verifyFinalReceipt(receiptDoc as JsonObject, POLICY))).toEqual(["RECEIPT_TAG_MISMATCH", `release receipt tag mismatch: tag must be "v0.8.0" (its version), found "v0.8.1"${disagree("release receipt", "hermes-plugin-kit fetch --reference <receipt reference> --expect receipt --output-dir DIR")}`]);
  });

  it("a major release requires manual migration (0.7.0 -> 1.0.0)", async () => {
    const d = await tempDir();
    const majorDist = await packTinyPackage(d, "demo-plugin", "1.0.0");
    const m = await testedManifestFor(majorDist, "1.0.0", "0.7.0");
    expect(m.release_class).toBe("major");
    expect(m.promotion).toEqual({ automatic_candidate: false, state: "manual_migration_required" });
    await rm(d, { recursive: true, force: true });
  });
});

describe("createTestedManifest (reference 3.6)", () => {
  const input = async () => ({
    policy: POLICY,
    previousVersion: "0.7.0",
    version: "0.8.0",
    tag: "v0.8.0",
    sourceSha: SOURCE_SHA,
    runId: "12345",
    runAttempt: 1,
    gates: passedGates(),
    artifacts: await inspectDistDir(dist, POLICY, "0.8.0"),
  });
  it("C1 refuses a version skip 0.7.0 -> 0.9.0", async () => {
    await expect(async () => createTestedManifest({ ...(await input()), previousVersion: "0.7.0", version: "0.9.0", tag: "v0.9.0" })).toThrowWithCode("RELEASE_NOT_ONE_BUMP");
  });
  it("C1 refuses a downgrade", async () => {
    await expect(async () => createTestedManifest({ ...(await input()), previousVersion: "0.8.1" })).toThrowWithCode("RELEASE_NOT_ONE_BUMP");
  });
  it("C2 refuses a tag that does not match the version", async () => {
    await expect(async () => createTestedManifest({ ...(await input()), tag: "v0.8.1" })).toThrowWithCode("TAG_VERSION_MISMATCH");
  });
  it("C3 refuses a short source SHA", async () => {
    await expect(async () => createTestedManifest({ ...(await input()), sourceSha: "abc" })).toThrowWithCode("GIT_SHA_INVALID");
  });
  it("C4 refuses a non-numeric run id and attempt 0", async () => {
    await expect(async () => createTestedManifest({ ...(await input()), runId: "abc" })).toThrowWithCode("WORKFLOW_EVIDENCE_INVALID");
    await expect(async () => createTestedManifest({ ...(await input()), runAttempt: 0 })).toThrowWithCode("WORKFLOW_EVIDENCE_INVALID");
  });
  it("C6 refuses a failed gate and a gate with another source before writing", async () => {
    const failed = await input();
    failed.gates.host_contract.result = "failed";
    await expect(() => createTestedManifest(failed)).toThrowWithCode("GATE_NOT_PASSED");
    const other = await input();
    other.gates.unit.source_sha = "c".repeat(40);
    await expect(() => createTestedManifest(other)).toThrowWithCode("GATE_OTHER_SOURCE");
  });
});

describe("distribution directory (reference 3.5, 3.7)", () => {
  async function freshDist(): Promise<{ dir: string; dist: string }> {
    const dir = await tempDir();
    return { dir, dist: await packTinyPackage(dir, "demo-plugin", "0.8.0") };
  }
  it("verifyManifest accepts the untouched dist", async () => {
    expect(await verifyManifest(tested() as JsonObject, dist, POLICY)).toEqual(manifest);
  });
  it("verifyManifestDist returns the manifest and the listing of the very tarball it verified (its package.json)", async () => {
    const { manifest: m, tarball } = await verifyManifestDist(tested() as JsonObject, dist, POLICY);
    expect(m).toEqual(manifest);
    expect(tarball.sha256).toBe(manifest.artifacts[0]!.sha256);
    expect(tarball.packageJson).toEqual(await readTarballPackageJsonFile(join(dist, manifest.artifacts[0]!.filename)));
    expect(tarball.packageJson["name"]).toBe("demo-plugin");
    const other = clone(tested()) as Doc;
    other["artifacts"][0]["sha256"] = "0".repeat(64);
    await expect(() => verifyManifestDist(other as JsonObject, dist, POLICY)).toThrowWithCode("ARTIFACT_SHA256_MISMATCH");
  });
  it("V2 bytes appended after create-manifest -> ARTIFACT_SIZE_MISMATCH before the file is read (the strict reader alone says TARBALL_TRAILING_DATA)", async () => {
    const { dir, dist: d } = await freshDist();
    const m = await testedManifestFor(d);
    await appendFile(join(d, "demo-plugin-0.8.0.tgz"), "x");
    await expect(() => verifyManifest(clone(m) as unknown as JsonObject, d, POLICY)).toThrowWithCode("ARTIFACT_SIZE_MISMATCH");
    await expect(readNpmTarballFile(join(d, "demo-plugin-0.8.0.tgz"))).toThrowWithCode("TARBALL_TRAILING_DATA");
    await rm(dir, { recursive: true, force: true });
  });
  it("V2 one byte of the tarball changed -> ARTIFACT_SHA256_MISMATCH before it is unpacked (not the tar or gzip error the bytes would give)", async () => {
    const { dir, dist: d } = await freshDist();
    const m = await testedManifestFor(d);
    const file = join(d, "demo-plugin-0.8.0.tgz");
    const bytes = await readFile(file);
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 0x5a;
    await writeFile(file, bytes);
    await expect(() => verifyManifest(clone(m) as unknown as JsonObject, d, POLICY)).toThrowWithCode("ARTIFACT_SHA256_MISMATCH");
    // The pinned tarball itself passes the same pins, read whole or streamed.
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] as number) ^ 0x5a;
    await writeFile(file, bytes);
    const pins = { sha256: m.artifacts[0]!.sha256, size: m.artifacts[0]!.size, by: "the tested manifest" };
    for (const wholeFileBytes of [undefined, 0]) expect((await readNpmTarballFile(file, { expected: pins, ...(wholeFileBytes === undefined ? {} : { wholeFileBytes }) })).sha256).toBe(pins.sha256);
    await rm(dir, { recursive: true, force: true });
  });
  it("V2 a different tarball of the same name -> ARTIFACT_SHA256_MISMATCH", async () => {
    const { dir, dist: d } = await freshDist();
    const m = clone(await testedManifestFor(d));
    m.artifacts[0]!.sha256 = "0".repeat(64);
    await expect(() => verifyManifest(m as unknown as JsonObject, d, POLICY)).toThrowWithCode("ARTIFACT_SHA256_MISMATCH");
    const m2 = clone(await testedManifestFor(d));
    m2.artifacts[0]!.size += 1;
    await expect(() => verifyManifest(m2 as unknown as JsonObject, d, POLICY)).toThrowWithCode("ARTIFACT_SIZE_MISMATCH");
    // Each says the file is not the one recorded, and the fix for each way that happens.
    const fix = ": this is not the file the tested manifest records (rebuilt, changed or replaced since it was recorded; npm pack run again writes other bytes); fix: use the file the tested manifest was made from, or, if this is the file that was tested, make the tested manifest again from it (release create-manifest); a downloaded release with this mismatch is broken: do not use it, and tell its publisher";
    await expect(verifyManifest(m as unknown as JsonObject, d, POLICY)).rejects.toThrow(new RegExp(`^SHA-256 mismatch for .*demo-plugin-0\\.8\\.0\\.tgz: the tested manifest says 0{64}, bytes hash to [0-9a-f]{64}${fix.replace(/[()]/g, "\\$&")}$`));
    await expect(verifyManifest(m2 as unknown as JsonObject, d, POLICY)).rejects.toThrow(fix);
    await rm(dir, { recursive: true, force: true });
  });
  it("D3 an extra file in dist -> DIST_UNEXPECTED_FILE", async () => {
    const { dir, dist: d } = await freshDist();
    await writeFile(join(d, ".private-notes.txt"), "x");
    await expect(() => inspectDistDir(d, POLICY, "0.8.0")).toThrowWithCode("DIST_UNEXPECTED_FILE");
    await rm(dir, { recursive: true, force: true });
  });
  it("D3 with 20,000 extra files: the message names 10 of them and how many more (one short line)", async () => {
    const { dir, dist: d } = await freshDist();
    for (let i = 0; i < 20_000; i += 1) await writeFile(join(d, `extra-${String(i).padStart(5, "0")}.txt`), "");
    const error = await inspectDistDir(d, POLICY, "0.8.0").then(() => null, (e: unknown) => e as Error & { code?: string });
    expect(error?.code).toBe("DIST_UNEXPECTED_FILE");
    expect(error?.message).toBe(`the artifact directory ${d} holds more than the tarball: ${Array.from({ length: 10 }, (_, i) => `extra-0000${i}.txt`).join(", ")}, and 19990 more`);
    await rm(dir, { recursive: true, force: true });
  }, 60_000);
  it("describeList: none, all up to the bound, then 'and N more'; long items cut", () => {
    expect(describeList([])).toBe("none");
    expect(describeList(["a", "b"])).toBe("a, b");
    expect(describeList(["a", "b", "c"], 2)).toBe("a, b, and 1 more");
    expect(describeList(["x".repeat(100)])).toBe("x".repeat(77) + "...");
  });
  it("D2 an empty dist or two tarballs -> DIST_INVENTORY", async () => {
    const { dir, dist: d } = await freshDist();
    await writeFile(join(d, "demo-plugin-0.8.1.tgz"), "x");
    await expect(() => inspectDistDir(d, POLICY, "0.8.0")).toThrowWithCode("DIST_INVENTORY");
    await rm(join(d, "demo-plugin-0.8.1.tgz"));
    await rm(join(d, "demo-plugin-0.8.0.tgz"));
    await expect(() => inspectDistDir(d, POLICY, "0.8.0")).toThrowWithCode("DIST_INVENTORY");
    await rm(dir, { recursive: true, force: true });
  });
  it("D1 a symlinked dist directory -> DIST_SYMLINK", async () => {
    const { dir, dist: d } = await freshDist();
    await symlink(d, join(dir, "link"));
    await expect(() => inspectDistDir(join(dir, "link"), POLICY, "0.8.0")).toThrowWithCode("DIST_SYMLINK");
    await rm(dir, { recursive: true, force: true });
  });
  it("D5 a symlinked tarball -> ARTIFACT_NOT_REGULAR", async () => {
    const { dir, dist: d } = await freshDist();
    await rename(join(d, "demo-plugin-0.8.0.tgz"), join(dir, "real.tgz"));
    await symlink(join(dir, "real.tgz"), join(d, "demo-plugin-0.8.0.tgz"));
    await expect(() => inspectDistDir(d, POLICY, "0.8.0")).toThrowWithCode("ARTIFACT_NOT_REGULAR");
    await rm(dir, { recursive: true, force: true });
  });
  it("D4 a tarball named for another version -> DIST_FILENAME_MISMATCH", async () => {
    await expect(() => inspectDistDir(dist, POLICY, "0.8.1")).toThrowWithCode("DIST_FILENAME_MISMATCH");
  });
  it("D8 metadata 0.7.1 renamed to the 0.8.0 name -> TARBALL_VERSION_MISMATCH", async () => {
    const dir = await tempDir();
    const d = await packTinyPackage(dir, "demo-plugin", "0.7.1");
    await rename(join(d, "demo-plugin-0.7.1.tgz"), join(d, "demo-plugin-0.8.0.tgz"));
    await expect(() => inspectDistDir(d, POLICY, "0.8.0")).toThrowWithCode("TARBALL_VERSION_MISMATCH");
    await expect(inspectDistDir(d, POLICY, "0.8.0")).rejects.toThrow('demo-plugin-0.8.0.tgz metadata has version "0.7.1"; expected version 0.8.0 (the release\'s version); fix: rebuild the tarball with npm pack from the release commit, whose package.json says 0.8.0');
    await rm(dir, { recursive: true, force: true });
  });
  it("D7 another package name -> TARBALL_NAME_MISMATCH", async () => {
    const dir = await tempDir();
    const d = await packTinyPackage(dir, "other-plugin", "0.8.0");
    await rename(join(d, "other-plugin-0.8.0.tgz"), join(d, "demo-plugin-0.8.0.tgz"));
    await expect(() => inspectDistDir(d, POLICY, "0.8.0")).toThrowWithCode("TARBALL_NAME_MISMATCH");
    await expect(inspectDistDir(d, POLICY, "0.8.0")).rejects.toThrow(/^unexpected package name in demo-plugin-0\.8\.0\.tgz: expected "demo-plugin" \(the package the policy pins.*\), found "other-plugin"; fix: pass the artifact directory of a demo-plugin build, or pin the package this tarball is$/);
    await rm(dir, { recursive: true, force: true });
  });
  it("D6 bytes that are not a gzip tar -> TARBALL_GZIP_INVALID", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "dist"));
    await writeFile(join(dir, "dist", "demo-plugin-0.8.0.tgz"), "not a tarball");
    await expect(() => inspectDistDir(join(dir, "dist"), POLICY, "0.8.0")).toThrowWithCode("TARBALL_GZIP_INVALID");
    await rm(dir, { recursive: true, force: true });
  });
});

describe("checkReceiptOfBundle: a receipt is exactly the one its bundle makes", () => {
  const layersOf = (r: PublishedReceipt) => r.payload.map((p) => ({ path: p.path, digest: p.blob_digest, size: p.size }));
  it("passes for the receipt buildPublishedReceipt made from the same tested manifest, reference and layers", () => {
    expect(() => checkReceiptOfBundle(receipt, manifest, BUNDLE_REFERENCE, layersOf(receipt))).not.toThrow();
    // Layer order does not matter (the payload is sorted by path).
    expect(() => checkReceiptOfBundle(receipt, manifest, BUNDLE_REFERENCE, [...layersOf(receipt)].reverse())).not.toThrow();
  });
  const cases: [string, (d: Doc) => void, string][] = [
    ["a tarball digest", (d) => (d.artifacts[0].sha256 = "f".repeat(64)), 'at artifacts[0].sha256 it has "ffff'],
    ["a tarball size", (d) => (d.artifacts[0].size += 1), "at artifacts[0].size it has number"],
    ["a gate command", (d) => (d.evidence.unit.command = "true"), 'at evidence.unit.command it has "true"'],
    ["a missing payload record", (d) => d.payload.pop(), "at payload it has an array of 3 entries, the bundle's tested manifest and layers give an array of 4 entries"],
    ["an extra field", (d) => (d.note = "x"), 'at note it has "x", the bundle\'s tested manifest and layers give nothing'],
    ["another bundle reference", (d) => (d.registry_reference = d.registry_reference.replace(/.$/, "0")), "at registry_reference it has"],
  ];
  it.each(cases)("refuses %s: RECEIPT_BUNDLE_MISMATCH naming the field and both values", (_label, edit, text) => {
    const doc = published();
    edit(doc);
    const run = () => checkReceiptOfBundle(doc as unknown as PublishedReceipt, manifest, BUNDLE_REFERENCE, layersOf(receipt), "receipt r.json");
    expect(run).toThrowWithCode("RECEIPT_BUNDLE_MISMATCH");
    expect(run).toThrow(`receipt r.json is not the receipt of bundle ${BUNDLE_REFERENCE}: ${text}`);
  });
});

describe("verifyFinalReceipt (reference 3.8)", () => {
  it("accepts the receipt buildPublishedReceipt made, with and without the pinned bundle reference", () => {
    expect(verifyFinalReceipt(published() as JsonObject, POLICY)).toEqual(receipt);
    expect(verifyFinalReceipt(published() as JsonObject, POLICY, { bundleReference: BUNDLE_REFERENCE })).toEqual(receipt);
    expect(receipt.payload.map((p) => p.path)).toEqual(["dist/demo-plugin-0.8.0.tgz", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);
  });
  const cases: [string, (d: Doc) => void, string][] = [
    ["scenario 38: registry_reference by tag", (d) => (d.registry_reference = "ghcr.io/acme/demo-plugin:v0.8.0"), "REFERENCE_NOT_PINNED"],
    ["scenario 38: blob_digest zeros", (d) => (d.artifacts[0].blob_digest = "sha256:" + "0".repeat(64)), "BLOB_DIGEST_MISMATCH"],
    ["scenario 38: workflow source", (d) => (d.evidence.workflow.source_sha = "c".repeat(40)), "WORKFLOW_EVIDENCE_INVALID"],
    ["scenario 38: payload ../escape", (d) => (d.payload[0].path = "../escape"), "PAYLOAD_PATHS_MISMATCH"],
    ["payload ../x", (d) => (d.payload[1].path = "../x"), "PAYLOAD_PATHS_MISMATCH"],
    ["schema_version 3", (d) => (d.schema_version = 3), "RECEIPT_SCHEMA_UNSUPPORTED"],
    ["receipt_state tested", (d) => (d.receipt_state = "tested"), "RECEIPT_STATE_MISMATCH"],
    ["payload size 1.5", (d) => (d.payload[2].size = 1.5), "FILE_RECORD_INVALID"],
    ["payload size true", (d) => (d.payload[2].size = true), "FILE_RECORD_INVALID"],
    ["artifact size true", (d) => (d.artifacts[0].size = true), "FILE_RECORD_INVALID"],
    ["extra top-level field", (d) => (d.signature = "x"), "RECEIPT_FIELDS_MISMATCH"],
    ["reference to another repository", (d) => (d.registry_reference = "ghcr.io/evil/demo-plugin@" + "sha256:" + "b".repeat(64)), "REFERENCE_REPOSITORY_MISMATCH"],
    ["R3 five payload records", (d) => d.payload.push(clone(d.payload[0])), "PAYLOAD_INVENTORY"],
    ["R3 three payload records", (d) => d.payload.pop(), "PAYLOAD_INVENTORY"],
    ["R4 payload record missing blob_digest", (d) => delete d.payload[1].blob_digest, "FILE_RECORD_INVALID"],
    ["R5 payload out of order", (d) => d.payload.reverse(), "PAYLOAD_PATHS_MISMATCH"],
    ["R6 artifact and payload disagree", (d) => {
      d.payload[0].sha256 = "9".repeat(64);
      d.payload[0].blob_digest = "sha256:" + "9".repeat(64);
    }, "ARTIFACT_PAYLOAD_DISAGREE"],
  ];
  it.each(cases)("%s fails with %s", async (_name, mutate, code) => {
    const doc = published();
    mutate(doc);
    await expect(() => verifyFinalReceipt(doc as JsonObject, POLICY)).toThrowWithCode(code);
  });
  it("refuses a receipt whose registry_reference is not the pinned bundle reference", async () => {
    await expect(() => verifyFinalReceipt(published() as JsonObject, POLICY, { bundleReference: `${POLICY.registryRepository}@sha256:${"c".repeat(64)}` })).toThrowWithCode("BUNDLE_REFERENCE_MISMATCH");
    expect(() => verifyFinalReceipt(published() as JsonObject, POLICY, { bundleReference: `${POLICY.registryRepository}@sha256:${"c".repeat(64)}` })).toThrow(/; fix: check that you pinned the bundle reference of this release \(not its receipt reference/);
  });
});

describe("receipt bytes already parsed (verifyParsedFinalReceiptBytes, the CLI's one parse)", () => {
  it("verifies as verifyFinalReceiptBytes does; a doc that is not what the bytes hold is RECEIPT_NOT_CANONICAL", () => {
    const receipt = receiptFor(manifest);
    const bytes = Buffer.from(canonicalJson(receipt as unknown as JsonObject));
    const expect_ = { bundleReference: BUNDLE_REFERENCE };
    expect(verifyParsedFinalReceiptBytes(bytes, parseReleaseJson(bytes), POLICY, expect_)).toEqual(verifyFinalReceiptBytes(bytes, POLICY, expect_));
    // A valid receipt of another source commit, handed with these bytes.
    const other = clone(receipt as unknown as JsonObject) as unknown as PublishedReceipt;
    const sha = "f".repeat(40);
    Object.assign(other, { source_sha: sha });
    for (const gate of Object.values(other.evidence)) Object.assign(gate, { source_sha: sha });
    expect(() => verifyFinalReceipt(other as unknown as JsonObject, POLICY, expect_)).not.toThrow();
    expect(() => verifyParsedFinalReceiptBytes(bytes, other as unknown as JsonObject, POLICY, expect_)).toThrowWithCode("RECEIPT_NOT_CANONICAL");
  });
});

describe("a receipt not in its canonical form (RECEIPT_NOT_CANONICAL) says how it differs and the fix", () => {
  const receipt = () => receiptFor(manifest) as unknown as JsonObject;
  const expect_ = { bundleReference: BUNDLE_REFERENCE };
  it.each([
    ["pretty-printed", (r: JsonObject) => JSON.stringify(r, null, 2) + "\n", "pretty-printed JSON (line breaks and indentation)"],
    ["without its trailing newline", (r: JsonObject) => canonicalJson(r).trimEnd(), "no trailing newline"],
    ["with a second trailing newline", (r: JsonObject) => canonicalJson(r) + "\n", '"\\n\\n" after the JSON (canonical JSON ends with exactly one newline)'],
    ["with a CRLF line ending", (r: JsonObject) => canonicalJson(r).trimEnd() + "\r\n", "a CRLF line ending"],
    ["with a line break inside", (r: JsonObject) => canonicalJson(r).replace(",", "\n,"), "a line break inside the JSON"],
    ["with spaces after ':'", (r: JsonObject) => canonicalJson(r).replaceAll('":', '": '), "spaces between tokens"],
    ["with its keys reversed", (r: JsonObject) => JSON.stringify(Object.fromEntries(Object.entries(r).reverse())) + "\n", "keys in another order (canonical JSON sorts keys by code point)"],
  ])("%s", (_label, spell, found) => {
    const bytes = Buffer.from(spell(receipt()));
    expect(() => verifyFinalReceiptBytes(bytes, POLICY, expect_)).toThrowWithCode("RECEIPT_NOT_CANONICAL");
    expect(() => verifyFinalReceiptBytes(bytes, POLICY, expect_)).toThrow(
      `release receipt is not in its canonical form: expected the exact bytes that were published (canonical JSON: compact, keys sorted, non-ASCII escaped, one trailing newline; docs/contract.md: the receipt reference is the digest of a manifest over these bytes, so any other spelling is another receipt), found ${found}; fix: use the exact published bytes (hermes-plugin-kit fetch --reference <receipt reference> --expect receipt writes them as release-receipt.json), and do not reformat the file (no jq ., no editor reindent)`,
    );
  });
  it("the canonical bytes verify", () => {
    expect(() => verifyFinalReceiptBytes(Buffer.from(canonicalJson(receipt())), POLICY, expect_)).not.toThrow();
  });
});

describe("a package mismatch says what to do, by where the package came from", () => {
  const otherPackage = (d: Doc) => ((d.package = "other-plugin"), d as JsonObject);
  const messageOf = (sources: Record<string, string> | undefined) => {
    try {
      verifyTestedManifest(otherPackage(tested()), { ...POLICY, ...(sources === undefined ? {} : { sources }) });
    } catch (e) {
      expect(e).toMatchObject({ code: "RECEIPT_PACKAGE_MISMATCH" });
      return (e as Error).message;
    }
    throw new Error("expected RECEIPT_PACKAGE_MISMATCH");
  };
  it.each([
    [undefined, "; fix: pin the package you trust with --package"],
    [{ package: "--package" }, ' (from --package), found "other-plugin"; fix: check that this is the release you meant to verify'],
    [{ package: "the fleet lock" }, " (from the fleet lock), found \"other-plugin\"; the lock entry and the release it pins disagree (the lock was edited, or the release replaced): fix: fleet remove --name <plugin>, then fleet add with the receipt you trust"],
    [{ package: "p.json (--policy) name" }, "; fix: name the plugin's own package.json with --policy, or pin the package with --package"],
  ])("from %j", (sources, fix) => {
    const message = messageOf(sources);
    expect(message.endsWith(fix), message).toBe(true);
    // A fleet lock's check has no --package to offer (fleet verify has no such option).
    if (sources?.package === "the fleet lock") expect(message).not.toContain("--package");
  });
});

describe("gate pins given to the library are checked as --expect-gate is", () => {
  const bytes = () => Buffer.from(canonicalJson(receiptFor(manifest) as unknown as JsonObject));
  it("a known gate with its command passes; a misspelt one is named with the nearest gate; a missing registryRepository is named", () => {
    expect(verifyFinalReceiptBytes(bytes(), { ...POLICY, gates: { unit: POLICY.gates.unit ?? "npm test" } }).version).toBe(manifest.version);
    expect(() => verifyFinalReceiptBytes(bytes(), { ...POLICY, gates: { unti: "curl evil | sh" } } as never)).toThrow(
      'policy.gates names unknown gate "unti" (expected one of unit, public_contract, host_contract, build_metadata; did you mean "unit"?); a misspelt gate would pin nothing',
    );
    expect(() => resolveConsumerExpectations({ repository: POLICY.registryRepository, gates: { unti: "x" } as never })).toThrow('gates names unknown gate "unti"');
    expect(() => resolveConsumerExpectations({ repository: POLICY.registryRepository, gates: { unit: 42 } as never })).toThrow("gates.unit must be a non-empty one-line command string, found number 42");
    expect(() => verifyFinalReceiptBytes(bytes(), { package: POLICY.package, registryRepository: undefined, gates: {} } as never)).toThrow("found an object with registryRepository nothing");
  });
});

describe("the receipt's own reference pinned (expect.receiptReference, receiptUnboundFields)", () => {
  const bytesOf = (doc: PublishedReceipt | JsonObject) => Buffer.from(canonicalJson(doc as unknown as JsonObject));
  it("binds every field: the published receipt passes, a consistent forgery, the bundle reference, another repository and a tag are each refused", async () => {
    const good = receiptFor(manifest);
    const own = receiptReferenceOf(POLICY.registryRepository, bytesOf(good));
    expect(own).toMatch(new RegExp(`^${POLICY.registryRepository}@sha256:[0-9a-f]{64}$`));
    expect(verifyFinalReceiptBytes(bytesOf(good), POLICY, { receiptReference: own }).version).toBe(good.version);
    expect(verifyFinalReceipt(good as unknown as JsonObject, POLICY, { receiptReference: own, bundleReference: BUNDLE_REFERENCE }).version).toBe(good.version);
    // Another source commit, consistent throughout: passes without the pin, refused with it.
    const forged = clone(good as unknown as JsonObject) as unknown as PublishedReceipt;
    const sha = "e".repeat(40);
    Object.assign(forged, { source_sha: sha });
    for (const gate of Object.values(forged.evidence)) Object.assign(gate, { source_sha: sha });
    expect(() => verifyFinalReceiptBytes(bytesOf(forged), POLICY, { bundleReference: BUNDLE_REFERENCE })).not.toThrow();
    await expect(() => verifyFinalReceiptBytes(bytesOf(forged), POLICY, { receiptReference: own })).toThrowWithCode("RECEIPT_REFERENCE_MISMATCH");
    expect(() => verifyFinalReceiptBytes(bytesOf(forged), POLICY, { receiptReference: own })).toThrow(`this receipt's reference is ${receiptReferenceOf(POLICY.registryRepository, bytesOf(forged))}, not the pinned ${own}: its bytes differ from the receipt you pinned`);
    expect(() => verifyFinalReceiptBytes(bytesOf(good), POLICY, { receiptReference: good.registry_reference })).toThrow(`the pinned receipt reference ${good.registry_reference} is the reference of the bundle this receipt names`);
    const elsewhere = own.replace(POLICY.registryRepository, "ghcr.io/other/demo-plugin");
    await expect(() => verifyFinalReceiptBytes(bytesOf(good), POLICY, { receiptReference: elsewhere })).toThrowWithCode("RECEIPT_REFERENCE_MISMATCH");
    expect(() => verifyFinalReceiptBytes(bytesOf(good), POLICY, { receiptReference: elsewhere })).toThrow(`names repository ghcr.io/other/demo-plugin, but this receipt is verified for ${POLICY.registryRepository} (its reference there is ${own})`);
    await expect(() => verifyFinalReceiptBytes(bytesOf(good), POLICY, { receiptReference: `${POLICY.registryRepository}:v1` })).toThrowWithCode("REFERENCE_NOT_PINNED");
    expect(() => verifyFinalReceiptBytes(bytesOf(good), POLICY, { receiptReference: `${POLICY.registryRepository}:v1` })).toThrow(/^the pinned receipt reference \(--expect-receipt-reference\): /);
  });
  it("the pinned receipt reference is checked before any field: an edited receipt is RECEIPT_REFERENCE_MISMATCH, not a field error; a respelt one RECEIPT_NOT_CANONICAL", async () => {
    const good = receiptFor(manifest);
    const own = receiptReferenceOf(POLICY.registryRepository, bytesOf(good));
    expect(verifyReceiptReference(bytesOf(good), POLICY.registryRepository, own)).toBe(own);
    // Only the top-level source_sha edited: the fields disagree (GATE_OTHER_SOURCE) unpinned, but pinned it is not the receipt.
    const edited = clone(good as unknown as JsonObject);
    edited["source_sha"] = "d".repeat(40);
    await expect(() => verifyFinalReceiptBytes(bytesOf(edited), POLICY)).toThrowWithCode("GATE_OTHER_SOURCE");
    for (const check of [
      () => verifyFinalReceiptBytes(bytesOf(edited), POLICY, { receiptReference: own }),
      () => verifyFinalReceipt(edited, POLICY, { receiptReference: own }),
      () => verifyReceiptReference(bytesOf(edited), POLICY.registryRepository, own),
    ]) {
      await expect(check).toThrowWithCode("RECEIPT_REFERENCE_MISMATCH");
      expect(check).toThrow(`not the pinned ${own}: its bytes differ from the receipt you pinned (the file was changed after it was fetched, or is another receipt), so none of its fields was checked or trusted; fix: do not trust this file; fetch the receipt you pinned`);
    }
    // A version two releases on: RELEASE_NOT_ONE_BUMP unpinned, the pin's refusal pinned.
    const bumped = clone(good as unknown as JsonObject);
    bumped["version"] = "0.9.1";
    await expect(() => verifyFinalReceiptBytes(bytesOf(bumped), POLICY)).toThrowWithCode("RELEASE_NOT_ONE_BUMP");
    await expect(() => verifyFinalReceiptBytes(bytesOf(bumped), POLICY, { receiptReference: own })).toThrowWithCode("RECEIPT_REFERENCE_MISMATCH");
    // Bytes that are no JSON at all: still named as not the pinned receipt.
    await expect(() => verifyReceiptReference(Buffer.from("not json"), POLICY.registryRepository, own)).toThrowWithCode("RECEIPT_REFERENCE_MISMATCH");
    // The pinned receipt reindented: its canonical form is the pinned one, so the spelling is what is named.
    const pretty = Buffer.from(JSON.stringify(good, null, 2) + "\n");
    expect(verifyReceiptReference(pretty, POLICY.registryRepository, own)).toBe(own);
    await expect(() => verifyFinalReceiptBytes(pretty, POLICY, { receiptReference: own })).toThrowWithCode("RECEIPT_NOT_CANONICAL");
  });
  it("a misspelt expectation key pins nothing, so it is refused (POLICY_INVALID): a tampered receipt cannot pass through a typo", async () => {
    const good = receiptFor(manifest);
    const own = receiptReferenceOf(POLICY.registryRepository, bytesOf(good));
    for (const expect_ of [{ receiptRefernce: own }, { receipt_reference: own }, { bundleReference: BUNDLE_REFERENCE, extra: 1 }]) {
      await expect(() => verifyFinalReceiptBytes(bytesOf(good), POLICY, expect_ as never)).toThrowWithCode("POLICY_INVALID");
      await expect(() => receiptUnboundFields(expect_ as never)).toThrowWithCode("POLICY_INVALID");
    }
    expect(() => verifyFinalReceiptBytes(bytesOf(good), POLICY, { receiptRefernce: own } as never)).toThrow('the receipt expectations have "receiptRefernce", which nothing reads (expected { bundleReference?, receiptReference? }); did you mean "receiptReference"?; a misspelt pin would bind nothing');
    await expect(() => receiptUnboundFields(undefined as never)).toThrowWithCode("POLICY_INVALID");
  });
  it("a misspelt or inherited policy key pins nothing, so it is refused (POLICY_INVALID): gatez, a sources that is no object, an own __proto__", async () => {
    const good = receiptFor(manifest);
    // Passing: the policy as given, and with sources naming where each pin came from.
    expect(verifyFinalReceiptBytes(bytesOf(good), { ...POLICY, sources: { gates: "--expect-gate" } }).version).toBe(good.version);
    // Failing: with gatez the release's own (forged) unit command would pass unpinned.
    const misspelt = () => verifyFinalReceiptBytes(bytesOf(good), { ...POLICY, gates: {}, gatez: { unit: "x" } } as never);
    await expect(misspelt).toThrowWithCode("POLICY_INVALID");
    expect(misspelt).toThrow(/^the policy has "gatez", which is no key it reads \(it reads package, registryRepository, gates, .*\); did you mean "gates"\?; an ignored key would check less than you pinned$/);
    for (const policy of [
      { ...POLICY, sources: 5 },
      { ...POLICY, sources: { gate: "--expect-gate" } },
      { ...POLICY, sources: { gates: 5 } },
      { ...POLICY, installTime: "postinstall" },
      JSON.parse(JSON.stringify({ ...POLICY, x: 1 }).replace('"x"', '"__proto__"')),
      Object.assign(Object.create({ package: POLICY.package }), { registryRepository: POLICY.registryRepository, gates: {} }),
    ]) {
      await expect(() => verifyFinalReceiptBytes(bytesOf(good), policy as never)).toThrowWithCode("POLICY_INVALID");
    }
  });
  it("a policy key named by its last word ({repository} for registryRepository) is POLICY_INVALID naming the key it meant, before the missing ones", async () => {
    const good = receiptFor(manifest);
    const short = () => verifyFinalReceiptBytes(bytesOf(good), { package: POLICY.package, repository: POLICY.registryRepository, gates: {} } as never);
    await expect(short).toThrowWithCode("POLICY_INVALID");
    expect(short).toThrow(/^the policy has "repository", which is no key it reads \(it reads package, registryRepository, .*\); did you mean "registryRepository"\?; an ignored key would check less than you pinned$/);
    // The same check for a builder: the wording says what the policy is for, not "verifying".
    const alone = () => createTestedManifest({ policy: { repository: POLICY.registryRepository } } as never);
    expect(alone).toThrow(/did you mean "registryRepository"\?/);
    const none = () => createTestedManifest({ policy: 5 } as never);
    await expect(none).toThrowWithCode("POLICY_INVALID");
    expect(none).toThrow(/^the policy argument must be the policy you pin, \{package: string, registryRepository: string, gates: object\} \(a release document is built and verified against it\)/);
  });
  it("expectations are plain data: a getter (which could answer the pin check one reference and the binding another) is POLICY_INVALID, never called", async () => {
    const good = receiptFor(manifest);
    const own = receiptReferenceOf(POLICY.registryRepository, bytesOf(good));
    let reads = 0;
    const tricky = { get receiptReference() { reads += 1; return own; } };
    await expect(() => verifyFinalReceiptBytes(bytesOf(good), POLICY, tricky as never)).toThrowWithCode("POLICY_INVALID");
    expect(() => verifyFinalReceiptBytes(bytesOf(good), POLICY, tricky as never)).toThrow(/^the receipt expectations\.receiptReference is a getter or setter/);
    expect(reads).toBe(0);
    expect(verifyFinalReceiptBytes(bytesOf(good), POLICY, { receiptReference: own }).version).toBe(good.version);
  });
  it("receiptUnboundFields: none with the receipt pinned, the claims with the bundle pin only, registry_reference too with neither", () => {
    expect(receiptUnboundFields({ receiptReference: "x" })).toEqual([]);
    expect(receiptUnboundFields({ bundleReference: "x" })).toEqual(["source_sha", "previous_version", "evidence", "artifacts"]);
    expect(receiptUnboundFields({})).toEqual(["registry_reference", "source_sha", "previous_version", "evidence", "artifacts"]);
  });
});

describe("verify functions called without types (plain JavaScript) refuse with a code, not a TypeError", () => {
  const bytes = () => Buffer.from(canonicalJson(receiptFor(manifest) as unknown as JsonObject));
  it.each([
    ["no policy", () => verifyFinalReceiptBytes(bytes(), undefined as never), "POLICY_INVALID"],
    ["a policy without registryRepository", () => verifyFinalReceiptBytes(bytes(), { package: "demo-plugin", gates: {} } as never), "POLICY_INVALID"],
    ["a policy without gates", () => verifyFinalReceipt(receiptFor(manifest) as unknown as JsonObject, { package: "demo-plugin", registryRepository: POLICY.registryRepository } as never), "POLICY_INVALID"],
    ["null bytes", () => verifyFinalReceiptBytes(null as never, POLICY), "JSON_SYNTAX"],
    ["a number as bytes", () => parseReleaseJson(42 as never), "JSON_SYNTAX"],
    ["null as the document", () => verifyTestedManifest(null as never, POLICY), "JSON_NOT_OBJECT"],
    ["an array as the document", () => verifyFinalReceipt([] as never, POLICY), "JSON_NOT_OBJECT"],
    ["null as the expectations", () => verifyFinalReceipt(receiptFor(manifest) as unknown as JsonObject, POLICY, null as never), "POLICY_INVALID"],
    ["a misspelt gate pin (it would pin nothing)", () => verifyFinalReceiptBytes(bytes(), { ...POLICY, gates: { unti: "curl evil | sh" } } as never), "POLICY_INVALID"],
    ["a gate pin that is no command", () => verifyFinalReceiptBytes(bytes(), { ...POLICY, gates: { unit: 42 } } as never), "POLICY_INVALID"],
    ["gates as an array", () => verifyTestedManifest(clone(manifest) as never, { ...POLICY, gates: [] } as never), "POLICY_INVALID"],
    ["a string as the expectations", () => verifyFinalReceiptBytes(bytes(), POLICY, "bundle" as never), "POLICY_INVALID"],
  ])("%s", (_label, call, code) => {
    expect(call).toThrowWithCode(code);
  });
  it("verifyManifestDist without a policy refuses before reading the artifact directory", async () => {
    await expect(verifyManifestDist(tested() as JsonObject, "/nonexistent", undefined as never)).rejects.toMatchObject({ code: "POLICY_INVALID" });
  });
});

describe("the pinned bundle reference is checked before the receipt", () => {
  it.each([["a tag", `${POLICY.registryRepository}:latest`], ["no digest", POLICY.registryRepository], ["a short digest", `${POLICY.registryRepository}@sha256:abc`]])("%s -> REFERENCE_NOT_PINNED, not BUNDLE_REFERENCE_MISMATCH", (_label, pinned) => {
    expect(() => verifyFinalReceipt(receiptFor(manifest) as unknown as JsonObject, POLICY, { bundleReference: pinned })).toThrowWithCode("REFERENCE_NOT_PINNED");
  });
  it("a digest pin of another bundle is still BUNDLE_REFERENCE_MISMATCH", () => {
    expect(() => verifyFinalReceipt(receiptFor(manifest) as unknown as JsonObject, POLICY, { bundleReference: `${POLICY.registryRepository}@sha256:${"c".repeat(64)}` })).toThrowWithCode("BUNDLE_REFERENCE_MISMATCH");
  });
});

describe("a version field that is no stable SemVer is named", () => {
  it.each([["version", "032.0"], ["previous_version", "1.0"]])("%s %s -> SEMVER_INVALID naming the field", (field, value) => {
    const doc = clone(receiptFor(manifest)) as unknown as Doc;
    doc[field] = value;
    expect(() => verifyFinalReceipt(doc as JsonObject, POLICY)).toThrowWithCode("SEMVER_INVALID");
    expect(() => verifyFinalReceipt(doc as JsonObject, POLICY)).toThrow(new RegExp(`${field} must be a stable SemVer.*"${value.replace(".", "\\.")}"`));
  });
});
