/**
 * `LayoutTarget`: the {@link Target} interface over a local OCI image layout
 * directory (OCI image-spec `image-layout.md`), the embedded default store
 * (`oci-layout:<dir>` repositories).
 *
 * Tags are the `org.opencontainers.image.ref.name` annotations of the
 * `index.json` entries. Blobs are written to `ingest/` through the verifier
 * and renamed into `blobs/sha256/<hex>` only after they verified; `index.json`
 * is replaced atomically (temp file + rename) while holding the lock file
 * `index.json.lock` (created with O_EXCL; a lock left by a dead process is
 * broken, one the kit did not write, whose PID was reused or whose PID runs a
 * live program that is not a kit process is refused at once), so two writers
 * cannot lose each other's tags.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { constants as fsConstants, type Stats } from "node:fs";
import { chmod, link, lstat, open, readdir, readFile, rename, rm, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { addAbortSignal, type Readable } from "node:stream";
import { throwIfInterrupted } from "../contract/errors.js";
import { finished, pipeline } from "node:stream/promises";
import { canonicalJsonBytes, parseStrictJson } from "../contract/canonical-json.js";
import { MAX_MANIFEST_BYTES, OCI_LAYOUT_FILE, OCI_MANIFEST_MEDIA_TYPE, REF_NAME_ANNOTATION } from "../contract/constants.js";
import { describeValue, isDigest, isDiscoveryTag, tagShapeProblem } from "../contract/grammar.js";
import { DescriptorVerifier, STREAM_HIGH_WATER_MARK, blobNotRegularFile, checkDescriptor, verifiesDescriptor } from "./descriptor.js";
import { OciError, manifestTooLarge } from "./errors.js";
import { BlobFile } from "./blob-file.js";
import { checkLayoutRoot, layoutBlobPath, openBlobStream, parseIndexManifests } from "./layout.js";
import { parseManifest } from "./manifest.js";
import type { Descriptor, Target } from "./target.js";
import { inspectLockFile, lockRefusal } from "./lock-owner.js";
import { makeDirectory } from "../contract/directory.js";
import { requireOptionalBoolean, requireOptionalNumber, requireOptions, requireStringArgument } from "./arguments.js";

/** Options of {@link LayoutTarget.open}. */
export interface LayoutTargetOptions {
  /** Create the directory (mode 0700, parents too) and an empty layout when absent. Default false. */
  create?: boolean;
  /** How long to wait for the `index.json` lock (ms). Default 10 000. */
  lockTimeoutMs?: number;
}

/** Outcome of {@link LayoutTarget.tagIfAbsent}. */
export type TagOutcome = "tagged" | "already-tagged";

const EMPTY_INDEX = { schemaVersion: 2, manifests: [] as Descriptor[] };


function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The `index.json` entries whose ref name is `tag`. */
function tagEntries(manifests: readonly Descriptor[], tag: string): Descriptor[] {
  return manifests.filter((m) => m.annotations?.[REF_NAME_ANNOTATION] === tag);
}

/**
 * The one descriptor `entries` agree on (`{mediaType, digest, size}`), or
 * undefined when there is none; entries that disagree go to `ambiguous`,
 * which throws (ambiguity is refused, never resolved by picking one).
 */
function soleEntry(entries: readonly Descriptor[], ambiguous: (entries: readonly Descriptor[]) => never): Descriptor | undefined {
  const first = entries[0];
  if (first === undefined) return undefined;
  if (entries.some((e) => e.digest !== first.digest || e.mediaType !== first.mediaType || e.size !== first.size)) ambiguous(entries);
  return { mediaType: first.mediaType, digest: first.digest, size: first.size };
}

function ambiguousTag(dir: string, tag: string, entries: readonly Descriptor[]): OciError {
  const digests = [...new Set(entries.map((e) => e.digest))].join(", ");
  return new OciError(
    "OCI_TAG_AMBIGUOUS",
    `OCI tag ${tag} in ${dir} is ambiguous: index.json has ${entries.length} entries with that ref name naming ${digests}; re-tag it (tag() replaces every entry) or remove the wrong entry`,
  );
}

/** A {@link Target} over an OCI image layout directory. */
export class LayoutTarget implements Target {
  /** Absolute layout directory. */
  readonly dir: string;
  private readonly lockTimeoutMs: number;

  private constructor(dir: string, lockTimeoutMs: number) {
    this.dir = dir;
    this.lockTimeoutMs = lockTimeoutMs;
  }

  /**
   * Open (or with `create`, initialise) the layout at `dir`.
   * @throws OciError `OCI_ARGUMENT_INVALID` (`dir` not a non-empty string; `options` not an object, a key it does
   *   not read, `create` not a boolean, `lockTimeoutMs` not a non-negative number), `OCI_NOT_FOUND` (absent and
   *   not `create`), `OCI_LAYOUT_INVALID`.
   */
  static async open(dir: string, options: LayoutTargetOptions = {}): Promise<LayoutTarget> {
    const call = "LayoutTarget.open(dir, options)";
    requireStringArgument(dir, call, "dir", "the layout directory's path");
    requireOptions(options, call, ["create", "lockTimeoutMs"]);
    requireOptionalBoolean(options.create, call, "options.create");
    requireOptionalNumber(options.lockTimeoutMs, call, "options.lockTimeoutMs", "milliseconds");
    const abs = path.resolve(dir);
    const target = new LayoutTarget(abs, options.lockTimeoutMs ?? 10_000);
    const st = await lstat(abs).catch(() => null);
    if (st === null) {
      if (options.create !== true) throw new OciError("OCI_NOT_FOUND", `no OCI layout at ${abs}`);
      await makeDirectory(abs, { mode: 0o700, purpose: "OCI layout store" });
    }
    const marker = await lstat(path.join(abs, "oci-layout")).catch(() => null);
    if (marker === null && options.create === true) {
      // A new store is made only in a new or empty directory (never over a project's files), private like a created one.
      if (st !== null) await requireEmptyForStore(abs, st);
      await target.initialise();
    }
    await checkLayoutRoot(abs);
    await target.readIndex();
    return target;
  }

  private async initialise(): Promise<void> {
    await makeDirectory(path.join(this.dir, "blobs", "sha256"), { mode: 0o700, purpose: "OCI layout store" });
    await this.withLock(async () => {
      if ((await lstat(path.join(this.dir, "index.json")).catch(() => null)) === null) {
        await this.writeAtomic("index.json", canonicalJsonBytes(EMPTY_INDEX));
      }
      if ((await lstat(path.join(this.dir, "oci-layout")).catch(() => null)) === null) {
        await this.writeAtomic("oci-layout", Buffer.from(OCI_LAYOUT_FILE));
      }
    });
  }

  private async writeAtomic(name: string, bytes: Uint8Array): Promise<void> {
    const temp = path.join(this.dir, `.${name}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      await writeFile(temp, bytes, { mode: 0o600, flag: "wx" });
      await rename(temp, path.join(this.dir, name));
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  /**
   * Run `fn` holding `index.json.lock`.
   * @throws OciError `OCI_LOCKED` after the lock timeout, or at once for a lock that is not the kit's
   *   (a symlink, a directory, other content), is stale (its PID was reused) or names a live process that is not
   *   a kit process.
   */
  private async withLock<T>(fn: () => Promise<T>): Promise<T> {
    const lockPath = path.join(this.dir, "index.json.lock");
    const deadline = Date.now() + this.lockTimeoutMs;
    let delay = 5;
    for (;;) {
      // The lock appears atomically with its owner's PID in it (hard link of a
      // filled temp file), so a process killed at any point never leaves an
      // empty lock that nobody can prove stale.
      const pending = `${lockPath}.${process.pid}.${randomUUID()}`;
      await writeFile(pending, String(process.pid), { mode: 0o600, flag: "wx" });
      try {
        await link(pending, lockPath);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        // What holds the lock decides: a dead holder's lock is broken; anything the kit does not write,
        // a reused PID or one that runs a live program that is not a kit process, is refused at once; only a live
        // holder is waited for.
        const found = await inspectLockFile(lockPath);
        if (found.kind === "absent") continue;
        if (found.kind === "dead") {
          await unlink(lockPath).catch(() => undefined);
          continue;
        }
        if (found.kind === "foreign" || found.kind === "reused" || found.kind === "other-program" || Date.now() >= deadline) {
          throw new OciError("OCI_LOCKED", `OCI layout ${this.dir}: cannot take index.json.lock: ${lockRefusal(found, lockPath, "a writer of this store", this.lockTimeoutMs)}`);
        }
        await sleep(delay);
        delay = Math.min(delay * 2, 25);
      } finally {
        await unlink(pending).catch(() => undefined);
      }
    }
    try {
      return await fn();
    } finally {
      await unlink(lockPath).catch(() => undefined);
    }
  }

  private async readIndex(): Promise<{ json: Record<string, unknown>; manifests: Descriptor[] }> {
    const indexPath = path.join(this.dir, "index.json");
    const st = await lstat(indexPath).catch(() => null);
    if (st === null || !st.isFile()) throw new OciError("OCI_LAYOUT_INVALID", `OCI layout ${this.dir}: index.json is missing or not a regular file`);
    if (st.size > MAX_MANIFEST_BYTES * 16) throw new OciError("OCI_LAYOUT_INVALID", `OCI layout ${this.dir}: index.json is too large`);
    const bytes = await readFile(indexPath);
    const manifests = parseIndexManifests(bytes);
    return { json: parseStrictJson(bytes, { rejectIntegralFloats: false }) as Record<string, unknown>, manifests };
  }

  private async updateIndex(change: (manifests: Descriptor[]) => Descriptor[] | null): Promise<void> {
    await this.withLock(async () => {
      const { json, manifests } = await this.readIndex();
      const next = change(manifests);
      if (next === null) return;
      await this.writeAtomic("index.json", canonicalJsonBytes({ ...json, manifests: next }));
    });
  }

  /** Path of a blob in this layout. */
  blobPath(digest: string): string {
    return layoutBlobPath(this.dir, digest);
  }

  private async blobStat(digest: string): Promise<{ size: number } | null> {
    const st = await lstat(this.blobPath(digest)).catch(() => null);
    if (st === null) return null;
    if (!st.isFile()) throw await blobNotRegularFile(digest, this.blobPath(digest), st);
    return { size: st.size };
  }

  /**
   * Resolve a tag (ref name in `index.json`) or a `sha256:` digest to the
   * manifest descriptor `{mediaType, digest, size}`. A tag whose entries name
   * different descriptors is refused, never resolved to one of them.
   * @throws OciError `OCI_NOT_FOUND`, `OCI_TAG_INVALID`, `OCI_TAG_AMBIGUOUS`, `OCI_LAYOUT_INVALID`, `OCI_MANIFEST_INVALID`.
   */
  async resolve(tagOrDigest: string): Promise<Descriptor> {
    if (isDigest(tagOrDigest)) {
      const { manifests } = await this.readIndex();
      const known = soleEntry(manifests.filter((m) => m.digest === tagOrDigest), () => {
        throw new OciError("OCI_LAYOUT_INVALID", `OCI layout ${this.dir}: index.json describes ${tagOrDigest} twice with different media types or sizes`);
      });
      const st = await this.blobStat(tagOrDigest);
      if (st === null) throw new OciError("OCI_NOT_FOUND", `OCI manifest ${tagOrDigest} not found in ${this.dir}`);
      if (known !== undefined) return { mediaType: known.mediaType, digest: known.digest, size: known.size };
      if (st.size > MAX_MANIFEST_BYTES) {
        throw manifestTooLarge(`OCI manifest ${tagOrDigest}`, `${st.size} bytes`);
      }
      const probe: Descriptor = { mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: tagOrDigest, size: st.size };
      const chunks: Buffer[] = [];
      for await (const chunk of openBlobStream(this.blobPath(tagOrDigest), probe)) chunks.push(chunk as Buffer);
      const parsed = parseManifest(Buffer.concat(chunks));
      return { mediaType: parsed.mediaType, digest: tagOrDigest, size: st.size };
    }
    if (!isDiscoveryTag(tagOrDigest)) throw new OciError("OCI_TAG_INVALID", `invalid OCI tag or digest ${describeValue(tagOrDigest)}: expected sha256:<64 lowercase hex> or a tag (${tagShapeProblem(tagOrDigest)})`);
    const { manifests } = await this.readIndex();
    const found = soleEntry(tagEntries(manifests, tagOrDigest), (entries) => {
      throw ambiguousTag(this.dir, tagOrDigest, entries);
    });
    if (found === undefined) throw new OciError("OCI_NOT_FOUND", `OCI tag ${tagOrDigest} not found in ${this.dir}`);
    return { mediaType: found.mediaType, digest: found.digest, size: found.size };
  }

  /**
   * A verifying stream of the blob or manifest `desc` (size and digest are
   * checked as the bytes pass; symlinked blob files are refused).
   * An aborted `signal` destroys the stream (its file closes; the stream fails with an `AbortError`).
   * @throws OciError `OCI_NOT_FOUND`, `OCI_LAYOUT_INVALID`, `OCI_SIZE_MISMATCH` (file size differs);
   *   InterruptedError `INTERRUPTED` (`signal` aborted before the file was opened).
   */
  async fetch(desc: Descriptor, signal?: AbortSignal): Promise<Readable> {
    const file = await this.presentBlobPath(desc);
    throwIfInterrupted(signal);
    const stream = openBlobStream(file, desc);
    return signal === undefined ? stream : addAbortSignal(signal, stream);
  }

  /**
   * The path of the blob file of `desc`, which must be a regular file of `desc.size` bytes.
   * @throws OciError `OCI_DESCRIPTOR_INVALID`, `OCI_NOT_FOUND`, `OCI_LAYOUT_INVALID`, `OCI_SIZE_MISMATCH`.
   */
  private async presentBlobPath(desc: Descriptor): Promise<string> {
    checkDescriptor(desc);
    const st = await this.blobStat(desc.digest);
    if (st === null) throw new OciError("OCI_NOT_FOUND", `OCI blob ${desc.digest} not found in ${this.dir}`);
    if (st.size !== desc.size) {
      throw new OciError("OCI_SIZE_MISMATCH", `OCI blob size mismatch for ${desc.digest}: expected ${desc.size} bytes, found ${st.size}`);
    }
    return this.blobPath(desc.digest);
  }

  /**
   * The blob `desc` as an open {@link BlobFile} for the upload fast path (see `ReadOnlyTarget.openBlobFile`).
   * @throws OciError `OCI_NOT_FOUND`, `OCI_LAYOUT_INVALID` (not a regular file), `OCI_SIZE_MISMATCH`, `OCI_DESCRIPTOR_INVALID`.
   */
  async openBlobFile(desc: Descriptor): Promise<BlobFile> {
    return BlobFile.open(await this.presentBlobPath(desc), desc);
  }

  /** Whether a regular blob file of `desc.digest` with `desc.size` bytes exists. */
  async exists(desc: Descriptor): Promise<boolean> {
    checkDescriptor(desc);
    const st = await this.blobStat(desc.digest).catch(() => null);
    return st !== null && st.size === desc.size;
  }

  /**
   * Store `content` as the blob `desc`: streamed through the verifier into
   * `ingest/`, renamed into `blobs/sha256/` only when size and digest match.
   * Content already present is not rewritten (the stream is discarded). An aborted `signal` stops the write and
   * removes the partial file from `ingest/`; nothing is renamed into `blobs/` after the abort.
   * @throws OciError `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH` (nothing stored); InterruptedError `INTERRUPTED`
   *   (`signal` aborted; nothing stored).
   */
  async push(desc: Descriptor, content: Readable, signal?: AbortSignal): Promise<void> {
    checkDescriptor(desc);
    try {
      throwIfInterrupted(signal);
    } catch (error) {
      content.destroy();
      throw error;
    }
    if (await this.exists(desc)) {
      content.destroy();
      return;
    }
    const ingest = path.join(this.dir, "ingest");
    await makeDirectory(ingest, { mode: 0o700, purpose: "OCI layout store" });
    const temp = path.join(ingest, `${desc.digest.slice(7, 23)}-${randomBytes(6).toString("hex")}`);
    const verified = verifiesDescriptor(content, desc) ? null : new DescriptorVerifier(desc, `OCI blob ${desc.digest}`);
    try {
      const handle = await open(temp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, 0o600);
      const out = handle.createWriteStream({ highWaterMark: STREAM_HIGH_WATER_MARK });
      const stop = signal === undefined ? [] : [{ signal }];
      try {
        if (verified === null) await pipeline(content, out, ...stop);
        else await pipeline(content, verified, out, ...stop);
      } catch (error) {
        await finished(out).catch(() => undefined);
        throwIfInterrupted(signal);
        throw error;
      }
      await makeDirectory(path.join(this.dir, "blobs", "sha256"), { mode: 0o700, purpose: "OCI layout store" });
      // The step that makes the blob visible: never after an abort.
      throwIfInterrupted(signal);
      await rename(temp, this.blobPath(desc.digest));
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  /**
   * Point `tag` at the manifest `desc` (replacing the tag's previous entry). An aborted `signal` writes nothing:
   * it is checked last under the index lock, right before `index.json` is replaced.
   * @throws OciError `OCI_TAG_INVALID`, `OCI_NOT_FOUND` (manifest blob absent), `OCI_LOCKED`; InterruptedError
   *   `INTERRUPTED` (`signal` aborted; `index.json` unchanged).
   */
  async tag(desc: Descriptor, tag: string, signal?: AbortSignal): Promise<void> {
    await this.tagWith(desc, tag, false, signal);
  }

  /**
   * Atomically (under the index lock) tag `desc` as `tag` unless the tag
   * exists: same digest -> `"already-tagged"` with no write; another digest
   * -> `OCI_TAG_CONFLICT` and nothing written (reference W1-W3); entries of
   * the tag that disagree -> `OCI_TAG_AMBIGUOUS`, nothing written.
   * @throws OciError `OCI_TAG_INVALID`, `OCI_TAG_CONFLICT`, `OCI_TAG_AMBIGUOUS`, `OCI_NOT_FOUND`, `OCI_LOCKED`.
   */
  async tagIfAbsent(desc: Descriptor, tag: string): Promise<TagOutcome> {
    return this.tagWith(desc, tag, true);
  }

  private async tagWith(desc: Descriptor, tag: string, ifAbsent: boolean, signal?: AbortSignal): Promise<TagOutcome> {
    if (!isDiscoveryTag(tag)) throw new OciError("OCI_TAG_INVALID", `invalid OCI tag ${describeValue(tag)}: ${tagShapeProblem(tag)}`);
    checkDescriptor(desc);
    throwIfInterrupted(signal);
    if (!(await this.exists(desc))) throw new OciError("OCI_NOT_FOUND", `cannot tag ${desc.digest}: manifest not found in ${this.dir}`);
    let outcome: TagOutcome = "tagged";
    await this.updateIndex((manifests) => {
      throwIfInterrupted(signal);
      const existing = tagEntries(manifests, tag);
      if (ifAbsent && existing.length > 0) {
        const named = soleEntry(existing, (entries) => {
          throw ambiguousTag(this.dir, tag, entries);
        }) as Descriptor;
        if (named.digest !== desc.digest) {
          throw new OciError("OCI_TAG_CONFLICT", `refusing to replace a different OCI digest at ${tag}: tag has ${named.digest}, wanted ${desc.digest}`);
        }
        outcome = "already-tagged";
        return null;
      }
      const rest = manifests.filter((m) => m.annotations?.[REF_NAME_ANNOTATION] !== tag);
      rest.push({ mediaType: desc.mediaType, digest: desc.digest, size: desc.size, annotations: { [REF_NAME_ANNOTATION]: tag } });
      return rest;
    });
    return outcome;
  }

  /** Nothing to release (files are closed after each operation); present for symmetry with the other targets. */
  async close(): Promise<void> {
    /* no open resources */
  }

  /** Every ref name in `index.json`, sorted, without duplicates. */
  async tags(): Promise<string[]> {
    const { manifests } = await this.readIndex();
    const names = new Set<string>();
    for (const m of manifests) {
      const name = m.annotations?.[REF_NAME_ANNOTATION];
      if (typeof name === "string") names.add(name);
    }
    return [...names].sort();
  }
}

/**
 * `create` over an existing directory with no `oci-layout` in it: it must be a directory holding nothing,
 * and it becomes private (0700) as a created store is.
 * @throws OciError `OCI_LAYOUT_INVALID` naming what is there and the fix.
 */
async function requireEmptyForStore(abs: string, st: Stats): Promise<void> {
  if (!st.isDirectory() || st.isSymbolicLink()) {
    throw new OciError("OCI_LAYOUT_INVALID", `cannot create an OCI layout store at ${abs}: found ${st.isSymbolicLink() ? "a symbolic link" : "a file"}, expected a new or empty directory; fix: pass another path`);
  }
  const names = await readdir(abs);
  if (names.length > 0) {
    const shown = names.slice(0, 5).map((n) => JSON.stringify(n)).join(", ") + (names.length > 5 ? `, and ${names.length - 5} more` : "");
    throw new OciError(
      "OCI_LAYOUT_INVALID",
      `cannot create an OCI layout store in ${abs}: it is not a layout (no oci-layout file) and not empty (found ${shown}); a store is made only in a new or empty directory; fix: pass a new directory (e.g. ${path.join(abs, "store")})`,
    );
  }
  if ((st.mode & 0o077) !== 0) await chmod(abs, 0o700);
}
