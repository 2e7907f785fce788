/**
 * The referrers API of a registry (OCI Distribution Spec v1.1 "Listing
 * Referrers"): `GET /v2/<name>/referrers/<digest>` answers an OCI image index
 * of the manifests whose `subject` is that digest, in pages when the registry
 * cannot answer all at once (`Link: <url>; rel="next"`, RFC 8288, followed on
 * the registry's origin only). A registry without the API answers 404
 * (Debian's `docker-registry` 2.8): the caller then uses the referrers tag
 * schema (`src/oci/referrers.ts`).
 */
import { OCI_INDEX_MEDIA_TYPE } from "../contract/constants.js";
import { OciError } from "./errors.js";
import { parseManifest } from "./manifest.js";
import { discard, headerValues } from "./registry-http.js";
import type { RegistrySession } from "./registry-session.js";
import { MAX_TAG_PAGE_BYTES, nextPageUrl } from "./registry-tags.js";
import type { Descriptor } from "./target.js";

/** At most this many referrers pages are read for one subject. */
export const MAX_REFERRERS_PAGES = 16;

/**
 * The referrers of `subjectDigest` (every page), or `undefined` when the
 * registry has no referrers API (404 on the first page). Each page is an OCI
 * index of at most 4 MiB, parsed strictly (duplicate keys refused).
 * @throws OciError `OCI_MANIFEST_INVALID` (a page that is not an OCI index), `OCI_BODY_TOO_LARGE`,
 *   `OCI_LINK_INVALID` (a malformed next link, or one to another origin), `OCI_PAGINATION_LOOP`
 *   (a page seen twice, more than {@link MAX_REFERRERS_PAGES} pages), and the session's HTTP errors.
 */
export async function listReferrersApi(session: RegistrySession, subjectDigest: string, maxPages = MAX_REFERRERS_PAGES): Promise<Descriptor[] | undefined> {
  const out: Descriptor[] = [];
  const visited = new Set<string>();
  let url: URL | undefined = session.url(`referrers/${subjectDigest}`);
  for (let page = 0; url !== undefined; page += 1) {
    if (page >= maxPages) throw new OciError("OCI_PAGINATION_LOOP", `the referrers of ${subjectDigest} span more than ${maxPages} pages`);
    if (visited.has(url.href)) throw new OciError("OCI_PAGINATION_LOOP", `referrers pagination returned to an earlier page (${url.pathname}${url.search})`);
    visited.add(url.href);
    const res = await session.exchange({ method: "GET", url, scope: "pull", headers: { accept: OCI_INDEX_MEDIA_TYPE } }, true);
    if (res.statusCode === 404 && page === 0) {
      discard(res);
      return undefined;
    }
    if (res.statusCode !== 200) throw await session.statusError(res, "GET", url, `referrers of ${subjectDigest}`);
    const link = headerValues(res, "link").join(", ");
    const body = await session.readSmallBody(res, MAX_TAG_PAGE_BYTES, "referrers index");
    out.push(...parseManifest(body, OCI_INDEX_MEDIA_TYPE).manifests);
    url = nextPageUrl(link === "" ? undefined : link, url, "referrers");
  }
  return out;
}
