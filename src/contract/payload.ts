/**
 * The `release-payload.sha256` checksum file of a release bundle and the
 * allow-list of payload paths (layer titles).
 *
 * Checks P2-P4 of docs/contract.md "Error codes", for one npm tarball: the checksum file lists exactly three paths,
 * `release-source.bundle`, `release-manifest.json` and
 * `dist/<name>-<version>.tgz`, each once, as `sha256sum` text-mode lines
 * (`<64 lowercase hex>` + two spaces + path), pure ASCII. Pure: no I/O.
 */
import { ReleaseContractError } from "./errors.js";
import {
  PAYLOAD_CHECKSUMS_FILE,
  RECEIPT_FILE,
  RELEASE_MANIFEST_FILE,
  SOURCE_BUNDLE_FILE,
} from "./constants.js";
import { describeValue, isNpmPackageName, isSha256Hex, isStableSemver, tarballFileName } from "./grammar.js";

/** One line of `release-payload.sha256`: a payload path and the SHA-256 (64 lowercase hex) of its bytes. */
export interface PayloadChecksumEntry {
  path: string;
  sha256: string;
}

/** Characters a checksum path may use (docs/contract.md). */
const CHECKSUM_PATH_RE = /^[A-Za-z0-9_./-]+$/;
/**
 * Universal line breaks as Python's `str.splitlines` knows them for ASCII
 * text (porting hazard 9.5): `\r\n`, `\n`, `\r`, VT, FF, FS, GS, RS.
 */
const LINE_BREAK_RE = /\r\n|[\n\r\v\f\x1c\x1d\x1e]/;
/** A tarball stem as `npm pack` names it: a lowercase npm name with `@scope/` turned into `scope-`. */
const TARBALL_TITLE_RE = /^dist\/([a-z0-9][a-z0-9._-]*)-((?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*))\.tgz$/;

/**
 * The three paths `release-payload.sha256` of `name@version` must list, in
 * the order the release pipeline hashes them: source bundle, tested
 * manifest, tarball.
 * @throws ReleaseContractError `SEMVER_INVALID`, `PACKAGE_NAME_INVALID`.
 */
export function bundleChecksumPaths(packageName: string, version: string): string[] {
  return [SOURCE_BUNDLE_FILE, RELEASE_MANIFEST_FILE, `dist/${tarballFileName(packageName, version)}`];
}

/**
 * The four layer titles of a release bundle of `name@version` (the three
 * static names plus the tarball), sorted by code point (the layout's layer order).
 * @throws ReleaseContractError `SEMVER_INVALID`, `PACKAGE_NAME_INVALID`.
 */
export function bundleLayerTitles(packageName: string, version: string): string[] {
  return [`dist/${tarballFileName(packageName, version)}`, RELEASE_MANIFEST_FILE, PAYLOAD_CHECKSUMS_FILE, SOURCE_BUNDLE_FILE].sort();
}

/**
 * Serialise checksum entries as `sha256sum` text-mode output: one
 * `<hex>  <path>\n` line per entry, in the given order.
 * @throws ReleaseContractError `PAYLOAD_CHECKSUM_LINE_INVALID` for a SHA-256
 *   that is not 64 lowercase hex or a path outside `[A-Za-z0-9_./-]`,
 *   `PAYLOAD_CHECKSUM_DUPLICATE` for a path listed twice; `POLICY_INVALID` when `entries` is not an array of
 *   `{ path, sha256 }` objects.
 */
export function formatPayloadChecksums(entries: readonly PayloadChecksumEntry[]): string {
  if (!Array.isArray(entries)) throw new ReleaseContractError("POLICY_INVALID", `formatPayloadChecksums(entries): entries must be an array of { path, sha256 }, found ${describeValue(entries)}`);
  const seen = new Set<string>();
  let out = "";
  for (const [at, entry] of (entries as readonly unknown[]).entries()) {
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      throw new ReleaseContractError("POLICY_INVALID", `formatPayloadChecksums(entries): entries[${at}] must be { path, sha256 }, found ${describeValue(entry)}`);
    }
    if (!isSha256Hex((entry as PayloadChecksumEntry).sha256) || typeof (entry as PayloadChecksumEntry).path !== "string" || !CHECKSUM_PATH_RE.test((entry as PayloadChecksumEntry).path)) {
      throw new ReleaseContractError(
        "PAYLOAD_CHECKSUM_LINE_INVALID",
        `payload checksum entry must be 64 lowercase hex and a path of [A-Za-z0-9_./-], found ${describeValue((entry as PayloadChecksumEntry).sha256)} ${describeValue((entry as PayloadChecksumEntry).path)}`,
      );
    }
    const { path, sha256 } = entry as PayloadChecksumEntry;
    if (seen.has(path)) {
      throw new ReleaseContractError("PAYLOAD_CHECKSUM_DUPLICATE", `duplicate payload checksum path: ${describeValue(path)}`);
    }
    seen.add(path);
    out += `${sha256}  ${path}\n`;
  }
  return out;
}

/**
 * Parse and check `release-payload.sha256` (check P2-P4, docs/contract.md).
 *
 * @param input the file's bytes (or text).
 * @param expectedPaths the exact path set the file must list (see {@link bundleChecksumPaths}).
 * @returns a map path -> SHA-256 (64 lowercase hex) with exactly `expectedPaths` as keys.
 * @throws ReleaseContractError
 *   `PAYLOAD_CHECKSUMS_NOT_ASCII` (a byte above 0x7F, P2);
 *   `PAYLOAD_CHECKSUM_LINE_INVALID` (a blank line, a line that is not
 *   `<64 lowercase hex>  <path>`, or an unsafe or unexpected path such as
 *   `../secret`, P3);
 *   `PAYLOAD_CHECKSUM_DUPLICATE` (a path listed twice, P3);
 *   `PAYLOAD_CHECKSUM_INCOMPLETE` (an expected path missing, P4);
 *   `POLICY_INVALID` (an `input` that is neither bytes nor text, an `expectedPaths` that is no array of strings).
 */
export function parsePayloadChecksums(input: Uint8Array | string, expectedPaths: readonly string[]): Map<string, string> {
  if (typeof input !== "string" && !(input instanceof Uint8Array)) {
    throw new ReleaseContractError("POLICY_INVALID", `parsePayloadChecksums(input, expectedPaths): input must be the file's bytes (a Uint8Array) or text, found ${describeValue(input)}`);
  }
  if (!Array.isArray(expectedPaths) || !expectedPaths.every((p) => typeof p === "string")) {
    throw new ReleaseContractError("POLICY_INVALID", `parsePayloadChecksums(input, expectedPaths): expectedPaths must be an array of paths (strings, as bundleChecksumPaths returns), found ${Array.isArray(expectedPaths) ? "an array holding a non-string" : describeValue(expectedPaths)}`);
  }
  let text: string;
  if (typeof input === "string") {
    text = input;
  } else {
    for (let i = 0; i < input.length; i += 1) {
      if ((input[i] as number) > 0x7f) {
        throw new ReleaseContractError("PAYLOAD_CHECKSUMS_NOT_ASCII", `cannot read release payload checksums: byte 0x${(input[i] as number).toString(16)} at offset ${i} is not ASCII`);
      }
    }
    text = Buffer.from(input).toString("latin1");
  }
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(text)) {
    throw new ReleaseContractError("PAYLOAD_CHECKSUMS_NOT_ASCII", "cannot read release payload checksums: the text is not ASCII");
  }
  const expected = new Set(expectedPaths);
  const lines = text.split(LINE_BREAK_RE);
  // A final line break ends the last line; it does not start a new one.
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const result = new Map<string, string>();
  for (const [index, line] of lines.entries()) {
    const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
    const path = match?.[2];
    if (match === null || path === undefined || !CHECKSUM_PATH_RE.test(path) || !expected.has(path)) {
      throw new ReleaseContractError(
        "PAYLOAD_CHECKSUM_LINE_INVALID",
        `unexpected, unsafe, or malformed payload checksum line ${index + 1}: ${describeValue(line)} (expected "<64 lowercase hex>  <path>" with a path among ${[...expected].join(", ")})`,
      );
    }
    if (result.has(path)) {
      throw new ReleaseContractError("PAYLOAD_CHECKSUM_DUPLICATE", `duplicate payload checksum path on line ${index + 1}: ${describeValue(path)}`);
    }
    result.set(path, match[1] as string);
  }
  const missing = [...expected].filter((p) => !result.has(p));
  if (missing.length > 0) {
    throw new ReleaseContractError("PAYLOAD_CHECKSUM_INCOMPLETE", `payload checksum inventory is incomplete: missing ${missing.join(", ")}`);
  }
  return result;
}

/**
 * The payload allow-list of {@link isAllowedPayloadTitle} in words, for messages: the four release
 * documents and the tarball path (with `packageName`'s own tarball stem when given).
 */
export function payloadAllowListText(packageName?: string): string {
  const stem = packageName !== undefined && isNpmPackageName(packageName) ? tarballFileName(packageName, "0.0.0").slice(0, -"-0.0.0.tgz".length) : "<name>";
  return `${RELEASE_MANIFEST_FILE}, ${SOURCE_BUNDLE_FILE}, ${PAYLOAD_CHECKSUMS_FILE}, ${RECEIPT_FILE}, or dist/${stem}-<MAJOR.MINOR.PATCH>.tgz (no other directory, no '..', no absolute path)`;
}

/**
 * True when `title` is an allowed payload path (docs/fetch.md, adapted):
 * one of `release-manifest.json`, `release-source.bundle`,
 * `release-payload.sha256`, `release-receipt.json`, or
 * `dist/<stem>-<semver>.tgz` with a stable SemVer (no leading zeros) and
 * `<stem>` an npm tarball stem (`[a-z0-9][a-z0-9._-]*`, so no `/`). When
 * `packageName` is given the stem must be that package's (`@scope/pkg` ->
 * `scope-pkg`). This allow-list is the whole path-safety rule: `../x`,
 * `/abs`, other directories and other names are refused. A `title` that is not a string is not allowed (false).
 * @throws ReleaseContractError `POLICY_INVALID` when `packageName` is given and is not a string.
 */
export function isAllowedPayloadTitle(title: unknown, packageName?: string): title is string {
  if (packageName !== undefined && typeof packageName !== "string") {
    throw new ReleaseContractError("POLICY_INVALID", `isAllowedPayloadTitle(title, packageName): packageName must be an npm package name (a string) or omitted, found ${describeValue(packageName)}`);
  }
  if (typeof title !== "string") return false;
  if (title === RELEASE_MANIFEST_FILE || title === SOURCE_BUNDLE_FILE || title === PAYLOAD_CHECKSUMS_FILE || title === RECEIPT_FILE) {
    return true;
  }
  const match = TARBALL_TITLE_RE.exec(title);
  if (match === null || !isStableSemver(match[2])) return false;
  if (packageName === undefined) return true;
  try {
    return title === `dist/${tarballFileName(packageName, match[2] as string)}`;
  } catch {
    return false;
  }
}
