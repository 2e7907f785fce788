/**
 * The two error classes of the maintainer release pipeline in `release/`:
 * {@link ReleaseStepError} for the build half (intent, materialize, restore,
 * build, check-dist, gate, create-manifest, verify-manifest, checksums) and
 * the git adapter they share; {@link PipelineError} for the registry half
 * (stage, promote, publish, attest) and `release run`.
 *
 * Contract violations found by the pure checks in `src/contract` keep their
 * own class (`ReleaseContractError`); this class covers what the steps find
 * in git, on disk and in subprocesses. Codes are stable; messages say what was
 * expected and what was found and never carry secrets or raw tool output.
 */
import { HermesPluginKitError } from "../src/contract/errors.js";

/**
 * Stable codes of {@link ReleaseStepError}, one per failure a caller or test
 * can branch on (docs/release-build.md, "Error codes"; docs/architecture.md,
 * "Errors and codes").
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
export class ReleaseStepError extends HermesPluginKitError<ReleaseStepCode> {}

/**
 * Stable codes of {@link PipelineError} (stage, promote, publish, attest, run;
 * docs/release-run.md "Error codes (`PipelineError`)").
 */
export const PIPELINE_ERROR_CODES = [
  /**
   * The artifact directory is a symlink or not a directory, an input is missing, a symlink, not a
   * regular file, empty, or has a name outside the allow-list (T1/T2).
   */
  "STAGE_INPUT_INVALID",
  /** `--tag` is not `candidate-<run_id>-<source_sha>` of the tested manifest (T4). */
  "STAGE_TAG_MISMATCH",
  /** The re-downloaded payload differs from the tested inputs (SP1). */
  "STAGE_BYTES_DIFFER",
  /** The repository is not the policy's registry repository. */
  "RELEASE_REPOSITORY_MISMATCH",
  /** A tag already names another digest; nothing was written (W1/W2). */
  "RELEASE_TAG_CONFLICT",
  /** After binding, a tag does not resolve to the expected digest (W1/W2). */
  "RELEASE_TAG_MISMATCH",
  /** The reference is not a tested release bundle (SP2). */
  "PUBLISH_REQUIRES_TESTED",
  /** The bundle fetched after binding differs from the first fetch (SP3). */
  "PUBLISH_PAYLOAD_CHANGED",
  /** The re-downloaded receipt bytes differ from the uploaded ones (SP5). */
  "PUBLISH_RECEIPT_CHANGED",
  /** `SOURCE_PROMOTION_TOKEN` is empty for a non-local remote (nothing was done). */
  "PROMOTE_TOKEN_MISSING",
  /** The remote is missing, or its URL carries credentials. */
  "PROMOTE_REMOTE_INVALID",
  /** The release commit's identity facts do not hold (parent, tag, touched files). */
  "PROMOTE_SOURCE_MISMATCH",
  /** Remote `main`/tag are neither (trigger, absent) nor (release, release). */
  "PROMOTE_REMOTE_STATE",
  /** After the push, remote `main` and the tag do not both equal the release SHA. */
  "PROMOTE_NOT_CONFIRMED",
  /** An output file could not be written. */
  "OUTPUT_WRITE_FAILED",
  /** The run workspace is not a usable directory (see `release/run.ts`). */
  "RUN_WORKSPACE_INVALID",
  /** The run state file is malformed or belongs to another run (see `release/run.ts`). */
  "RUN_STATE_INVALID",
  /** A step's recorded result no longer verifies on resume (see `release/run.ts`). */
  "RUN_STEP_DIVERGED",
  /** Another live process holds the run workspace's lock (see `release/run.ts`). */
  "RUN_WORKSPACE_LOCKED",
  /** The policy's install command (`hermesPluginKit.install`) of `release run` exited non-zero (see `release/run.ts`). */
  "RUN_INSTALL_FAILED",
  /** `release run`'s source checkout is not a directory; refused before the workspace is created (see `release/run.ts`). */
  "RUN_SOURCE_INVALID",
  /**
   * The release policy names a signing key (`hermesPluginKit.provenance.key`) and neither `--attest-key FILE` nor
   * `HERMES_PLUGIN_KIT_ATTEST_KEY_FILE` gives its private half; refused before the first write (see `release/attest-key.ts`).
   */
  "RUN_ATTEST_KEY_REQUIRED",
  /** The given attestation key is not the private half of the key the release policy names; refused before the first write. */
  "RUN_ATTEST_KEY_MISMATCH",
  /**
   * A `release run` flag given on resume disagrees with the value the run recorded when it started
   * (`--plain-http`, `--registry-config`, `--pass-env`, `--attest-key`, `--chunk-size`, `--mcp-sdk-version`,
   * `--github-release`, `--run-attempt`); refused before the lock is taken (see `release/run-flags.ts`).
   */
  "RUN_FLAG_MISMATCH",
] as const;

/** One of {@link PIPELINE_ERROR_CODES}. */
export type PipelineErrorCode = (typeof PIPELINE_ERROR_CODES)[number];

/** A stage, promote, publish, attest or run failure; `code` is one of {@link PIPELINE_ERROR_CODES}. */
export class PipelineError extends HermesPluginKitError<PipelineErrorCode> {}
