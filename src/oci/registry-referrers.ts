/**
 * The referrers API of a registry (OCI Distribution Spec v1.1 "Listing
 * Referrers"): `GET /v2/<name>/referrers/<digest>` answers an OCI image index
 * of the manifests whose `subject` is that digest. A registry without the API
 * answers 404 (Debian's `docker-registry` 2.8): the caller then uses the
 * referrers tag schema (`src/oci/referrers.ts`).
 */
import { OCI_INDEX_MEDIA_TYPE } from "../contract/constants.js";
import { parseManifest } from "./manifest.js";
import { discard } from "./registry-http.js";
import type { RegistrySession } from "./registry-session.js";
import { MAX_TAG_PAGE_BYTES } from "./registry-tags.js";
import type { Descriptor } from "./target.js";

/**
 * The referrers of `subjectDigest`, or `undefined` when the registry has no referrers API (404).
 * The index is at most 4 MiB and parsed strictly (duplicate keys refused).
 * @throws OciError `OCI_MANIFEST_INVALID` (not an OCI index), `OCI_BODY_TOO_LARGE`, and the session's HTTP errors.
 */
export async function listReferrersApi(session: RegistrySession, subjectDigest: string): Promise<Descriptor[] | undefined> {
  const url = session.url(`referrers/${subjectDigest}`);
  const res = await session.exchange({ method: "GET", url, scope: "pull", headers: { accept: OCI_INDEX_MEDIA_TYPE } }, true);
  if (res.statusCode === 404) {
    discard(res);
    return undefined;
  }
  if (res.statusCode !== 200) throw await session.statusError(res, "GET", url, `referrers of ${subjectDigest}`);
  const body = await session.readSmallBody(res, MAX_TAG_PAGE_BYTES, "referrers index");
  return parseManifest(body, OCI_INDEX_MEDIA_TYPE).manifests;
}
