/**
 * `RegistryTarget`: an OCI Distribution Spec v1.1 client (pull, push, tag
 * listing) over HTTP(S) with `node:http`/`node:https`, implementing {@link Target}.
 *
 * The pieces: `registry-session.ts` (auth, retries, redirects, the origin rules
 * for credentials), `registry-upload.ts` (blob uploads within the registry's
 * request-size limits, confirmed by `HEAD`), `registry-tags.ts` (tag listing).
 * This module owns the Target methods:
 *
 * - Reads verify size and SHA-256 while streaming; a manifest over 1 MiB is
 *   refused before it is read whole; a `Docker-Content-Digest` that disagrees
 *   with the computed digest is `OCI_DIGEST_MISMATCH`.
 * - Every push (blob or manifest) is confirmed with `HEAD` (size and digest)
 *   before it counts as done.
 */
import type { Readable } from "node:stream";
import { MAX_MANIFEST_BYTES, OCI_INDEX_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE } from "../contract/constants.js";
import { describeValue, isDigest, isDiscoveryTag, tagShapeProblem } from "../contract/grammar.js";
import { parseRepository } from "../contract/reference.js";
import {
  DOCKER_MANIFEST_LIST_MEDIA_TYPE,
  DOCKER_MANIFEST_MEDIA_TYPE,
  DescriptorVerifier,
  bufferStream,
  checkDescriptor,
  digestOf,
  isManifestMediaType,
  readAllBounded,
  verifiesDescriptor,
} from "./descriptor.js";
import { requireOptionalBoolean, requireOptionalFunction, requireOptionalNumber, requireOptionalSignal, requireOptions, requireOptionsObject, requireStringArgument, requireStringArray } from "./arguments.js";
import { OciError, isOciError, manifestTooLarge } from "./errors.js";
import { parseManifest } from "./manifest.js";
import { requirePlainHttpAllowed } from "./origin.js";
import { requireOptionalCredentials, type RegistryCredentials } from "./registry-auth.js";
import { downloadBlob, singleValue } from "./blob-download.js";
import { BlobFile } from "./blob-file.js";
import { BlobRelay } from "./blob-relay.js";
import { bodyError, discard, headerValue } from "./registry-http.js";
import { RegistrySession } from "./registry-session.js";
import { listReferrersApi } from "./registry-referrers.js";
import { listTags } from "./registry-tags.js";
import { confirmStored, uploadBlob, type UploadLimits } from "./registry-upload.js";
import { sleep, type RetryPolicy } from "./retry.js";
import type { Descriptor, Target } from "./target.js";

/** Default largest upload request body, and chunk size above it (bytes): 64 MiB. */
export const DEFAULT_CHUNK_SIZE = 64 * 1024 * 1024;

/** Options of {@link RegistryTarget}. */
export interface RegistryTargetOptions {
  /** `host[:port]` of the registry. */
  registry: string;
  /** Repository path inside the registry, e.g. `owner/name`. */
  repository: string;
  /** Use `http://` (only for loopback hosts). Default false. */
  plainHttp?: boolean;
  /** Sent only to the registry's own origin (and to a token realm there, or one in `trustedTokenRealms`). */
  credentials?: RegistryCredentials;
  /** Time to wait for response headers, per request (ms). Default 30 000. */
  timeoutMs?: number;
  /** Longest pause between body bytes (ms). Default 60 000. */
  bodyTimeoutMs?: number;
  /** Retry budget (see `retry.ts`): default 5 attempts, 200 ms doubling, at most 10 s per wait. */
  retry?: Partial<RetryPolicy>;
  /**
   * Largest upload request body (bytes): blobs above it go up in `PATCH`
   * chunks of this size (at least the registry's `OCI-Chunk-Min-Length`, at
   * least 64 KiB). Default 64 MiB. A registry refusing a smaller body lowers it further.
   */
  chunkSize?: number;
  /** PEM certificate(s) trusted in addition to Node's root store, for a registry with a private CA. */
  ca?: string | Buffer;
  /** Most tag-list pages followed. Default 1000. */
  maxTagPages?: number;
  /** Tags asked for per tag-list page (`?n=`). Default 1000. */
  tagPageSize?: number;
  /**
   * Origins of Bearer token realms (e.g. `https://auth.docker.io`) that may
   * receive the credentials although they are not the registry's origin.
   * Default none: such a realm gets an anonymous token request.
   */
  trustedTokenRealms?: readonly string[];
}

/** The tuning keys of {@link RegistryTargetOptions} (all but `registry`, `repository`, `plainHttp`, `credentials`). */
export const REGISTRY_TUNING_KEYS = ["timeoutMs", "bodyTimeoutMs", "retry", "chunkSize", "ca", "maxTagPages", "tagPageSize", "trustedTokenRealms"] as const;

/**
 * Check the tuning options of a registry target (`name` is where they sit, `options` or `options.registry`): known
 * keys only, finite numbers, a retry object of {@link RetryPolicy} keys, `ca` a string or bytes, token realms
 * absolute URLs. `chunkSize` keeps its own check ({@link checkChunkSize}).
 * @throws OciError `OCI_ARGUMENT_INVALID`.
 */
export function requireRegistryTuning(options: Record<string, unknown>, call: string, name: string): void {
  requireOptionalNumber(options["timeoutMs"], call, `${name}.timeoutMs`, "milliseconds", 1);
  requireOptionalNumber(options["bodyTimeoutMs"], call, `${name}.bodyTimeoutMs`, "milliseconds", 1);
  requireOptionalNumber(options["maxTagPages"], call, `${name}.maxTagPages`, "pages", 1);
  requireOptionalNumber(options["tagPageSize"], call, `${name}.tagPageSize`, "tags", 1);
  const retry = options["retry"];
  requireOptions(retry, call, ["maxAttempts", "baseDelayMs", "maxDelayMs"], `${name}.retry`);
  if (retry !== undefined) {
    requireOptionalNumber(retry["maxAttempts"], call, `${name}.retry.maxAttempts`, "attempts", 1);
    requireOptionalNumber(retry["baseDelayMs"], call, `${name}.retry.baseDelayMs`, "milliseconds");
    requireOptionalNumber(retry["maxDelayMs"], call, `${name}.retry.maxDelayMs`, "milliseconds");
  }
  const ca = options["ca"];
  if (ca !== undefined && typeof ca !== "string" && !(ca instanceof Uint8Array)) {
    throw new OciError("OCI_ARGUMENT_INVALID", `${call}: ${name}.ca must be PEM certificate text (a string or Buffer) or absent, found ${describeValue(ca)}`);
  }
  const realms = options["trustedTokenRealms"];
  if (realms === undefined) return;
  requireStringArray(realms, call, `${name}.trustedTokenRealms`, "token realm origins");
  realms.forEach((realm, at) => {
    if (!URL.canParse(realm)) throw new OciError("OCI_ARGUMENT_INVALID", `${call}: ${name}.trustedTokenRealms[${at}] must be an absolute URL such as "https://auth.docker.io", found ${describeValue(realm)}`);
  });
}

/** Attempts of a manifest PUT refused with `MANIFEST_BLOB_UNKNOWN` while its blobs are present. */
const MANIFEST_PUT_ATTEMPTS = 4;
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const MANIFEST_ACCEPT = [OCI_MANIFEST_MEDIA_TYPE, OCI_INDEX_MEDIA_TYPE, DOCKER_MANIFEST_MEDIA_TYPE, DOCKER_MANIFEST_LIST_MEDIA_TYPE].join(", ");

/**
 * Check a configured chunk size: an integer number of bytes, at least 64 KiB.
 * @throws OciError `OCI_CHUNK_SIZE_INVALID`.
 */
export function checkChunkSize(value: number): number {
  if (!Number.isSafeInteger(value) || value < 64 * 1024) {
    throw new OciError("OCI_CHUNK_SIZE_INVALID", `upload chunk size must be an integer of at least 65536 bytes (64 KiB), found ${describeValue(value)}`);
  }
  return value;
}

/** An OCI distribution-spec registry repository as a {@link Target}. */
export class RegistryTarget implements Target {
  /** `host[:port]`. */
  readonly registry: string;
  /** Repository path. */
  readonly repository: string;
  readonly plainHttp: boolean;
  private readonly session: RegistrySession;
  private readonly limits: UploadLimits;
  private readonly maxTagPages: number;
  private readonly tagPageSize: number;
  private readonly manifestCache = new Map<string, Buffer>();

  /**
   * @throws OciError `OCI_PLAIN_HTTP_REFUSED` for `plainHttp` with a non-loopback host,
   *   `OCI_REPOSITORY_INVALID` when `registry/repository` is not a valid `host[:port]/path`,
   *   `OCI_CHUNK_SIZE_INVALID` for a chunk size below 64 KiB, `OCI_ARGUMENT_INVALID` for options that are not
   *   {@link RegistryTargetOptions} (not an object `{ registry, repository, ... }`, e.g. a number or nothing; an
   *   unknown key; `registry` or `repository` not a non-empty string; a number that is not finite; credentials
   *   of another shape), checked before the repository is parsed.
   */
  constructor(options: RegistryTargetOptions) {
    const call = "new RegistryTarget(options)";
    requireOptionsObject(options, call, ["registry", "repository", "plainHttp", "credentials", ...REGISTRY_TUNING_KEYS], ["registry", "repository"]);
    requireStringArgument(options.registry, call, "options.registry", "the registry's host[:port]");
    requireStringArgument(options.repository, call, "options.repository", "the repository path");
    requireOptionalBoolean(options.plainHttp, call, "options.plainHttp");
    requireOptionalCredentials(options.credentials, call, "options.credentials");
    requireRegistryTuning(options as unknown as Record<string, unknown>, call, "options");
    const whole = `${options.registry}/${options.repository}`;
    let parsed;
    try {
      parsed = parseRepository(whole);
    } catch {
      throw new OciError("OCI_REPOSITORY_INVALID", `invalid registry repository ${describeValue(whole)}`);
    }
    if (parsed.kind !== "registry" || parsed.registry !== options.registry || parsed.path !== options.repository) {
      throw new OciError("OCI_REPOSITORY_INVALID", `invalid registry repository ${describeValue(whole)}`);
    }
    this.registry = options.registry;
    this.repository = options.repository;
    this.plainHttp = options.plainHttp === true;
    requirePlainHttpAllowed(parsed.host, this.plainHttp);
    const base = new URL(`${this.plainHttp ? "http" : "https"}://${options.registry}`);
    this.session = new RegistrySession({
      base,
      repository: options.repository,
      plainHttp: this.plainHttp,
      credentials: options.credentials,
      ca: options.ca,
      retry: options.retry,
      timeoutMs: options.timeoutMs,
      bodyTimeoutMs: options.bodyTimeoutMs,
      trustedTokenRealms: options.trustedTokenRealms,
    });
    this.limits = { chunkSize: checkChunkSize(options.chunkSize ?? DEFAULT_CHUNK_SIZE) };
    this.maxTagPages = options.maxTagPages ?? 1000;
    this.tagPageSize = options.tagPageSize ?? 1000;
  }

  /** `host[:port]/path`. */
  get reference(): string {
    return `${this.registry}/${this.repository}`;
  }

  /** Close pooled connections. */
  async close(): Promise<void> {
    this.session.close();
  }

  /**
   * `GET /v2/`: check the registry answers and authenticate (no scope).
   * @throws OciError `OCI_AUTH_FAILED`, `OCI_HTTP_ERROR`, `OCI_RETRY_EXHAUSTED`, `OCI_RATE_LIMITED`, `OCI_TIMEOUT`.
   */
  async ping(): Promise<void> {
    const res = await this.session.send({ method: "GET", url: new URL("/v2/", this.session.base), scope: "none" }, [200], "registry ping");
    discard(res);
  }

  /**
   * GET a manifest by tag or digest (OCI `Accept`), bounded to 1 MiB, digest
   * computed from the bytes and checked against `Docker-Content-Digest` and a
   * requested digest.
   */
  private async getManifest(reference: string, signal?: AbortSignal): Promise<{ desc: Descriptor; bytes: Buffer }> {
    const url = this.session.url(`manifests/${reference}`);
    const res = await this.session.send({ method: "GET", url, scope: "pull", headers: { accept: MANIFEST_ACCEPT }, signal }, [200], `manifest ${reference}`);
    const declared = Number(headerValue(res, "content-length"));
    if (Number.isFinite(declared) && declared > MAX_MANIFEST_BYTES) {
      discard(res);
      throw manifestTooLarge(`OCI manifest ${reference}`, `${declared} bytes (Content-Length)`);
    }
    const claimed = headerValue(res, "docker-content-digest");
    const contentType = (headerValue(res, "content-type") ?? "").split(";")[0]?.trim() ?? "";
    let bytes: Buffer;
    try {
      bytes = await readAllBounded(res.body, MAX_MANIFEST_BYTES, `OCI manifest ${reference}`, "OCI_MANIFEST_TOO_LARGE");
    } catch (error) {
      if (isOciError(error, "OCI_MANIFEST_TOO_LARGE")) throw manifestTooLarge(`OCI manifest ${reference}`, `more than ${MAX_MANIFEST_BYTES} bytes (read without a Content-Length)`);
      throw bodyError(error, `OCI manifest ${reference}`);
    }
    if (Number.isFinite(declared) && declared !== bytes.length) {
      throw new OciError("OCI_SIZE_MISMATCH", `OCI manifest ${reference}: Content-Length ${declared}, received ${bytes.length}`);
    }
    const digest = digestOf(bytes);
    if (claimed !== undefined && claimed !== digest) {
      throw new OciError("OCI_DIGEST_MISMATCH", `OCI manifest ${reference}: Docker-Content-Digest ${describeValue(claimed)} disagrees with the computed ${digest}`);
    }
    if (isDigest(reference) && reference !== digest) {
      throw new OciError("OCI_DIGEST_MISMATCH", `OCI manifest: expected digest ${reference}, computed ${digest}`);
    }
    const parsed = parseManifest(bytes, isManifestMediaType(contentType) ? contentType : undefined);
    if (!isManifestMediaType(parsed.mediaType)) {
      throw new OciError("OCI_MANIFEST_INVALID", `OCI manifest ${reference}: unsupported media type ${describeValue(parsed.mediaType)}`);
    }
    this.remember(digest, bytes);
    return { desc: { mediaType: parsed.mediaType, digest, size: bytes.length }, bytes };
  }

  private remember(digest: string, bytes: Buffer): void {
    this.manifestCache.delete(digest);
    this.manifestCache.set(digest, bytes);
    while (this.manifestCache.size > 16) {
      const oldest = this.manifestCache.keys().next().value as string;
      this.manifestCache.delete(oldest);
    }
  }

  /**
   * Resolve a tag or digest to the manifest descriptor `{mediaType, digest, size}`,
   * the digest computed from the fetched bytes (must equal `Docker-Content-Digest`).
   * @throws OciError `OCI_NOT_FOUND`, `OCI_TAG_INVALID`, `OCI_DIGEST_MISMATCH`, `OCI_MANIFEST_TOO_LARGE`,
   *   `OCI_MANIFEST_INVALID`, `OCI_AUTH_FAILED`, `OCI_RETRY_EXHAUSTED`, `OCI_RATE_LIMITED`, `OCI_TIMEOUT`, `OCI_HTTP_ERROR`;
   *   InterruptedError `INTERRUPTED` (`signal` aborted: the request is destroyed).
   */
  async resolve(tagOrDigest: string, signal?: AbortSignal): Promise<Descriptor> {
    if (!isDigest(tagOrDigest) && !isDiscoveryTag(tagOrDigest)) {
      throw new OciError("OCI_TAG_INVALID", `invalid OCI tag or digest ${describeValue(tagOrDigest)}: expected sha256:<64 lowercase hex> or a tag (${tagShapeProblem(tagOrDigest)})`);
    }
    return (await this.getManifest(tagOrDigest, signal)).desc;
  }

  /**
   * A verifying stream of a manifest or blob. Manifests above 1 MiB are refused
   * before the request; a `Content-Length` other than `desc.size` fails before
   * reading; the body is verified while it streams (more than `size` bytes stop
   * the read at `size + 1`; early close -> `OCI_SIZE_MISMATCH`).
   * @throws OciError `OCI_NOT_FOUND`, `OCI_MANIFEST_TOO_LARGE`, `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`,
   *   `OCI_REDIRECT_REFUSED`, `OCI_AUTH_FAILED`, `OCI_RETRY_EXHAUSTED`, `OCI_RATE_LIMITED`, `OCI_TIMEOUT`, `OCI_HTTP_ERROR`;
   *   InterruptedError `INTERRUPTED` (`signal` aborted before the answer; after it, the body is destroyed and the
   *   stream fails).
   */
  async fetch(desc: Descriptor, signal?: AbortSignal): Promise<Readable> {
    checkDescriptor(desc);
    const manifest = isManifestMediaType(desc.mediaType);
    const label = `OCI ${manifest ? "manifest" : "blob"} ${desc.digest}`;
    if (manifest) {
      if (desc.size > MAX_MANIFEST_BYTES) {
        throw manifestTooLarge(`OCI manifest ${desc.digest}`, `${desc.size} bytes`);
      }
      const cached = this.manifestCache.get(desc.digest);
      const bytes = cached ?? (await this.getManifest(desc.digest, signal)).bytes;
      const verifier = new DescriptorVerifier(desc, label);
      bufferStream(bytes).pipe(verifier);
      return verifier;
    }
    const url = this.session.url(`blobs/${desc.digest}`);
    const res = await this.session.send({ method: "GET", url, scope: "pull", followRedirects: true, signal }, [200], label);
    const declared = headerValue(res, "content-length");
    if (declared !== undefined && Number(declared) !== desc.size) {
      discard(res);
      throw new OciError("OCI_SIZE_MISMATCH", `${label}: expected ${desc.size} bytes, registry announced ${describeValue(declared)}`);
    }
    const claimed = headerValue(res, "docker-content-digest");
    if (claimed !== undefined && claimed !== desc.digest) {
      discard(res);
      throw new OciError("OCI_DIGEST_MISMATCH", `${label}: Docker-Content-Digest ${describeValue(claimed)} disagrees with the expected digest`);
    }
    const verifier = new DescriptorVerifier(desc, label);
    const body = res.body;
    body.on("error", (error) => verifier.destroy(bodyError(error, label)));
    verifier.on("error", () => body.destroy());
    verifier.on("close", () => {
      if (!body.destroyed && !body.readableEnded) body.destroy();
    });
    body.pipe(verifier);
    return verifier;
  }

  /**
   * The fast path of `fetchBlobToFile` (see `Target.fetchToFile` and
   * `blob-download.ts`): the blob `GET` on a connection of its own, read into
   * a fixed buffer, hashed and written without per-read allocations;
   * redirects followed by the origin rules (credentials only to the
   * registry's origin). Anything but the plain answer returns false, nothing
   * written, so the general client takes over.
   * @throws OciError `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`, `OCI_TIMEOUT`, `OCI_REDIRECT_REFUSED`, `OCI_RESPONSE_INVALID`;
   *   InterruptedError `INTERRUPTED` (`signal` aborted: the connection is closed once no write is in flight);
   *   `OCI_ARGUMENT_INVALID` (`fd` not a file descriptor, `onProgress` not a function, `signal` not an AbortSignal).
   */
  async fetchToFile(desc: Descriptor, fd: number, onProgress?: (bytes: number, total: number) => void, signal?: AbortSignal): Promise<boolean> {
    checkDescriptor(desc);
    const call = "RegistryTarget.fetchToFile(desc, fd, onProgress, signal)";
    if (typeof fd !== "number" || !Number.isSafeInteger(fd) || fd < 0) throw new OciError("OCI_ARGUMENT_INVALID", `${call}: fd must be an open file descriptor (a non-negative integer), found ${describeValue(fd)}`);
    requireOptionalFunction(onProgress, call, "onProgress", "(bytes, total) => void");
    requireOptionalSignal(signal, call, "signal");
    if (isManifestMediaType(desc.mediaType)) return false;
    let url = this.session.url(`blobs/${desc.digest}`);
    for (let hop = 1; ; hop += 1) {
      const headers = await this.session.requestHeaders(url, "pull");
      const request = { url, headers, ca: this.session.tlsCa, ...this.session.timeouts };
      const answer = await downloadBlob(request, desc, fd, onProgress, signal);
      if (answer.kind === "written") return true;
      const head = answer.head;
      if (head === undefined || !REDIRECT_STATUS.has(head.status)) return false;
      url = this.session.checkedRedirect(url, singleValue(head, "location"), hop);
    }
  }

  /**
   * HEAD the blob (or manifest): true on 200 (with a matching `Content-Length`
   * when one is sent), false on 404.
   * @throws OciError `OCI_DIGEST_MISMATCH`, `OCI_AUTH_FAILED`, `OCI_RETRY_EXHAUSTED`, `OCI_RATE_LIMITED`,
   *   `OCI_TIMEOUT`, `OCI_HTTP_ERROR`; InterruptedError `INTERRUPTED` (`signal` aborted: the request is destroyed).
   */
  async exists(desc: Descriptor, signal?: AbortSignal): Promise<boolean> {
    checkDescriptor(desc);
    const manifest = isManifestMediaType(desc.mediaType);
    const url = this.session.url(`${manifest ? "manifests" : "blobs"}/${desc.digest}`);
    const headers: Record<string, string> = manifest ? { accept: MANIFEST_ACCEPT } : {};
    const res = await this.session.exchange({ method: "HEAD", url, scope: "pull", headers, followRedirects: true, signal }, true);
    discard(res);
    if (res.statusCode === 404) return false;
    if (res.statusCode !== 200) throw await this.session.statusError(res, "HEAD", url, `existence of ${desc.digest}`);
    const declared = headerValue(res, "content-length");
    if (declared !== undefined && Number(declared) !== desc.size) return false;
    const claimed = headerValue(res, "docker-content-digest");
    if (claimed !== undefined && claimed !== desc.digest) {
      throw new OciError("OCI_DIGEST_MISMATCH", `HEAD ${desc.digest}: Docker-Content-Digest ${describeValue(claimed)} disagrees`);
    }
    return true;
  }

  /**
   * Push a blob (HEAD, then an upload within the registry's request-size
   * limits, see `registry-upload.ts`) or a manifest (PUT by digest). The
   * content streams through a verifier; the registry's `Docker-Content-Digest`
   * must match; afterwards a `HEAD` must show the content with its size and
   * digest (a registry that answered 201 but stored other bytes fails here).
   * @throws OciError `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`, `OCI_NOT_FOUND`, `OCI_MANIFEST_TOO_LARGE`,
   *   `OCI_REQUEST_TOO_LARGE`, `OCI_MANIFEST_BLOB_UNKNOWN`, `OCI_AUTH_FAILED`, `OCI_RESPONSE_INVALID`,
   *   `OCI_RETRY_EXHAUSTED`, `OCI_RATE_LIMITED`, `OCI_TIMEOUT`, `OCI_HTTP_ERROR`; InterruptedError `INTERRUPTED`
   *   (`signal` aborted: the request in flight is destroyed, no other starts).
   */
  async push(desc: Descriptor, content: Readable, signal?: AbortSignal): Promise<void> {
    checkDescriptor(desc);
    const verified: Readable = verifiesDescriptor(content, desc) ? content : content.pipe(new DescriptorVerifier(desc, `OCI content ${desc.digest}`));
    if (verified !== content) content.on("error", (error) => verified.destroy(error));
    // The verifier's verdict wins over the registry's reaction to bad bytes.
    let streamError: unknown;
    verified.on("error", (error) => {
      streamError ??= error;
    });
    if (isManifestMediaType(desc.mediaType)) {
      if (desc.size > MAX_MANIFEST_BYTES) {
        content.destroy();
        throw manifestTooLarge(`OCI manifest ${desc.digest}`, `${desc.size} bytes`);
      }
      const bytes = await readAllBounded(verified, desc.size, `OCI manifest ${desc.digest}`).catch((error: unknown) => {
        throw streamError ?? error;
      });
      await this.putManifest(desc, bytes, desc.digest, signal);
      return;
    }
    if (await this.exists(desc, signal)) {
      content.destroy();
      return;
    }
    try {
      await uploadBlob(this.session, desc, verified, this.limits, signal);
    } catch (error) {
      await new Promise((resolve) => setImmediate(resolve));
      throw streamError ?? error;
    } finally {
      if (!verified.destroyed && !verified.readableEnded) verified.destroy();
    }
    if (streamError !== undefined) throw streamError;
    await confirmStored(this.session, desc, "blobs", desc.digest, undefined, signal);
  }

  /**
   * Store the manifest `desc` and point `tag` at it in one `PUT /v2/<name>/manifests/<tag>` (see
   * `Target.pushTagged`; the registry stores the manifest by digest too), confirmed as {@link putManifest}
   * confirms. Overwrites the tag, as {@link tag} does.
   * @throws OciError `OCI_TAG_INVALID`, `OCI_ARGUMENT_INVALID` (not a manifest media type), and {@link push}'s errors.
   */
  async pushTagged(desc: Descriptor, content: Readable, tag: string, signal?: AbortSignal): Promise<void> {
    if (!isDiscoveryTag(tag)) throw new OciError("OCI_TAG_INVALID", `invalid OCI tag ${describeValue(tag)}: ${tagShapeProblem(tag)}`);
    checkDescriptor(desc);
    if (!isManifestMediaType(desc.mediaType)) {
      content.destroy();
      throw new OciError("OCI_ARGUMENT_INVALID", `RegistryTarget.pushTagged(desc, content, tag): ${desc.digest} is a blob (${desc.mediaType}); only manifests are tagged`);
    }
    if (desc.size > MAX_MANIFEST_BYTES) {
      content.destroy();
      throw manifestTooLarge(`OCI manifest ${desc.digest}`, `${desc.size} bytes`);
    }
    const verified = verifiesDescriptor(content, desc) ? content : content.pipe(new DescriptorVerifier(desc, `OCI manifest ${desc.digest}`));
    if (verified !== content) content.on("error", (error) => verified.destroy(error));
    const bytes = await readAllBounded(verified, desc.size, `OCI manifest ${desc.digest}`);
    await this.putManifest(desc, bytes, tag, signal);
  }

  /**
   * The upload fast path (see `Target.pushBlobFile`): `POST`, then the blob's bytes read from `file`
   * into reused buffers (one `PUT`, or `PATCH` chunks within the upload limits), then a `HEAD` that
   * must show the blob with its size and digest. No `HEAD` before: the caller asked.
   * @throws OciError `OCI_ARGUMENT_INVALID` (a manifest media type, `file` not a BlobFile of `desc`, or one already read),
   *   and {@link push}'s errors.
   */
  async pushBlobFile(desc: Descriptor, file: BlobFile | BlobRelay, signal?: AbortSignal): Promise<void> {
    checkDescriptor(desc);
    const call = "RegistryTarget.pushBlobFile(desc, file)";
    if (isManifestMediaType(desc.mediaType)) throw new OciError("OCI_ARGUMENT_INVALID", `${call}: ${desc.digest} is a manifest (${desc.mediaType}); push manifests with push()`);
    const source = file instanceof BlobFile || file instanceof BlobRelay;
    if (!source || file.descriptor.digest !== desc.digest || file.descriptor.size !== desc.size) {
      throw new OciError("OCI_ARGUMENT_INVALID", `${call}: file must be the BlobFile or BlobRelay of ${desc.digest} (${desc.size} bytes), found ${source ? `the ${file.constructor.name} of ${file.descriptor.digest}` : describeValue(file)}`);
    }
    await uploadBlob(this.session, desc, file, this.limits, signal);
    await confirmStored(this.session, desc, "blobs", desc.digest, undefined, signal);
  }

  /**
   * The source side of the registry-to-registry relay (see `Target.openBlobRelay` and `blob-relay.ts`): the
   * blob `GET` on a connection of its own, redirects followed by the origin rules (credentials only to the
   * registry's origin), its body read into a few reused buffers and verified as it arrives.
   * @returns the relay (close it when done), or undefined when the answer is not the plain one (nothing read:
   *   use {@link fetch}, which authenticates, retries and maps errors).
   * @throws OciError `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`, `OCI_REDIRECT_REFUSED`, `OCI_RESPONSE_INVALID`;
   *   InterruptedError `INTERRUPTED` (`signal` aborted before the answer's head: the connection is closed; after it,
   *   the relay closes its connection and its bodies fail).
   */
  async openBlobRelay(desc: Descriptor, signal?: AbortSignal): Promise<BlobRelay | undefined> {
    checkDescriptor(desc);
    if (isManifestMediaType(desc.mediaType)) return undefined;
    let url = this.session.url(`blobs/${desc.digest}`);
    for (let hop = 1; ; hop += 1) {
      const headers = await this.session.requestHeaders(url, "pull");
      const answer = await BlobRelay.open({ url, headers, ca: this.session.tlsCa, ...this.session.timeouts }, desc, signal);
      if (answer.kind === "relay") return answer.relay;
      const head = answer.head;
      if (head === undefined || !REDIRECT_STATUS.has(head.status)) return undefined;
      url = this.session.checkedRedirect(url, singleValue(head, "location"), hop);
    }
  }

  /** True when every blob (and child manifest) `bytes` names answers `HEAD` here. */
  private async referencesPresent(bytes: Buffer, mediaType: string, signal: AbortSignal | undefined): Promise<boolean> {
    const parsed = parseManifest(bytes, mediaType);
    for (const ref of [...(parsed.config === undefined ? [] : [parsed.config]), ...parsed.layers, ...parsed.manifests]) {
      if (!(await this.exists({ mediaType: ref.mediaType, digest: ref.digest, size: ref.size }, signal))) return false;
    }
    return true;
  }

  /**
   * PUT manifest bytes by digest or tag, confirmed by the answer's `Docker-Content-Digest` when it names
   * `desc.digest` (the registry's digest of the bytes it stored), else by a `HEAD` of `reference` (no such
   * header); another digest there is `OCI_DIGEST_MISMATCH`. A refusal
   * naming an unknown blob (`MANIFEST_BLOB_UNKNOWN`) while every referenced
   * blob answers `HEAD` is the storage race of Debian's registry (another
   * writer re-linking the same blob): repeated a bounded number of times.
   * @throws OciError `OCI_MANIFEST_BLOB_UNKNOWN` (a blob really absent, or the race outlasting
   *   the attempts), `OCI_DIGEST_MISMATCH`, and the HTTP errors.
   */
  private async putManifest(desc: Descriptor, bytes: Buffer, reference: string, signal?: AbortSignal): Promise<void> {
    const url = this.session.url(`manifests/${reference}`);
    for (let attempt = 1; ; attempt += 1) {
      const res = await this.session.exchange({ method: "PUT", url, scope: "push", headers: { "content-type": desc.mediaType }, body: bytes, signal }, true);
      if (res.statusCode === 201) {
        discard(res);
        const claimed = headerValue(res, "docker-content-digest");
        if (claimed !== undefined && claimed !== desc.digest) {
          throw new OciError("OCI_DIGEST_MISMATCH", `registry stored ${describeValue(claimed)} for ${desc.digest}`);
        }
        // The registry's digest of the bytes it stored under `reference` is ours: confirmed without a HEAD.
        if (claimed === desc.digest) {
          this.remember(desc.digest, bytes);
          return;
        }
        break;
      }
      const error = await this.session.statusError(res, "PUT", url, `manifest push ${reference}`);
      if (res.statusCode !== 400 || !/MANIFEST_BLOB_UNKNOWN/.test(error.message)) throw error;
      if (attempt >= MANIFEST_PUT_ATTEMPTS || !(await this.referencesPresent(bytes, desc.mediaType, signal))) {
        throw new OciError("OCI_MANIFEST_BLOB_UNKNOWN", error.message, { cause: error });
      }
      await sleep(50 * 2 ** attempt, signal);
    }
    await confirmStored(this.session, desc, "manifests", reference, MANIFEST_ACCEPT, signal);
    this.remember(desc.digest, bytes);
  }

  /**
   * Tag the manifest `desc`: GET it by digest (verified), PUT it by tag, and
   * confirm with `HEAD` that the tag serves that digest.
   * Debian's registry and GHCR allow tag overwrite; use `tagIfAbsent` for the
   * no-overwrite rule.
   * @throws OciError `OCI_TAG_INVALID`, `OCI_NOT_FOUND`, `OCI_DIGEST_MISMATCH`, and the HTTP errors.
   */
  async tag(desc: Descriptor, tag: string, signal?: AbortSignal): Promise<void> {
    if (!isDiscoveryTag(tag)) throw new OciError("OCI_TAG_INVALID", `invalid OCI tag ${describeValue(tag)}: ${tagShapeProblem(tag)}`);
    checkDescriptor(desc);
    if (desc.size > MAX_MANIFEST_BYTES) {
      throw manifestTooLarge(`OCI manifest ${desc.digest}`, `${desc.size} bytes`);
    }
    const stream = await this.fetch({ mediaType: desc.mediaType, digest: desc.digest, size: desc.size }, signal);
    const bytes = await readAllBounded(stream, desc.size, `OCI manifest ${desc.digest}`);
    await this.putManifest(desc, bytes, tag, signal);
  }

  /**
   * Tag `desc` as `tag` unless the tag names another digest (the no-overwrite rule of `tagIfAbsent` in
   * `transfer.ts`; Debian's registry and GHCR allow overwrite, so it is checked here): a `HEAD` of the tag
   * (its `Docker-Content-Digest`; a `GET` computing the digest when the registry sends none), then, when
   * absent, one `PUT` by tag confirmed as {@link putManifest} confirms. Not atomic: a writer between the
   * `HEAD` and the `PUT` is overwritten (a registry has no conditional tag write).
   * @returns `"tagged"`, or `"already-tagged"` (the tag names `desc.digest`; nothing written).
   * @throws OciError `OCI_TAG_CONFLICT` (the tag names another digest; nothing written), `OCI_TAG_INVALID`,
   *   `OCI_DIGEST_MISMATCH`, and {@link tag}'s errors.
   */
  async tagIfAbsent(desc: Descriptor, tag: string): Promise<"tagged" | "already-tagged"> {
    if (!isDiscoveryTag(tag)) throw new OciError("OCI_TAG_INVALID", `invalid OCI tag ${describeValue(tag)}: ${tagShapeProblem(tag)}`);
    checkDescriptor(desc);
    const existing = await this.taggedDigest(tag);
    if (existing === desc.digest) return "already-tagged";
    if (existing !== null) {
      throw new OciError("OCI_TAG_CONFLICT", `refusing to replace a different OCI digest at ${tag}: tag has ${existing}, wanted ${desc.digest}`);
    }
    await this.tag(desc, tag);
    return "tagged";
  }

  /** The digest `tag` names (`HEAD`, or `GET` when the answer has no `Docker-Content-Digest`), null when absent. */
  private async taggedDigest(tag: string): Promise<string | null> {
    const url = this.session.url(`manifests/${tag}`);
    const res = await this.session.exchange({ method: "HEAD", url, scope: "pull", headers: { accept: MANIFEST_ACCEPT } }, true);
    discard(res);
    if (res.statusCode === 404) return null;
    if (res.statusCode !== 200) throw await this.session.statusError(res, "HEAD", url, `tag ${tag}`);
    const claimed = headerValue(res, "docker-content-digest");
    if (claimed !== undefined && isDigest(claimed)) return claimed;
    return (await this.getManifest(tag)).desc.digest;
  }

  /**
   * The referrers API (distribution-spec v1.1 "Listing Referrers"):
   * `GET /v2/<name>/referrers/<digest>` answering OCI indexes (at most 4 MiB
   * each, `Link` pages followed on the same origin, at most 16) whose `manifests`
   * are returned; a 404 means the registry has no referrers API (`undefined`:
   * use the tag schema, as Debian's registry 2.8 needs).
   * @throws OciError `OCI_MANIFEST_INVALID` (not an index), `OCI_BODY_TOO_LARGE`, `OCI_LINK_INVALID`,
   *   `OCI_PAGINATION_LOOP`, and the HTTP errors.
   */
  async referrers(subject: Descriptor): Promise<Descriptor[] | undefined> {
    checkDescriptor(subject);
    return listReferrersApi(this.session, subject.digest);
  }

  /**
   * Every tag (`GET /v2/<name>/tags/list`, following `Link` pagination resolved
   * against the request URL, same origin only, loops refused), in the registry's order.
   * @throws OciError `OCI_NOT_FOUND` (unknown repository), `OCI_PAGINATION_LOOP`, `OCI_LINK_INVALID`,
   *   `OCI_BODY_TOO_LARGE`, `OCI_RESPONSE_INVALID` (not JSON, a tag listed twice), and the HTTP errors.
   */
  async tags(): Promise<string[]> {
    return listTags(this.session, this.tagPageSize, this.maxTagPages);
  }
}
