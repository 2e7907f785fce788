/**
 * The deterministic OCI image layout of a staged artifact (OCI
 * image-spec `image-layout.md`; docs/oci.md) and its validating reader.
 *
 * `writeLayout` turns (artifactType, payload path -> local file) into a new
 * directory with `blobs/sha256/<hex>` (empty config `{}`, each file's exact
 * bytes, the manifest), `oci-layout` and `index.json` (one manifest, ref name
 * `payload`). JSON is canonical (sorted keys, compact, trailing newline); no
 * timestamps, no compression, no source annotation; layers sorted by payload
 * path by code point; mtimes and input order do not matter, so the manifest
 * digest is a pure function of (artifactType, path -> bytes).
 *
 * `readLayout` validates such a directory before anything uses it: the
 * layout marker, the index, the manifest shape (O1/O2) and every blob file
 * (regular, not a symlink, size and SHA-256: OCI image-spec "Descriptors").
 */
import { createHash, randomBytes } from "node:crypto";
import { constants as fsConstants, createReadStream } from "node:fs";
import { lstat, mkdir, open, rename, rm, rmdir, writeFile, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { canonicalJsonBytes, compareCodePoints, parseStrictJson } from "../contract/canonical-json.js";
import {
  EMPTY_CONFIG_BYTES,
  EMPTY_CONFIG_DESCRIPTOR,
  LAYOUT_REF_NAME,
  MAX_MANIFEST_BYTES,
  OCI_LAYOUT_FILE,
  OCI_MANIFEST_MEDIA_TYPE,
  OCTET_STREAM_MEDIA_TYPE,
  REF_NAME_ANNOTATION,
} from "../contract/constants.js";
import { HermesPluginKitError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import { DescriptorVerifier, STREAM_HIGH_WATER_MARK, checkDescriptor, numericFlags, digestHex, digestOf, verifyBlobFile, verifyingStream } from "./descriptor.js";
import { requireOptions, requireStringArgument } from "./arguments.js";
import { OciError, manifestTooLarge } from "./errors.js";
import { artifactManifest, type TitledLayer } from "./manifest.js";
import type { Descriptor } from "./target.js";
import { makeDirectory } from "../contract/directory.js";

/** What {@link writeLayout} produced. */
export interface WrittenLayout {
  /** Descriptor `{mediaType, digest, size}` of the manifest. */
  manifest: Descriptor;
  /** The canonical manifest bytes (as stored in the layout). */
  manifestBytes: Buffer;
}

/** A validated layout (see {@link readLayout}). */
export interface ReadLayout {
  /** The layout directory. */
  dir: string;
  /** Descriptor `{mediaType, digest, size}` of the manifest named by the ref name. */
  manifest: Descriptor;
  /** Verified manifest bytes. */
  manifestBytes: Buffer;
  artifactType: string;
  /** The empty config descriptor. */
  config: Descriptor;
  /** Titled layers in manifest order, each blob verified. */
  layers: TitledLayer[];
  /** Path of the blob file for a digest inside this layout. */
  blobPath(digest: string): string;
}

/** Path of `digest`'s blob inside layout `dir` (`blobs/sha256/<hex>`). */
export function layoutBlobPath(dir: string, digest: string): string {
  return path.join(dir, "blobs", "sha256", digestHex(digest));
}

/**
 * Check a payload path: a non-empty relative POSIX path of at most 255
 * characters, no NUL or backslash, no empty, `.` or `..` segments.
 * (The fetch side additionally applies the fixed allow-list (docs/architecture.md, "Fetch: data flow").)
 * @throws OciError `OCI_PATH_INVALID`.
 */
export function checkPayloadPath(payloadPath: string): string {
  const bad =
    typeof payloadPath !== "string" ||
    payloadPath.length === 0 ||
    payloadPath.length > 255 ||
    payloadPath.includes("\0") ||
    payloadPath.includes("\\") ||
    payloadPath.startsWith("/") ||
    payloadPath.split("/").some((seg) => seg === "" || seg === "." || seg === "..");
  if (bad) throw new OciError("OCI_PATH_INVALID", `unsafe payload path: ${describeValue(payloadPath)}`);
  return payloadPath;
}

async function copyIntoBlobs(blobsDir: string, source: string, payloadPath: string): Promise<Descriptor> {
  const temp = path.join(blobsDir, `.ingest-${randomBytes(8).toString("hex")}`);
  const input = await open(source, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW).catch(() => {
    throw new OciError("OCI_PATH_INVALID", `input file for ${describeValue(payloadPath)} cannot be opened`);
  });
  let desc: Descriptor;
  try {
    const st = await input.stat();
    if (!st.isFile()) throw new OciError("OCI_PATH_INVALID", `input file for ${describeValue(payloadPath)} is not a regular file`);
    if (st.size === 0) throw new OciError("OCI_PATH_INVALID", `input file for ${describeValue(payloadPath)} is empty (layers must be at least 1 byte)`);
    const output = await open(temp, "wx", 0o600);
    let copied: { digest: string; size: number };
    try {
      copied = await copyHashing(input, output);
    } finally {
      await output.close();
    }
    desc = { mediaType: OCTET_STREAM_MEDIA_TYPE, digest: copied.digest, size: copied.size };
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  } finally {
    await input.close();
  }
  const final = path.join(blobsDir, digestHex(desc.digest));
  await rename(temp, final);
  await verifyBlobFile(final, desc);
  return desc;
}

/** Copy buffer of {@link copyHashing} (bytes). */
const COPY_BUFFER_BYTES = 512 * 1024;

/**
 * Copy `input` (from its start) to `output` through one reused buffer, hashing the bytes: no fresh
 * memory per read, as a read stream would allocate (see `blob-file.ts`).
 * @returns the SHA-256 digest and size of what was copied.
 */
async function copyHashing(input: FileHandle, output: FileHandle): Promise<{ digest: string; size: number }> {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafeSlow(COPY_BUFFER_BYTES);
  let size = 0;
  for (;;) {
    const { bytesRead } = await input.read(buffer, 0, buffer.length, size);
    if (bytesRead === 0) break;
    const view = buffer.subarray(0, bytesRead);
    hash.update(view);
    for (let written = 0; written < bytesRead; ) {
      const { bytesWritten } = await output.write(view, written, bytesRead - written, size + written);
      written += bytesWritten;
    }
    size += bytesRead;
  }
  return { digest: `sha256:${hash.digest("hex")}`, size };
}

/**
 * Write the deterministic layout of reference section 4 into `dir`, which must
 * not exist (its parent is created if needed; `dir` gets mode 0700). File bytes
 * are streamed through SHA-256 into `blobs/sha256/<hex>` and re-checked after
 * copying. On any failure `dir` is removed again.
 *
 * `writeLayout(dir, BOOTSTRAP_ARTIFACT_TYPE, new Map())` writes the zero-layer
 * bootstrap artifact, manifest digest
 * `sha256:2c83e94c3884c6aea03e57999e7833e8444d8ea6860a5df81a8af216e9ec884e` (the original project's bootstrap test vector: same artifact type and bytes, so its digest holds).
 *
 * @param files payload path (layer title) -> local file path; input files must be
 *   non-empty regular files (symlinks refused).
 * @returns the manifest descriptor and bytes.
 * @throws OciError `OCI_LAYOUT_EXISTS`, `OCI_PATH_INVALID`, `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`.
 */
export async function writeLayout(dir: string, artifactType: string, files: ReadonlyMap<string, string>): Promise<WrittenLayout> {
  if (typeof artifactType !== "string" || artifactType.length === 0) {
    throw new OciError("OCI_DESCRIPTOR_INVALID", `artifactType must be a non-empty string, found ${describeValue(artifactType)}`);
  }
  if (!(files instanceof Map)) throw new OciError("OCI_PATH_INVALID", `layout input files must be a Map of payload path to file path, found ${describeValue(files)}`);
  const entries = [...files.entries()].map(([p, f]) => [checkPayloadPath(p), f] as const);
  entries.sort((a, b) => compareCodePoints(a[0], b[0]));
  // Every input is checked before anything is created: a refused layout leaves no directory behind.
  for (const [payloadPath, source] of entries) await requireInputFile(source, payloadPath);
  const createdParents = await makeDirectory(path.dirname(path.resolve(dir)), { mode: 0o700, purpose: "OCI layout parent directory" });
  const removeCreatedParents = async (): Promise<void> => {
    for (const created of [...createdParents].reverse()) await rmdir(created).catch(() => undefined);
  };
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (error) {
    await removeCreatedParents();
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new OciError("OCI_LAYOUT_EXISTS", `layout directory already exists: ${dir}`);
    }
    throw error;
  }
  try {
    const blobsDir = path.join(dir, "blobs", "sha256");
    await makeDirectory(blobsDir, { mode: 0o700, purpose: "OCI layout" });
    const layers: TitledLayer[] = [];
    for (const [payloadPath, source] of entries) {
      layers.push({ path: payloadPath, descriptor: await copyIntoBlobs(blobsDir, source, payloadPath) });
    }
    const configBytes = Buffer.from(EMPTY_CONFIG_BYTES, "utf8");
    await writeFile(layoutBlobPath(dir, EMPTY_CONFIG_DESCRIPTOR.digest), configBytes, { mode: 0o600 });
    const { bytes: manifestBytes, descriptor: manifest } = artifactManifest(artifactType, layers);
    await writeFile(layoutBlobPath(dir, manifest.digest), manifestBytes, { mode: 0o600, flag: "wx" }).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
    await writeFile(path.join(dir, "oci-layout"), OCI_LAYOUT_FILE, { mode: 0o600 });
    const index = {
      schemaVersion: 2,
      manifests: [{ ...manifest, annotations: { [REF_NAME_ANNOTATION]: LAYOUT_REF_NAME } }],
    };
    await writeFile(path.join(dir, "index.json"), canonicalJsonBytes(index), { mode: 0o600 });
    await verifyBlobFile(layoutBlobPath(dir, EMPTY_CONFIG_DESCRIPTOR.digest), EMPTY_CONFIG_DESCRIPTOR);
    await verifyBlobFile(layoutBlobPath(dir, manifest.digest), manifest);
    return { manifest, manifestBytes };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    await removeCreatedParents();
    throw error;
  }
}

/**
 * An input of {@link writeLayout}: a regular file of at least one byte, not followed through a symlink.
 * @throws OciError `OCI_PATH_INVALID` saying what was found (missing, a symbolic link, a directory, empty) and the fix.
 */
async function requireInputFile(source: unknown, payloadPath: string): Promise<void> {
  const what = `input file for ${describeValue(payloadPath)}`;
  if (typeof source !== "string" || source.length === 0) throw new OciError("OCI_PATH_INVALID", `${what} must be a file path, found ${describeValue(source)}`);
  const st = await lstat(source).catch((error: NodeJS.ErrnoException) => error);
  if (st instanceof Error) {
    throw new OciError("OCI_PATH_INVALID", `${what} (${source}) cannot be read: ${st.code === "ENOENT" ? "it does not exist" : st.code ?? "unreadable"}; fix: pass the path of the file to publish as ${describeValue(payloadPath)}`);
  }
  if (st.isSymbolicLink()) throw new OciError("OCI_PATH_INVALID", `${what} (${source}) is a symbolic link, which is not followed; fix: pass the path of the file it points to`);
  if (!st.isFile()) throw new OciError("OCI_PATH_INVALID", `${what} (${source}) is not a regular file (found ${st.isDirectory() ? "a directory" : "a special file"})`);
  if (st.size === 0) throw new OciError("OCI_PATH_INVALID", `${what} (${source}) is empty (layers must be at least 1 byte)`);
}

async function readSmallRegularFile(filePath: string, maxBytes: number, what: string): Promise<Buffer> {
  let st;
  try {
    st = await lstat(filePath);
  } catch {
    throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: ${what} is missing`);
  }
  if (!st.isFile() || st.isSymbolicLink()) throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: ${what} is not a regular file`);
  if (st.size > maxBytes) throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: ${what} is larger than ${maxBytes} bytes`);
  const handle = await open(filePath, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const bytes = await handle.readFile();
    if (bytes.length > maxBytes) throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: ${what} is larger than ${maxBytes} bytes`);
    return bytes;
  } finally {
    await handle.close();
  }
}

/**
 * Check that `dir` is an OCI image layout root: a real directory (not a
 * symlink) whose `oci-layout` says `imageLayoutVersion` `1.0.0`, with
 * `blobs/sha256` a real directory when present.
 * @throws OciError `OCI_LAYOUT_INVALID`.
 */
export async function checkLayoutRoot(dir: string): Promise<void> {
  let st;
  try {
    st = await lstat(dir);
  } catch {
    throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: directory ${dir} does not exist`);
  }
  if (!st.isDirectory()) throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: ${dir} is not a directory (symlinks are refused)`);
  const marker = await readSmallRegularFile(path.join(dir, "oci-layout"), 4096, "oci-layout");
  let version: unknown;
  try {
    version = parseStrictJson(marker)["imageLayoutVersion"];
  } catch (error) {
    throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: oci-layout is not JSON (${error instanceof HermesPluginKitError ? error.code : "syntax"})`);
  }
  if (version !== "1.0.0") throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: expected imageLayoutVersion "1.0.0", found ${describeValue(version)}`);
  for (const sub of ["blobs", path.join("blobs", "sha256")]) {
    const s = await lstat(path.join(dir, sub)).catch(() => null);
    if (s !== null && !s.isDirectory()) throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: ${sub} is not a directory`);
  }
}

/**
 * Read and validate a layout written by {@link writeLayout} (or any layout of
 * the same shape) before use: `oci-layout`, `index.json` with exactly one
 * manifest whose ref name is `refName` (default `payload`), the manifest
 * (at most 1 MiB, artifact shape O1/O2), and every blob file (OCI image-spec "Descriptors":
 * regular non-symlink file, size, SHA-256).
 * @throws OciError `OCI_LAYOUT_INVALID`, `OCI_MANIFEST_TOO_LARGE`, `OCI_MANIFEST_INVALID`,
 *   `OCI_SIZE_MISMATCH`, `OCI_DIGEST_MISMATCH`; `OCI_ARGUMENT_INVALID` (`dir` not a path, `options` with a key other
 *   than `refName`, `refName` not a non-empty string).
 */
export async function readLayout(dir: string, options: { refName?: string } = {}): Promise<ReadLayout> {
  const call = "readLayout(dir, options)";
  requireStringArgument(dir, call, "dir", "the layout directory's path");
  requireOptions(options, call, ["refName"]);
  if (options.refName !== undefined) requireStringArgument(options.refName, call, "options.refName", "the manifest's ref name");
  const refName = options.refName ?? LAYOUT_REF_NAME;
  await checkLayoutRoot(dir);
  const indexBytes = await readSmallRegularFile(path.join(dir, "index.json"), MAX_MANIFEST_BYTES, "index.json");
  const manifest = findIndexEntry(indexBytes, refName);
  if (manifest.mediaType !== OCI_MANIFEST_MEDIA_TYPE) {
    throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: ${refName} must be an OCI image manifest, found ${describeValue(manifest.mediaType)}`);
  }
  if (manifest.size > MAX_MANIFEST_BYTES) {
    throw manifestTooLarge(`OCI manifest ${manifest.digest}`, `${manifest.size} bytes (index.json)`);
  }
  const manifestPath = layoutBlobPath(dir, manifest.digest);
  const manifestBytes = await readSmallRegularFile(manifestPath, MAX_MANIFEST_BYTES, `manifest blob ${manifest.digest}`);
  if (manifestBytes.length !== manifest.size) {
    throw new OciError("OCI_SIZE_MISMATCH", `OCI blob size mismatch for ${manifest.digest}: expected ${manifest.size} bytes, found ${manifestBytes.length}`);
  }
  const computed = digestOf(manifestBytes);
  if (computed !== manifest.digest) {
    throw new OciError("OCI_DIGEST_MISMATCH", `OCI blob SHA-256 mismatch: expected ${manifest.digest}, computed ${computed}`);
  }
  // The zod schema loads here, not with the transport (artifact-check.ts).
  const { checkArtifactManifest } = await import("./artifact-check.js");
  const parsed = checkArtifactManifest(manifestBytes);
  const seen = new Set<string>();
  for (const layer of parsed.layers) {
    if (seen.has(layer.path)) throw new OciError("OCI_MANIFEST_INVALID", `OCI manifest: duplicate layer title ${describeValue(layer.path)}`);
    seen.add(layer.path);
  }
  for (const desc of [parsed.config, ...parsed.layers.map((l) => l.descriptor)]) {
    await verifyBlobFile(layoutBlobPath(dir, desc.digest), desc);
  }
  return {
    dir,
    manifest,
    manifestBytes,
    artifactType: parsed.artifactType,
    config: parsed.config,
    layers: parsed.layers,
    blobPath: (digest: string) => layoutBlobPath(dir, digest),
  };
}

/**
 * The single `index.json` entry whose ref name is `refName`, as `{mediaType, digest, size}`.
 * @throws OciError `OCI_LAYOUT_INVALID` (bad index, no entry, several entries).
 */
export function findIndexEntry(indexBytes: Uint8Array, refName: string): Descriptor {
  const entries = parseIndexManifests(indexBytes).filter((d) => d.annotations?.[REF_NAME_ANNOTATION] === refName);
  if (entries.length !== 1) {
    throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: expected exactly one manifest named ${JSON.stringify(refName)} in index.json, found ${entries.length}`);
  }
  const e = entries[0] as Descriptor;
  return { mediaType: e.mediaType, digest: e.digest, size: e.size };
}

/**
 * Parse `index.json` bytes: strict JSON, `schemaVersion` 2, `manifests` an array of descriptors.
 * @throws OciError `OCI_LAYOUT_INVALID`.
 */
export function parseIndexManifests(indexBytes: Uint8Array): Descriptor[] {
  let json;
  try {
    json = parseStrictJson(indexBytes, { rejectIntegralFloats: false });
  } catch (error) {
    throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: index.json is not valid JSON (${error instanceof HermesPluginKitError ? error.code : "syntax"})`);
  }
  if (json["schemaVersion"] !== 2 || !Array.isArray(json["manifests"])) {
    throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: index.json must have schemaVersion 2 and a manifests array`);
  }
  return json["manifests"].map((m, i) => {
    if (m === null || typeof m !== "object" || Array.isArray(m)) throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: index.json manifests[${i}] is not an object`);
    const { mediaType, digest, size, annotations } = m;
    if (typeof mediaType !== "string" || typeof digest !== "string" || !/^sha256:[0-9a-f]{64}$/.test(digest) || typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) {
      throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: index.json manifests[${i}] is not a valid descriptor`);
    }
    const desc: Descriptor = { mediaType, digest, size };
    if (annotations !== undefined) {
      if (annotations === null || typeof annotations !== "object" || Array.isArray(annotations)) {
        throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: index.json manifests[${i}].annotations is not an object`);
      }
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(annotations)) {
        // OCI image-spec annotations.md: values MUST be strings; anything else is refused, not dropped.
        if (typeof v !== "string") throw new OciError("OCI_LAYOUT_INVALID", `OCI layout: index.json manifests[${i}].annotations[${JSON.stringify(k)}] is not a string`);
        out[k] = v;
      }
      desc.annotations = out;
    }
    return desc;
  });
}

/**
 * Open a blob file of a layout as a verifying stream, refusing symlinks
 * (`O_NOFOLLOW`); used by `LayoutTarget.fetch`.
 * @throws OciError `OCI_ARGUMENT_INVALID` (`filePath` not a non-empty string), `OCI_DESCRIPTOR_INVALID`.
 */
export function openBlobStream(filePath: string, desc: Descriptor): DescriptorVerifier {
  requireStringArgument(filePath, "openBlobStream(filePath, desc)", "filePath", "the blob file's path");
  checkDescriptor(desc);
  const stream = createReadStream(filePath, {
    flags: numericFlags(fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW),
    highWaterMark: STREAM_HIGH_WATER_MARK,
  });
  return verifyingStream(stream, desc, `OCI blob ${desc.digest}`);
}
