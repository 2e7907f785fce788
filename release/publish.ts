/**
 * `release publish`: bind `v<version>` to the staged bundle digest, write the
 * published receipt, push it as the receipt artifact at `v<version>-receipt`,
 * and prove both arrived intact.
 *
 * Order (docs/release-run.md, "`release publish`"; docs/architecture.md,
 * "Release: steps and data flow"):
 * 1. The reference must pin the policy's repository (S4); the bundle is
 *    downloaded through the consumer's verifying path (privacy on read, every
 *    manifest, layer and payload check) and must be a `tested` bundle (SP2).
 * 2. The receipt is built from the tested manifest, the bundle reference and
 *    the verified layers, and verified (`buildPublishedReceipt`, SP4); its
 *    deterministic receipt layout is written locally.
 * 3. Both tags are checked before any write: `v<V>` and `v<V>-receipt` absent
 *    or already naming the expected digests (W1/W2), so a conflict changes nothing.
 * 4. Privacy re-check without bootstrap, then `v<V>` is bound with
 *    `tagIfAbsent` (a registry-side tag of the existing digest: no re-upload).
 * 5. SP3: the reference is fetched again; the verified manifest and the layer
 *    map must be identical to the first download.
 * 6. The receipt artifact is uploaded and bound at `v<V>-receipt` (W1), then
 *    re-downloaded by digest and byte-compared (SP5).
 * 7. The receipt bytes go to `--output`, then
 *    `{"bundle_reference","receipt_reference"}` to `--references`, last.
 *
 * Every rerun converges: the receipt is a pure function of the bundle, so the
 * same receipt digest results, tags are never moved, and nothing is uploaded twice.
 */
import { createHash } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { canonicalJson } from "../src/contract/canonical-json.js";
import { RECEIPT_ARTIFACT_TYPE, RECEIPT_FILE } from "../src/contract/constants.js";
import { buildPublishedReceipt, receiptBytes, type BundleLayer } from "../src/contract/manifest.js";
import type { ReleasePolicy } from "../src/contract/policy.js";
import { formatReference, parseReference } from "../src/contract/reference.js";
import type { TestedManifest } from "../src/contract/schemas.js";
import type { VerifiedDownload } from "../src/fetch/fetch.js";
import { requirePrivateForRead } from "../src/fetch/privacy.js";
import { writeLayout } from "../src/oci/layout.js";
import type { Descriptor } from "../src/oci/target.js";
import { checkpoint } from "./checkpoint.js";
import { PipelineError } from "./errors.js";
import { outputJsonBytes, privateTempDir, writeOutputFile } from "./output.js";
import {
  bindTag,
  openWriteTarget,
  refuseTagConflict,
  resolveAccess,
  uploadArtifact,
  verifiedDownload,
  type RegistryAccess,
  type RegistryAccessOptions,
} from "./registry-access.js";
import { makeDirectory } from "../src/contract/directory.js";

/** Inputs of {@link publishRelease} (the `release publish` flags). */
export interface PublishOptions extends RegistryAccessOptions {
  /** What the bundle must match (package, registry repository, gate commands). */
  policy: ReleasePolicy;
  /** The staged bundle reference `<repository>@sha256:<64 hex>`. */
  reference: string;
  /** Where the receipt bytes are written (`--output`). */
  output?: string;
  /** Where `{"bundle_reference","receipt_reference"}` is written, last (`--references`). */
  references?: string;
}

/** What {@link publishRelease} returns (and `release publish` prints). */
export interface PublishResult {
  bundle_reference: string;
  receipt_reference: string;
  version: string;
  /** `v<version>`. */
  tag: string;
  /** `v<version>-receipt`. */
  receipt_tag: string;
  /** `"tagged"` when this run bound `v<version>`, `"already-tagged"` when it already named the bundle. */
  bind: "tagged" | "already-tagged";
  /** Same for `v<version>-receipt`. */
  receipt_bind: "tagged" | "already-tagged";
  /** SHA-256 (hex) of the receipt bytes. */
  receipt_sha256: string;
  /** Size of the receipt bytes. */
  receipt_size: number;
}

function layerMap(download: VerifiedDownload): string {
  return canonicalJson(download.files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })));
}

/**
 * `release publish`: see the module comment.
 * @returns both references and what was done.
 * @throws PipelineError `RELEASE_REPOSITORY_MISMATCH`, `PUBLISH_REQUIRES_TESTED`, `RELEASE_TAG_CONFLICT`,
 *   `RELEASE_TAG_MISMATCH`, `PUBLISH_PAYLOAD_CHANGED`, `PUBLISH_RECEIPT_CHANGED`, `OUTPUT_WRITE_FAILED`;
 *   ReleaseContractError `REFERENCE_NOT_PINNED`, `REFERENCE_REPOSITORY_MISMATCH`, receipt codes;
 *   PrivacyError `PRIVACY_*` (for example a package that turned public: `v<V>` is never created);
 *   the download codes of `downloadRelease`; OciError.
 */
export async function publishRelease(options: PublishOptions): Promise<PublishResult> {
  const { policy } = options;
  const access = resolveAccess(options, policy);
  const pinned = parseReference(options.reference, policy.registryRepository);
  const work = await privateTempDir(options.tmpDir, "hpk-publish-");
  try {
    const tested = await fetchTestedBundle(access, pinned.reference, policy, work);
    const { manifest } = tested;
    const receipt = await writeReceiptLayout(access, work, buildPublishedReceipt(manifest, pinned.reference, tested.layers, policy));
    const tag = manifest.tag;
    const receiptTag = `${manifest.tag}-receipt`;

    // W1/W2 before any write: both tags absent or already right.
    const target = await openWriteTarget(access);
    const bundleDesc = await target.resolve(pinned.digest);
    await refuseTagConflict(target, tag, pinned.digest);
    await refuseTagConflict(target, receiptTag, receipt.manifest.digest);

    // W2: privacy re-check without bootstrap, then bind v<V> to the same digest.
    await requirePrivateForRead(access.repository, { env: access.env, plainHttp: access.plainHttp });
    await checkpoint(access.hooks, "publish:before-bind");
    const bind = await bindTag(target, bundleDesc, tag, "published OCI tag does not match the tested digest");
    await checkpoint(access.hooks, "publish:bound");
    await requireSamePayload(access, pinned.reference, policy, work, tested);

    // W1 for the receipt artifact, then SP5.
    const upload = await uploadArtifact(access, receipt.layoutDir, receipt.manifest, receiptTag, "publish:receipt-upload");
    await checkpoint(access.hooks, "publish:receipt-uploaded");
    await requireSameReceipt(access, receipt, policy, work);
    await checkpoint(access.hooks, "publish:before-output");
    if (options.output !== undefined) await writeOutputFile(options.output, receipt.bytes);
    await checkpoint(access.hooks, "publish:before-references");
    if (options.references !== undefined) {
      await writeOutputFile(options.references, outputJsonBytes({ bundle_reference: pinned.reference, receipt_reference: receipt.reference }));
    }
    return {
      bundle_reference: pinned.reference,
      receipt_reference: receipt.reference,
      version: manifest.version,
      tag,
      receipt_tag: receiptTag,
      bind,
      receipt_bind: upload.tag,
      receipt_sha256: createHash("sha256").update(receipt.bytes).digest("hex"),
      receipt_size: receipt.bytes.length,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The tested bundle as first fetched (SP2): its manifest, layers, and what SP3 compares. */
interface TestedBundle {
  manifest: TestedManifest;
  layers: BundleLayer[];
  /** {@link layerMap} of the first fetch. */
  layerMap: string;
  /** Canonical JSON of the tested manifest as first fetched. */
  document: string;
}

/**
 * SP2: `reference` is a tested release bundle, verified end to end.
 * @throws PipelineError `PUBLISH_REQUIRES_TESTED`; the download codes of `downloadRelease`.
 */
async function fetchTestedBundle(access: RegistryAccess, reference: string, policy: ReleasePolicy, work: string): Promise<TestedBundle> {
  const first = await verifiedDownload(access, reference, policy, { tmpDir: work });
  try {
    if (first.kind !== "bundle") {
      throw new PipelineError("PUBLISH_REQUIRES_TESTED", `publication requires a tested bundle, not a receipt: ${reference}`);
    }
    return {
      manifest: first.document as TestedManifest,
      layers: first.files.map((f) => ({ path: f.path, digest: `sha256:${f.sha256}`, size: f.size })),
      layerMap: layerMap(first),
      document: canonicalJson(first.document),
    };
  } finally {
    await first.cleanup();
  }
}

/** The receipt artifact in a local deterministic layout, ready to upload. */
interface ReceiptLayout {
  /** The receipt's canonical bytes. */
  bytes: Buffer;
  layoutDir: string;
  manifest: Descriptor;
  /** `<repository>@<manifest digest>`. */
  reference: string;
}

/** SP4: the receipt's bytes and their deterministic layout (the receipt was verified when built). */
async function writeReceiptLayout(access: RegistryAccess, work: string, receipt: ReturnType<typeof buildPublishedReceipt>): Promise<ReceiptLayout> {
  const bytes = receiptBytes(receipt);
  const receiptFile = join(work, "receipt", RECEIPT_FILE);
  await writeLayoutInput(receiptFile, bytes);
  const layoutDir = join(work, "receipt-layout");
  const written = await writeLayout(layoutDir, RECEIPT_ARTIFACT_TYPE, new Map([[RECEIPT_FILE, receiptFile]]));
  return { bytes, layoutDir, manifest: written.manifest, reference: formatReference(access.repository.repository, written.manifest.digest) };
}

/**
 * SP3: the bundle fetched after binding has the same layers and tested manifest as the first fetch.
 * @throws PipelineError `PUBLISH_PAYLOAD_CHANGED`; the download codes of `downloadRelease`.
 */
async function requireSamePayload(access: RegistryAccess, reference: string, policy: ReleasePolicy, work: string, tested: TestedBundle): Promise<void> {
  const second = await verifiedDownload(access, reference, policy, { expect: "bundle", tmpDir: work });
  try {
    if (layerMap(second) !== tested.layerMap || canonicalJson(second.document) !== tested.document) {
      throw new PipelineError("PUBLISH_PAYLOAD_CHANGED", `registry changed the published release payload of ${reference}`);
    }
  } finally {
    await second.cleanup();
  }
}

/**
 * SP5: the receipt re-downloaded by digest has exactly the uploaded bytes.
 * @throws PipelineError `PUBLISH_RECEIPT_CHANGED`; the download codes of `downloadRelease`.
 */
async function requireSameReceipt(access: RegistryAccess, receipt: ReceiptLayout, policy: ReleasePolicy, work: string): Promise<void> {
  const echoed = await verifiedDownload(access, receipt.reference, policy, { expect: "receipt", tmpDir: work });
  try {
    const got = await readFile(echoed.localFiles.get(RECEIPT_FILE) as string);
    if (!got.equals(receipt.bytes)) {
      throw new PipelineError("PUBLISH_RECEIPT_CHANGED", `registry changed the published receipt bytes of ${receipt.reference}`);
    }
  } finally {
    await echoed.cleanup();
  }
}

async function writeLayoutInput(path: string, bytes: Uint8Array): Promise<void> {
  await makeDirectory(dirname(path), { mode: 0o700, purpose: "layout input directory" });
  await writeFile(path, bytes, { mode: 0o600, flag: "wx" });
}
