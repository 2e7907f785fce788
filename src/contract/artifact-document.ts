/**
 * The artifact manifest this project writes (reference section 4; OCI image-spec `manifest.md`), as a pure
 * function of its layers, and the one value derived from it that consumers pin offline: the receipt reference.
 * The OCI transport (`src/oci/manifest.ts`) writes exactly {@link artifactManifestObject}'s canonical bytes, so
 * a receipt's reference is computable from the receipt's bytes alone (docs/contract.md, "Receipt reference").
 */
import { createHash } from "node:crypto";
import { canonicalJsonBytes, type JsonObject } from "./canonical-json.js";
import { ReleaseContractError } from "./errors.js";
import { describeValue } from "./grammar.js";
import { parseRepository } from "./reference.js";
import { EMPTY_CONFIG_DESCRIPTOR, OCI_MANIFEST_MEDIA_TYPE, OCTET_STREAM_MEDIA_TYPE, RECEIPT_ARTIFACT_TYPE, RECEIPT_FILE, TITLE_ANNOTATION } from "./constants.js";

/** A layer to title: a payload path and its blob's `digest` (`sha256:<hex>`) and `size` (bytes). */
export interface ArtifactLayer {
  path: string;
  descriptor: { digest: string; size: number };
}

/**
 * The artifact manifest object of reference section 4: schemaVersion 2, the OCI image manifest media type,
 * `artifactType`, the empty config, and `layers` as given (the caller sorts them), each
 * `application/octet-stream` with its path as the `org.opencontainers.image.title` annotation. Pure.
 */
export function artifactManifestObject(artifactType: string, layers: readonly ArtifactLayer[]): JsonObject {
  return {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST_MEDIA_TYPE,
    artifactType,
    config: { ...EMPTY_CONFIG_DESCRIPTOR },
    layers: layers.map((l) => ({
      mediaType: OCTET_STREAM_MEDIA_TYPE,
      digest: l.descriptor.digest,
      size: l.descriptor.size,
      annotations: { [TITLE_ANNOTATION]: l.path },
    })),
  };
}

/** `sha256:<64 hex>` of `bytes`. */
function sha256Digest(bytes: Uint8Array): string {
  return "sha256:" + createHash("sha256").update(bytes).digest("hex");
}

/**
 * The digest reference `<repository>@sha256:<hex>` of the receipt artifact holding `receiptBytes` in
 * `repository`: the digest of the canonical bytes of its artifact manifest (artifactType
 * {@link RECEIPT_ARTIFACT_TYPE}, one layer `release-receipt.json`). No I/O, no check of the
 * bytes' content (pass what `verifyFinalReceiptBytes` accepted).
 * @throws ReleaseContractError `REPOSITORY_INVALID` (the repository, as `parseRepository`), `POLICY_INVALID` (no bytes).
 */
export function receiptReferenceOf(repository: string, receiptBytes: Uint8Array): string {
  // The repository is checked as every pin is (a URL or credentials in it refused, never echoed).
  parseRepository(repository);
  if (!(receiptBytes instanceof Uint8Array)) {
    throw new ReleaseContractError("POLICY_INVALID", `receiptReferenceOf(repository, receiptBytes): receiptBytes must be the receipt file's bytes (a Uint8Array), found ${describeValue(receiptBytes)}`);
  }
  const manifest = canonicalJsonBytes(
    artifactManifestObject(RECEIPT_ARTIFACT_TYPE, [{ path: RECEIPT_FILE, descriptor: { digest: sha256Digest(receiptBytes), size: receiptBytes.length } }]),
  );
  return `${repository}@${sha256Digest(manifest)}`;
}
