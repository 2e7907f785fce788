/**
 * Literal values of the release contract: media types, artifact types,
 * annotation keys, payload file names and size ceilings.
 *
 * Values are the release contract's wire strings (docs/contract.md; OCI image-spec
 * `manifest.md` and `annotations.md` for the media types and annotation keys).
 */

/** OCI image manifest media type (OCI image-spec `manifest.md`). */
export const OCI_MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json";
/** OCI image index media type (OCI image-spec `image-index.md`). */
export const OCI_INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json";
/** Empty config media type (OCI image-spec `manifest.md`, "Guidance for an Empty Descriptor"). */
export const OCI_EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json";
/** Media type of every raw payload layer. */
export const OCTET_STREAM_MEDIA_TYPE = "application/octet-stream";
/** The 2 bytes of the empty config blob. */
export const EMPTY_CONFIG_BYTES = "{}";
/** Digest of the empty config blob `{}`. */
export const EMPTY_CONFIG_DIGEST = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
/** The empty config descriptor, exactly. */
export const EMPTY_CONFIG_DESCRIPTOR = Object.freeze({
  mediaType: OCI_EMPTY_MEDIA_TYPE,
  digest: EMPTY_CONFIG_DIGEST,
  size: 2,
});

/** artifactType of a release bundle. */
export const RELEASE_ARTIFACT_TYPE = "application/vnd.hermes-plugin-kit.release.v2";
/** artifactType of a receipt artifact. */
export const RECEIPT_ARTIFACT_TYPE = "application/vnd.hermes-plugin-kit.receipt.v2";
/** artifactType of the zero-layer private bootstrap artifact. */
export const BOOTSTRAP_ARTIFACT_TYPE = "application/vnd.hermes-plugin-kit.private-bootstrap.v1";

/** Annotation holding a layer's payload path. */
export const TITLE_ANNOTATION = "org.opencontainers.image.title";
/** Annotation holding an index entry's ref name. */
export const REF_NAME_ANNOTATION = "org.opencontainers.image.ref.name";
/** The ref name of the single manifest of a staged layout. */
export const LAYOUT_REF_NAME = "payload";
/** `oci-layout` file content (compact, with newline). */
export const OCI_LAYOUT_FILE = '{"imageLayoutVersion":"1.0.0"}\n';

/** Manifest size ceiling in bytes; strictly larger is refused. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

/** Payload file names of a release bundle and a receipt artifact. */
export const RELEASE_MANIFEST_FILE = "release-manifest.json";
export const SOURCE_BUNDLE_FILE = "release-source.bundle";
export const PAYLOAD_CHECKSUMS_FILE = "release-payload.sha256";
export const RECEIPT_FILE = "release-receipt.json";
/** Checksum file written next to the source bundle by materialize (`<sha256>  release-source.bundle`); not a bundle layer. */
export const SOURCE_BUNDLE_CHECKSUM_FILE = "release-source.sha256";
/** The three static payload names of a release bundle. */
export const STATIC_BUNDLE_PATHS = Object.freeze([RELEASE_MANIFEST_FILE, SOURCE_BUNDLE_FILE, PAYLOAD_CHECKSUMS_FILE]);

/** Git refs a release source bundle must hold (besides the tag). */
export const RELEASE_CANDIDATE_REF = "refs/heads/release-candidate";
/** Workflow file name recorded in evidence. */
export const WORKFLOW_NAME = "release.yml";
/** Tag of the bootstrap artifact. */
export const BOOTSTRAP_TAG = "private-bootstrap";

/** Default package and registry repository of hermes-plugin-kit itself. */
export const DEFAULT_PACKAGE = "hermes-plugin-kit";
export const DEFAULT_REGISTRY_REPOSITORY = "ghcr.io/offendingcommit/hermes-plugin-kit";
