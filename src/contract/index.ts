/**
 * `hermes-plugin-kit/contract`: the pure release contract (no network; file
 * reads only in functions whose name says so: `...File`, `...Dir`, `verifyManifest`).
 */
export * from "./errors.js";
export * from "./canonical-json.js";
export * from "./constants.js";
export * from "./grammar.js";
export * from "./reference.js";
export * from "./policy.js";
export * from "./schemas.js";
export * from "./release-document.js";
export * from "./manifest.js";
export * from "./json-schema.js";
export * from "./payload.js";
export { ProvenanceError, type ProvenanceErrorCode } from "./provenance-error.js";
export {
  IN_TOTO_PAYLOAD_TYPE,
  IN_TOTO_STATEMENT_V1,
  RELEASE_BUILD_TYPE,
  SIGSTORE_BUNDLE_V03_MEDIA_TYPE,
  SLSA_PROVENANCE_V1,
  bindingFromReceipt,
  bindingFromTestedManifest,
  checkReleaseBinding,
  parseProvenanceStatement,
  provenanceStatement,
  type ProvenanceFacts,
  type ReleaseBinding,
} from "./provenance.js";
export {
  DEFAULT_SOURCE_REF,
  FULCIO_OID,
  GITHUB_ACTIONS_ISSUER,
  RELEASE_WORKFLOW_PATH,
  checkSignerIdentity,
  checkStatementAgainstPolicy,
  checkStatementAgainstSigner,
  resolveProvenancePolicy,
  type ProvenancePolicy,
  type ResolvedProvenancePolicy,
  type SignerFacts,
  type SignerIdentity,
} from "./provenance-policy.js";
export { MAX_TRUSTED_ROOT_BYTES, TRUSTED_ROOT_MEDIA_TYPES, parseTrustedRoot, type CheckedTrustedRoot } from "./trusted-root.js";
export { MAX_PACKAGE_JSON_BYTES, readNpmTarballFile, type NpmTarball, type ReadNpmTarballOptions } from "./npm-tarball.js";
export { DEFAULT_TAR_LIMITS, StrictTarParser, parsePaxRecords, type TarLimits, type TarballMember } from "./tar-ustar.js";
