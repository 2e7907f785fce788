/**
 * The error class of the consumer side (`src/fetch`): fetch, safe install,
 * source bundle check and fleet pins. Every failure carries a stable `code`
 * (tests and callers branch on it); messages say what was expected and what
 * was found and never contain credentials.
 */
import { HermesPluginKitError } from "../contract/errors.js";

/** A fetch, install, source-bundle or fleet check failed (DESIGN.md section 5). */
export class FetchError extends HermesPluginKitError {}
