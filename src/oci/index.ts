/**
 * `src/oci`: the OCI transport. Deterministic layouts, the `Target`
 * interface and its implementations (registry, layout store, `oras` CLI),
 * verified reads and graph copies. DESIGN.md section 3.
 */
export * from "./target.js";
export * from "./errors.js";
export * from "./descriptor.js";
export * from "./manifest.js";
export * from "./layout.js";
export * from "./layout-target.js";
export * from "./transfer.js";
export * from "./registry-target.js";
export * from "./open.js";
export * from "./oras-target.js";
export * from "./lock-owner.js";
export { listReferrers, pushReferrer, referrerManifest, referrersTag, type ReferrerArtifact, type ReferrersSource } from "./referrers.js";
export { BASE_ENV_NAMES, NETWORK_ENV_NAMES, childEnvironment, runBounded, type BoundedRun, type BoundedRunOptions, type ChildEnvironment, type RunOutcome } from "./subprocess.js";
