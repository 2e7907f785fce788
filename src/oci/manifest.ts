/**
 * OCI manifests: building the deterministic artifact manifest (reference
 * section 4) and parsing any image manifest or index into the descriptors it
 * references (for `copy`). The strict artifact-manifest check (zod) is
 * `artifact-check.ts`, outside the transport's module graph.
 */
import { artifactManifestArgumentProblem, artifactManifestObject as contractManifestObject } from "../contract/artifact-document.js";
import { canonicalJsonBytes, parseStrictJson, type JsonObject, type JsonValue } from "../contract/canonical-json.js";
import { OCI_INDEX_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE } from "../contract/constants.js";
import { HermesPluginKitError } from "../contract/errors.js";
import { describeValue, isDigest } from "../contract/grammar.js";
import { DOCKER_MANIFEST_LIST_MEDIA_TYPE, DOCKER_MANIFEST_MEDIA_TYPE, descriptorOf } from "./digest.js";
import { OciError } from "./errors.js";
import type { Descriptor } from "./target.js";

/** A manifest or index reduced to what a graph copy needs. */
export interface ParsedManifest {
  /** `mediaType` of the document (from its `mediaType` field, or the descriptor's). */
  mediaType: string;
  artifactType?: string;
  /** Config descriptor of an image manifest. */
  config?: Descriptor;
  /** Layer descriptors of an image manifest, in order. */
  layers: Descriptor[];
  /** Child manifests of an index. */
  manifests: Descriptor[];
  /** The parsed JSON object. */
  json: JsonObject;
}

/** A titled layer: a payload path and its descriptor. */
export interface TitledLayer {
  path: string;
  descriptor: Descriptor;
}

/**
 * The artifact manifest object of `layers` (the contract's `artifactManifestObject`, src/contract/artifact-document.ts),
 * its arguments checked first.
 * @throws OciError `OCI_ARGUMENT_INVALID` (`artifactType` not a non-empty string, `layers` not an array of
 *   `{path, descriptor: {digest, size}}`: the contract's `artifactManifestArgumentProblem`).
 */
export function artifactManifestObject(artifactType: string, layers: readonly TitledLayer[]): JsonObject {
  // The contract's rule, raised under the transport's code.
  const problem = artifactManifestArgumentProblem(artifactType, layers);
  if (problem !== undefined) throw new OciError("OCI_ARGUMENT_INVALID", `artifactManifestObject(artifactType, layers): ${problem}`);
  return contractManifestObject(artifactType, layers);
}

/**
 * Canonical bytes and descriptor of {@link artifactManifestObject} (the contract's, `src/contract/artifact-document.ts`).
 * @throws OciError `OCI_ARGUMENT_INVALID` (see {@link artifactManifestObject}).
 */
export function artifactManifest(artifactType: string, layers: readonly TitledLayer[]): { bytes: Buffer; descriptor: Descriptor } {
  const bytes = canonicalJsonBytes(artifactManifestObject(artifactType, layers));
  return { bytes, descriptor: descriptorOf(OCI_MANIFEST_MEDIA_TYPE, bytes) };
}

/**
 * A manifest's bytes as a strict JSON object (duplicate keys refused).
 * @throws OciError `OCI_MANIFEST_INVALID`.
 */
export function parseJsonObject(bytes: Uint8Array, label: string): JsonObject {
  if (!(bytes instanceof Uint8Array) && typeof bytes !== "string") throw new OciError("OCI_MANIFEST_INVALID", `${label}: expected the document's bytes (a Uint8Array or Buffer), found ${describeValue(bytes)}`);
  if (bytes.length === 0) throw new OciError("OCI_MANIFEST_INVALID", `${label}: empty body where a JSON manifest was expected`);
  try {
    return parseStrictJson(bytes, { rejectIntegralFloats: false });
  } catch (error) {
    const why = error instanceof HermesPluginKitError ? error.message : "not JSON";
    throw new OciError("OCI_MANIFEST_INVALID", `${label}: not a JSON object (${why})`);
  }
}

function asDescriptor(value: JsonValue | undefined, where: string): Descriptor {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new OciError("OCI_MANIFEST_INVALID", `invalid OCI descriptor at ${where}: expected an object, found ${describeValue(value)}`);
  }
  const { mediaType, digest, size, annotations, artifactType } = value;
  if (typeof mediaType !== "string" || mediaType.length === 0) {
    throw new OciError("OCI_MANIFEST_INVALID", `invalid OCI descriptor at ${where}: mediaType ${describeValue(mediaType)}`);
  }
  if (!isDigest(digest)) throw new OciError("OCI_MANIFEST_INVALID", `invalid OCI descriptor at ${where}: digest ${describeValue(digest)}`);
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
    throw new OciError("OCI_MANIFEST_INVALID", `invalid OCI descriptor at ${where}: size ${describeValue(size)}`);
  }
  const desc: Descriptor = { mediaType, digest, size };
  if (annotations !== undefined) {
    if (annotations === null || typeof annotations !== "object" || Array.isArray(annotations)) {
      throw new OciError("OCI_MANIFEST_INVALID", `invalid OCI descriptor at ${where}: annotations must be an object`);
    }
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(annotations)) {
      if (typeof v !== "string") throw new OciError("OCI_MANIFEST_INVALID", `invalid OCI descriptor at ${where}: annotation ${JSON.stringify(k)} is not a string`);
      out[k] = v;
    }
    desc.annotations = out;
  }
  if (typeof artifactType === "string") desc.artifactType = artifactType;
  return desc;
}

/**
 * Parse manifest bytes (OCI image manifest or index, Docker schema 2 manifest
 * or list) into the descriptors they reference. Duplicate keys, HTML and empty
 * bodies are refused.
 * @param expectedMediaType the descriptor's media type, when known; must agree with the document's `mediaType` field.
 * @throws OciError `OCI_MANIFEST_INVALID`.
 */
export function parseManifest(bytes: Uint8Array, expectedMediaType?: string): ParsedManifest {
  const json = parseJsonObject(bytes, "OCI manifest");
  if (json["schemaVersion"] !== 2) {
    throw new OciError("OCI_MANIFEST_INVALID", `OCI manifest: expected schemaVersion 2, found ${describeValue(json["schemaVersion"])}`);
  }
  const declared = json["mediaType"];
  if (declared !== undefined && typeof declared !== "string") {
    throw new OciError("OCI_MANIFEST_INVALID", `OCI manifest: mediaType must be a string`);
  }
  const mediaType = declared ?? expectedMediaType ?? (Array.isArray(json["manifests"]) ? OCI_INDEX_MEDIA_TYPE : OCI_MANIFEST_MEDIA_TYPE);
  if (expectedMediaType !== undefined && declared !== undefined && declared !== expectedMediaType) {
    throw new OciError("OCI_MANIFEST_INVALID", `OCI manifest: descriptor says ${expectedMediaType}, document says ${declared}`);
  }
  const parsed: ParsedManifest = { mediaType, layers: [], manifests: [], json };
  if (typeof json["artifactType"] === "string") parsed.artifactType = json["artifactType"];
  if (mediaType === OCI_MANIFEST_MEDIA_TYPE || mediaType === DOCKER_MANIFEST_MEDIA_TYPE) {
    parsed.config = asDescriptor(json["config"], "config");
    const layers = json["layers"];
    if (!Array.isArray(layers)) throw new OciError("OCI_MANIFEST_INVALID", `OCI manifest: layers must be an array`);
    parsed.layers = layers.map((l, i) => asDescriptor(l, `layers[${i}]`));
    const subject = json["subject"];
    if (subject !== undefined) asDescriptor(subject, "subject");
  } else if (mediaType === OCI_INDEX_MEDIA_TYPE || mediaType === DOCKER_MANIFEST_LIST_MEDIA_TYPE) {
    const manifests = json["manifests"];
    if (!Array.isArray(manifests)) throw new OciError("OCI_MANIFEST_INVALID", `OCI index: manifests must be an array`);
    parsed.manifests = manifests.map((m, i) => asDescriptor(m, `manifests[${i}]`));
  } else {
    throw new OciError("OCI_MANIFEST_INVALID", `OCI manifest: unsupported media type ${describeValue(mediaType)}`);
  }
  return parsed;
}
