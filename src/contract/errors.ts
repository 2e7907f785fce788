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

/** Base class of every coded error raised by this package. */
export class HermesPluginKitError extends Error {
  /** Stable sentinel code, e.g. `JSON_DUPLICATE_KEY` or `OCI_DIGEST_MISMATCH`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * A release document, grammar or payload violates the release contract
 * (docs/contract.md "Error codes"). Raised only by pure
 * checks in `src/contract`.
 */
export class ReleaseContractError extends HermesPluginKitError {}

/** True when `error` is a {@link HermesPluginKitError} with the given code. */
export function hasCode(error: unknown, code: string): boolean {
  return error instanceof HermesPluginKitError && error.code === code;
}
