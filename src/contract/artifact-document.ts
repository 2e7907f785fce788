/**
 * The artifact manifest this project writes (reference section 4; OCI image-spec `manifest.md`), as a pure
 * function of its layers, and the one value derived from it that consumers pin offline: the receipt reference.
 * The OCI transport (`src/oci/manifest.ts`) writes exactly {@link artifactManifestObject}'s canonical bytes, so
 * a receipt's reference is computable from the receipt's bytes alone (docs/contract.md, "Receipt reference").
 */
import { createHash } from "node:crypto";
import { canonicalJsonBytes, type JsonObject } from "./canonical-json.js";
import { ReleaseContractError } from "./errors.js";
import { describeValue, isDigest } from "./grammar.js";
import { parseRepository } from "./reference.js";
import { EMPTY_CONFIG_DESCRIPTOR, OCI_MANIFEST_MEDIA_TYPE, OCTET_STREAM_MEDIA_TYPE, RECEIPT_ARTIFACT_TYPE, RECEIPT_FILE, TITLE_ANNOTATION } from "./constants.js";

/** A layer to title: a payload path and its blob's `digest` (`sha256:<hex>`) and `size` (bytes). */
export interface ArtifactLayer {
  path: string;
  descriptor: { digest: string; size: number };
}

/**
 * What is wrong with the arguments of {@link artifactManifestObject}, or `undefined`: `artifactType` not a non-empty
 * string, `layers` not an array, a layer not `{ path: non-empty string, descriptor: { digest: sha256:<64 hex>,
 * size: whole number >= 0 } }`. Each area raises it under its own code (this module `POLICY_INVALID`, the transport's
 * `artifactManifestObject` `OCI_ARGUMENT_INVALID`). Pure.
 */
export function artifactManifestArgumentProblem(artifactType: unknown, layers: unknown): string | undefined {
  if (typeof artifactType !== "string" || artifactType === "") return `artifactType must be a media type (a non-empty string), found ${artifactType === "" ? "an empty string" : describeValue(artifactType)}`;
  if (!Array.isArray(layers)) return `layers must be an array of { path, descriptor }, found ${describeValue(layers)}`;
  for (const [at, layer] of layers.entries()) {
    const shape = `layers[${at}] must be { path, descriptor: { digest, size } } (a non-empty path, a sha256:<64 hex> digest, a size in bytes)`;
    if (layer === null || typeof layer !== "object" || Array.isArray(layer)) return `${shape}, found ${describeValue(layer)}`;
    const { path, descriptor } = layer as { path?: unknown; descriptor?: unknown };
    if (typeof path !== "string" || path === "") return `${shape}, found path ${describeValue(path)}`;
    if (descriptor === null || typeof descriptor !== "object" || Array.isArray(descriptor)) return `${shape}, found descriptor ${describeValue(descriptor)}`;
    const { digest, size } = descriptor as { digest?: unknown; size?: unknown };
    if (!isDigest(digest)) return `${shape}, found digest ${describeValue(digest)}`;
    if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) return `${shape}, found size ${describeValue(size)}`;
  }
  return undefined;
}

/**
 * The artifact manifest object of reference section 4: schemaVersion 2, the OCI image manifest media type,
 * `artifactType`, the empty config, and `layers` as given (the caller sorts them), each
 * `application/octet-stream` with its path as the `org.opencontainers.image.title` annotation. Pure.
 * @param artifactType a media type (non-empty string). @param layers `{ path, descriptor: { digest, size } }` each.
 * @throws ReleaseContractError `POLICY_INVALID` (before anything is built) for arguments of another shape: a
 *   `layers` that is no array, a layer without a path or a digest and size ({@link artifactManifestArgumentProblem}).
 */
export function artifactManifestObject(artifactType: string, layers: readonly ArtifactLayer[]): JsonObject {
  const problem = artifactManifestArgumentProblem(artifactType, layers);
  if (problem !== undefined) throw new ReleaseContractError("POLICY_INVALID", `artifactManifestObject(artifactType, layers): ${problem}`);
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
