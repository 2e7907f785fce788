/**
 * `src/oci`: the OCI transport. Deterministic layouts, the `Target`
 * interface and its implementations (registry, layout store, `oras` CLI),
 * verified reads and graph copies (docs/oci.md; image-spec and
 * distribution-spec v1.1). Every public name is listed here by name.
 */
export type { Descriptor, ReadOnlyTarget, Target } from "./target.js";
export { OciError, isOciError, type OciErrorCode } from "./errors.js";
export {
  DOCKER_MANIFEST_LIST_MEDIA_TYPE,
  DOCKER_MANIFEST_MEDIA_TYPE,
  DescriptorVerifier,
  MANIFEST_MEDIA_TYPES,
  STREAM_HIGH_WATER_MARK,
  bufferStream,
  checkDescriptor,
  descriptorOf,
  digestFile,
  digestHex,
  digestOf,
  isManifestMediaType,
  numericFlags,
  readAllBounded,
  verifiesDescriptor,
  verifyBlobFile,
  verifyingStream,
} from "./descriptor.js";
export { artifactManifest, artifactManifestObject, parseManifest, type ParsedManifest, type TitledLayer } from "./manifest.js";
export {
  checkLayoutRoot,
  checkPayloadPath,
  findIndexEntry,
  layoutBlobPath,
  openBlobStream,
  parseIndexManifests,
  readLayout,
  writeLayout,
  type ReadLayout,
  type WrittenLayout,
} from "./layout.js";
export { BlobFile, BlobFileBody } from "./blob-file.js";
export { BlobRelay, RelayBody, type BlobRelayAnswer } from "./blob-relay.js";
export { LayoutTarget, type LayoutTargetOptions, type TagOutcome } from "./layout-target.js";
export { copy, fetchBlobToFile, fetchManifest, forEachBounded, tagIfAbsent, type CopyOptions, type FetchBlobOptions } from "./transfer.js";
export { DEFAULT_CHUNK_SIZE, RegistryTarget, checkChunkSize, type RegistryTargetOptions } from "./registry-target.js";
export { parseChallenges, readSecretFromStream, registryCredentialsFromEnv, type RegistryCredentials } from "./registry-auth.js";
export { MAX_ERROR_BODY_BYTES } from "./registry-session.js";
export { MAX_TAG_PAGE_BYTES, parseNextLink } from "./registry-tags.js";
export { MIN_CHUNK_BYTES } from "./registry-upload.js";
export { parseRetryAfter, type RetryPolicy } from "./retry.js";
export { openTarget, type OpenTargetOptions } from "./open.js";
export { MIN_ORAS_VERSION, OrasTarget, parseOrasVersion, type OrasTargetOptions } from "./oras-target.js";
export { acquirePidLock, inspectLockFile, isProcessAlive, isStaleLockOwner, lockRefusal, type LockInspection, type PidLockOptions } from "./lock-owner.js";
export { listReferrers, pushReferrer, referrerManifest, referrersTag, type ReferrerArtifact, type ReferrersSource } from "./referrers.js";
export { BASE_ENV_NAMES, NETWORK_ENV_NAMES, childEnvironment, runBounded, type BoundedRun, type BoundedRunOptions, type ChildEnvironment, type RunOutcome } from "./subprocess.js";
