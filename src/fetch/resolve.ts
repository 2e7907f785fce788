/**
 * `resolve`: the digest reference a tag points to now, for pinning
 * (docs/architecture.md, "Fetch: data flow": tags are discovery aids; `fetch` refuses them). The
 * privacy gate on read runs first, as for every read of a release repository.
 */
import { ReleaseContractError } from "../contract/errors.js";
import { hasBareUserinfo, isDiscoveryTag, looksLikeUrl, tagShapeProblem } from "../contract/grammar.js";
import { isDigestLike, parseRepository, urlRefused, LAYOUT_PREFIX, type Repository } from "../contract/reference.js";
import { requirePlainHttpAllowed } from "../oci/origin.js";
import { describeValue } from "../contract/grammar.js";
import type { DownloadOptions } from "./fetch.js";
import { DOWNLOAD_OPTION_KINDS, RESOLVE_OPTION_KEYS, requireKnownOptions, requireOptionKinds, requireOptionsObject, snapshotEntryOptions } from "./entry-options.js";

/** A parsed `<repository>:<tag>`. */
export interface TagReference {
  repository: Repository;
  tag: string;
}

/**
 * Parse `<repository>:<tag>` (`host[:port]/path:tag` or `oci-layout:<dir>:tag`):
 * the tag follows the last `:` after the last `/`.
 * @throws ReleaseContractError `TAG_REFERENCE_INVALID` (not a string, no tag, or a digest
 *   reference, which needs no resolving), `TAG_INVALID`, `REPOSITORY_INVALID`.
 */
export function parseTagReference(value: string): TagReference {
  if (typeof value !== "string") {
    throw new ReleaseContractError("TAG_REFERENCE_INVALID", `expected <repository>:<tag> (a string, e.g. ghcr.io/acme/plugin:v1.2.0), found ${describeValue(value)}`);
  }
  if (looksLikeUrl(value) || hasBareUserinfo(value)) throw urlRefused(value);
  // The last '@' starts a digest when an algorithm and ':' follow it; any other '@' is refused in a registry
  // repository (by parseRepository) and is part of the directory of an oci-layout store (/home/user@domain).
  const at = value.lastIndexOf("@");
  if (at >= 0 && isDigestLike(value.slice(at + 1))) {
    throw new ReleaseContractError(
      "TAG_REFERENCE_INVALID",
      `expected <repository>:<tag> (e.g. ghcr.io/acme/plugin:v1.2.0), found ${describeValue(value)}, already digest-pinned ('@' and a digest at the end); a digest reference needs no resolving: pass it to fetch --reference as it is`,
    );
  }
  if (at >= 0 && !value.startsWith(LAYOUT_PREFIX)) {
    // `repo@v1` for `repo:v1` has an exact fix; anything else with '@' is named without echoing more than describeValue does.
    const tagged = isDiscoveryTag(value.slice(at + 1)) && parsesAsRepository(value.slice(0, at));
    throw new ReleaseContractError(
      "TAG_REFERENCE_INVALID",
      `expected <repository>:<tag> (e.g. ghcr.io/acme/plugin:v1.2.0), found ${describeValue(value)}: in a registry reference '@' only comes before a digest, and a tag follows ':'${tagged ? `; fix: pass ${value.slice(0, at)}:${value.slice(at + 1)}` : ""}`,
    );
  }
  // A digest alone (`sha256:<hex>`) is no repository with a tag: it needs no resolving, only its repository.
  if (/^sha256:[0-9a-fA-F]{32,}$/.test(value)) {
    throw new ReleaseContractError(
      "TAG_REFERENCE_INVALID",
      `expected <repository>:<tag> (e.g. ghcr.io/acme/plugin:v1.2.0), found ${describeValue(value)}, a digest without its repository; a digest needs no resolving: fetch takes <repository>@${value.length === 71 ? value : "sha256:<64 hex>"}`,
    );
  }
  const slash = value.lastIndexOf("/");
  const colon = value.lastIndexOf(":");
  const minColon = value.startsWith(LAYOUT_PREFIX) ? LAYOUT_PREFIX.length : 0;
  if (colon <= slash || colon < minColon) {
    // A ':' before the last '/' (`repo:ta/g`): a tag holds no '/'; say the tag grammar.
    // (A registry's port colon comes before the first '/': that is no tag at all.)
    const tagColon = value.startsWith(LAYOUT_PREFIX) ? colon >= LAYOUT_PREFIX.length : colon > value.indexOf("/");
    const afterColon = tagColon ? value.slice(colon + 1) : undefined;
    throw new ReleaseContractError(
      "TAG_REFERENCE_INVALID",
      `expected <repository>:<tag> (e.g. ghcr.io/acme/plugin:v1.2.0), found ${describeValue(value)}${afterColon !== undefined && afterColon.includes("/") ? ` (${tagShapeProblem(afterColon)})` : ""}`,
    );
  }
  const tag = value.slice(colon + 1);
  if (!isDiscoveryTag(tag)) throw new ReleaseContractError("TAG_INVALID", `invalid tag ${describeValue(tag)} in ${describeValue(value)}: ${tagShapeProblem(tag)}`);
  return { repository: parseRepository(value.slice(0, colon)), tag };
}

function parsesAsRepository(value: string): boolean {
  try {
    return parseRepository(value).kind === "registry";
  } catch {
    return false;
  }
}

/** Options of {@link resolveTagReference}: the reading parts of {@link DownloadOptions}. */
export type ResolveOptions = Pick<DownloadOptions, "plainHttp" | "credentials" | "env" | "openTarget" | "requirePrivate">;

/**
 * Resolve `<repository>:<tag>` to `<repository>@sha256:<hex>` after the
 * privacy gate on read.
 * @returns the digest reference and the manifest descriptor's media type and size.
 * @throws the codes of {@link parseTagReference}; ReleaseContractError `POLICY_INVALID` (`options` given but not
 *   an object; both checked before any network read);
 *   OciError `OCI_PLAIN_HTTP_REFUSED`; PrivacyError `PRIVACY_*`; OciError `OCI_NOT_FOUND` (no such tag), ...
 */
export async function resolveTagReference(value: string, given: ResolveOptions = {}): Promise<{ reference: string; digest: string; mediaType: string; size: number; tag: string }> {
  const { repository, tag } = parseTagReference(value);
  requireOptionsObject(given, "resolveTagReference", "{ plainHttp?, credentials?, env?, openTarget?, requirePrivate? }");
  const options = snapshotEntryOptions(given, "resolveTagReference");
  requireKnownOptions(options, RESOLVE_OPTION_KEYS, "resolveTagReference");
  requireOptionKinds(options, DOWNLOAD_OPTION_KINDS, "resolveTagReference");
  const plainHttp = options.plainHttp === true;
  requirePlainHttpAllowed(repository, plainHttp);
  const env = options.env ?? process.env;
  if (options.requirePrivate !== undefined) await options.requirePrivate(repository, { plainHttp, env });
  else {
    const { requirePrivateForRead } = await import("./privacy.js");
    await requirePrivateForRead(repository, { plainHttp, env });
  }
  const target =
    options.openTarget !== undefined
      ? await options.openTarget(repository, { plainHttp, ...(options.credentials === undefined ? {} : { credentials: options.credentials }) })
      : await (await import("../oci/open.js")).openTarget(repository.repository, { plainHttp, ...(options.credentials === undefined ? {} : { credentials: options.credentials }) });
  const descriptor = await target.resolve(tag);
  return { reference: `${repository.repository}@${descriptor.digest}`, digest: descriptor.digest, mediaType: descriptor.mediaType, size: descriptor.size, tag };
}
