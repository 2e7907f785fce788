/**
 * The origin rules of every URL a server hands the product (redirect
 * `Location`, upload `Location`, Bearer token realm, tag-list `Link`):
 *
 * - plain HTTP only to loopback hosts and only when the caller allowed it
 *   (`plainHttp`); docs/architecture.md, "OCI transport";
 * - never a step from `https:` down to `http:` (a scheme downgrade);
 * - credentials (`Authorization`, and no `Cookie` is ever sent) only to the
 *   origin they belong to (RFC 6454 origin: scheme, host, port), so another
 *   origin a server points at gets none.
 */
import { plainHttpRefusal, type Repository } from "../contract/reference.js";
import { OciError } from "./errors.js";

/**
 * The plain-HTTP rule of a repository (`plainHttpRefusal`, src/contract/reference.ts;
 * docs/architecture.md, "OCI transport"), raised where a repository is parsed
 * or opened: `openTarget`, `RegistryTarget`, `OrasTarget`, fetch, resolve and
 * the privacy gate. `plainHttp` only for a loopback host.
 * @param repository a parsed repository (a layout store passes) or a registry host.
 * @throws OciError `OCI_PLAIN_HTTP_REFUSED`.
 */
export function requirePlainHttpAllowed(repository: Repository | string, plainHttp: boolean): void {
  const refused = plainHttpRefusal(repository, plainHttp);
  if (refused !== undefined) throw new OciError("OCI_PLAIN_HTTP_REFUSED", refused);
}

/** True when `url` may be contacted at all: `https:`, or `http:` to a loopback host with `plainHttp` (the same rule for every URL a server hands us). */
export function schemeAllowed(url: URL, plainHttp: boolean): boolean {
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && plainHttp && plainHttpRefusal(url.hostname, plainHttp) === undefined;
}

/**
 * Why the step from `from` to `to` (a URL a server handed us) is refused, or
 * undefined when it is allowed: not http(s), user info in the URL, plain
 * HTTP off loopback or without `plainHttp`, or `https:` -> `http:`.
 */
export function refusedHop(from: URL, to: URL, plainHttp: boolean): string | undefined {
  if (to.protocol !== "https:" && to.protocol !== "http:") return `${to.protocol} is not http(s)`;
  if (to.username !== "" || to.password !== "") return "the URL carries user info";
  if (from.protocol === "https:" && to.protocol === "http:") return `scheme downgrade from https to http (${to.host})`;
  if (!schemeAllowed(to, plainHttp)) return `plain HTTP to ${to.host} (allowed only for loopback hosts with plainHttp)`;
  return undefined;
}

/** True when `a` and `b` have the same origin (scheme, host, port). */
export function sameOrigin(a: URL, b: URL): boolean {
  return a.origin === b.origin;
}
