/**
 * `release/`: the maintainer release pipeline (docs/architecture.md, "Release: steps and data flow"). Each step
 * is a function `(options) -> Promise<result>` that the CLI
 * (`hermes-plugin-kit release <step>`) wires and prints as JSON.
 *
 * Build half (this barrel): intent, materialize, restore, build, check-dist,
 * gate, create-manifest, verify-manifest, checksums, plus the git adapter and
 * the release configuration reader. The publish half (check-private, stage,
 * promote, publish, github-release) lives in its own modules.
 */
export * from "./errors.js";
export * from "./git.js";
export * from "./config.js";
export * from "./intent.js";
export {
  ALLOWED_COMMIT_TYPES,
  COMMIT_PARSER_OPTIONS,
  GITHUB_REVERT_RE,
  isRevertTitle,
  classifyCommitMessage,
  readHistory,
  resolveReverts,
  revertTargetOf,
  strongerBump,
  type CommitClassification,
  type HistoryCommit,
  type RevertTarget,
} from "./history.js";
export * from "./materialize.js";
export { createReleaseTag, expectedReleaseTagText, releaseTagMessage, releaseTagProblem } from "./release-tag.js";
export * from "./restore.js";
export * from "./build.js";
export * from "./gate.js";
export { COMMAND_ENV_NAMES, NPM_PACK_ENV_NAMES, RELEASE_CREDENTIAL_VARIABLES, commandEnvironment, npmPackEnvironment, requirePassableNames } from "./command-env.js";
export { SEMANTIC_RELEASE_TIMEOUT_MS, semanticReleaseDryRun, semanticReleaseEnvironment } from "./semantic-release-run.js";
export * from "./manifest-steps.js";
