/**
 * Tag listing of a registry repository (OCI Distribution Spec v1.1
 * "Listing Tags"): `GET /v2/<name>/tags/list?n=<page size>`, following
 * `Link: <url>; rel="next"` (RFC 8288) resolved against the request URL, on
 * the registry's origin only, refusing loops, oversized pages and ambiguity
 * (a tag listed twice, duplicate JSON keys).
 */
import { parseStrictJson } from "../contract/canonical-json.js";
import { describeValue } from "../contract/grammar.js";
import { requireOptionalString } from "./arguments.js";
import { OciError } from "./errors.js";
import { headerValues } from "./registry-http.js";
import type { RegistrySession } from "./registry-session.js";

/** Ceiling of one tag-list page (bytes). */
export const MAX_TAG_PAGE_BYTES = 4 * 1024 * 1024;

/**
 * Parse a pagination `Link` header (tag list, referrers) and return the
 * `rel="next"` target as given (not yet resolved), or undefined when there is no next link.
 * @param label what is paginated, for messages (default `tag list`).
 * @throws OciError `OCI_LINK_INVALID` when the header is not `<uri>; rel="next"` form,
 *   or names two different next pages; `OCI_ARGUMENT_INVALID` when `value` or `label` is neither a string nor absent.
 */
export function parseNextLink(value: string | undefined, label = "tag list"): string | undefined {
  requireOptionalString(value, "parseNextLink(value, label)", "value", "the Link header's value");
  requireOptionalString(label, "parseNextLink(value, label)", "label", "what is paginated, for messages");
  if (value === undefined || value.trim() === "") return undefined;
  const parts = value.split(/,(?=\s*<)/);
  let sawLink = false;
  const next = new Set<string>();
  for (const part of parts) {
    const m = /^\s*<([^>]*)>\s*((?:;\s*[^;]*)*)$/.exec(part);
    if (m === null) continue;
    sawLink = true;
    const params = (m[2] ?? "").split(";").map((p) => p.trim()).filter((p) => p.length > 0);
    const rel = params.find((p) => /^rel\s*=/i.test(p));
    if (rel === undefined) continue;
    const relValue = rel.replace(/^rel\s*=\s*/i, "").replace(/^"|"$/g, "");
    if (relValue.split(/\s+/).includes("next")) next.add(m[1] as string);
  }
  if (!sawLink) throw new OciError("OCI_LINK_INVALID", `${label} Link header is not of the form <uri>; rel="next": ${describeValue(value)}`);
  if (next.size > 1) throw new OciError("OCI_LINK_INVALID", `${label} Link header names ${next.size} different next pages`);
  return [...next][0];
}

/** The tags of one page body: strict JSON `{"name", "tags": [string...]}`. */
function pageTags(body: Buffer): string[] {
  let json: Record<string, unknown>;
  try {
    json = parseStrictJson(body, { rejectIntegralFloats: false });
  } catch {
    throw new OciError("OCI_RESPONSE_INVALID", `tag list page is not a JSON object (duplicate keys are refused)`);
  }
  const tags = json["tags"];
  if (tags !== null && tags !== undefined && !Array.isArray(tags)) {
    throw new OciError("OCI_RESPONSE_INVALID", `tag list page is not {"name", "tags": [...]}`);
  }
  const out: string[] = [];
  for (const t of (tags ?? []) as unknown[]) {
    if (typeof t !== "string") throw new OciError("OCI_RESPONSE_INVALID", `tag list holds a non-string tag`);
    out.push(t);
  }
  return out;
}

/**
 * The next page's URL from a `Link` header: resolved against `url`, on the same origin.
 * @throws OciError `OCI_LINK_INVALID` (malformed, not a URL, another origin).
 */
export function nextPageUrl(link: string | undefined, url: URL, label = "tag list"): URL | undefined {
  const next = parseNextLink(link, label);
  if (next === undefined) return undefined;
  let resolved: URL;
  try {
    resolved = new URL(next, url);
  } catch {
    throw new OciError("OCI_LINK_INVALID", `${label} Link target is not a URL`);
  }
  if (resolved.origin !== url.origin) throw new OciError("OCI_LINK_INVALID", `${label} Link leaves ${url.origin} for ${resolved.origin}`);
  return resolved;
}

/**
 * Every tag of the session's repository, in the registry's order.
 * @throws OciError `OCI_NOT_FOUND` (unknown repository), `OCI_PAGINATION_LOOP` (a page seen twice,
 *   more than `maxPages`), `OCI_LINK_INVALID`, `OCI_BODY_TOO_LARGE`, `OCI_RESPONSE_INVALID`
 *   (not JSON, a tag listed twice), and the HTTP errors.
 */
export async function listTags(session: RegistrySession, pageSize: number, maxPages: number): Promise<string[]> {
  const out: string[] = [];
  const seen = new Set<string>();
  const visited = new Set<string>();
  let url: URL | undefined = session.url("tags/list");
  url.searchParams.set("n", String(pageSize));
  for (let page = 0; url !== undefined; page += 1) {
    if (page >= maxPages) throw new OciError("OCI_PAGINATION_LOOP", `tag list has more than ${maxPages} pages`);
    if (visited.has(url.href)) throw new OciError("OCI_PAGINATION_LOOP", `tag list pagination returned to an earlier page (${url.pathname}${url.search})`);
    visited.add(url.href);
    const res = await session.send({ method: "GET", url, scope: "pull", headers: { accept: "application/json" } }, [200], "tag list");
    const link = headerValues(res, "link").join(", ");
    const body = await session.readSmallBody(res, MAX_TAG_PAGE_BYTES, "tag list page");
    for (const tag of pageTags(body)) {
      if (seen.has(tag)) throw new OciError("OCI_RESPONSE_INVALID", `tag list names ${describeValue(tag)} twice: ambiguous`);
      seen.add(tag);
      out.push(tag);
    }
    url = nextPageUrl(link === "" ? undefined : link, url);
  }
  return out;
}
