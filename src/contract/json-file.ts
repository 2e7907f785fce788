/**
 * Parse errors name their file. A strict-JSON or YAML error of a document
 * read from a file (`JSON_SYNTAX`, `JSON_DUPLICATE_KEY`, ... docs/contract.md
 * "Error codes") keeps its code and gains the file's path in front of its
 * message, so a command reading two files (a receipt and a policy, a
 * manifest and a package.json) says which one is wrong.
 */
import { parseStrictJson, type JsonObject, type StrictJsonOptions } from "./canonical-json.js";
import { HermesPluginKitError, ReleaseContractError, type ReleaseContractErrorCode } from "./errors.js";

/**
 * Run `parse` (anything that parses or checks a file's bytes); a
 * `JSON_*` error it throws is thrown again with the same code and the message
 * `<path>: <message>`. Other errors pass unchanged.
 */
export function namingFile<T>(path: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof HermesPluginKitError && error.code.startsWith("JSON_") && !error.message.startsWith(`${path}: `)) {
      throw new ReleaseContractError(error.code as ReleaseContractErrorCode, `${path}: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

/**
 * {@link parseStrictJson} of a file's bytes, naming the file in a parse error.
 * @throws ReleaseContractError the strict parser's `JSON_*` codes, message prefixed with `path`.
 */
export function parseJsonFileBytes(path: string, bytes: Uint8Array | string, options?: StrictJsonOptions): JsonObject {
  return namingFile(path, () => parseStrictJson(bytes, options));
}
