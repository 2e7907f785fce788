/**
 * The error class of the consumer side (`src/fetch`): fetch, safe install,
 * source bundle check and fleet pins. Every failure carries a stable `code`
 * (tests and callers branch on it); messages say what was expected and what
 * was found and never contain credentials.
 */
import { HermesPluginKitError } from "../contract/errors.js";

/**
 * The codes of {@link FetchError} (docs/fetch.md "Error codes"): the fetch
 * checks (`FETCH_*`, `PAYLOAD_SHA256_MISMATCH`), safe install (`INSTALL_*`), the
 * source bundle check (`SOURCE_BUNDLE_*`) and fleet pins (`FLEET_*`).
 */
export type FetchErrorCode =
  | "FETCH_ARTIFACT_TYPE_MISMATCH"
  | "FETCH_ARTIFACT_TYPE_UNSUPPORTED"
  | "FETCH_BLOB_MISSING"
  | "FETCH_CONFIG_UNEXPECTED"
  | "FETCH_CREDENTIALS_INCOMPLETE"
  | "FETCH_CREDENTIALS_INVALID"
  | "FETCH_LAYER_ANNOTATION_INVALID"
  | "FETCH_LAYER_DESCRIPTOR_INVALID"
  | "FETCH_LAYER_INVENTORY"
  | "FETCH_LAYER_PATHS_UNEXPECTED"
  | "FETCH_LAYER_PATH_DUPLICATE"
  | "FETCH_LAYER_PATH_UNSAFE"
  | "FETCH_MANIFEST_DIGEST_MISMATCH"
  | "FETCH_MANIFEST_INVALID_JSON"
  | "FETCH_MANIFEST_UNSUPPORTED"
  | "FETCH_PACKAGE_INVALID"
  | "FETCH_PACKAGE_MISMATCH"
  | "FETCH_PATHS_MANIFEST_MISMATCH"
  | "FETCH_TEMP_UNSAFE"
  | "PAYLOAD_SHA256_MISMATCH"
  | "INSTALL_FAILED"
  | "INSTALL_LOCKED"
  | "INSTALL_OUTPUT_NOT_EMPTY"
  | "INSTALL_OUTPUT_SYMLINK"
  | "INSTALL_OVERWRITE_REFUSED"
  | "INSTALL_PATH_INVALID"
  | "INSTALL_REPLACE_REFUSED"
  | "INSTALL_UNSAFE_PATH"
  | "SOURCE_BUNDLE_GIT_FAILED"
  | "SOURCE_BUNDLE_PACKAGE_MISMATCH"
  | "SOURCE_BUNDLE_REFS_MISMATCH"
  | "SOURCE_BUNDLE_SHA_MISMATCH"
  | "FLEET_BUNDLE_MISMATCH"
  | "FLEET_BUNDLE_REFERENCE_MISMATCH"
  | "FLEET_INSTALLED_MISMATCH"
  | "FLEET_INSTALLED_MISSING"
  | "FLEET_INSTALLED_UNSAFE"
  | "FLEET_LOCK_BUSY"
  | "FLEET_LOCK_CHANGED"
  | "FLEET_LOCK_EMPTY"
  | "FLEET_LOCK_INVALID"
  | "FLEET_LOCK_UNREADABLE"
  | "FLEET_LOCK_READ_ONLY"
  | "FLEET_PLUGIN_CONFLICT"
  | "FLEET_PLUGIN_NOT_PINNED"
  | "FLEET_RECEIPT_NOT_CANONICAL"
  | "FLEET_RECEIPT_UNREADABLE"
  | "FLEET_TARBALL_MISMATCH"
  | "FLEET_UPGRADE_NOT_NEWER"
  | "FLEET_VERSION_MISMATCH";

/**
 * The fix of a refusal whose cause is two files of one release disagreeing (a checksum, a layer title, the
 * source bundle's refs or package.json against the tested manifest): no pin was compared, and a fetch verified
 * every byte against the pinned digest, so the release was published this way.
 */
export const RELEASE_FILES_DISAGREE_FIX =
  "; fix: the release's own files disagree with each other, and a fetch verifies every byte against the pinned digest, so the release was published this way: do not install it, and tell its publisher";

/**
 * A fetch, install, source-bundle or fleet check failed (docs/fetch.md "Error codes").
 * `message` names the library's options in its fix (`replace: true`); when the CLI spells that fix with its own
 * flags (`--replace`), {@link FetchError.cliMessage} holds the message as the CLI says it.
 */
export class FetchError extends HermesPluginKitError<FetchErrorCode> {
  /** The same message with the fix in CLI flags (`--replace`, `--output-dir`), when it differs; else undefined. */
  readonly cliMessage: string | undefined;

  constructor(code: FetchErrorCode, message: string, options: { cause?: unknown; cliMessage?: string } = {}) {
    super(code, message, options.cause === undefined ? undefined : { cause: options.cause });
    this.cliMessage = options.cliMessage;
  }
}

/** The codes of {@link PrivacyError} (docs/release-publish.md "The privacy gate"). */
export type PrivacyErrorCode =
  | "PRIVACY_TOKEN_MISSING"
  | "PRIVACY_API_URL_INVALID"
  | "PRIVACY_REPOSITORY_UNSUPPORTED"
  | "PRIVACY_API_FAILED"
  | "PRIVACY_NO_STATUS"
  | "PRIVACY_API_MALFORMED"
  | "PRIVACY_OWNER_UNKNOWN"
  | "PRIVACY_CREDENTIAL_UNKNOWN"
  | "PRIVACY_ABSENT"
  | "PRIVACY_IDENTITY_MISMATCH"
  | "PRIVACY_PUBLIC"
  | "PRIVACY_INTERNAL"
  | "PRIVACY_VISIBILITY_UNVERIFIED"
  | "PRIVACY_LINKED"
  | "PRIVACY_ANONYMOUS_READ"
  | "PRIVACY_ANONYMOUS_CHECK_FAILED"
  | "PRIVACY_RATE_LIMITED"
  | "PRIVACY_LAYOUT_SYMLINK"
  | "PRIVACY_LAYOUT_NOT_DIRECTORY"
  | "PRIVACY_LAYOUT_OWNER"
  | "PRIVACY_LAYOUT_PERMISSIONS";

/**
 * A privacy check failed closed. Codes:
 * `PRIVACY_TOKEN_MISSING` (no `GH_TOKEN`, nothing was called),
 * `PRIVACY_API_URL_INVALID` (`GITHUB_API_URL` not https, or plain http to a non-loopback host, or carrying credentials),
 * `PRIVACY_REPOSITORY_UNSUPPORTED` (a ghcr.io path without `<owner>/<package>`),
 * `PRIVACY_API_FAILED` (any HTTP status other than the expected ones; {@link PrivacyError.httpStatus} holds it),
 * `PRIVACY_NO_STATUS` (no HTTP status at all: connection refused or dropped, timeout),
 * `PRIVACY_API_MALFORMED` (a 200 whose body is not a strict JSON object),
 * `PRIVACY_OWNER_UNKNOWN` (owner `type` not `User`/`Organization`),
 * `PRIVACY_CREDENTIAL_UNKNOWN` (`GET /user` login not `[A-Za-z0-9-]+`),
 * `PRIVACY_ABSENT` (package or repository absent, without bootstrap or still after it),
 * `PRIVACY_IDENTITY_MISMATCH` (another name, package type or owner),
 * `PRIVACY_PUBLIC`, `PRIVACY_INTERNAL`, `PRIVACY_VISIBILITY_UNVERIFIED` (visibility not exactly `private`),
 * `PRIVACY_LINKED` (linked to a source repository),
 * `PRIVACY_ANONYMOUS_READ` (the tag list was served anonymously),
 * `PRIVACY_ANONYMOUS_CHECK_FAILED` (the anonymous probe got an answer that proves nothing),
 * `PRIVACY_RATE_LIMITED` (the packages API or the anonymous probe stayed rate limited past the retry budget,
 *   or asked for a longer wait: privacy unproven, try again later),
 * `PRIVACY_LAYOUT_SYMLINK`, `PRIVACY_LAYOUT_NOT_DIRECTORY`, `PRIVACY_LAYOUT_OWNER`, `PRIVACY_LAYOUT_PERMISSIONS`.
 */
export class PrivacyError extends HermesPluginKitError<PrivacyErrorCode> {
  /** The HTTP status behind `PRIVACY_API_FAILED` / `PRIVACY_ANONYMOUS_CHECK_FAILED`, when there was one. */
  readonly httpStatus: number | undefined;

  constructor(code: PrivacyErrorCode, message: string, options: { httpStatus?: number; cause?: unknown } = {}) {
    super(code, message, options.cause === undefined ? undefined : { cause: options.cause });
    this.httpStatus = options.httpStatus;
  }
}
