/**
 * `src/fetch`: the consumer's verified fetch, fleet lock and provenance checks as a library
 * (`hermes-plugin-kit/fetch`; docs/fetch.md). The same functions the CLI's `fetch`, `resolve`, `fleet` and
 * `verify-provenance` commands call, with the same codes. Every public name is listed here by name.
 * Importing this module loads the Sigstore verifier (the CLI loads it only when a command needs it).
 */
export { FetchError, PrivacyError, type FetchErrorCode, type PrivacyErrorCode } from "./errors.js";
export {
  credentialsFromEnv,
  credentialsFromEnvOrConfig,
  downloadRelease,
  environmentCredentialSource,
  fetchRelease,
  inspectRelease,
  isIncompleteRelease,
  registryConfigNote,
  resolveRegistryCredentials,
  type CredentialSourceOptions,
  type DownloadOptions,
  type FetchedFile,
  type FetchReleaseOptions,
  type FetchResult,
  type InspectedRelease,
  type OpenReadTarget,
  type RequirePrivateForRead,
  type VerifiedDownload,
} from "./fetch.js";
export {
  addPluginToLock,
  checkFleetLock,
  emptyFleetLock,
  fleetLockBytes,
  readFleetLockFile,
  verifyFleetLock,
  writeFleetLockFile,
  type FleetAddOptions,
  type FleetPinCheckOptions,
  type FleetPluginResult,
  type FleetVerifyOptions,
} from "./fleet.js";
export { listFleetLock, removePluginFromLock, upgradePluginInLock, type FleetUpgradeOptions } from "./fleet-edit.js";
export { checkInstallTarget, installPayload, type InstallFile, type InstallOptions, type InstallResult } from "./install.js";
export { parseTagReference, resolveTagReference, type ResolveOptions, type TagReference } from "./resolve.js";
export { verifyReleaseProvenance, type ProvenanceCheckOptions, type VerifiedProvenance } from "./provenance.js";
export { verifyBundleFile, type VerifyBundleFileOptions, type VerifyBundleFileResult } from "./verify-bundle-file.js";
export { verifyReferenceProvenance, type VerifyReferenceOptions, type VerifyReferenceResult } from "./verify-reference.js";
