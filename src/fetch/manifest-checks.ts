/**
 * Pure checks of a downloaded OCI release manifest before any blob is
 * fetched: bytes vs. the pinned digest, exact key sets, media types,
 * artifactType, the empty config, each layer descriptor, the title
 * allow-list and the layer inventory.
 *
 * Checks G3-G8 and O1-O2 (docs/fetch.md "hermes-plugin-kit fetch"; OCI
 * image-spec `manifest.md`, `descriptor.md`), for one npm tarball: a release bundle has exactly 4 layers
 * (`release-manifest.json`, `release-source.bundle`, `release-payload.sha256`,
 * `dist/<name>-<version>.tgz`), a receipt artifact exactly 1
 * (`release-receipt.json`). The bootstrap artifact is never accepted.
 */
import { artifactManifestProblems, problemAt, type ArtifactManifestProblem } from "../contract/artifact-manifest.js";
import { parseStrictJson, type JsonObject, type JsonValue } from "../contract/canonical-json.js";
import {
  BOOTSTRAP_ARTIFACT_TYPE,
  EMPTY_CONFIG_DESCRIPTOR,
  OCI_MANIFEST_MEDIA_TYPE,
  OCTET_STREAM_MEDIA_TYPE,
  RECEIPT_ARTIFACT_TYPE,
  RECEIPT_FILE,
  RELEASE_ARTIFACT_TYPE,
  STATIC_BUNDLE_PATHS,
  TITLE_ANNOTATION,
} from "../contract/constants.js";
import { describeValue } from "../contract/grammar.js";
import { isAllowedPayloadTitle, payloadAllowListText } from "../contract/payload.js";
import type { Descriptor } from "../oci/target.js";
import { FetchError } from "./errors.js";

/** Which artifact a manifest is: a release bundle or a receipt. */
export type ArtifactKind = "bundle" | "receipt";

/** Number of layers of each artifact kind (check G6 (docs/fetch.md), adapted: one tarball). */
export const LAYER_COUNT: Readonly<Record<ArtifactKind, number>> = Object.freeze({ bundle: 4, receipt: 1 });

/** artifactType of each artifact kind. */
export const ARTIFACT_TYPE_OF: Readonly<Record<ArtifactKind, string>> = Object.freeze({
  bundle: RELEASE_ARTIFACT_TYPE,
  receipt: RECEIPT_ARTIFACT_TYPE,
});

/** A layer that passed the checks: its payload path (title) and its exact descriptor. */
export interface CheckedLayer {
  /** Payload path from `org.opencontainers.image.title`, on the allow-list. */
  title: string;
  /** `{mediaType: application/octet-stream, digest, size (bytes, >= 1), annotations: {title}}`. */
  descriptor: Descriptor;
}

/** A release manifest that passed {@link checkReleaseManifest}. */
export interface CheckedReleaseManifest {
  /** The manifest digest (`sha256:<64 hex>`), equal to the pinned reference's. */
  digest: string;
  /** Manifest size in bytes. */
  size: number;
  artifactType: string;
  kind: ArtifactKind;
  /** Always exactly the empty-config descriptor. */
  config: Descriptor;
  /** Layers in manifest order. */
  layers: CheckedLayer[];
}

/** Options of {@link checkReleaseManifest}. */
export interface ReleaseManifestCheckOptions {
  /** The digest of the pinned reference (`sha256:<64 hex>`). */
  expectedDigest: string;
  /** Refuse the other artifact kind (`FETCH_ARTIFACT_TYPE_MISMATCH`); default: accept either. */
  expectedKind?: ArtifactKind;
  /** When set, the tarball title must be this package's (`dist/<stem>-<semver>.tgz`). */
  packageName?: string;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isSize(value: JsonValue | undefined): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1;
}

/**
 * Check a manifest descriptor reported by a target (check G3, O1, docs/fetch.md):
 * `{mediaType: OCI manifest type, digest: expectedDigest, size: expectedSize}`.
 * The 1 MiB ceiling, the bytes' size and their digest are the transport's:
 * `fetchManifest` (src/oci/transfer.ts) checks them, once.
 * @throws FetchError `FETCH_MANIFEST_UNSUPPORTED` (another media type, e.g. an
 *   image index), `FETCH_MANIFEST_DIGEST_MISMATCH` (digest or size).
 */
export function checkManifestDescriptor(desc: Descriptor, expectedDigest: string, expectedSize?: number): void {
  if (desc.mediaType !== OCI_MANIFEST_MEDIA_TYPE) {
    throw new FetchError(
      "FETCH_MANIFEST_UNSUPPORTED",
      `unsupported OCI release manifest: ${expectedDigest} is served as ${describeValue(desc.mediaType)}, expected ${OCI_MANIFEST_MEDIA_TYPE}`,
    );
  }
  const ok = desc.digest === expectedDigest && isSize(desc.size) && (expectedSize === undefined || desc.size === expectedSize);
  if (!ok) {
    throw new FetchError(
      "FETCH_MANIFEST_DIGEST_MISMATCH",
      `OCI manifest digest or size mismatch: expected ${expectedDigest}${expectedSize === undefined ? "" : ` (${expectedSize} bytes)`}, found ${describeValue(desc.digest)} (${String(desc.size)} bytes)`,
    );
  }
}

/**
 * Check a release manifest's structure (checks G4-G8, docs/fetch.md) against
 * the `payload` profile of the one artifact-manifest schema
 * (src/contract/artifact-manifest.ts), then the release rules.
 *
 * @param bytes the manifest bytes as `fetchManifest` returned them: their size
 *   (at most 1 MiB) and digest (`options.expectedDigest`) are checked there (G3).
 * @returns the artifact kind, config and the layers with their titles.
 * @throws FetchError
 *   `FETCH_MANIFEST_INVALID_JSON` (J4: bad JSON, duplicate key, non-object);
 *   `FETCH_MANIFEST_UNSUPPORTED` (key set not exactly schemaVersion, mediaType,
 *   artifactType, config, layers; schemaVersion not 2; another media type, G4);
 *   `FETCH_ARTIFACT_TYPE_UNSUPPORTED` (bootstrap or any other artifactType);
 *   `FETCH_ARTIFACT_TYPE_MISMATCH` (a receipt where a bundle is expected, or the other way round);
 *   `FETCH_CONFIG_UNEXPECTED` (config not exactly the empty-config descriptor, G5);
 *   `FETCH_LAYER_INVENTORY` (not exactly 4 layers for a bundle or 1 for a receipt, G6);
 *   `FETCH_LAYER_DESCRIPTOR_INVALID` (layer keys, media type, digest or size, O1);
 *   `FETCH_LAYER_ANNOTATION_INVALID` (annotations not exactly one string title, O2);
 *   `FETCH_LAYER_PATH_UNSAFE` (title not on the allow-list, G7, section 3.13);
 *   `FETCH_PACKAGE_MISMATCH` (a safe tarball title of another package than the expected one);
 *   `FETCH_LAYER_PATH_DUPLICATE` (a title repeated, G7);
 *   `FETCH_LAYER_PATHS_UNEXPECTED` (title set not the kind's set, G8).
 */
export function checkReleaseManifest(bytes: Uint8Array, options: ReleaseManifestCheckOptions): CheckedReleaseManifest {
  const { manifest, problems } = parseManifestDocument(bytes);
  const kind = artifactKindOf(manifest, options.expectedKind);
  checkEmptyConfig(manifest["config"], problems);
  const layers = manifest["layers"];
  const expectedCount = LAYER_COUNT[kind];
  if (!Array.isArray(layers) || layers.length !== expectedCount) {
    throw new FetchError(
      "FETCH_LAYER_INVENTORY",
      `OCI layer inventory is incomplete or contains extra files: a release ${kind} has exactly ${expectedCount} layer(s), found ${Array.isArray(layers) ? layers.length : describeValue(layers)}`,
    );
  }
  const checked: CheckedLayer[] = [];
  const titles = new Set<string>();
  for (const [index, layer] of layers.entries()) {
    const one = checkLayer(layer, index, problems, options.packageName);
    if (titles.has(one.title)) {
      throw new FetchError("FETCH_LAYER_PATH_DUPLICATE", `duplicate OCI payload path on layer ${index}: ${describeValue(one.title)}`);
    }
    titles.add(one.title);
    checked.push(one);
  }
  checkLayerPaths(kind, titles);
  return {
    digest: options.expectedDigest,
    size: bytes.length,
    artifactType: manifest["artifactType"] as string,
    kind,
    config: { ...EMPTY_CONFIG_DESCRIPTOR },
    layers: checked,
  };
}

/** J4 and G4: strict JSON, then the schema's key set, schemaVersion 2 and the OCI image manifest media type. */
function parseManifestDocument(bytes: Uint8Array): { manifest: JsonObject; problems: ArtifactManifestProblem[] } {
  let manifest: JsonObject;
  try {
    manifest = parseStrictJson(bytes, { rejectIntegralFloats: true });
  } catch (error) {
    throw new FetchError("FETCH_MANIFEST_INVALID_JSON", `invalid registry JSON in the OCI manifest: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const problems = artifactManifestProblems(manifest, "payload");
  const document = problemAt(problems, "document");
  if (document !== undefined) throw new FetchError("FETCH_MANIFEST_UNSUPPORTED", `unsupported OCI release manifest: ${document.message}`);
  return { manifest, problems };
}

/** The artifact kind named by `artifactType` (bootstrap and anything else refused), checked against the kind the caller expects. */
function artifactKindOf(manifest: JsonObject, expectedKind: ArtifactKind | undefined): ArtifactKind {
  const artifactType = manifest["artifactType"];
  let kind: ArtifactKind;
  if (artifactType === RELEASE_ARTIFACT_TYPE) kind = "bundle";
  else if (artifactType === RECEIPT_ARTIFACT_TYPE) kind = "receipt";
  else {
    throw new FetchError(
      "FETCH_ARTIFACT_TYPE_UNSUPPORTED",
      `unsupported OCI release manifest: artifactType must be ${RELEASE_ARTIFACT_TYPE} or ${RECEIPT_ARTIFACT_TYPE}, found ${describeValue(artifactType)}${artifactType === BOOTSTRAP_ARTIFACT_TYPE ? " (the private bootstrap artifact is never fetched)" : ""}`,
    );
  }
  if (expectedKind !== undefined && expectedKind !== kind) {
    throw new FetchError(
      "FETCH_ARTIFACT_TYPE_MISMATCH",
      `expected a release ${expectedKind} (${ARTIFACT_TYPE_OF[expectedKind]}), found a release ${kind} (${artifactType}); fix: give the ${expectedKind} reference here (a release has two digest references: its bundle and its receipt)`,
    );
  }
  return kind;
}

/** G5: the config is exactly the empty-config descriptor. */
function checkEmptyConfig(config: JsonValue | undefined, problems: readonly ArtifactManifestProblem[]): void {
  if (problemAt(problems, "config") !== undefined) {
    throw new FetchError(
      "FETCH_CONFIG_UNEXPECTED",
      `unexpected OCI release config: expected exactly ${JSON.stringify(EMPTY_CONFIG_DESCRIPTOR)}, found ${isObject(config) ? JSON.stringify(config).slice(0, 200) : describeValue(config)}`,
    );
  }
}

/** O1, O2, G7: one layer's descriptor, its single title annotation and the title allow-list. */
function checkLayer(layer: JsonValue, index: number, problems: readonly ArtifactManifestProblem[], packageName: string | undefined): CheckedLayer {
  if (!isObject(layer) || problemAt(problems, "layer", index) !== undefined) {
    throw new FetchError(
      "FETCH_LAYER_DESCRIPTOR_INVALID",
      `invalid OCI descriptor for layer ${index}: expected exactly {mediaType: ${OCTET_STREAM_MEDIA_TYPE}, digest: sha256:<64 hex>, size >= 1, annotations}, found ${isObject(layer) ? JSON.stringify(layer).slice(0, 300) : describeValue(layer)}`,
    );
  }
  const annotations = layer["annotations"] as JsonObject;
  if (problemAt(problems, "layer-annotations", index) !== undefined) {
    throw new FetchError(
      "FETCH_LAYER_ANNOTATION_INVALID",
      `invalid OCI path annotation on layer ${index}: expected exactly one string ${TITLE_ANNOTATION}`,
    );
  }
  const title = annotations[TITLE_ANNOTATION] as string;
  if (!isAllowedPayloadTitle(title, packageName)) {
    if (packageName !== undefined && isAllowedPayloadTitle(title)) {
      throw new FetchError("FETCH_PACKAGE_MISMATCH", `expected package ${packageName}, but layer ${index} carries ${describeValue(title)}`);
    }
    throw new FetchError(
      "FETCH_LAYER_PATH_UNSAFE",
      `unsafe OCI payload path on layer ${index}: expected a title on the payload allow-list (${payloadAllowListText(packageName)}; docs/fetch.md), found ${describeValue(title)}; nothing was written: a release built by hermes-plugin-kit never carries it, so do not install this release, and report it to its publisher`,
    );
  }
  return {
    title,
    descriptor: {
      mediaType: OCTET_STREAM_MEDIA_TYPE,
      digest: layer["digest"] as string,
      size: layer["size"] as number,
      annotations: { [TITLE_ANNOTATION]: title },
    },
  };
}

/** G8: the title set is exactly the kind's set. */
function checkLayerPaths(kind: ArtifactKind, titles: ReadonlySet<string>): void {
  if (kind === "receipt") {
    if (!titles.has(RECEIPT_FILE)) {
      throw new FetchError("FETCH_LAYER_PATHS_UNEXPECTED", `receipt OCI artifact has unexpected paths: expected exactly ${RECEIPT_FILE}, found ${[...titles].join(", ")}`);
    }
  } else {
    const tarballs = [...titles].filter((t) => t.startsWith("dist/"));
    if (!STATIC_BUNDLE_PATHS.every((p) => titles.has(p)) || titles.has(RECEIPT_FILE) || tarballs.length !== 1) {
      throw new FetchError(
        "FETCH_LAYER_PATHS_UNEXPECTED",
        `bundle OCI artifact has unexpected paths: expected ${STATIC_BUNDLE_PATHS.join(", ")} and one dist/<name>-<version>.tgz, found ${[...titles].sort().join(", ")}`,
      );
    }
  }
}
