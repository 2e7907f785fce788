/**
 * Repository strings and digest-pinned references (docs/fetch.md
 * "hermes-plugin-kit fetch"; OCI distribution-spec "Pulling manifests"):
 *
 * - registry repository `host[:port]/path` (OCI distribution-spec name grammar
 *   for `path`), reference `host[:port]/path@sha256:<64 hex>`;
 * - local OCI image layout store `oci-layout:<dir>`, reference
 *   `oci-layout:<dir>@sha256:<64 hex>`.
 *
 * Tags are discovery aids only: a `repo:tag` or `repo:tag@digest` reference is
 * refused, and so is a reference naming any repository but the pinned one.
 */
import { ReleaseContractError } from "./errors.js";
import { describeCharacter, describeValue, digestShapeProblem, hasBareUserinfo, isDigest, looksLikeUrl, redactUrlUserinfo } from "./grammar.js";

/** A parsed repository string. */
export type Repository =
  | {
      kind: "registry";
      /** The repository string as given, e.g. `ghcr.io/owner/name`. */
      repository: string;
      /** `host[:port]`, e.g. `127.0.0.1:5000`. */
      registry: string;
      /** Host without port. */
      host: string;
      /** Port, if given. */
      port?: number;
      /** Repository path inside the registry, e.g. `owner/name`. */
      path: string;
    }
  | {
      kind: "layout";
      /** The repository string as given, e.g. `oci-layout:/srv/store`. */
      repository: string;
      /** The layout directory (absolute or relative, as given). */
      dir: string;
    };

/** A parsed digest-pinned reference. */
export interface PinnedReference {
  repository: Repository;
  /** `sha256:<64 hex>`. */
  digest: string;
  /** The reference string, `<repository>@<digest>`. */
  reference: string;
}

export const LAYOUT_PREFIX = "oci-layout:";
const PATH_COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const PATH_RE = new RegExp(`^${PATH_COMPONENT}(?:/${PATH_COMPONENT})*$`);
const HOST_LABEL = "(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])";
const HOST_RE = new RegExp(`^(?:${HOST_LABEL}(?:\\.${HOST_LABEL})*|\\[[0-9A-Fa-f:.]+\\])(?::([0-9]{1,5}))?$`);

/**
 * The refusal of a URL where a repository or reference is expected: a
 * repository is `host[:port]/path`, and credentials never travel inside it.
 * @returns ReleaseContractError `REPOSITORY_INVALID`, the URL's user-info redacted.
 */
export function urlRefused(value: string): ReleaseContractError {
  return new ReleaseContractError(
    "REPOSITORY_INVALID",
    `expected host[:port]/path (e.g. ghcr.io/acme/plugin), found ${describeValue(value)}, a URL or a value with user:password@ in it: drop the scheme and any user:password@ (credentials come from REGISTRY_USERNAME/REGISTRY_PASSWORD, REGISTRY_TOKEN or --registry-config)`,
  );
}

/**
 * Whitespace around a pasted value (a quoting slip) is named as such, with the trimmed value as the fix,
 * not reported as a malformed repository or reference.
 * @throws ReleaseContractError `code`.
 */
function refuseSurroundingWhitespace(value: string, code: "REPOSITORY_INVALID" | "REFERENCE_NOT_PINNED", what: string, expected: string, hint: string): void {
  if (value === value.trim() || value.trim() === "") return;
  // A URL or user:password@ is the bigger problem, named as such (and its credentials never echoed).
  if (looksLikeUrl(value.trim()) || hasBareUserinfo(value.trim())) throw urlRefused(value.trim());
  throw new ReleaseContractError(code, `${what} ${describeValue(value)} has ${/^\s/.test(value) ? "leading" : "trailing"} whitespace; expected ${expected} with none; fix: pass ${JSON.stringify(redactUrlUserinfo(value.trim()))}${hint}`);
}

/** `:<tag>` at the end of a path component (OCI distribution-spec tag grammar): a tag, not part of a store directory. */
const LAYOUT_TAG_SUFFIX = /:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
/** A digest or a near miss (OCI image-spec "Digests": a registered algorithm, ':', the encoded part in any case). */
const DIGEST_LIKE = "(?:sha256|sha384|sha512|blake3)(?:[+._-][A-Za-z0-9]+)*:[A-Za-z0-9=_-]*";
/** `@<algorithm>:<encoded>` at the end of a path component: a digest, not part of a store directory. */
const LAYOUT_DIGEST_SUFFIX = new RegExp(`@${DIGEST_LIKE}$`, "i");
const DIGEST_LIKE_RE = new RegExp(`^${DIGEST_LIKE}$`, "i");

/**
 * True when `text` (what follows an '@') reads as a digest, well-formed or not: the last '@' of a
 * reference followed by one is its digest separator; any other '@' may belong to an oci-layout directory.
 */
export function isDigestLike(text: string): boolean {
  return DIGEST_LIKE_RE.test(text);
}

/** The repository path grammar in words (OCI distribution-spec `name`), for messages. */
const PATH_GRAMMAR = "a repository path is lowercase components of a-z 0-9 joined inside by '.', '_', '__' or '-' and separated by '/' (OCI distribution-spec name grammar)";
/** Dash look-alikes (U+2010-2015, U+2212 minus, U+FE63, U+FF0D) a word processor puts where '-' was typed. */
const DASH_LIKE_RE = /[\u2010-\u2015\u2212\uFE63\uFF0D]/gu;
const INVISIBLE_CHARS_RE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}]/gu;

/** 1-based character (code point) position of UTF-16 index `index` in `value`. */
function characterAt(value: string, index: number): number {
  return [...value.slice(0, index)].length + 1;
}

/**
 * Why the path of registry repository `value` (starting at `start`) breaks {@link PATH_GRAMMAR}: the first
 * offending character and its position, a trailing or doubled '/', or a component's separators; with
 * the repository that fixes it when the fix is mechanical (lowercase, drop a trailing '/', an invisible
 * character or a dash look-alike). Undefined when the path is valid.
 */
function repositoryPathProblem(value: string, start: number): ReleaseContractError | undefined {
  const path = value.slice(start);
  if (PATH_RE.test(path) && path.length <= 255) return undefined;
  let problem: string;
  const bad = /[^a-z0-9._/-]/u.exec(path);
  if (path === "") problem = "nothing after the host's '/'";
  else if (bad !== null) {
    const char = String.fromCodePoint(path.codePointAt(bad.index) as number);
    const kind = /[A-Z]/.test(char) ? `uppercase ${describeCharacter(char)}` : describeCharacter(char);
    const like = DASH_LIKE_RE.test(char)
      ? " (it looks like '-' but is not ASCII)"
      : char === "@"
        ? " ('@' only separates a reference's digest: <repository>@sha256:<64 hex>)"
        : char === ":"
          ? " (':' only separates a tag, or the port after the host)"
          : "";
    DASH_LIKE_RE.lastIndex = 0;
    problem = `${kind} at character ${characterAt(value, start + bad.index)}${like}`;
  } else if (path.length > 255) problem = `a path of ${path.length} characters (at most 255)`;
  else if (path.endsWith("/")) problem = "a trailing '/'";
  else if (path.startsWith("/") || path.includes("//")) problem = `an empty component ('/' twice, at character ${characterAt(value, start + (path.startsWith("/") ? 0 : path.indexOf("//") + 1))})`;
  else {
    const component = path.split("/").find((c) => !new RegExp(`^${PATH_COMPONENT}$`).test(c)) ?? path;
    const where = /^[._-]/.test(component) ? `starts with ${JSON.stringify(component[0])}` : /[._-]$/.test(component) ? `ends with ${JSON.stringify(component.at(-1))}` : `joins with ${JSON.stringify(/[._-]{2,}/.exec(component)?.[0] ?? "")}`;
    problem = `component ${JSON.stringify(component)} ${where} (a separator stands between letters or digits)`;
  }
  const fixed = path.normalize("NFC").replace(INVISIBLE_CHARS_RE, "").replace(DASH_LIKE_RE, "-").toLowerCase().replace(/\/{2,}/g, "/").replace(/^\/+|\/+$/g, "");
  const fix = fixed !== path && PATH_RE.test(fixed) && fixed.length <= 255 ? `; fix: pass ${redactUrlUserinfo(value.slice(0, start) + fixed)}` : "";
  return new ReleaseContractError("REPOSITORY_INVALID", `invalid repository ${describeValue(value)}: expected host[:port]/path where ${PATH_GRAMMAR}, found ${problem}${fix}`);
}

/**
 * Why `registry`, the part of `value` before its first '/', is not a registry host: a host name (DNS
 * labels of A-Z a-z 0-9 '-' separated by '.'), an [IPv6] address, or localhost, with an optional
 * :port; one without '.', ':' or localhost reads as a path (Docker Hub's `owner/name`).
 */
function hostRefused(value: string, registry: string, path: string, shaped: boolean): ReleaseContractError {
  const expected = "expected host[:port]/path, the host a name with a '.', an IP address, or localhost, with an optional :port (OCI distribution reference grammar)";
  if (shaped) {
    return new ReleaseContractError(
      "REPOSITORY_INVALID",
      `invalid repository ${describeValue(value)}: ${expected}, found ${describeValue(registry)} before the first '/', which has no '.', ':port' or localhost and so reads as part of a path; fix: put the registry host first, e.g. ghcr.io/${redactUrlUserinfo(registry.toLowerCase())}/${redactUrlUserinfo(path)}`,
    );
  }
  const port = /^(.*):([^:\]]*)$/.exec(registry);
  if (port !== null && !/^[0-9]{1,5}$/.test(port[2] as string) && HOST_RE.test(port[1] as string)) {
    return new ReleaseContractError("REPOSITORY_INVALID", `invalid repository ${describeValue(value)}: ${expected}, found port ${describeValue(port[2])} (a port is 1-65535)`);
  }
  const bad = /[^A-Za-z0-9.:[\]-]/u.exec(registry);
  const found = bad !== null ? `${describeCharacter(String.fromCodePoint(registry.codePointAt(bad.index) as number))} at character ${characterAt(value, bad.index)} of the host` : `host ${describeValue(registry)} (a label starts and ends with a letter or digit; labels are separated by one '.')`;
  return new ReleaseContractError("REPOSITORY_INVALID", `invalid repository ${describeValue(value)}: ${expected}, found ${found}`);
}

/**
 * Parse a repository string (`host[:port]/path` or `oci-layout:<dir>`).
 * The host part must look like a host (contain a `.` or `:` or be `localhost`),
 * as in the OCI distribution reference grammar, so `owner/name` alone is refused. A layout directory whose
 * last component ends in `:<tag>` is refused: that is how a layout reference names a tag.
 * @throws ReleaseContractError `REPOSITORY_INVALID` (a URL included: {@link urlRefused}; a layout tag).
 */
export function parseRepository(value: unknown): Repository {
  if (typeof value !== "string" || value.length === 0 || value.length > 4096) {
    throw new ReleaseContractError("REPOSITORY_INVALID", `invalid repository: ${describeValue(value)}`);
  }
  refuseSurroundingWhitespace(value, "REPOSITORY_INVALID", "repository", "host[:port]/path or oci-layout:<dir>", "");
  if (value.startsWith(LAYOUT_PREFIX)) {
    const dir = value.slice(LAYOUT_PREFIX.length);
    if (dir.length === 0 || dir.includes("\0")) {
      throw new ReleaseContractError(
        "REPOSITORY_INVALID",
        `invalid oci-layout repository: ${describeValue(value)}: expected oci-layout:<dir> (the store directory), found ${dir.length === 0 ? "no directory after oci-layout:" : "a NUL character in the directory"}; fix: pass oci-layout: followed by the store's path, e.g. oci-layout:./store`,
      );
    }
    // '@' may appear in the directory (a home like /home/user@domain): a reference's digest separator is
    // the last '@', always followed by a digest. A last component ending in '@<algorithm>:...' would read as one.
    const pinned = LAYOUT_DIGEST_SUFFIX.exec(dir.slice(dir.lastIndexOf("/") + 1));
    if (pinned !== null) {
      const store = value.slice(0, value.length - pinned[0].length);
      throw new ReleaseContractError(
        "REPOSITORY_INVALID",
        `invalid oci-layout repository: ${describeValue(value)} ends in a digest (${describeValue(pinned[0])}); expected the store directory alone (a reference is oci-layout:<dir>@sha256:<64 hex>, so a directory ending so would read as a pinned reference); fix: pass ${store}${store === LAYOUT_PREFIX ? "<dir>" : ""}, or rename a directory whose last component holds '@<algorithm>:'`,
      );
    }
    // `<dir>:<tag>` is how a layout reference names a tag (ORAS's spelling, and parseReference's): a store
    // directory whose last component ends so would make references no parser reads back as a digest pin.
    const tag = LAYOUT_TAG_SUFFIX.exec(dir.slice(dir.lastIndexOf("/") + 1));
    if (tag !== null) {
      const store = value.slice(0, value.length - tag[0].length);
      throw new ReleaseContractError(
        "REPOSITORY_INVALID",
        `invalid oci-layout repository: ${describeValue(value)} ends in a tag (${tag[0]}); a repository names the store directory alone; fix: pass ${store} (hermes-plugin-kit resolve --reference ${value} prints the digest reference the tag names), or rename a directory whose last component holds ':'`,
      );
    }
    return { kind: "layout", repository: value, dir };
  }
  if (looksLikeUrl(value) || hasBareUserinfo(value)) throw urlRefused(value);
  const slash = value.indexOf("/");
  if (slash <= 0) {
    throw new ReleaseContractError(
      "REPOSITORY_INVALID",
      `invalid repository: ${describeValue(value)}: expected host[:port]/path (e.g. ghcr.io/acme/plugin) or oci-layout:<dir>, found ${slash < 0 ? "no '/'" : "nothing before the first '/'"}; fix: write the registry host, '/', then the repository path`,
    );
  }
  const registry = value.slice(0, slash);
  const path = value.slice(slash + 1);
  const hostMatch = HOST_RE.exec(registry);
  const looksLikeHost = registry.includes(".") || registry.includes(":") || registry === "localhost";
  if (hostMatch === null || !looksLikeHost) throw hostRefused(value, registry, path, hostMatch !== null);
  const pathProblem = repositoryPathProblem(value, slash + 1);
  if (pathProblem !== undefined) throw pathProblem;
  const portText = hostMatch[1];
  const host = portText === undefined ? registry : registry.slice(0, registry.length - portText.length - 1);
  const result: Repository = { kind: "registry", repository: value, registry, host, path };
  if (portText !== undefined) {
    const port = Number(portText);
    if (port < 1 || port > 65535) throw new ReleaseContractError("REPOSITORY_INVALID", `invalid repository port in ${describeValue(value)}`);
    result.port = port;
  }
  return result;
}

/** True when `value` parses as a repository ({@link parseRepository}). */
function isRepository(value: string): boolean {
  try {
    parseRepository(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * Parse a digest-pinned reference and require it to name `pinnedRepository`
 * (when given). Reference S4, adapted to any pinned repository.
 *
 * @returns the repository, digest and canonical reference string.
 * @throws ReleaseContractError `REFERENCE_NOT_PINNED` (no `@sha256:<64 hex>`,
 *   or a tag in the reference), `REFERENCE_REPOSITORY_MISMATCH` (another
 *   repository than the pinned one), `REPOSITORY_INVALID`.
 */
export function parseReference(value: unknown, pinnedRepository?: string): PinnedReference {
  if (typeof value !== "string") {
    throw new ReleaseContractError("REFERENCE_NOT_PINNED", `registry reference must pin a SHA-256 digest, found ${describeValue(value)}`);
  }
  if (looksLikeUrl(value) || hasBareUserinfo(value)) throw urlRefused(value);
  refuseSurroundingWhitespace(value, "REFERENCE_NOT_PINNED", "registry reference", "<repository>@sha256:<64 hex>", " (check the quoting of the value you pasted)");
  const at = value.lastIndexOf("@");
  // A digest alone (`sha256:<hex>`, e.g. copied from a registry UI) names no repository to read it from.
  if (at < 0 && /^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}$/.test(value)) {
    const example = pinnedRepository !== undefined && isDigest(value) ? `${pinnedRepository}@${value}` : `<repository>@${isDigest(value) ? value : "sha256:<64 hex>"}`;
    throw new ReleaseContractError(
      "REFERENCE_NOT_PINNED",
      `registry reference must be <repository>@sha256:<64 hex>, found ${describeValue(value)}, a digest without its repository${isDigest(value) ? "" : ` (${digestShapeProblem(value)})`}; fix: pass ${example}`,
    );
  }
  if (at < 0) {
    // A tag (`repo:v1.2.0`, `oci-layout:<dir>:v1.2.0`) moves; resolve prints the digest it names now.
    const tagged = LAYOUT_TAG_SUFFIX.test(value.slice(value.lastIndexOf("/") + 1)) && !value.endsWith(":");
    // A bare repository names no artifact at all: say how to find the digest of one of its tags.
    const bare = !tagged && isRepository(value);
    const hint = tagged
      ? `, a tag (tags move; a release is pinned by digest); fix: run hermes-plugin-kit resolve --reference ${value} to print the digest reference it names now, check it, and pass that`
      : bare
        ? `, a repository with neither tag nor digest; fix: append the digest (${value}@sha256:<64 hex>), or run hermes-plugin-kit resolve --reference ${value}:<tag> to print the digest reference a tag names now`
        : "";
    throw new ReleaseContractError("REFERENCE_NOT_PINNED", `registry reference must pin a SHA-256 digest (<repository>@sha256:<64 hex>), found ${describeValue(value)}${hint}`);
  }
  const repoPart = value.slice(0, at);
  const digest = value.slice(at + 1);
  if (!isDigest(digest)) {
    // Uppercase hex (a copy from a tool that prints it so) has an exact fix: the same digest in lowercase.
    const text: string = value.slice(at + 1);
    const lowered = text.startsWith("sha256:") ? `sha256:${text.slice(7).toLowerCase()}` : undefined;
    const fix = lowered !== undefined && isDigest(lowered) ? `; fix: pass ${value.slice(0, at)}@${lowered}` : "";
    throw new ReleaseContractError("REFERENCE_NOT_PINNED", `registry reference must pin a SHA-256 digest, found ${describeValue(digest)} after '@' (${digestShapeProblem(digest)})${fix}`);
  }
  if (repoPart === "" || repoPart === LAYOUT_PREFIX) {
    throw new ReleaseContractError(
      "REPOSITORY_INVALID",
      `registry reference ${describeValue(value)} names no repository before '@${digest.slice(0, 15)}...': expected <repository>@sha256:<64 hex>; fix: pass ${pinnedRepository ?? "<repository>"}@${digest}`,
    );
  }
  {
    // Two digests (`<repo>@sha256:...@sha256:...`, a digest appended to a reference): named as such, not as a tag.
    const innerAt = repoPart.lastIndexOf("@");
    const inner = repoPart.slice(innerAt + 1);
    if (innerAt >= 0 && DIGEST_LIKE_RE.test(inner)) {
      const repo = redactUrlUserinfo(repoPart.slice(0, innerAt));
      const fix = inner === digest || !isDigest(inner) ? `pass ${repo}@${digest}` : `pass ${repo}@${digest} or ${repo}@${inner}, whichever release you mean (the two digests differ)`;
      throw new ReleaseContractError(
        "REFERENCE_NOT_PINNED",
        `registry reference ${describeValue(value)} carries two digests ('@${inner.slice(0, 15)}...' and then '@${digest.slice(0, 15)}...'); expected <repository>@sha256:<64 hex>, one '@' before one digest; fix: ${fix}`,
      );
    }
  }
  // A registry repository holds no '@': one before the digest is user-info (`user:pass@host@sha256:...`), never echoed.
  if (!repoPart.startsWith(LAYOUT_PREFIX) && repoPart.includes("@")) throw urlRefused(value);
  {
    // A tag before the digest (`repo:v1@sha256:...`, `oci-layout:<dir>:v1@sha256:...` as resolve reads it).
    const lastSlash = repoPart.lastIndexOf("/");
    const tail = repoPart.slice(Math.max(lastSlash + 1, repoPart.startsWith(LAYOUT_PREFIX) ? LAYOUT_PREFIX.length : 0));
    if (repoPart.startsWith(LAYOUT_PREFIX) ? LAYOUT_TAG_SUFFIX.test(tail) : tail.includes(":")) {
      throw new ReleaseContractError("REFERENCE_NOT_PINNED", `registry reference must not carry a tag: ${describeValue(value)}; fix: pass ${repoPart.slice(0, repoPart.lastIndexOf(":"))}@${digest} (the digest alone pins the release; hermes-plugin-kit resolve --reference ${repoPart} prints what the tag names now)`);
    }
  }
  if (pinnedRepository !== undefined && repoPart !== pinnedRepository) {
    throw new ReleaseContractError(
      "REFERENCE_REPOSITORY_MISMATCH",
      `registry reference must name the pinned repository ${describeValue(pinnedRepository)}, found ${describeValue(repoPart)}`,
    );
  }
  const repository = parseRepository(repoPart);
  return { repository, digest, reference: `${repoPart}@${digest}` };
}

/**
 * `<repository>@<digest>` after validating both parts.
 * @throws ReleaseContractError `POLICY_INVALID` when either is not a string; then the codes of {@link parseReference}.
 */
export function formatReference(repository: string, digest: string): string {
  if (typeof repository !== "string" || typeof digest !== "string") {
    throw new ReleaseContractError("POLICY_INVALID", `formatReference(repository, digest): both must be strings (a repository and sha256:<64 hex>), found ${describeValue(repository)} and ${describeValue(digest)}`);
  }
  return parseReference(`${repository}@${digest}`, repository).reference;
}

/** GitHub Packages' container registry host. */
export const GHCR_HOST = "ghcr.io";

/**
 * True when `repository` is on ghcr.io's host, with any port or none (`ghcr.io:443` and `ghcr.io:8443`
 * name the same registry: writing a port must not skip a rule meant for it). Pure.
 */
export function isGhcrHost(repository: Repository): boolean {
  return repository.kind === "registry" && repository.host.toLowerCase() === GHCR_HOST;
}

/**
 * True for ghcr.io's HTTPS origin only, written `ghcr.io` or `ghcr.io:443` (any case): where a GitHub
 * token may go as a registry credential (never to another port, which is another origin). Pure.
 */
export function isGhcrOrigin(repository: Repository): boolean {
  return isGhcrHost(repository) && repository.kind === "registry" && (repository.port === undefined || repository.port === 443);
}

/**
 * The one plain-HTTP rule (docs/architecture.md, "OCI transport"): plain HTTP
 * is allowed only when asked (`plainHttp`, the `--plain-http` flag) and only
 * for a loopback registry host; an `oci-layout:` store is not contacted over
 * HTTP at all. Pure; `requirePlainHttpAllowed` (src/oci/origin.ts) raises it
 * where a repository is parsed, and the transport applies it to every URL a
 * server hands back.
 * @returns why plain HTTP is refused for `repository` (a {@link Repository} or a host), or undefined when allowed.
 * @throws ReleaseContractError `POLICY_INVALID` when `plainHttp` is not a boolean or `repository` is neither a
 *   host string nor a {@link Repository} (from `parseRepository`).
 */
export function plainHttpRefusal(repository: Repository | string, plainHttp: boolean): string | undefined {
  if (typeof plainHttp !== "boolean") throw new ReleaseContractError("POLICY_INVALID", `plainHttpRefusal(repository, plainHttp): plainHttp must be a boolean, found ${describeValue(plainHttp)}`);
  const given: unknown = repository;
  const isRepository = given !== null && typeof given === "object" && ((given as { kind?: unknown }).kind === "layout" || ((given as { kind?: unknown }).kind === "registry" && typeof (given as { host?: unknown }).host === "string"));
  if (typeof given !== "string" && !isRepository) {
    throw new ReleaseContractError("POLICY_INVALID", `plainHttpRefusal(repository, plainHttp): repository must be a host (a string) or a Repository from parseRepository, found ${describeValue(given)}`);
  }
  if (!plainHttp) return undefined;
  if (typeof repository !== "string" && repository.kind === "layout") return undefined;
  const host = typeof repository === "string" ? repository : repository.host;
  if (isLoopbackHost(host)) return undefined;
  return `plain HTTP is allowed only for loopback hosts, not ${host}; drop --plain-http (plainHttp) or use a loopback registry`;
}

/**
 * True when `host` is a loopback host (`localhost`, `127.0.0.0/8`, `::1`, `[::1]`).
 * @throws ReleaseContractError `POLICY_INVALID` when `host` is not a string.
 */
export function isLoopbackHost(host: string): boolean {
  if (typeof host !== "string") throw new ReleaseContractError("POLICY_INVALID", `isLoopbackHost(host): host must be a host name or address (a string), found ${describeValue(host)}`);
  const h = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (h === "localhost" || h === "::1") return true;
  return /^127\.(?:[0-9]{1,3})\.(?:[0-9]{1,3})\.(?:[0-9]{1,3})$/.test(h);
}
