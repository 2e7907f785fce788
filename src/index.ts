/**
 * hermes-plugin-kit: the plugin authoring kit (`src/kit`) and the pure release
 * contract (`src/contract`, also at `hermes-plugin-kit/contract`).
 */
export * from "./contract/index.js";
export * from "./kit/index.js";
