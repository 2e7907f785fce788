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
