/**
 * The transport abstraction every release and fetch goes through (docs/architecture.md,
 * "OCI transport"; modelled on oras-go's `content.Storage` + `oras.Target`).
 *
 * Implementations: `RegistryTarget` (OCI Distribution Spec v1.1 over HTTP),
 * `LayoutTarget` (a local OCI image layout used as a store), `OrasTarget`
 * (an installed `oras` CLI). `copy(src, dst, reference)` moves a verified graph
 * between any two of them.
 *
 * Stopping: the methods `copy` calls take an optional trailing `signal` (an AbortSignal). An implementation that
 * honours it starts no request after the abort, destroys the one in flight (its response body or request body
 * too), writes nothing visible after it (no blob renamed into place, no tag), and rejects with InterruptedError
 * `INTERRUPTED`. All three built-in targets do; one that ignores it only finishes later (`copy` still stops
 * starting work and never tags after the abort).
 */
import type { Readable } from "node:stream";
import type { BlobFile } from "./blob-file.js";
import type { BlobRelay } from "./blob-relay.js";

/**
 * An OCI content descriptor (OCI image-spec `descriptor.md`).
 * `size` is in bytes; `digest` is `sha256:<64 lowercase hex>`.
 */
export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  artifactType?: string;
}

/** Read side of a target. */
export interface ReadOnlyTarget {
  /**
   * Resolve a tag or a `sha256:` digest to the manifest's descriptor
   * `{mediaType, digest, size}` (digest computed from the manifest bytes).
   * @throws OciError `OCI_NOT_FOUND` when absent.
   */
  resolve(tagOrDigest: string, signal?: AbortSignal): Promise<Descriptor>;
  /**
   * Open the content of `desc` (manifest or blob) as a stream that verifies
   * size and digest while the bytes pass: it errors with `OCI_SIZE_MISMATCH`
   * or `OCI_DIGEST_MISMATCH` at the end (or as soon as more than `size` bytes
   * arrive). Callers must not trust the bytes before the stream ended cleanly.
   */
  fetch(desc: Descriptor, signal?: AbortSignal): Promise<Readable>;
  /** Whether content with this descriptor's digest exists. */
  exists(desc: Descriptor, signal?: AbortSignal): Promise<boolean>;
  /**
   * Optional fast path of `fetchBlobToFile`: write the blob `desc` into the
   * open file `fd` at positions 0 .. size-1, hashing every byte, and resolve
   * `true` only when exactly `size` bytes hashing to `digest` were written;
   * resolve `false` having written nothing when the caller should use
   * {@link fetch} instead. `onProgress(bytes, total)` reports bytes received. An aborted `signal` stops the
   * transfer: it rejects (InterruptedError `INTERRUPTED`) once no write to `fd` is in flight.
   * @throws OciError `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`, `OCI_TIMEOUT`, ...
   */
  fetchToFile?(desc: Descriptor, fd: number, onProgress?: (bytes: number, total: number) => void, signal?: AbortSignal): Promise<boolean>;
  /**
   * Optional source of the upload fast path (`copy` to a target with {@link Target.pushBlobFile}): the
   * blob `desc` as an open {@link BlobFile} (symlinks refused; a regular file of exactly `desc.size`
   * bytes), verified as it is read. The caller closes it.
   * @throws OciError `OCI_NOT_FOUND`, `OCI_SIZE_MISMATCH`, `OCI_LAYOUT_INVALID` (not a regular file), `OCI_DESCRIPTOR_INVALID`.
   */
  openBlobFile?(desc: Descriptor): Promise<BlobFile>;
  /**
   * Optional source of the registry-to-registry relay (`copy` to a target with {@link Target.pushBlobFile}):
   * the blob `desc`'s download started on a connection of its own, read into a few reused buffers and
   * verified as it arrives (`blob-relay.ts`); `undefined` (nothing read) when the answer is not the plain one
   * (the caller then uses {@link fetch}). The caller closes it. An aborted `signal` closes its connection.
   * @throws OciError `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`, `OCI_REDIRECT_REFUSED`, `OCI_RESPONSE_INVALID`.
   */
  openBlobRelay?(desc: Descriptor, signal?: AbortSignal): Promise<BlobRelay | undefined>;
  /** Every tag of the repository (all pages). */
  tags(): Promise<string[]>;
  /**
   * Optional: the OCI 1.1 referrers API (distribution-spec "Listing
   * Referrers"): descriptors of the manifests whose `subject` is `subject`, or
   * `undefined` when the target has no such API (callers then use the
   * referrers tag schema, `src/oci/referrers.ts`).
   */
  referrers?(subject: Descriptor): Promise<Descriptor[] | undefined>;
  /**
   * Release what the target holds (pooled connections, temporary credential
   * files). Optional; safe to call more than once.
   */
  close?(): Promise<void>;
}

/** A target that can also be written. */
export interface Target extends ReadOnlyTarget {
  /**
   * Store content for `desc`; the bytes are verified against `desc` before
   * they become visible. Manifests are pushed by digest (use {@link tag} to name them).
   */
  push(desc: Descriptor, content: Readable, signal?: AbortSignal): Promise<void>;
  /**
   * Optional upload fast path: store the blob `desc` from `file` (a {@link BlobFile} or {@link BlobRelay} of
   * `desc` not read yet), each byte verified before the blob becomes visible, and confirm it is stored. Unlike
   * {@link push} it does not ask first whether the blob is there (`copy` just did).
   * @throws OciError `OCI_ARGUMENT_INVALID` (a manifest, or `file` not a BlobFile of `desc`), and {@link push}'s errors.
   */
  pushBlobFile?(desc: Descriptor, file: BlobFile | BlobRelay, signal?: AbortSignal): Promise<void>;
  /**
   * Optional: store the manifest `desc` (its bytes in `content`, verified) and point `tag` at it in one write
   * (a registry's `PUT /v2/<name>/manifests/<tag>`, which stores the manifest by digest too). Overwrites, as
   * {@link tag} does; `copy` uses it when it tags (one request where `push` + `tag` take two or more).
   * @throws OciError `OCI_TAG_INVALID`, and {@link push}'s errors.
   */
  pushTagged?(desc: Descriptor, content: Readable, tag: string, signal?: AbortSignal): Promise<void>;
  /** Point `tag` at the manifest `desc` (which must already exist). Overwrites. */
  tag(desc: Descriptor, tag: string, signal?: AbortSignal): Promise<void>;
  /**
   * Optional own form of `tagIfAbsent` (see `src/oci/transfer.ts`): atomic for targets that can check and
   * write under one lock (the OCI layout store); in fewer requests for a registry (a `HEAD` of the tag, then
   * one `PUT` by tag, see `RegistryTarget.tagIfAbsent`).
   * Same digest already tagged resolves `"already-tagged"` without a write;
   * another digest throws `OCI_TAG_CONFLICT` and writes nothing.
   */
  tagIfAbsent?(desc: Descriptor, tag: string): Promise<"tagged" | "already-tagged">;
}
