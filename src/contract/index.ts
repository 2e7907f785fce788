/**
 * `hermes-plugin-kit/contract`: the pure release contract (no network; file
 * reads only in functions whose name says so).
 */
export * from "./errors.js";
export * from "./canonical-json.js";
export * from "./constants.js";
export * from "./grammar.js";
export * from "./reference.js";
