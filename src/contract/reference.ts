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
import { describeValue, digestShapeProblem, hasBareUserinfo, isDigest, looksLikeUrl, redactUrlUserinfo } from "./grammar.js";

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
    if (dir.length === 0 || dir.includes("\0") || dir.includes("@")) {
      throw new ReleaseContractError("REPOSITORY_INVALID", `invalid oci-layout repository: ${describeValue(value)} (expected oci-layout:<dir>)`);
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
    throw new ReleaseContractError("REPOSITORY_INVALID", `invalid repository: ${describeValue(value)} (expected host[:port]/path)`);
  }
  const registry = value.slice(0, slash);
  const path = value.slice(slash + 1);
  const hostMatch = HOST_RE.exec(registry);
  const looksLikeHost = registry.includes(".") || registry.includes(":") || registry === "localhost";
  if (hostMatch === null || !looksLikeHost || !PATH_RE.test(path) || path.length > 255) {
    throw new ReleaseContractError("REPOSITORY_INVALID", `invalid repository: ${describeValue(value)} (expected host[:port]/path with a lowercase path)`);
  }
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
      `registry reference must name the pinned repository ${JSON.stringify(pinnedRepository)}, found ${describeValue(repoPart)}`,
    );
  }
  const repository = parseRepository(repoPart);
  return { repository, digest, reference: `${repoPart}@${digest}` };
}

/** `<repository>@<digest>` after validating both parts. */
export function formatReference(repository: string, digest: string): string {
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
 */
export function plainHttpRefusal(repository: Repository | string, plainHttp: boolean): string | undefined {
  if (!plainHttp) return undefined;
  if (typeof repository !== "string" && repository.kind === "layout") return undefined;
  const host = typeof repository === "string" ? repository : repository.host;
  if (isLoopbackHost(host)) return undefined;
  return `plain HTTP is allowed only for loopback hosts, not ${host}; drop --plain-http (plainHttp) or use a loopback registry`;
}

/** True when `host` is a loopback host (`localhost`, `127.0.0.0/8`, `::1`). */
export function isLoopbackHost(host: string): boolean {
  const h = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (h === "localhost" || h === "::1") return true;
  return /^127\.(?:[0-9]{1,3})\.(?:[0-9]{1,3})\.(?:[0-9]{1,3})$/.test(h);
}
