import { beforeAll, describe, expect, it } from "vitest";
import { writeFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { canonicalJson, testedManifestBytes, type PublishedReceipt, type TestedManifest } from "../../src/contract/index.js";
import { BUNDLE_REFERENCE, POLICY, clone, packTinyPackage, receiptFor, tempDir, testedManifestFor } from "../support/contract-fixture.js";
import { runCli } from "../support/cli.js";

let dir: string;
let dist: string;
let manifest: TestedManifest;
let receipt: PublishedReceipt;
const repoFlags = ["--repository", POLICY.registryRepository, "--package", POLICY.package];

beforeAll(async () => {
  dir = await tempDir();
  dist = await packTinyPackage(dir, "demo-plugin", "0.8.0");
  manifest = await testedManifestFor(dist);
  receipt = receiptFor(manifest);
});

async function writeDoc(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe("hermes-plugin-kit verify-final-receipt", () => {
  it("accepts a valid receipt (exit 0) and prints the pinned reference", async () => {
    const file = await writeDoc("ok.json", canonicalJson(receipt));
    const r = await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags, "--expect-bundle-reference", BUNDLE_REFERENCE], { cwd: dir });
    // One warning: the receipt's own reference was not pinned.
    expect(r.stderr).toMatch(/^hermes-plugin-kit: warning: the receipt's own reference was not pinned, [^\n]*\n$/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(BUNDLE_REFERENCE);
  });
  it("--json prints a machine-readable result", async () => {
    const file = await writeDoc("ok2.json", canonicalJson(receipt));
    const r = await runCli(["verify-final-receipt", "--receipt", file, "--expect-bundle-reference", BUNDLE_REFERENCE, "--json"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, registry_reference: BUNDLE_REFERENCE, tarball: { filename: "demo-plugin-0.8.0.tgz" } });
  });

  type Doc = Record<string, any>;
  const mutations: [string, (d: Doc) => void, string, string][] = [
    ["registry_reference as a tag", (d) => (d.registry_reference = `${POLICY.registryRepository}:v0.8.0`), "REFERENCE_NOT_PINNED", "digest"],
    ["blob_digest all zeros", (d) => (d.artifacts[0].blob_digest = "sha256:" + "0".repeat(64)), "BLOB_DIGEST_MISMATCH", "artifacts[0].blob_digest"],
    ["workflow source c...c", (d) => (d.evidence.workflow.source_sha = "c".repeat(40)), "WORKFLOW_EVIDENCE_INVALID", "evidence.workflow"],
    ["payload[0].path ../escape", (d) => (d.payload[0].path = "../escape"), "PAYLOAD_PATHS_MISMATCH", "../escape"],
    ["schema_version 3", (d) => (d.schema_version = 3), "RECEIPT_SCHEMA_UNSUPPORTED", "schema_version"],
    ["receipt_state tested", (d) => (d.receipt_state = "tested"), "RECEIPT_STATE_MISMATCH", "receipt_state"],
    ["payload path ../x", (d) => (d.payload[3].path = "../x"), "PAYLOAD_PATHS_MISMATCH", "../x"],
    ["size 1.5", (d) => (d.payload[1].size = 1.5), "FILE_RECORD_INVALID", "payload[1].size"],
    ["size true", (d) => (d.artifacts[0].size = true), "FILE_RECORD_INVALID", "artifacts[0].size"],
    ["extra top-level field", (d) => (d.extra = "x"), "RECEIPT_FIELDS_MISMATCH", '"extra"'],
  ];
  it.each(mutations)("rejects %s with exit 1, %s, naming the field", async (name, mutate, code, field) => {
    const doc = clone(receipt) as unknown as Doc;
    mutate(doc);
    const file = await writeDoc(`bad-${name.replace(/\W+/g, "-")}.json`, JSON.stringify(doc));
    const r = await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(`[${code}]`);
    expect(r.stderr).toContain(field);
  });
  it("rejects a duplicated key with exit 1 and JSON_DUPLICATE_KEY naming the key", async () => {
    const text = canonicalJson(receipt).replace('"package":', '"version":"9.9.9","package":');
    const file = await writeDoc("dup.json", text);
    const r = await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("JSON_DUPLICATE_KEY");
    expect(r.stderr).toContain('"version"');
  });
  it("rejects a tested manifest where a receipt is expected", async () => {
    const file = await writeDoc("tested.json", testedManifestBytes(manifest).toString());
    const r = await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("RECEIPT_STATE_MISMATCH");
  });
  it("rejects a receipt for another bundle than the pinned one", async () => {
    const file = await writeDoc("ok3.json", canonicalJson(receipt));
    const r = await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags, "--expect-bundle-reference", `${POLICY.registryRepository}@sha256:${"e".repeat(64)}`], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("BUNDLE_REFERENCE_MISMATCH");
  });
  it("refuses a receipt that verifies but is not in canonical form", async () => {
    const file = await writeDoc("pretty.json", JSON.stringify(receipt, null, 2) + "\n");
    const r = await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("[RECEIPT_NOT_CANONICAL]");
  });
  it("--expect-receipt-reference pins the receipt itself: a consistently forged receipt is refused", async () => {
    const file = await writeDoc("pin-ok.json", canonicalJson(receipt));
    const ok = await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags, "--json"], { cwd: dir });
    const receiptReference = (JSON.parse(ok.stdout) as { receipt_reference: string }).receipt_reference;
    expect(receiptReference).toMatch(new RegExp(`^${POLICY.registryRepository}@sha256:[0-9a-f]{64}$`));
    expect((await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags, "--expect-receipt-reference", receiptReference], { cwd: dir })).code).toBe(0);
    const forged = clone(receipt) as unknown as { artifacts: { sha256: string; blob_digest: string }[]; payload: { path: string; sha256: string; blob_digest: string }[] };
    const hex = "7".repeat(64);
    forged.artifacts[0]!.sha256 = hex;
    forged.artifacts[0]!.blob_digest = `sha256:${hex}`;
    forged.payload[0]!.sha256 = hex;
    forged.payload[0]!.blob_digest = `sha256:${hex}`;
    const forgedFile = await writeDoc("forged.json", canonicalJson(forged));
    // Without a digest pin the forgery passes, and the run says what was not checked and what to pin.
    const unpinned = await runCli(["verify-final-receipt", "--receipt", forgedFile, ...repoFlags], { cwd: dir });
    expect(unpinned.code).toBe(0);
    const note = /^hermes-plugin-kit: warning: the receipt's own reference was not pinned, so this checked the receipt's own consistency and its repository, not that these fields are the release's: the bundle it names \(registry_reference\), its source \(source_sha\), previous version \(previous_version\), gates and their evidence \(evidence\), tarball digest \(artifacts\); to bind them, pin --expect-receipt-reference <the receipt reference the release published: release run's output or its GitHub Release body, not this file> \(this file's own reference is (\S+): the published one must be exactly that\), or --expect-bundle-reference <the bundle reference you pinned> for registry_reference alone, or fetch the bundle, which is verified byte for byte\n$/.exec(unpinned.stderr);
    expect(note, unpinned.stderr).not.toBeNull();
    // The reference it names is the forged receipt's own, which the pinned one is not.
    expect(note![1]).toBe(JSON.parse((await runCli(["verify-final-receipt", "--receipt", forgedFile, ...repoFlags, "--json", "--quiet"], { cwd: dir })).stdout).receipt_reference);
    expect(note![1]).not.toBe(receiptReference);
    expect(JSON.parse((await runCli(["verify-final-receipt", "--receipt", forgedFile, ...repoFlags, "--json"], { cwd: dir })).stdout).receipt_pinned).toBe(false);
    // The bundle pin binds registry_reference only: the forgery (same registry_reference) passes it too, and the note says so.
    const bundleOnly = await runCli(["verify-final-receipt", "--receipt", forgedFile, ...repoFlags, "--expect-bundle-reference", receipt.registry_reference, "--json"], { cwd: dir });
    expect(bundleOnly.code).toBe(0);
    expect(JSON.parse(bundleOnly.stdout).receipt_pinned).toBe(false);
    expect(bundleOnly.stderr).toContain("so this checked that it names the bundle you pinned and is consistent, not that these fields are the release's: its source (source_sha), previous version (previous_version), gates and their evidence (evidence), tarball digest (artifacts); to bind them, pin --expect-receipt-reference");
    expect(bundleOnly.stderr).not.toContain("registry_reference");
    // A warning of what was not checked stays under --quiet (a script asking for quiet output still sees it).
    expect((await runCli(["verify-final-receipt", "--receipt", forgedFile, ...repoFlags, "--quiet"], { cwd: dir })).stderr).toBe(unpinned.stderr);
    // Pinned: no note, and the JSON says so.
    const pinned = await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags, "--expect-receipt-reference", receiptReference, "--json"], { cwd: dir });
    expect(pinned.stderr).toBe("");
    expect(JSON.parse(pinned.stdout).receipt_pinned).toBe(true);
    const r = await runCli(["verify-final-receipt", "--receipt", forgedFile, ...repoFlags, "--expect-receipt-reference", receiptReference], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("[RECEIPT_REFERENCE_MISMATCH]");
    expect(r.stderr).toContain(`its bytes differ from the receipt you pinned (the file was changed after it was fetched, or is another receipt), so none of its fields was checked or trusted; fix: do not trust this file; fetch the receipt you pinned (hermes-plugin-kit fetch --reference ${receiptReference} --expect receipt --output-dir DIR) and verify that`);
    // The bundle reference given as the receipt's: named as swapped, not as other bytes.
    const swapped = await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags, "--expect-receipt-reference", receipt.registry_reference], { cwd: dir });
    expect(swapped.code).toBe(1);
    expect(swapped.stderr).toBe(`hermes-plugin-kit: the pinned receipt reference ${receipt.registry_reference} is the reference of the bundle this receipt names (its registry_reference), not of the receipt; fix: pin it as the bundle reference (--expect-bundle-reference), and the receipt reference the release published as the receipt reference (--expect-receipt-reference) [RECEIPT_REFERENCE_MISMATCH]\n`);
    // The JSON answer lists what stayed the receipt's own claims (the library's receiptUnboundFields).
    expect(JSON.parse(pinned.stdout).unbound_fields).toEqual([]);
    expect(JSON.parse(bundleOnly.stdout).unbound_fields).toEqual(["source_sha", "previous_version", "evidence", "artifacts"]);
    // With only a repository pinned, registry_reference is unbound too: the JSON list and the warning agree, field for field.
    const repositoryOnly = await runCli(["verify-final-receipt", "--receipt", forgedFile, ...repoFlags, "--json"], { cwd: dir });
    const unboundFields = JSON.parse(repositoryOnly.stdout).unbound_fields as string[];
    expect(unboundFields).toEqual(["registry_reference", "source_sha", "previous_version", "evidence", "artifacts"]);
    const listed = /not that these fields are the release's: ([^;]*);/.exec(repositoryOnly.stderr)?.[1];
    expect(listed?.split(", ").map((words) => /\((\w+)\)$/.exec(words)?.[1])).toEqual(unboundFields);
    // A tag is no pin, for the receipt reference as for the bundle reference: REFERENCE_NOT_PINNED naming the flag and resolve, before the file is read.
    const tagged = receiptReference.replace(/@sha256:[0-9a-f]{64}$/, ":v0.8.0-receipt");
    for (const flag of ["--expect-receipt-reference", "--expect-bundle-reference"]) {
      const byTag = await runCli(["verify-final-receipt", "--receipt", join(dir, "absent.json"), ...repoFlags, flag, tagged], { cwd: dir });
      expect(byTag.code).toBe(1);
      // The message names the flag that holds the tag.
      expect(byTag.stderr).toBe(`hermes-plugin-kit: ${flag}: registry reference must pin a SHA-256 digest (<repository>@sha256:<64 hex>), found ${JSON.stringify(tagged)}, a tag (tags move; a release is pinned by digest); fix: run hermes-plugin-kit resolve --reference ${tagged} to print the digest reference it names now, check it, and pass that [REFERENCE_NOT_PINNED]\n`);
    }
  });
  it("--expect-gate ignores the spaces around = (\"unit = <command>\" pins <command>); a different command is GATE_COMMAND_MISMATCH", async () => {
    const file = await writeDoc("gate-spaces.json", canonicalJson(receipt));
    const ran = (receipt.evidence as unknown as Record<string, { command: string }>)["unit"]!.command;
    const spaced = await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags, "--expect-gate", ` unit =  ${ran}`, "--json"], { cwd: dir });
    expect(spaced.code, spaced.stderr).toBe(0);
    expect(JSON.parse(spaced.stdout)).toMatchObject({ ok: true });
    const other = await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags, "--expect-gate", "unit = npm run other"], { cwd: dir });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("[GATE_COMMAND_MISMATCH]");
    expect(other.stderr).toContain('"npm run other"');
  });
  it("refuses a FIFO, a directory and a file over 1 MiB without reading them whole", async () => {
    const { execFileSync } = await import("node:child_process");
    const fifo = join(dir, "receipt.fifo");
    execFileSync("mkfifo", [fifo]);
    const viaFifo = await runCli(["verify-final-receipt", "--receipt", fifo, ...repoFlags], { cwd: dir, timeoutMs: 20_000 });
    expect(viaFifo.code).toBe(1);
    expect(viaFifo.stderr).toContain("[RELEASE_JSON_UNREADABLE]");
    const viaDir = await runCli(["verify-final-receipt", "--receipt", dir, ...repoFlags], { cwd: dir });
    expect(viaDir.stderr).toContain("[RELEASE_JSON_UNREADABLE]");
    const big = await writeDoc("big.json", canonicalJson(receipt).replace("\n", " ".repeat(1024 * 1024) + "\n"));
    const viaBig = await runCli(["verify-final-receipt", "--receipt", big, ...repoFlags], { cwd: dir });
    expect(viaBig.code).toBe(1);
    expect(viaBig.stderr).toContain("[RELEASE_JSON_TOO_LARGE]");
  });
  it("no command at all prints help and exits 2; an empty option value is a usage error", async () => {
    const none = await runCli([], { cwd: dir });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("Usage: hermes-plugin-kit");
    const empty = await runCli(["verify-final-receipt", "--receipt", ""], { cwd: dir });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("--receipt must not be empty");
  });
  it("usage errors exit 2", async () => {
    const r = await runCli(["verify-final-receipt"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--receipt");
  });
  it("an unreadable file exits 1 with RELEASE_JSON_UNREADABLE", async () => {
    const r = await runCli(["verify-final-receipt", "--receipt", join(dir, "missing.json"), ...repoFlags], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("RELEASE_JSON_UNREADABLE");
    // What it means and the fix, not a bare errno (new-user finding).
    expect(r.stderr).toContain(`${join(dir, "missing.json")}: no such file (ENOENT); pass the path of the file`);
    const viaDir = await runCli(["verify-final-receipt", "--receipt", dir, ...repoFlags], { cwd: dir });
    expect(viaDir.stderr).toContain("is not a regular file (a directory); pass the path of the JSON file itself");
  });
  it("a JSON object that is no release document ({}) is RECEIPT_SCHEMA_UNSUPPORTED saying so, with or without --package", async () => {
    const file = await writeDoc("empty-object.json", "{}");
    for (const flags of [["--repository", POLICY.registryRepository], repoFlags]) {
      const r = await runCli(["verify-final-receipt", "--receipt", file, ...flags], { cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("[RECEIPT_SCHEMA_UNSUPPORTED]");
      expect(r.stderr).not.toContain("POLICY_INVALID");
    }
    const unnamed = clone(receipt) as unknown as Record<string, unknown>;
    unnamed["package"] = "Not A Name";
    const r = await runCli(["verify-final-receipt", "--receipt", await writeDoc("bad-name.json", JSON.stringify(unnamed)), "--repository", POLICY.registryRepository], { cwd: dir });
    expect(r.stderr).toMatch(/which is not an npm package name; pin the package you expect with --package <name> \[POLICY_INVALID\]/);
  });
  it("a tested manifest given as the receipt says which document it is and which command takes it", async () => {
    const file = await writeDoc("manifest-as-receipt.json", testedManifestBytes(manifest).toString());
    const r = await runCli(["verify-final-receipt", "--receipt", file, ...repoFlags], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('expected a published receipt (release-receipt.json, receipt_state "published"; verify-final-receipt), but receipt_state is "tested": this document is a tested manifest (release-manifest.json, receipt_state "tested"; verify-manifest) [RECEIPT_STATE_MISMATCH]');
  });
});

describe("hermes-plugin-kit verify-manifest", () => {
  it("an artifact directory without the tarball names that directory, and points at its dist/ when the tarball is there", async () => {
    const file = await writeDoc("release-manifest-dirs.json", testedManifestBytes(manifest).toString());
    const vendor = join(dir, "vendor-like");
    const { cp, mkdir } = await import("node:fs/promises");
    await mkdir(vendor);
    await cp(dist, join(vendor, "dist"), { recursive: true });
    await writeFile(join(vendor, "release-manifest.json"), "{}");
    const r = await runCli(["verify-manifest", "--manifest", file, "--artifact-dir", vendor, ...repoFlags], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the artifact directory ${vendor} must contain exactly one npm tarball, found 0 (dist, release-manifest.json); the tarball is likely in ${join(vendor, "dist")}: pass that directory [DIST_INVENTORY]`);
    const ok = await runCli(["verify-manifest", "--manifest", file, "--artifact-dir", join(vendor, "dist"), ...repoFlags], { cwd: dir });
    expect(ok.code, ok.stderr).toBe(0);
  });

  it("accepts the manifest for its dist and rejects tampered bytes", async () => {
    const file = await writeDoc("release-manifest.json", testedManifestBytes(manifest).toString());
    const ok = await runCli(["verify-manifest", "--manifest", file, "--artifact-dir", dist, ...repoFlags], { cwd: dir });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("demo-plugin 0.8.0");
    // What no file here binds (source_sha, evidence, the run) is said, also under --quiet and with --json.
    const claims = `hermes-plugin-kit: warning: this checked the tarball against the manifest (bytes, name, version, the gates its package.json declares) and the manifest's own consistency; its source_sha (${manifest.source_sha}), previous_version, gate evidence (commands, MCP SDK version) and workflow run are the manifest's claims, which no file here binds: to trust them, fetch the release by its pinned bundle reference (hermes-plugin-kit fetch, byte for byte) or verify its attestation (hermes-plugin-kit verify-provenance)\n`;
    expect(ok.stderr).toBe(claims);
    const forged = clone(manifest);
    forged.source_sha = "0".repeat(40);
    for (const gate of Object.values(forged.evidence)) gate.source_sha = "0".repeat(40);
    const forgedRun = await runCli(["verify-manifest", "--manifest", await writeDoc("forged-source.json", testedManifestBytes(forged).toString()), "--artifact-dir", dist, ...repoFlags, "--json", "--quiet"], { cwd: dir });
    expect(forgedRun.code).toBe(0);
    expect(JSON.parse(forgedRun.stdout)).toMatchObject({ ok: true, source_sha: "0".repeat(40), claims_bound: false });
    expect(forgedRun.stderr).toBe(claims.replace(manifest.source_sha, "0".repeat(40)));
    const bad = clone(manifest);
    bad.artifacts[0]!.sha256 = "f".repeat(64);
    const badFile = await writeDoc("bad-manifest.json", testedManifestBytes(bad).toString());
    const r = await runCli(["verify-manifest", "--manifest", badFile, "--artifact-dir", dist, ...repoFlags, "--json"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "ARTIFACT_SHA256_MISMATCH" });
    expect(await readFile(file, "utf8")).toBe(testedManifestBytes(manifest).toString());
  });

  it("expectations come from the consumer's pins, never from the manifest itself: nothing pinned -> exit 2 POLICY_REPOSITORY_UNPINNED; another repository -> RECEIPT_REGISTRY_MISMATCH", async () => {
    const file = await writeDoc("release-manifest-unpinned.json", testedManifestBytes(manifest).toString());
    const unpinned = await runCli(["verify-manifest", "--manifest", file, "--artifact-dir", dist, "--package", POLICY.package], { cwd: dir });
    expect(unpinned.code).toBe(2);
    expect(unpinned.stdout).toBe("");
    expect(unpinned.stderr).toMatch(/^hermes-plugin-kit: nothing pinned to verify against: expected the registry repository you trust, found none \(tested manifest .* names registry_repository ".+", but a document never sets its own expectations\); expectations come only from what you pin .*fix: pass --repository .* \[POLICY_REPOSITORY_UNPINNED\]\n$/);
    const json = await runCli(["verify-manifest", "--manifest", file, "--artifact-dir", dist, "--json"], { cwd: dir });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: "POLICY_REPOSITORY_UNPINNED" });
    // A manifest naming another repository than the pinned one (a document that would pick its own expectation).
    const other = await runCli(["verify-manifest", "--manifest", file, "--artifact-dir", dist, "--repository", "ghcr.io/acme/other", "--json"], { cwd: dir });
    expect(other.code).toBe(1);
    expect(JSON.parse(other.stdout)).toMatchObject({ ok: false, code: "RECEIPT_REGISTRY_MISMATCH" });
    const ok = await runCli(["verify-manifest", "--manifest", file, "--artifact-dir", dist, "--repository", POLICY.registryRepository], { cwd: dir });
    expect(ok.code).toBe(0);
  });

  it("verify-final-receipt with nothing pinned: the same code and wording (exit 2)", async () => {
    const file = await writeDoc("unpinned-receipt.json", canonicalJson(receipt));
    const r = await runCli(["verify-final-receipt", "--receipt", file, "--json"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "POLICY_REPOSITORY_UNPINNED" });
    expect(JSON.parse(r.stdout).message).toMatch(/^nothing pinned to verify against: expected the registry repository you trust, found none \(receipt .* names registry_repository/);
  });
});
