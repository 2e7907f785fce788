/**
 * The error class of the maintainer release steps in `release/` (intent,
 * materialize, restore, build, check-dist, gate, create-manifest,
 * verify-manifest, checksums) and the git adapter they share.
 *
 * Contract violations found by the pure checks in `src/contract` keep their
 * own class (`ReleaseContractError`); this class covers what the steps find
 * in git, on disk and in subprocesses. Codes are stable; messages say what was
 * expected and what was found and never carry secrets or raw tool output.
 */
import { HermesPluginKitError } from "../src/contract/errors.js";

/**
 * Stable codes of {@link ReleaseStepError}, one per failure a caller or test
 * can branch on (reference `original-release-contract.md` sections 3.5-3.7,
 * 3.19 and 6.1).
 */
export const RELEASE_STEP_CODES = [
  /** A git subprocess failed, timed out or produced too much output. */
  "GIT_FAILED",
  /** Any other subprocess (npm, bash) failed to start, timed out or exited non-zero. */
  "SUBPROCESS_FAILED",
  /** package.json of the releasing package is missing, unreadable or malformed. */
  "RELEASE_CONFIG_INVALID",
  /** package.json `name` is not the configured package. */
  "RELEASE_PACKAGE_MISMATCH",
  /** `git status --porcelain` is not empty (untracked files count). */
  "RELEASE_TREE_DIRTY",
  /** The baseline tag `v<version>` does not exist. */
  "RELEASE_BASELINE_MISSING",
  /** The baseline tag is not an ancestor of HEAD. */
  "RELEASE_BASELINE_NOT_ANCESTOR",
  /** A non-merge commit since the baseline is not an allowed conventional commit. */
  "RELEASE_HISTORY_INVALID",
  /** A commit line looks like a breaking-change marker but is not the exact `BREAKING CHANGE: ` token. */
  "RELEASE_BREAKING_AMBIGUOUS",
  /** A revert names no commit of its history (neither its hash nor its quoted header resolves). */
  "RELEASE_REVERT_UNRESOLVED",
  /** HEAD is detached (semantic-release needs a branch). */
  "RELEASE_DETACHED_HEAD",
  /** semantic-release failed or disagrees with the baseline. */
  "RELEASE_ANALYZER_FAILED",
  /** The next tag `v<next>` already exists (locally or on origin). */
  "RELEASE_TAG_EXISTS",
  /** HEAD is not the expected trigger commit. */
  "RELEASE_HEAD_MISMATCH",
  /** A release identity fact (parent, tag, clean tree, touched files, version) does not hold. */
  "RELEASE_IDENTITY_MISMATCH",
  /** The lockfile needed for materialize is missing or malformed. */
  "RELEASE_LOCKFILE_INVALID",
  /** The source bundle's refs are not exactly `release-candidate` + the tag. */
  "RELEASE_BUNDLE_REFS",
  /** The source bundle's bytes do not match `release-source.sha256`. */
  "RELEASE_BUNDLE_CHECKSUM",
  /** A restore or output directory is not empty, or a path is a symlink. */
  "RELEASE_OUTPUT_NOT_EMPTY",
  /** The artifact (dist) directory breaks a rule: not empty before pack, extra files, symlinks. */
  "RELEASE_DIST_INVALID",
  /** The checkout's HEAD or tracked files changed while packing (or were dirty before). */
  "RELEASE_BUILD_TREE_CHANGED",
  /** publint reported an error (or a warning, strict) for the packed tarball. */
  "RELEASE_DIST_LINT",
  /** The tarball holds a file not allowed by `files`, a link, or a bad path. */
  "RELEASE_DIST_CONTENTS",
  /** The gate name is not one of the four test gates. */
  "RELEASE_GATE_UNKNOWN",
  /** A test gate command exited non-zero. */
  "RELEASE_GATE_FAILED",
  /** A gate changed HEAD or tracked files while it ran. */
  "RELEASE_GATE_TREE_CHANGED",
  /** A gate evidence file is missing or malformed. */
  "RELEASE_EVIDENCE_INVALID",
  /** The MCP SDK version exercised by the host contract is unknown or inconsistent. */
  "RELEASE_MCP_SDK_VERSION",
  /** A program or npm script a gate command needs is not available to it (hermetic PATH). */
  "RELEASE_GATE_TOOL_MISSING",
] as const;

/** One of {@link RELEASE_STEP_CODES}. */
export type ReleaseStepCode = (typeof RELEASE_STEP_CODES)[number];

/**
 * A release step failed. `code` is one of {@link RELEASE_STEP_CODES}.
 * Raised by every module in `release/` owned by the build half of the pipeline.
 */
export class ReleaseStepError extends HermesPluginKitError {
  constructor(code: ReleaseStepCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
