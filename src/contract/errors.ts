/**
 * Error model shared by every area of hermes-plugin-kit.
 *
 * Each area has one error class carrying a stable, machine-readable `code`
 * (tests and callers branch on it) and a human message that says what was
 * expected and what was found. Messages never contain secrets.
 *
 * Each docs/ page lists its area's codes (docs/contract.md "Error codes",
 * docs/fetch.md "Error codes", ...).
 */

/**
 * Base class of every coded error raised by this package: `code` is one of the
 * area's `Code` union (the shape of sigstore-js' `BaseError<T>`), so a caller
 * branching on it is checked by the compiler. Each area's class narrows it:
 * `class OciError extends HermesPluginKitError<OciErrorCode> {}`.
 */
export class HermesPluginKitError<Code extends string = string> extends Error {
  /** Stable sentinel code, e.g. `JSON_DUPLICATE_KEY` or `OCI_DIGEST_MISMATCH`. */
  readonly code: Code;

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The codes of {@link ReleaseContractError} (docs/contract.md "Error codes"). */
export type ReleaseContractErrorCode =
  // canonical JSON and the strict parser
  | "JSON_AMBIGUOUS_NUMBER"
  | "JSON_BOM"
  | "JSON_DUPLICATE_KEY"
  | "JSON_INVALID_UTF8"
  | "JSON_NON_FINITE"
  | "JSON_NOT_OBJECT"
  | "JSON_SYNTAX"
  | "JSON_TOO_DEEP"
  | "JSON_UNSAFE_INTEGER"
  | "JSON_UNSUPPORTED_VALUE"
  // grammars: digests, SHAs, versions, tags, references, repositories, package names
  | "DIGEST_INVALID"
  | "GIT_SHA_INVALID"
  | "SEMVER_INVALID"
  | "TAG_INVALID"
  | "TAG_REFERENCE_INVALID"
  | "REFERENCE_NOT_PINNED"
  | "REFERENCE_REPOSITORY_MISMATCH"
  | "REPOSITORY_INVALID"
  | "PACKAGE_NAME_INVALID"
  | "POLICY_INVALID"
  | "POLICY_REPOSITORY_UNPINNED"
  | "RELEASE_NOT_ONE_BUMP"
  | "TAG_VERSION_MISMATCH"
  // release documents: tested manifest, published receipt, evidence
  | "SCHEMA_INVALID"
  | "RELEASE_JSON_TOO_LARGE"
  | "RELEASE_JSON_UNREADABLE"
  | "ARTIFACTS_INVENTORY"
  | "ARTIFACT_FILENAME_MISMATCH"
  | "ARTIFACT_NOT_REGULAR"
  | "ARTIFACT_PAYLOAD_DISAGREE"
  | "ARTIFACT_SHA256_MISMATCH"
  | "ARTIFACT_SIZE_MISMATCH"
  | "BLOB_DIGEST_MISMATCH"
  | "BUNDLE_REFERENCE_MISMATCH"
  | "FILE_RECORD_INVALID"
  | "EVIDENCE_INCOMPLETE"
  | "GATE_COMMAND_MISMATCH"
  | "GATE_HOST_CONTRACT_INVALID"
  | "GATE_NOT_PASSED"
  | "GATE_OTHER_SOURCE"
  | "WORKFLOW_EVIDENCE_INVALID"
  | "INSTALL_TIME_INVALID"
  | "INSTALL_TIME_MISMATCH"
  | "INSTALL_TIME_NOT_ALLOWED"
  | "INSTALL_TIME_UNSAFE"
  | "RECEIPT_CLASS_MISMATCH"
  | "RECEIPT_FIELDS_MISMATCH"
  | "RECEIPT_IDENTITY_INCOMPLETE"
  | "RECEIPT_NOT_CANONICAL"
  | "RECEIPT_PACKAGE_MISMATCH"
  | "RECEIPT_PROMOTION_MISMATCH"
  | "RECEIPT_REFERENCE_MISMATCH"
  | "RECEIPT_BUNDLE_MISMATCH"
  | "RECEIPT_REGISTRY_MISMATCH"
  | "RECEIPT_SCHEMA_UNSUPPORTED"
  | "RECEIPT_STATE_MISMATCH"
  | "RECEIPT_TAG_MISMATCH"
  // the distribution directory, the payload and its checksums
  | "DIST_FILENAME_MISMATCH"
  | "DIST_INVENTORY"
  | "DIST_SYMLINK"
  | "DIST_UNEXPECTED_FILE"
  | "PAYLOAD_CHECKSUMS_NOT_ASCII"
  | "PAYLOAD_CHECKSUM_DUPLICATE"
  | "PAYLOAD_CHECKSUM_INCOMPLETE"
  | "PAYLOAD_CHECKSUM_LINE_INVALID"
  | "PAYLOAD_INVENTORY"
  | "PAYLOAD_PATHS_MISMATCH"
  // the npm tarball (strict tar reader)
  | "TARBALL_DUPLICATE_MEMBER"
  | "TARBALL_ENTRY_TYPE"
  | "TARBALL_GZIP_INVALID"
  | "TARBALL_HEADER_INVALID"
  | "TARBALL_LIMITS_INVALID"
  | "TARBALL_METADATA_MISSING"
  | "TARBALL_NAME_MISMATCH"
  | "TARBALL_PATH_UNSAFE"
  | "TARBALL_PAX_INVALID"
  | "TARBALL_TOO_LARGE"
  | "TARBALL_TRAILING_DATA"
  | "TARBALL_UNREADABLE"
  | "TARBALL_VERSION_MISMATCH";

/**
 * A release document, grammar or payload violates the release contract
 * (docs/contract.md "Error codes"). Raised only by pure
 * checks in `src/contract`.
 */
export class ReleaseContractError extends HermesPluginKitError<ReleaseContractErrorCode> {}

/**
 * True when `error` is a {@link HermesPluginKitError} with the given code (any other `error` value: false).
 * @throws ReleaseContractError `POLICY_INVALID` when `code` is not a string (no error's code is another type).
 */
export function hasCode(error: unknown, code: string): boolean {
  if (typeof code !== "string") throw new ReleaseContractError("POLICY_INVALID", `hasCode(error, code): code must be an error code (a string such as "JSON_SYNTAX"), found ${code === null ? "null" : Array.isArray(code) ? "an array" : `a ${typeof code}`}`);
  return error instanceof HermesPluginKitError && error.code === code;
}

/**
 * Exit status of a command ended by `signal`: 128 + the signal number (SIGHUP 129, SIGINT 130, SIGTERM 143),
 * as shells report it. SIGHUP: the terminal went away (an ssh session dropped, a closed terminal window).
 */
export const INTERRUPT_EXIT_CODES = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

/** The signals a long command stops for, removing what it created (docs/fetch.md "Exit codes"). */
export type InterruptSignal = keyof typeof INTERRUPT_EXIT_CODES;

/**
 * A long operation was stopped (Ctrl-C, `kill`, or its caller's `AbortSignal`)
 * after it removed what it had created: code `INTERRUPTED`. `signal` names the
 * process signal when there was one (the CLI exits 128 + its number).
 */
export class InterruptedError extends HermesPluginKitError<"INTERRUPTED"> {
  readonly signal: InterruptSignal | undefined;

  constructor(signal: InterruptSignal | undefined, message?: string) {
    super("INTERRUPTED", message ?? `interrupted${signal === undefined ? "" : ` (${signal})`}`);
    this.signal = signal;
  }
}

/**
 * The {@link InterruptedError} an aborted `signal` stands for: its reason when
 * that is one, else one without a process signal. Undefined when not aborted.
 */
export function interruption(signal: AbortSignal | undefined): InterruptedError | undefined {
  if (signal === undefined || !signal.aborted) return undefined;
  const reason: unknown = signal.reason;
  return reason instanceof InterruptedError ? reason : new InterruptedError(undefined);
}

/** @throws InterruptedError `INTERRUPTED` when `signal` is aborted. */
export function throwIfInterrupted(signal: AbortSignal | undefined): void {
  const error = interruption(signal);
  if (error !== undefined) throw error;
}
