/**
 * `release publish` against an `oci-layout:` store (reference 2.6, 2.7, 2.9,
 * 3.17, 3.18 SP2-SP5; scenarios 11, 12, 26, 27, 39): bind `v<V>` to the staged
 * digest, build, push and re-verify the receipt; conflicts and a store that
 * turns public fail closed with nothing changed.
 */
import { createHash } from "node:crypto";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseStrictJson } from "../../src/contract/canonical-json.js";
import { verifyFinalReceipt } from "../../src/contract/release-document.js";
import { fetchRelease } from "../../src/fetch/fetch.js";
import { publishRelease } from "../../release/publish.js";
import { stageRelease } from "../../release/stage.js";
import { sha256File } from "../support/release-fixture.js";
import { createPipelineFixture, preBindTag, stageInputs, storeBlobs, storeIndex, storeTags, type PipelineFixture } from "../support/release-pipeline-fixture.js";

async function absent(path: string): Promise<boolean> {
  return readFile(path).then(
    () => false,
    () => true,
  );
}

let pf: PipelineFixture;
let bundleReference: string;
let bundleDigest: string;

beforeAll(async () => {
  pf = await createPipelineFixture();
  const staged = await stageRelease({ ...stageInputs(pf.fixture), repository: pf.repository, tag: pf.candidateTag });
  bundleReference = staged.bundle_reference;
  bundleDigest = bundleReference.split("@")[1]!;
});

afterAll(async () => {
  await pf.cleanup();
});

const base = () => ({ policy: pf.fixture.policy, repository: pf.repository });

describe("release publish: refusals", () => {
  it("refuses a tag reference and another repository", async () => {
    await expect(publishRelease({ ...base(), reference: `${pf.repository}:v0.8.0` })).toThrowWithCode("REFERENCE_NOT_PINNED");
    await expect(publishRelease({ ...base(), reference: `oci-layout:${pf.root}/other@${bundleDigest}` })).toThrowWithCode("REFERENCE_REPOSITORY_MISMATCH");
  });

  it("refuses when v<V> is bound to another digest; nothing changes (scenario 26)", async () => {
    const other = await preBindTag(pf.storeDir, "v0.8.0", join(pf.root, "scratch-26"));
    const before = await storeIndex(pf.storeDir);
    const output = join(pf.root, "r26.json");
    const references = join(pf.root, "p26.json");
    await expect(publishRelease({ ...base(), reference: bundleReference, output, references })).toThrowWithCode("RELEASE_TAG_CONFLICT");
    expect(await storeIndex(pf.storeDir)).toBe(before);
    expect((await storeTags(pf.storeDir))["v0.8.0"]).toBe(other);
    expect(await absent(output)).toBe(true);
    expect(await absent(references)).toBe(true);
  });
});

describe("release publish: receipt tag conflict", () => {
  let pf2: PipelineFixture;
  let ref2: string;
  beforeAll(async () => {
    pf2 = await createPipelineFixture();
    ref2 = (await stageRelease({ ...stageInputs(pf2.fixture), repository: pf2.repository, tag: pf2.candidateTag })).bundle_reference;
  });
  afterAll(async () => pf2.cleanup());

  it("refuses when v<V>-receipt names another digest, before binding v<V> (scenario 27)", async () => {
    await preBindTag(pf2.storeDir, "v0.8.0-receipt", join(pf2.root, "scratch-27"));
    const before = await storeIndex(pf2.storeDir);
    const references = join(pf2.root, "p27.json");
    await expect(publishRelease({ policy: pf2.fixture.policy, repository: pf2.repository, reference: ref2, references })).toThrowWithCode("RELEASE_TAG_CONFLICT");
    expect(await storeIndex(pf2.storeDir)).toBe(before);
    expect(Object.keys(await storeTags(pf2.storeDir)).sort()).toEqual([pf2.candidateTag, "v0.8.0-receipt"].sort());
    expect(await absent(references)).toBe(true);
  });
});

describe("release publish: round trip, retry, privacy", () => {
  let pf3: PipelineFixture;
  let ref3: string;
  beforeAll(async () => {
    pf3 = await createPipelineFixture();
    ref3 = (await stageRelease({ ...stageInputs(pf3.fixture), repository: pf3.repository, tag: pf3.candidateTag })).bundle_reference;
  });
  afterAll(async () => pf3.cleanup());

  it("refuses a store that turned group-readable after staging: v<V> is never created (scenario 39)", async () => {
    await chmod(pf3.storeDir, 0o750);
    try {
      await expect(publishRelease({ policy: pf3.fixture.policy, repository: pf3.repository, reference: ref3 })).toThrowWithCode("PRIVACY_LAYOUT_PERMISSIONS");
    } finally {
      await chmod(pf3.storeDir, 0o700);
    }
    expect(Object.keys(await storeTags(pf3.storeDir))).toEqual([pf3.candidateTag]);
  });

  it("publishes: receipt verifies, names the bundle, v<V> -> bundle digest, receipt fetch is byte-identical (scenario 11)", async () => {
    const output = join(pf3.root, "release-receipt.json");
    const references = join(pf3.root, "publication.json");
    const result = await publishRelease({ policy: pf3.fixture.policy, repository: pf3.repository, reference: ref3, output, references });
    expect(result.bind).toBe("tagged");
    expect(result.receipt_bind).toBe("tagged");
    expect(result.receipt_reference).not.toBe(result.bundle_reference);
    const bytes = await readFile(output);
    const receipt = verifyFinalReceipt(parseStrictJson(bytes), pf3.fixture.policy, { bundleReference: ref3 });
    expect(receipt.registry_reference).toBe(ref3);
    expect(receipt.evidence).toEqual(pf3.fixture.manifest.evidence);
    expect(receipt.source_sha).toBe(pf3.fixture.sourceSha);
    for (const item of receipt.payload) {
      expect(item.sha256).toBe(await sha256File(pf3.fixture.files.get(item.path)!));
    }
    expect(await readFile(references, "utf8")).toBe(`{"bundle_reference":"${ref3}","receipt_reference":"${result.receipt_reference}"}\n`);
    const tags = await storeTags(pf3.storeDir);
    expect(tags["v0.8.0"]).toBe(ref3.split("@")[1]);
    expect(tags["v0.8.0-receipt"]).toBe(result.receipt_reference.split("@")[1]);
    const consumer = join(pf3.root, "receipt-consumer");
    await fetchRelease({ reference: result.receipt_reference, repository: pf3.repository, outputDir: consumer, progress: null, expect: "receipt" });
    expect((await readFile(join(consumer, "release-receipt.json"))).equals(bytes)).toBe(true);
  });

  it("re-publishing gives the same references and receipt bytes and writes nothing to the store (scenario 12)", async () => {
    const before = { blobs: await storeBlobs(pf3.storeDir), index: await storeIndex(pf3.storeDir), receipt: await readFile(join(pf3.root, "release-receipt.json")) };
    const output = join(pf3.root, "release-receipt-2.json");
    const references = join(pf3.root, "publication-2.json");
    const again = await publishRelease({ policy: pf3.fixture.policy, repository: pf3.repository, reference: ref3, output, references });
    expect(again.bind).toBe("already-tagged");
    expect(again.receipt_bind).toBe("already-tagged");
    expect((await readFile(output)).equals(before.receipt)).toBe(true);
    expect(await readFile(references, "utf8")).toBe(await readFile(join(pf3.root, "publication.json"), "utf8"));
    expect(await storeBlobs(pf3.storeDir)).toEqual(before.blobs);
    expect(await storeIndex(pf3.storeDir)).toBe(before.index);
  });

  it("fails closed without writing outputs when the store serves other receipt bytes (SP5)", async () => {
    const receiptBlob = createHash("sha256").update(await readFile(join(pf3.root, "release-receipt.json"))).digest("hex");
    const blob = join(pf3.storeDir, "blobs", "sha256", receiptBlob);
    const original = await readFile(blob);
    const output = join(pf3.root, "receipt-corrupt.json");
    const references = join(pf3.root, "publication-corrupt.json");
    const hooks = {
      checkpoint: async (point: string) => {
        if (point === "publish:receipt-uploaded") await writeFile(blob, Buffer.from(original.toString("utf8").replace('"receipt_state":"published"', '"receipt_state":"publishex"')));
      },
    };
    try {
      await expect(publishRelease({ policy: pf3.fixture.policy, repository: pf3.repository, reference: ref3, output, references, hooks })).toThrowWithCode("OCI_DIGEST_MISMATCH");
    } finally {
      await writeFile(blob, original);
    }
    expect(await absent(output)).toBe(true);
    expect(await absent(references)).toBe(true);
  });

  it("refuses a receipt reference: publication requires a tested bundle (SP2)", async () => {
    const receiptRef = JSON.parse(await readFile(join(pf3.root, "publication.json"), "utf8")).receipt_reference as string;
    await expect(publishRelease({ policy: pf3.fixture.policy, repository: pf3.repository, reference: receiptRef })).toThrowWithCode("PUBLISH_REQUIRES_TESTED");
  });
});
