/**
 * A receipt fetched by its pinned reference, then edited on disk: `verify-final-receipt` with
 * `--expect-receipt-reference` names the bytes as not the pinned receipt (RECEIPT_REFERENCE_MISMATCH, what was
 * pinned, what the bytes are, the fetch that fixes it) before any field is judged; without the receipt pin the
 * field checks say the receipt's own fields disagree (the file may have been edited) and how to fix it. Real
 * release staged in an `oci-layout:` store, fetched by the built CLI.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { writeLayout } from "../../src/oci/layout.js";
import { copy } from "../../src/oci/transfer.js";
import { RELEASE_ARTIFACT_TYPE } from "../../src/contract/constants.js";
import { parseReleaseJson, verifyFinalReceiptBytes } from "../../src/contract/release-document.js";
import { requireReceiptOfBundle } from "../../src/fetch/receipt-bundle.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture, type StagedRelease } from "../support/release-fixture.js";
import { runCli } from "../support/cli.js";

let root: string;
let repository: string;
let fixture: ReleaseFixture;
let staged: StagedRelease;
let fetched: string;
let receiptRef: string;
let bundleRef: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-receipt-pinned-"));
  const storeDir = join(root, "store");
  repository = `oci-layout:${storeDir}`;
  fixture = await createReleaseFixture({ registryRepository: repository });
  staged = await stageFixture(fixture, await LayoutTarget.open(storeDir, { create: true }), repository);
  await chmod(storeDir, 0o700);
  receiptRef = `${repository}@${staged.receipt.digest}`;
  bundleRef = `${repository}@${staged.bundle.digest}`;
  const out = join(root, "receipt");
  const fetch = await runCli(["fetch", "--reference", receiptRef, "--output-dir", out, "--expect", "receipt"], { cwd: root });
  expect(fetch.stderr).toBe("");
  expect(fetch.code).toBe(0);
  fetched = join(out, "release-receipt.json");
}, 120_000);

afterAll(async () => {
  await fixture?.cleanup();
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

/** A copy of the fetched receipt with `edit` applied to its text (canonical spelling kept). */
async function edited(name: string, edit: (text: string) => string): Promise<string> {
  const text = await readFile(fetched, "utf8");
  const changed = edit(text);
  expect(changed).not.toBe(text);
  const path = join(root, name);
  await writeFile(path, changed);
  return path;
}

const verify = (file: string, ...pins: string[]) => runCli(["verify-final-receipt", "--receipt", file, ...pins], { cwd: root });

describe("verify-final-receipt of a fetched receipt edited on disk", () => {
  it("the fetched bytes verify against both pins (exit 0)", async () => {
    const ok = await verify(fetched, "--expect-bundle-reference", bundleRef, "--expect-receipt-reference", receiptRef);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
  });

  it.each([
    ["source_sha", (text: string) => text.replace(`"source_sha":"${fixture.sourceSha}","tag"`, `"source_sha":"${"a".repeat(40)}","tag"`)],
    ["version", (text: string) => text.replace('"version":"0.8.0"', '"version":"0.8.1"')],
    ["a byte that breaks the JSON", (text: string) => text.replace("{", "[")],
  ])("edited %s with --expect-receipt-reference: RECEIPT_REFERENCE_MISMATCH names the pin, the bytes and the fetch, before any field is judged", async (label, edit) => {
    const file = await edited(`edited-${label.replaceAll(" ", "-")}.json`, edit);
    const r = await verify(file, "--expect-bundle-reference", bundleRef, "--expect-receipt-reference", receiptRef);
    expect(r.code).toBe(1);
    const own = /this receipt's reference is (\S+), not the pinned /.exec(r.stderr)?.[1];
    expect(own, r.stderr).toMatch(new RegExp(`^${repository.replaceAll("/", "\\/")}@sha256:[0-9a-f]{64}$`));
    expect(r.stderr).toBe(
      `hermes-plugin-kit: this receipt's reference is ${own}, not the pinned ${receiptRef}: its bytes differ from the receipt you pinned (the file was changed after it was fetched, or is another receipt), so none of its fields was checked or trusted; fix: do not trust this file; fetch the receipt you pinned (hermes-plugin-kit fetch --reference ${receiptRef} --expect receipt --output-dir DIR) and verify that [RECEIPT_REFERENCE_MISMATCH]\n`,
    );
  });

  it("a reformatted copy of the pinned receipt is named as respelt (RECEIPT_NOT_CANONICAL), not as another receipt", async () => {
    const file = await edited("pretty.json", (text) => JSON.stringify(JSON.parse(text), null, 2) + "\n");
    const r = await verify(file, "--expect-receipt-reference", receiptRef);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^hermes-plugin-kit: release receipt is not in its canonical form: .*\[RECEIPT_NOT_CANONICAL\]\n$/);
  });

  it("without the receipt pin, an edited source_sha is the receipt's own fields disagreeing, with the fix (GATE_OTHER_SOURCE)", async () => {
    const forged = "a".repeat(40);
    const file = await edited("unpinned-source.json", (text) => text.replace(`"source_sha":"${fixture.sourceSha}","tag"`, `"source_sha":"${forged}","tag"`));
    const r = await verify(file, "--expect-bundle-reference", bundleRef);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `hermes-plugin-kit: release receipt (release-receipt.json) gate unit used another source: evidence.unit.source_sha is "${fixture.sourceSha}", but the document's source_sha is ${forged}; the release receipt's own fields disagree with each other, which the release pipeline never writes: the file was edited after it was made, or the release was made wrong; fix: do not trust this file; verify the release receipt the release published (hermes-plugin-kit fetch --reference <receipt reference> --expect receipt --output-dir DIR, by the reference you pinned), and if that one says the same, do not use this release and tell its publisher [GATE_OTHER_SOURCE]\n`,
    );
  });

  it("without the receipt pin, an edited version that skips a release is RELEASE_NOT_ONE_BUMP naming both fields, with the fix", async () => {
    const file = await edited("unpinned-version.json", (text) => text.replace('"version":"0.8.0"', '"version":"0.9.1"'));
    const r = await verify(file, "--expect-bundle-reference", bundleRef);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^hermes-plugin-kit: release receipt previous_version 0\.7\.0 -> version 0\.9\.1 is not one SemVer bump \(a release moves exactly one of major, minor, patch up by one\); the release receipt's own fields disagree with each other, .*; fix: do not trust this file; .* \[RELEASE_NOT_ONE_BUMP\]\n$/);
  });
});

describe("a receipt taken with its bundle (requireReceiptOfBundle: fleet verify, verify-provenance --receipt)", () => {
  it("a bundle whose tested manifest names another repository than the receipt is RECEIPT_BUNDLE_MISMATCH naming both, not a repository the consumer pinned", async () => {
    const store = await LayoutTarget.open(join(root, "store"));
    const receipt = verifyFinalReceiptBytes(staged.receiptBytes, { package: fixture.packageName, registryRepository: repository, gates: {} });
    // Passing: the receipt and the bundle it names.
    await expect(requireReceiptOfBundle(store, receipt, "receipt R")).resolves.toBeUndefined();
    // A release made for another repository, copied into this store, named by a receipt of this repository.
    const elsewhere = await createReleaseFixture({ registryRepository: "oci-layout:/srv/elsewhere" });
    try {
      const layout = join(root, "elsewhere-layout");
      await writeLayout(layout, RELEASE_ARTIFACT_TYPE, elsewhere.files);
      const copied = await copy(await LayoutTarget.open(layout), store, "payload");
      const other = { ...receipt, registry_reference: `${repository}@${copied.digest}` };
      const refused = requireReceiptOfBundle(store, other, "receipt R");
      await expect(refused).rejects.toMatchObject({ code: "RECEIPT_BUNDLE_MISMATCH" });
      await expect(requireReceiptOfBundle(store, other, "receipt R")).rejects.toThrow(
        `receipt R is not the receipt of bundle ${repository}@${copied.digest}: at registry_repository it has ${JSON.stringify(repository)}, the bundle's tested manifest (release-manifest.json) has "oci-layout:/srv/elsewhere"; fix: use the receipt published with this bundle`,
      );
    } finally {
      await elsewhere.cleanup();
    }
    expect(parseReleaseJson(staged.receiptBytes)["registry_repository"]).toBe(repository);
  }, 120_000);
});
