/**
 * Descriptors by their bytes: the descriptor grammar check, the digest and descriptor of a buffer,
 * and the media types that live at a registry's `/manifests/` endpoint. No stream or file code:
 * the CLI's offline verify path (the receipt reference) loads this module and not `descriptor.ts`
 * (which re-exports all of it). OCI image-spec `descriptor.md` (digest, size); docs/architecture.md, "OCI transport".
 */
import { createHash } from "node:crypto";
import { isDigest, describeValue } from "../contract/grammar.js";
import { OCI_INDEX_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE } from "../contract/constants.js";
import { OciError } from "./errors.js";
import type { Descriptor } from "./target.js";

/** Docker schema 2 manifest media type (accepted when reading foreign registries). */
export const DOCKER_MANIFEST_MEDIA_TYPE = "application/vnd.docker.distribution.manifest.v2+json";
/** Docker schema 2 manifest list media type (accepted when reading foreign registries). */
export const DOCKER_MANIFEST_LIST_MEDIA_TYPE = "application/vnd.docker.distribution.manifest.list.v2+json";

/** Media types that live at a registry's `/manifests/` endpoint. */
export const MANIFEST_MEDIA_TYPES: readonly string[] = Object.freeze([
  OCI_MANIFEST_MEDIA_TYPE,
  OCI_INDEX_MEDIA_TYPE,
  DOCKER_MANIFEST_MEDIA_TYPE,
  DOCKER_MANIFEST_LIST_MEDIA_TYPE,
]);

/** True when `mediaType` is a manifest (or index) media type. */
export function isManifestMediaType(mediaType: string): boolean {
  return MANIFEST_MEDIA_TYPES.includes(mediaType);
}

/**
 * Check the shape of a descriptor handed to the transport: `digest` is
 * `sha256:<64 hex>`, `size` a non-negative safe integer (bytes), `mediaType` a
 * non-empty string.
 * @throws OciError `OCI_DESCRIPTOR_INVALID`.
 */
export function checkDescriptor(desc: Descriptor): Descriptor {
  if (desc === null || typeof desc !== "object") {
    throw new OciError("OCI_DESCRIPTOR_INVALID", `invalid OCI descriptor: expected an object, found ${describeValue(desc)}`);
  }
  if (!isDigest(desc.digest)) {
    throw new OciError("OCI_DESCRIPTOR_INVALID", `invalid OCI descriptor: digest must be sha256:<64 lowercase hex>, found ${describeValue(desc.digest)}`);
  }
  if (typeof desc.size !== "number" || !Number.isSafeInteger(desc.size) || desc.size < 0) {
    throw new OciError("OCI_DESCRIPTOR_INVALID", `invalid OCI descriptor: size must be a non-negative integer, found ${describeValue(desc.size)}`);
  }
  if (typeof desc.mediaType !== "string" || desc.mediaType.length === 0 || desc.mediaType.length > 255) {
    throw new OciError("OCI_DESCRIPTOR_INVALID", `invalid OCI descriptor: mediaType must be a non-empty string, found ${describeValue(desc.mediaType)}`);
  }
  return desc;
}

/**
 * `sha256:<hex>` of a buffer.
 * @throws OciError `OCI_ARGUMENT_INVALID` (`bytes` not a Uint8Array).
 */
export function digestOf(bytes: Uint8Array): string {
  if (!(bytes instanceof Uint8Array)) throw new OciError("OCI_ARGUMENT_INVALID", `digestOf(bytes): bytes must be bytes (a Uint8Array or Buffer), found ${describeValue(bytes)}`);
  return "sha256:" + createHash("sha256").update(bytes).digest("hex");
}

/**
 * The `{mediaType, digest, size}` descriptor of `bytes`.
 * @throws OciError `OCI_ARGUMENT_INVALID` (`mediaType` not a non-empty string, `bytes` not a Uint8Array).
 */
export function descriptorOf(mediaType: string, bytes: Uint8Array): Descriptor {
  if (typeof mediaType !== "string" || mediaType === "") throw new OciError("OCI_ARGUMENT_INVALID", `descriptorOf(mediaType, bytes): mediaType must be a media type (a non-empty string), found ${describeValue(mediaType)}`);
  if (!(bytes instanceof Uint8Array)) throw new OciError("OCI_ARGUMENT_INVALID", `descriptorOf(mediaType, bytes): bytes must be bytes (a Uint8Array or Buffer), found ${describeValue(bytes)}`);
  return { mediaType, digest: digestOf(bytes), size: bytes.length };
}

/** The 64-hex part of a `sha256:` digest. */
export function digestHex(digest: string): string {
  if (!isDigest(digest)) throw new OciError("OCI_DESCRIPTOR_INVALID", `expected sha256:<64 lowercase hex>, found ${describeValue(digest)}`);
  return digest.slice("sha256:".length);
}
