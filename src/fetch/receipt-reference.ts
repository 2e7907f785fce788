/**
 * The digest reference of a published receipt's OCI artifact, computed from
 * the receipt bytes alone: the receipt manifest `writeLayout` makes (artifactType
 * receipt, one layer `release-receipt.json`; docs/fetch.md) is
 * deterministic. Kept apart from `fleet.ts` so `verify-final-receipt` can pin
 * a receipt reference without loading the registry client.
 */
import { createHash } from "node:crypto";
import { RECEIPT_ARTIFACT_TYPE, RECEIPT_FILE } from "../contract/constants.js";
import { artifactManifest } from "../oci/manifest.js";

/**
 * The digest reference `<repository>@sha256:<hex>` of the receipt artifact
 * holding `receiptBytes` in `repository` (no I/O).
 */
export function receiptReferenceFor(repository: string, receiptBytes: Uint8Array): string {
  const digest = "sha256:" + createHash("sha256").update(receiptBytes).digest("hex");
  const { descriptor } = artifactManifest(RECEIPT_ARTIFACT_TYPE, [
    { path: RECEIPT_FILE, descriptor: { mediaType: "application/octet-stream", digest, size: receiptBytes.length } },
  ]);
  return `${repository}@${descriptor.digest}`;
}
