/**
 * The one error class of the OCI transport (`src/oci`), with its stable codes.
 *
 * Every failure of a layout, registry, copy or tool call is an {@link OciError}
 * whose `code` callers and tests branch on; the message says what was expected
 * and what was found, and never contains credentials, tokens or tool output.
 * docs/architecture.md, "Errors and codes"; docs/oci.md lists the codes.
 */
import { HermesPluginKitError } from "../contract/errors.js";

/**
 * Codes of {@link OciError}:
 *
 * - `OCI_NOT_FOUND`: a manifest, blob or tag does not exist (registry 404, missing index entry or blob file).
 * - `OCI_DIGEST_MISMATCH`: bytes do not hash to the expected digest, or a registry's `Docker-Content-Digest`
 *   disagrees with the digest computed from the bytes (reference B-3).
 * - `OCI_SIZE_MISMATCH`: content is shorter or longer than the descriptor's `size` (truncated body, early close,
 *   extra bytes; reading stops at `size + 1`) (reference B-2).
 * - `OCI_MANIFEST_TOO_LARGE`: a manifest larger than 1 MiB (`MAX_MANIFEST_BYTES`), refused before it is read whole.
 * - `OCI_MANIFEST_INVALID`: manifest bytes are not a valid OCI image manifest or index (HTML, empty, wrong media
 *   type, bad descriptors: reference O1/O2).
 * - `OCI_DESCRIPTOR_INVALID`: a descriptor handed to the transport is malformed (digest grammar, size not a
 *   non-negative safe integer, empty media type).
 * - `OCI_TAG_INVALID`: a tag does not match the discovery tag grammar.
 * - `OCI_TAG_CONFLICT`: the tag already names another digest; nothing was written (reference W1/W2).
 * - `OCI_TAG_MISMATCH`: after tagging, the tag does not resolve to the expected digest (reference W1/W2).
 * - `OCI_AUTH_FAILED`: the registry refused the credentials (401/403, also after a fresh token), the token
 *   endpoint refused them, or credentials are required but none were given.
 * - `OCI_HTTP_ERROR`: an unexpected HTTP status or a transport error that is not retried.
 * - `OCI_RETRY_EXHAUSTED`: 429/5xx/connection resets went on past the retry budget, or a `Retry-After` asked
 *   for more than the budget allows.
 * - `OCI_RATE_LIMITED`: the registry or token endpoint kept answering 429 past the retry budget, or asked
 *   (`Retry-After`) for a wait longer than the budget allows: rate limited, try again later.
 * - `OCI_REQUEST_TOO_LARGE`: the registry refused an upload request body as too large (413, or 416 to a chunk)
 *   and no smaller chunk is allowed, or the refused bytes had already been streamed (`copy` then repeats the
 *   transfer in the smaller chunks the target learned).
 * - `OCI_CHUNK_SIZE_INVALID`: a configured upload chunk size that is not an integer of at least 64 KiB.
 * - `OCI_MANIFEST_BLOB_UNKNOWN`: the registry refused a manifest because it does not see a blob the manifest
 *   names (`MANIFEST_BLOB_UNKNOWN`); `copy` confirms the blobs again and retries, for a writer racing another.
 * - `OCI_TAG_AMBIGUOUS`: one tag names two different manifests (two `index.json` entries with one ref name and
 *   different descriptors); refused, never resolved by picking one.
 * - `OCI_TIMEOUT`: a request (headers or body) exceeded its timeout.
 * - `OCI_TLS_FAILED`: the TLS handshake or certificate verification failed (untrusted, expired, wrong host).
 * - `OCI_PLAIN_HTTP_REFUSED`: plain HTTP requested for a non-loopback host, or without `plainHttp: true`
 *   (registry, token realm, redirect or pagination link).
 * - `OCI_REDIRECT_REFUSED`: a redirect to a refused location (plain HTTP off loopback, HTTPS downgrade, too many hops).
 * - `OCI_BODY_TOO_LARGE`: an error body, token response, tag list or tool output over its ceiling (64 KiB for
 *   error bodies and token responses).
 * - `OCI_RESPONSE_INVALID`: a registry or token response that is not what the protocol says (not JSON, wrong
 *   shape, missing `Location`, HTML where JSON belongs), or an ambiguous one (two different values of one
 *   header, duplicate JSON keys, a tag listed twice, two different tokens, two realms).
 * - `OCI_PAGINATION_LOOP`: tag-list or referrers pagination revisits a page or exceeds the page budget.
 * - `OCI_LINK_INVALID`: a tag-list or referrers `Link` header that is malformed (no angle brackets) or leaves the registry's origin.
 * - `OCI_LAYOUT_INVALID`: an OCI image layout is malformed (bad `oci-layout`/`index.json`, symlinked or missing
 *   blob, unexpected manifest shape) (reference B-1, section 4).
 * - `OCI_LAYOUT_EXISTS`: `writeLayout` was given a directory that already exists.
 * - `OCI_PATH_INVALID`: a payload path or local input file is unsafe (absolute, `..`, empty, not a regular file).
 * - `OCI_LOCKED`: the layout's `index.json` lock could not be taken within its timeout, or at once when
 *   it is not a lock the kit writes, is stale (its PID was reused) or names a live process that is not a kit process.
 * - `OCI_REPOSITORY_INVALID`: a repository string that is neither `host[:port]/path` nor `oci-layout:<dir>`.
 * - `OCI_TOOL_MISSING`: the `oras` executable could not be run.
 * - `OCI_TOOL_VERSION`: the `oras` version is older than 1.3 or unreadable.
 * - `OCI_TOOL_FAILED`: an `oras` subcommand exited non-zero (message: `oras <subcommand> failed (exit N)`, never its output).
 * - `OCI_CREDENTIAL_CONFIG_INVALID`: a Docker client config (`--registry-config`, `$DOCKER_CONFIG`,
 *   `~/.docker/config.json`) is unreadable (when named explicitly), not JSON, or of the wrong shape.
 * - `OCI_CREDENTIAL_HELPER_FAILED`: a `docker-credential-<name>` helper is missing, timed out, failed or answered
 *   something other than the helper protocol's JSON.
 * - `OCI_CREDENTIAL_UNSUPPORTED`: the stored credential is an identity (refresh) token, which this client cannot use.
 * - `OCI_ARGUMENT_INVALID`: a public function of `src/oci` was called with an argument of the wrong type or shape
 *   (a number where a path goes, options that are not an object or hold a key the call does not read, a `signal`
 *   that is not an AbortSignal); refused at the entry, before anything is read or written.
 */
export type OciErrorCode =
  | "OCI_NOT_FOUND"
  | "OCI_DIGEST_MISMATCH"
  | "OCI_SIZE_MISMATCH"
  | "OCI_MANIFEST_TOO_LARGE"
  | "OCI_MANIFEST_INVALID"
  | "OCI_DESCRIPTOR_INVALID"
  | "OCI_TAG_INVALID"
  | "OCI_TAG_CONFLICT"
  | "OCI_TAG_MISMATCH"
  | "OCI_AUTH_FAILED"
  | "OCI_HTTP_ERROR"
  | "OCI_RETRY_EXHAUSTED"
  | "OCI_RATE_LIMITED"
  | "OCI_REQUEST_TOO_LARGE"
  | "OCI_CHUNK_SIZE_INVALID"
  | "OCI_MANIFEST_BLOB_UNKNOWN"
  | "OCI_TAG_AMBIGUOUS"
  | "OCI_TIMEOUT"
  | "OCI_TLS_FAILED"
  | "OCI_PLAIN_HTTP_REFUSED"
  | "OCI_REDIRECT_REFUSED"
  | "OCI_BODY_TOO_LARGE"
  | "OCI_RESPONSE_INVALID"
  | "OCI_PAGINATION_LOOP"
  | "OCI_LINK_INVALID"
  | "OCI_LAYOUT_INVALID"
  | "OCI_LAYOUT_EXISTS"
  | "OCI_PATH_INVALID"
  | "OCI_LOCKED"
  | "OCI_REPOSITORY_INVALID"
  | "OCI_TOOL_MISSING"
  | "OCI_TOOL_VERSION"
  | "OCI_TOOL_FAILED"
  | "OCI_CREDENTIAL_CONFIG_INVALID"
  | "OCI_CREDENTIAL_HELPER_FAILED"
  | "OCI_CREDENTIAL_UNSUPPORTED"
  | "OCI_ARGUMENT_INVALID";

/** A coded failure of the OCI transport. `code` is one of {@link OciErrorCode}. */
export class OciError extends HermesPluginKitError<OciErrorCode> {}

/** True when `error` is an {@link OciError} (optionally with the given code). */
export function isOciError(error: unknown, code?: OciErrorCode): error is OciError {
  return error instanceof OciError && (code === undefined || error.code === code);
}

/**
 * The `OCI_MANIFEST_TOO_LARGE` refusal of a manifest above {@link MAX_MANIFEST_BYTES} (1 MiB): what was
 * found, the limit and where it comes from, and the fix.
 * @param what the manifest, e.g. `OCI manifest sha256:...` or `OCI manifest v1.2.0`.
 * @param found its size as known (`"1048577 bytes"`, or `"more than 1048576 bytes"` while reading).
 */
export function manifestTooLarge(what: string, found: string): OciError {
  // MAX_MANIFEST_BYTES of contract/constants.ts, written out: an error module requires no module but
  // other error modules (scripts/bundle-cli.mjs, ERROR_MODULES); test/oci asserts the two agree.
  const MAX_MANIFEST_BYTES = 1024 * 1024;
  return new OciError(
    "OCI_MANIFEST_TOO_LARGE",
    `${what} is ${found}; expected at most ${MAX_MANIFEST_BYTES} bytes (1 MiB), the ceiling this kit applies to every manifest before reading it whole ` +
      "(docs/oci.md; a release manifest of this kit is a few KiB); " +
      "fix: check that the reference names a Hermes plugin release (an image index of many platforms or another tool's artifact is not one); " +
      "a publisher whose manifest outgrew 1 MiB packs the payload into fewer files or drops large annotations, then releases again",
  );
}
