/**
 * `release publish`: bind `v<version>` to the staged bundle digest, write the
 * published receipt, push it as the receipt artifact at `v<version>-receipt`,
 * and prove both arrived intact.
 *
 * Order (reference `original-release-contract.md` 2.6, 2.7, 2.9, 3.17 W2-W4,
 * 3.18 SP2-SP5, 5.1; DESIGN.md section 4):
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
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
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
  type RegistryAccessOptions,
} from "./registry-access.js";

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
    // SP2: a tested bundle, verified end to end.
    const first = await verifiedDownload(access, pinned.reference, policy, { tmpDir: work });
    let manifest: TestedManifest;
    let firstLayers: string;
    let firstDocument: string;
    try {
      if (first.kind !== "bundle") {
        throw new PipelineError("PUBLISH_REQUIRES_TESTED", `publication requires a tested bundle, not a receipt: ${pinned.reference}`);
      }
      manifest = first.document as TestedManifest;
      firstLayers = layerMap(first);
      firstDocument = canonicalJson(first.document);
    } finally {
      await first.cleanup();
    }
    const layers: BundleLayer[] = first.files.map((f) => ({ path: f.path, digest: `sha256:${f.sha256}`, size: f.size }));
    // SP4: build and verify the receipt; its deterministic layout.
    const receipt = buildPublishedReceipt(manifest, pinned.reference, layers, policy);
    const bytes = receiptBytes(receipt);
    const receiptFile = join(work, "receipt", RECEIPT_FILE);
    await writeLayoutInput(receiptFile, bytes);
    const receiptLayout = join(work, "receipt-layout");
    const written = await writeLayout(receiptLayout, RECEIPT_ARTIFACT_TYPE, new Map([[RECEIPT_FILE, receiptFile]]));
    const receiptReference = formatReference(access.repository.repository, written.manifest.digest);
    const tag = manifest.tag;
    const receiptTag = `${manifest.tag}-receipt`;

    // W1/W2 before any write: both tags absent or already right.
    const target = await openWriteTarget(access);
    const bundleDesc = await target.resolve(pinned.digest);
    await refuseTagConflict(target, tag, pinned.digest);
    await refuseTagConflict(target, receiptTag, written.manifest.digest);

    // W2: privacy re-check without bootstrap, then bind v<V> to the same digest.
    await requirePrivateForRead(access.repository, { env: access.env, plainHttp: access.plainHttp });
    await checkpoint(access.hooks, "publish:before-bind");
    const bind = await bindTag(target, bundleDesc, tag, "published OCI tag does not match the tested digest");
    await checkpoint(access.hooks, "publish:bound");

    // SP3: the same content after binding.
    const second = await verifiedDownload(access, pinned.reference, policy, { expect: "bundle", tmpDir: work });
    try {
      if (layerMap(second) !== firstLayers || canonicalJson(second.document) !== firstDocument) {
        throw new PipelineError("PUBLISH_PAYLOAD_CHANGED", `registry changed the published release payload of ${pinned.reference}`);
      }
    } finally {
      await second.cleanup();
    }

    // W1 for the receipt artifact, then SP5.
    const upload = await uploadArtifact(access, receiptLayout, written.manifest, receiptTag, "publish:receipt-upload");
    await checkpoint(access.hooks, "publish:receipt-uploaded");
    const echoed = await verifiedDownload(access, receiptReference, policy, { expect: "receipt", tmpDir: work });
    try {
      const got = await readFile(echoed.localFiles.get(RECEIPT_FILE) as string);
      if (!got.equals(bytes)) {
        throw new PipelineError("PUBLISH_RECEIPT_CHANGED", `registry changed the published receipt bytes of ${receiptReference}`);
      }
    } finally {
      await echoed.cleanup();
    }
    await checkpoint(access.hooks, "publish:before-output");
    if (options.output !== undefined) await writeOutputFile(options.output, bytes);
    await checkpoint(access.hooks, "publish:before-references");
    if (options.references !== undefined) {
      await writeOutputFile(options.references, outputJsonBytes({ bundle_reference: pinned.reference, receipt_reference: receiptReference }));
    }
    return {
      bundle_reference: pinned.reference,
      receipt_reference: receiptReference,
      version: manifest.version,
      tag,
      receipt_tag: receiptTag,
      bind,
      receipt_bind: upload.tag,
      receipt_sha256: createHash("sha256").update(bytes).digest("hex"),
      receipt_size: bytes.length,
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function writeLayoutInput(path: string, bytes: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, bytes, { mode: 0o600, flag: "wx" });
}
