/**
 * Scalar grammars of the release contract (checks S1-S5, docs/contract.md):
 * stable SemVer, release class, Git SHA, OCI digest, discovery tag, tarball
 * name, and digest-pinned references.
 */
import { ReleaseContractError } from "./errors.js";

/** The three release classes. */
export type ReleaseClass = "major" | "minor" | "patch";

const SEMVER_RE = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;
const GIT_SHA_RE = /^[0-9a-f]{40}$/;
const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;
const HEX64_RE = /^[0-9a-f]{64}$/;
const TAG_RE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** A parsed stable SemVer. */
export interface SemVer {
  major: number;
  minor: number;
  patch: number;
}

export { editDistance, nearestName } from "./near-name.js";

/** True for `MAJOR.MINOR.PATCH` with no leading zeros, no pre-release, no build metadata. */
export function isStableSemver(value: unknown): value is string {
  return typeof value === "string" && SEMVER_RE.test(value);
}

/**
 * Parse a stable SemVer (check S1, docs/contract.md).
 * @throws ReleaseContractError `SEMVER_INVALID`.
 */
export function parseStableSemver(value: unknown): SemVer {
  if (!isStableSemver(value)) {
    throw new ReleaseContractError("SEMVER_INVALID", `invalid stable SemVer: ${describeValue(value)}`);
  }
  const [major, minor, patch] = value.split(".").map((p) => Number(p)) as [number, number, number];
  if (![major, minor, patch].every(Number.isSafeInteger)) {
    throw new ReleaseContractError("SEMVER_INVALID", `invalid stable SemVer: ${describeValue(value)} (component too large)`);
  }
  return { major, minor, patch };
}

/**
 * Release class of `previous -> next` when it is exactly one SemVer bump
 * (check S2, docs/contract.md): major `X+1.0.0`, minor `X.Y+1.0`, patch `X.Y.Z+1`.
 * @throws ReleaseContractError `SEMVER_INVALID` for a bad version,
 *   `RELEASE_NOT_ONE_BUMP` for equal, skipped, downgraded or two-level changes.
 */
export function releaseClassOf(previous: string, next: string): ReleaseClass {
  const p = parseStableSemver(previous);
  const n = parseStableSemver(next);
  if (n.major === p.major + 1 && n.minor === 0 && n.patch === 0) return "major";
  if (n.major === p.major && n.minor === p.minor + 1 && n.patch === 0) return "minor";
  if (n.major === p.major && n.minor === p.minor && n.patch === p.patch + 1) return "patch";
  throw new ReleaseContractError("RELEASE_NOT_ONE_BUMP", `release ${previous} -> ${next} is not one SemVer bump`);
}

/** Apply one bump of `cls` to `version`. */
export function bumpVersion(version: string, cls: ReleaseClass): string {
  const v = parseStableSemver(version);
  if (cls !== "major" && cls !== "minor" && cls !== "patch") throw new ReleaseContractError("SEMVER_INVALID", `a release class is "major", "minor" or "patch", found ${describeValue(cls)}`);
  if (cls === "major") return `${v.major + 1}.0.0`;
  if (cls === "minor") return `${v.major}.${v.minor + 1}.0`;
  return `${v.major}.${v.minor}.${v.patch + 1}`;
}

/** True for 40 lowercase hex characters. */
export function isGitSha(value: unknown): value is string {
  return typeof value === "string" && GIT_SHA_RE.test(value);
}

/**
 * Require a lowercase 40-character Git SHA (check S3, docs/contract.md).
 * @throws ReleaseContractError `GIT_SHA_INVALID` naming `label`.
 */
export function requireGitSha(value: unknown, label: string): string {
  if (!isGitSha(value)) {
    throw new ReleaseContractError("GIT_SHA_INVALID", `${label} must be a lowercase 40-character Git SHA, found ${describeValue(value)}`);
  }
  return value;
}

/** True for `sha256:` followed by 64 lowercase hex. */
export function isDigest(value: unknown): value is string {
  return typeof value === "string" && DIGEST_RE.test(value);
}

/** True for 64 lowercase hex. */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === "string" && HEX64_RE.test(value);
}

/**
 * Require an OCI digest `sha256:<64 lowercase hex>` (OCI image-spec `descriptor.md#digests`, restricted to sha256).
 * @throws ReleaseContractError `DIGEST_INVALID`.
 */
export function requireDigest(value: unknown, label = "digest"): string {
  if (!isDigest(value)) {
    throw new ReleaseContractError("DIGEST_INVALID", `${label} must be sha256:<64 lowercase hex>, found ${describeValue(value)}`);
  }
  return value;
}

/** True for an OCI discovery tag: 1-128 chars, first `[A-Za-z0-9_]`, rest `[A-Za-z0-9_.-]`. */
export function isDiscoveryTag(value: unknown): value is string {
  return typeof value === "string" && TAG_RE.test(value);
}

/** The tag grammar in words (OCI distribution-spec `[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`), for messages. */
export const TAG_GRAMMAR = "1-128 characters of A-Z a-z 0-9 _ . -, the first not . or -";

/**
 * Why `value` is not an OCI tag ({@link TAG_GRAMMAR}), in a few words for an error message: empty, too
 * long, a bad first character, or the first character outside the grammar and where it is (1-based).
 */
export function tagShapeProblem(value: unknown): string {
  if (typeof value !== "string") return `expected a tag (${TAG_GRAMMAR})`;
  if (value.length === 0) return `a tag is ${TAG_GRAMMAR}; this one is empty`;
  if (value.length > 128) return `a tag is ${TAG_GRAMMAR}; this one has ${value.length}`;
  if (!/^[A-Za-z0-9_]/.test(value)) return `a tag is ${TAG_GRAMMAR}; this one starts with ${JSON.stringify(value[0])}`;
  const bad = /[^A-Za-z0-9_.-]/u.exec(value);
  if (bad !== null) {
    const char = String.fromCodePoint(value.codePointAt(bad.index)!);
    const shown = /\s/.test(char) ? (char === " " ? "a space" : `whitespace ${JSON.stringify(char)}`) : JSON.stringify(char);
    return `a tag is ${TAG_GRAMMAR}; this one has ${shown} at character ${[...value.slice(0, bad.index)].length + 1}`;
  }
  return `a tag is ${TAG_GRAMMAR}`;
}

/**
 * Require an OCI discovery tag (check S5, docs/contract.md; OCI distribution-spec tag grammar).
 * @throws ReleaseContractError `TAG_INVALID`, saying which rule of {@link TAG_GRAMMAR} the value breaks.
 */
export function requireDiscoveryTag(value: unknown): string {
  if (!isDiscoveryTag(value)) throw new ReleaseContractError("TAG_INVALID", `invalid OCI tag ${describeValue(value)}: ${tagShapeProblem(value)}`);
  return value;
}

/**
 * File name of the npm tarball for `name@version`, as `npm pack` writes it:
 * a scoped name `@scope/pkg` becomes `scope-pkg-<version>.tgz`.
 * @throws ReleaseContractError `SEMVER_INVALID`, `PACKAGE_NAME_INVALID`.
 */
export function tarballFileName(name: string, version: string): string {
  parseStableSemver(version);
  if (!isNpmPackageName(name)) throw new ReleaseContractError("PACKAGE_NAME_INVALID", `invalid npm package name: ${describeValue(name)}`);
  const stem = name.startsWith("@") ? name.slice(1).replace("/", "-") : name;
  return `${stem}-${version}.tgz`;
}

const NPM_NAME_RE = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

/** The rule {@link isNpmPackageName} applies, for messages that refuse a name. */
export const NPM_PACKAGE_NAME_RULE = "lowercase letters, digits, '-', '.' and '_', starting with a letter or digit, optionally scoped as @scope/name, at most 214 characters";

/** True for a lowercase npm package name (optionally scoped), at most 214 characters ({@link NPM_PACKAGE_NAME_RULE}). */
export function isNpmPackageName(value: unknown): value is string {
  return typeof value === "string" && value.length <= 214 && NPM_NAME_RE.test(value);
}

const URL_SCHEME_RE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
// Everything up to the last `@` that a host and a path follow (a password may hold `@` or `/`).
const BARE_USERINFO_RE = /^(?!oci-layout:).*@(?=[^@]*\/)/s;

/** True when `value` starts like a URL (`scheme://`), which no repository or reference string does. */
export function looksLikeUrl(value: string): boolean {
  return URL_SCHEME_RE.test(value);
}

/**
 * `value` with the user-info of a leading URL (`scheme://user:password@`), or of a
 * scheme-less `user:password@host...`, replaced by `***` (everything before the last `@` that does not
 * start a digest and follows a `:` or precedes a host, whatever the password holds), so that credentials typed into a repository or
 * reference never reach error text or logs. An `oci-layout:` store is left as is.
 */
export function redactUrlUserinfo(value: string): string {
  // Leading whitespace (a quoting slip) does not hide a URL or its user-info.
  const lead = /^\s*/.exec(value)?.[0] ?? "";
  const rest = value.slice(lead.length);
  if (rest.startsWith(LAYOUT_STORE_PREFIX)) return value;
  const scheme = URL_SCHEME_PREFIX_RE.exec(rest)?.[0] ?? "";
  // Everything before the last `@` that does not start a digest (`@sha256:...`): a password may hold
  // `@`, `/`, `?`, `#` or `:`, and a host needs no path after it. Over-redacting a malformed value is safe.
  const body = rest.slice(scheme.length);
  for (let at = body.lastIndexOf("@"); at >= 0; at = at === 0 ? -1 : body.lastIndexOf("@", at - 1)) {
    const after = body.slice(at + 1);
    if (DIGEST_AFTER_AT_RE.test(after)) continue;
    // user-info is `user:password@` or `token@host`: a `:` before it, or a host after it (a `.`, a port or localhost).
    const before = body.slice(0, at);
    const userColon = /^[^/@]*:/.test(before) && !/^[^/@:]*:\d+(?:\/|$)/.test(before); // `user:` but not `host:port/`
    if (userColon || HOST_AFTER_AT_RE.test(after)) return `${lead}${scheme}***@${after}`;
  }
  return value;
}

const LAYOUT_STORE_PREFIX = "oci-layout:";
const URL_SCHEME_PREFIX_RE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
/** What follows a reference's digest separator: an algorithm name and `:` (OCI image-spec "Digests"). */
const DIGEST_AFTER_AT_RE = /^(?:sha256|sha384|sha512|blake3)(?:[+._-][A-Za-z0-9]+)*:/i;
/** A host at the start of `value`: a name with a `.`, one with a port, or localhost. */
const HOST_AFTER_AT_RE = /^(?:localhost\b|[^/\s]*[.:])/i;

/**
 * Whether `value` carries user-info before its host without a scheme
 * (`user:password@host/path...`): an `@` followed by a host and a `/`. The
 * digest separator of a reference (`host/path@sha256:...`) is not one, nor is
 * an `oci-layout:` store.
 */
export function hasBareUserinfo(value: string): boolean {
  return BARE_USERINFO_RE.test(value);
}

/**
 * Why `value` is not a digest of the form `sha256:<64 lowercase hex>` (OCI
 * image-spec "Digests", restricted to SHA-256), in a few words for an error message.
 */
export function digestShapeProblem(value: string): string {
  if (!value.startsWith("sha256:")) return "expected sha256:<64 lowercase hex characters>";
  const hex = value.slice("sha256:".length);
  if (/[^0-9a-fA-F]/.test(hex)) return "the part after sha256: must be hex characters 0-9 a-f";
  if (hex.length !== 64) return `expected 64 hex characters after sha256:, found ${hex.length}`;
  if (/[A-F]/.test(hex)) return "hex must be lowercase";
  return "expected sha256:<64 lowercase hex characters>";
}

/** Characters a terminal shows as nothing or as blank: controls, format characters (zero-width space, BOM, bidi marks), separators other than the space. */
const INVISIBLE_RE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}]/u;
const INVISIBLE_GLOBAL_RE = new RegExp(INVISIBLE_RE.source, "gu");

/** `\uXXXX` of each UTF-16 unit of `char` (a surrogate pair as two), as JSON and JavaScript read them. */
function unicodeEscape(char: string): string {
  return [...Array(char.length).keys()].map((i) => `\\u${char.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0")}`).join("");
}

/**
 * One character named for an error message: printable ASCII quoted (`"A"`), a space as `a space`,
 * anything else escaped so that it can be seen and told apart (`invisible \u200B`, `non-ASCII \u2010`).
 * @throws ReleaseContractError `POLICY_INVALID` when `char` is not a string of exactly one character (code point).
 */
export function describeCharacter(char: string): string {
  if (typeof char !== "string" || [...char].length !== 1) {
    throw new ReleaseContractError("POLICY_INVALID", `describeCharacter(char): char must be one character (a string of one code point), found ${char === "" ? "an empty string" : describeValue(char)}`);
  }
  if (char === " ") return "a space";
  if (INVISIBLE_RE.test(char)) return `invisible ${unicodeEscape(char)}`;
  if (/^[\x21-\x7e]$/.test(char)) return JSON.stringify(char);
  return `non-ASCII ${unicodeEscape(char)}`;
}

/** Short, safe rendering of an unexpected value for error messages (URL credentials redacted; invisible characters escaped as `\uXXXX`). */
export function describeValue(value: unknown): string {
  if (typeof value === "string") {
    const safe = redactUrlUserinfo(value);
    const shown = safe.length > 80 ? safe.slice(0, 77) + "..." : safe;
    return JSON.stringify(shown).replace(INVISIBLE_GLOBAL_RE, (char) => (char === " " ? char : unicodeEscape(char)));
  }
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}

/**
 * Up to `max` of `items` (each through {@link describeValue}'s length cap, without quotes) joined by
 * ", ", then "and N more": a listing in an error message stays one readable line however many
 * entries there are. Empty: "none".
 */
export function describeList(items: readonly string[], max = 10): string {
  if (items.length === 0) return "none";
  const shown = items.slice(0, max).map((item) => (item.length > 80 ? item.slice(0, 77) + "..." : item));
  return items.length > max ? `${shown.join(", ")}, and ${items.length - max} more` : shown.join(", ");
}

/**
 * `word` as a POSIX shell reads it back: as is when it holds only characters no shell splits or
 * expands (`[A-Za-z0-9_@%+=:,./-]`), else single-quoted (each `'` as `'\''`). For the commands the
 * product prints for a user to paste (next steps, resume and fix lines).
 */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
