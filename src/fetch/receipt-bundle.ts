/**
 * A receipt taken together with its bundle: the receipt must be exactly the one the bundle makes
 * (`checkReceiptOfBundle`, docs/contract.md "Published receipt"). `verify-provenance --receipt`,
 * `fetch --provenance` of a receipt and `fleet verify` use it, so that a receipt whose tarball
 * digest, size or gate records differ from the bundle's is refused even where the fields an
 * attestation binds (bundle digest, tested-manifest digest, source, tag, workflow, run) agree.
 */
import { RELEASE_MANIFEST_FILE } from "../contract/constants.js";
import { ReleaseContractError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import { checkReceiptOfBundle, type BundleLayer } from "../contract/manifest.js";
import type { ReleasePolicy } from "../contract/policy.js";
import { parseReleaseJson, verifyTestedManifest } from "../contract/release-document.js";
import type { PublishedReceipt } from "../contract/schemas.js";
import { readAllBounded } from "../oci/descriptor.js";
import type { ReadOnlyTarget } from "../oci/target.js";
import { fetchManifest } from "../oci/transfer.js";
import { FetchError } from "./errors.js";
import { checkManifestDescriptor, checkReleaseManifest, type CheckedReleaseManifest } from "./manifest-checks.js";

/** Largest tested manifest read into memory (bytes). */
const MAX_TESTED_MANIFEST_BYTES = 1024 * 1024;

/** A checked bundle manifest's layers as {@link BundleLayer} records (`path` is the title annotation; `size` in bytes). */
export function bundleLayers(layers: CheckedReleaseManifest["layers"]): BundleLayer[] {
  return layers.map((l) => ({ path: l.title, digest: l.descriptor.digest, size: l.descriptor.size }));
}

/**
 * Read the bundle `bundleReference` names from `target` (its manifest, checked as a fetch checks it,
 * and its `release-manifest.json` blob, digest-verified; no other blob) and require `receipt` to be
 * exactly the receipt that bundle makes.
 * @param receipt a receipt that passed `verifyFinalReceipt` (the caller's policy): the tested manifest
 *   is checked for its shape under the receipt's package and repository, then must give exactly
 *   this receipt, so it also meets whatever the receipt met.
 * @param receiptSource how the receipt is named in errors (`receipt <path>`, `receipt <reference>`).
 * @param checked the bundle's manifest when the caller has already read and checked it (its digest must
 *   be the one `registry_reference` pins); otherwise it is read here.
 * @throws ReleaseContractError `RECEIPT_BUNDLE_MISMATCH` (the first field that differs; also a tested manifest
 *   naming another package or repository than the receipt), the tested
 *   manifest's codes; FetchError `FETCH_LAYER_INVENTORY` (no `release-manifest.json` layer), the
 *   manifest check codes of a fetch; OciError from the transfer.
 */
export async function requireReceiptOfBundle(target: ReadOnlyTarget, receipt: PublishedReceipt, receiptSource: string, checked?: CheckedReleaseManifest): Promise<void> {
  const policy: ReleasePolicy = { package: receipt.package, registryRepository: receipt.registry_repository, gates: {} };
  const bundleReference = receipt.registry_reference;
  const digest = bundleReference.slice(bundleReference.lastIndexOf("@") + 1);
  const manifest = checked ?? (await checkedBundleManifest(target, digest, policy.package));
  const layer = manifest.layers.find((l) => l.title === RELEASE_MANIFEST_FILE);
  if (layer === undefined) throw new FetchError("FETCH_LAYER_INVENTORY", `bundle ${bundleReference} has no ${RELEASE_MANIFEST_FILE} layer`);
  const bytes = await readAllBounded(await target.fetch(layer.descriptor), Math.min(layer.descriptor.size, MAX_TESTED_MANIFEST_BYTES), `${RELEASE_MANIFEST_FILE} of ${bundleReference}`);
  const doc = parseReleaseJson(bytes);
  // The policy here is the receipt's own package and repository: a tested manifest naming another is a receipt
  // and bundle that disagree (RECEIPT_BUNDLE_MISMATCH), not a release of a repository the consumer did not pin.
  for (const field of ["package", "registry_repository"] as const) {
    const given = field === "package" ? policy.package : policy.registryRepository;
    if (doc[field] !== given) {
      throw new ReleaseContractError(
        "RECEIPT_BUNDLE_MISMATCH",
        `${receiptSource} is not the receipt of bundle ${bundleReference}: at ${field} it has ${describeValue(given)}, the bundle's tested manifest (${RELEASE_MANIFEST_FILE}) has ${describeValue(doc[field])}; fix: use the receipt published with this bundle (fetch it by the receipt reference the release printed), or the bundle its registry_reference names`,
      );
    }
  }
  const tested = verifyTestedManifest(doc, policy);
  checkReceiptOfBundle(receipt, tested, bundleReference, bundleLayers(manifest.layers), receiptSource);
}

/** Resolve, read and check (as a fetch checks it) the bundle manifest `digest` names. */
async function checkedBundleManifest(target: ReadOnlyTarget, digest: string, packageName: string): Promise<CheckedReleaseManifest> {
  const resolved = await target.resolve(digest);
  const descriptor = { mediaType: resolved.mediaType, digest: resolved.digest, size: resolved.size };
  checkManifestDescriptor(descriptor, digest);
  return checkReleaseManifest(await fetchManifest(target, descriptor), { expectedDigest: digest, expectedKind: "bundle", packageName });
}
