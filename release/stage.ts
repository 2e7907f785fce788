/**
 * `release stage`: put the exact tested bytes into the private registry
 * repository under the candidate tag, and prove they arrived intact.
 *
 * Owns the registry-writing half shared by `stage` and `publish`: the
 * {@link PipelineError} codes, the upload rule of reference 3.17 W1-W4
 * ({@link uploadArtifact}), checkpoint hooks for crash injection, and the
 * atomic output writer ({@link writeOutputFile}).
 *
 * Order (reference `original-release-contract.md` 3.16 T1-T4, 3.17, 3.18
 * SP1, 2.5, 2.8, 4; DESIGN.md section 4):
 * 1. T1/T2: the inputs are exactly `release-manifest.json`,
 *    `release-source.bundle`, `release-payload.sha256` and every entry of the
 *    artifact directory as `dist/<entry>`; each a regular file (never a
 *    symlink) with an allow-listed name. They are copied (O_NOFOLLOW) into a
 *    fresh private temp directory, hashed on the way.
 * 2. The deterministic layout is written from the copies (reference 4).
 * 3. T3: the layout is read back through the consumer's verifying download
 *    path (`downloadRelease`), which runs every payload check (3.9: tested
 *    manifest vs. tarball, checksum file, isolated source bundle check).
 * 4. T4: `--tag` must be `candidate-<run_id>-<source_sha>` of that manifest.
 * 5. Privacy gate WITH bootstrap (an absent package gets only the zero-layer
 *    bootstrap artifact at `private-bootstrap`, then must prove privacy).
 * 6. Upload (W1): privacy re-check without bootstrap; an existing tag with
 *    another digest fails before any write; blobs and manifest are copied;
 *    the tag is bound with `tagIfAbsent`; the tag must resolve to the digest.
 * 7. SP1: the digest is re-downloaded through the verifying path and each
 *    file's SHA-256 compared with the tested input.
 * 8. `{"bundle_reference": ...}` (canonical compact + newline) is written last.
 */
import { createHash, randomBytes } from "node:crypto";
import { constants as fsConstants, createWriteStream } from "node:fs";
import { chmod, lstat, mkdir, mkdtemp, open, readdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Transform, type TransformCallback } from "node:stream";
import { canonicalJson } from "../src/contract/canonical-json.js";
import {
  BOOTSTRAP_ARTIFACT_TYPE,
  BOOTSTRAP_TAG,
  PAYLOAD_CHECKSUMS_FILE,
  RECEIPT_FILE,
  RELEASE_ARTIFACT_TYPE,
  RELEASE_MANIFEST_FILE,
  SOURCE_BUNDLE_FILE,
} from "../src/contract/constants.js";
import { HermesPluginKitError } from "../src/contract/errors.js";
import { describe, isDiscoveryTag } from "../src/contract/grammar.js";
import { isAllowedPayloadTitle } from "../src/contract/payload.js";
import type { ReleasePolicy } from "../src/contract/policy.js";
import { formatReference, parseRepository, type Repository } from "../src/contract/reference.js";
import type { TestedManifest } from "../src/contract/schemas.js";
import { credentialsFromEnv, downloadRelease, type RegistryCredentials, type VerifiedDownload } from "../src/fetch/fetch.js";
import { requirePrivate, requirePrivateForRead, type PrivacyEvidence } from "../src/fetch/privacy.js";
import { TransferProgress } from "../src/fetch/progress.js";
import { isOciError } from "../src/oci/errors.js";
import { writeLayout } from "../src/oci/layout.js";
import { LayoutTarget } from "../src/oci/layout-target.js";
import { openTarget } from "../src/oci/open.js";
import { checkChunkSize } from "../src/oci/registry-target.js";
import type { Descriptor, ReadOnlyTarget, Target } from "../src/oci/target.js";
import { copy, tagIfAbsent } from "../src/oci/transfer.js";

/**
 * Stable codes of {@link PipelineError} (stage, promote, publish, run):
 *
 * - `STAGE_INPUT_INVALID`: the artifact directory is a symlink or not a directory, an input is missing, a
 *   symlink, not a regular file, empty, or has a name outside the allow-list (T1/T2).
 * - `STAGE_TAG_MISMATCH`: `--tag` is not `candidate-<run_id>-<source_sha>` of the tested manifest (T4).
 * - `STAGE_BYTES_DIFFER`: the re-downloaded payload differs from the tested inputs (SP1).
 * - `RELEASE_REPOSITORY_MISMATCH`: the repository is not the policy's registry repository.
 * - `RELEASE_TAG_CONFLICT`: a tag already names another digest; nothing was written (W1/W2).
 * - `RELEASE_TAG_MISMATCH`: after binding, a tag does not resolve to the expected digest (W1/W2).
 * - `PUBLISH_REQUIRES_TESTED`: the reference is not a tested release bundle (SP2).
 * - `PUBLISH_PAYLOAD_CHANGED`: the bundle fetched after binding differs from the first fetch (SP3).
 * - `PUBLISH_RECEIPT_CHANGED`: the re-downloaded receipt bytes differ from the uploaded ones (SP5).
 * - `PROMOTE_TOKEN_MISSING`: `SOURCE_PROMOTION_TOKEN` is empty for a non-local remote (nothing was done).
 * - `PROMOTE_REMOTE_INVALID`: the remote is missing, or its URL carries credentials.
 * - `PROMOTE_SOURCE_MISMATCH`: the release commit's identity facts do not hold (parent, tag, touched files).
 * - `PROMOTE_REMOTE_STATE`: remote `main`/tag are neither (trigger, absent) nor (release, release).
 * - `PROMOTE_NOT_CONFIRMED`: after the push, remote `main` and the tag do not both equal the release SHA.
 * - `OUTPUT_WRITE_FAILED`: an output file could not be written.
 * - `RUN_WORKSPACE_INVALID`, `RUN_WORKSPACE_LOCKED`, `RUN_STATE_INVALID`, `RUN_STEP_DIVERGED`,
 *   `RUN_INSTALL_FAILED`: see `release/run.ts`.
 */
export type PipelineErrorCode =
  | "RUN_INSTALL_FAILED"
  | "STAGE_INPUT_INVALID"
  | "STAGE_TAG_MISMATCH"
  | "STAGE_BYTES_DIFFER"
  | "RELEASE_REPOSITORY_MISMATCH"
  | "RELEASE_TAG_CONFLICT"
  | "RELEASE_TAG_MISMATCH"
  | "PUBLISH_REQUIRES_TESTED"
  | "PUBLISH_PAYLOAD_CHANGED"
  | "PUBLISH_RECEIPT_CHANGED"
  | "PROMOTE_TOKEN_MISSING"
  | "PROMOTE_REMOTE_INVALID"
  | "PROMOTE_SOURCE_MISMATCH"
  | "PROMOTE_REMOTE_STATE"
  | "PROMOTE_NOT_CONFIRMED"
  | "OUTPUT_WRITE_FAILED"
  | "RUN_WORKSPACE_INVALID"
  | "RUN_STATE_INVALID"
  | "RUN_STEP_DIVERGED"
  | "RUN_WORKSPACE_LOCKED";

/** A stage, promote, publish or run failure; `code` is one of {@link PipelineErrorCode}. */
export class PipelineError extends HermesPluginKitError {
  declare readonly code: PipelineErrorCode;

  constructor(code: PipelineErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/**
 * Test hooks of the pipeline steps. `checkpoint(point)` is called at named
 * points (step boundaries, after each blob pushed during an upload, before a
 * tag is bound); `release run` uses it for crash injection
 * (`HERMES_PLUGIN_KIT_CRASH_AT`). Production callers pass nothing.
 */
export interface PipelineHooks {
  checkpoint?: (point: string) => void | Promise<void>;
}

/** How a step reaches the registry repository. */
export interface RegistryAccessOptions {
  /** `host[:port]/path` or `oci-layout:<dir>`; must equal the policy's `registryRepository`. */
  repository: string;
  /** Plain HTTP (loopback registries only). */
  plainHttp?: boolean;
  /** Registry credentials; default from the environment (`REGISTRY_USERNAME`/`REGISTRY_PASSWORD`, `GH_TOKEN` for ghcr.io). */
  credentials?: RegistryCredentials;
  /** Environment for the privacy gate and credentials (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Parent of private temp directories (default the OS temp directory). */
  tmpDir?: string;
  /**
   * Largest upload request body (bytes, at least 64 KiB) for a registry with a request-size cap:
   * blobs above it go up in chunks (`RegistryTarget` `chunkSize`; default 64 MiB).
   */
  chunkSize?: number;
  /** Where the upload progress bar goes (default stderr; drawn on a TTY only, `../src/fetch/progress.ts`); `null` silences. */
  progress?: NodeJS.WritableStream | null;
  /** On a `progress` stream that is not a TTY, write plain progress lines instead of nothing (`--verbose`). */
  progressLines?: boolean;
  /** Test hooks. */
  hooks?: PipelineHooks;
}

/** Resolved registry access: parsed repository, credentials, environment. */
export interface RegistryAccess {
  repository: Repository;
  plainHttp: boolean;
  credentials: RegistryCredentials | undefined;
  env: Readonly<Record<string, string | undefined>>;
  hooks: PipelineHooks;
  /** Largest upload request body (bytes), when set. */
  chunkSize: number | undefined;
  /** Where the upload progress bar goes (`null`: nowhere), and whether a non-TTY stream gets plain lines. */
  progress: NodeJS.WritableStream | null;
  progressLines: boolean;
}

/**
 * Parse and check the access options against `policy`.
 * @throws PipelineError `RELEASE_REPOSITORY_MISMATCH`; ReleaseContractError `REPOSITORY_INVALID`;
 *   FetchError `FETCH_CREDENTIALS_INCOMPLETE`; OciError `OCI_CHUNK_SIZE_INVALID`.
 */
export function resolveAccess(options: RegistryAccessOptions, policy: ReleasePolicy): RegistryAccess {
  if (options.repository !== policy.registryRepository) {
    throw new PipelineError(
      "RELEASE_REPOSITORY_MISMATCH",
      `repository ${describe(options.repository)} is not the release policy's registry repository ${describe(policy.registryRepository)}`,
    );
  }
  const repository = parseRepository(options.repository);
  const env = options.env ?? process.env;
  return {
    repository,
    plainHttp: options.plainHttp === true,
    credentials: options.credentials ?? credentialsFromEnv(repository, env),
    env,
    hooks: options.hooks ?? {},
    chunkSize: options.chunkSize === undefined ? undefined : checkChunkSize(options.chunkSize),
    progress: options.progress === undefined ? process.stderr : options.progress,
    progressLines: options.progressLines === true,
  };
}

/** Call the checkpoint hook, if any. */
export async function checkpoint(hooks: PipelineHooks | undefined, point: string): Promise<void> {
  if (hooks?.checkpoint !== undefined) await hooks.checkpoint(point);
}

/** Open the write target of `access` (layout stores are created 0700 when `create`). */
export async function openWriteTarget(access: RegistryAccess, create = false): Promise<Target> {
  return openTarget(access.repository.repository, {
    plainHttp: access.plainHttp,
    ...(access.credentials === undefined ? {} : { credentials: access.credentials }),
    ...(access.chunkSize === undefined ? {} : { registry: { chunkSize: access.chunkSize } }),
    create,
  });
}

/** A target that calls `checkpoint("<label>:pushed:<n>")` after its n-th push (crash injection inside uploads). */
function checkpointedTarget(target: Target, label: string, hooks: PipelineHooks): Target {
  if (hooks.checkpoint === undefined) return target;
  let pushed = 0;
  const wrapped: Target = {
    resolve: (ref) => target.resolve(ref),
    fetch: (desc) => target.fetch(desc),
    exists: (desc) => target.exists(desc),
    tags: () => target.tags(),
    tag: (desc, tag) => target.tag(desc, tag),
    async push(desc: Descriptor, content: Readable) {
      await target.push(desc, content);
      pushed += 1;
      await checkpoint(hooks, `${label}:pushed:${pushed}`);
    },
  };
  if (typeof target.tagIfAbsent === "function") wrapped.tagIfAbsent = (desc, tag) => target.tagIfAbsent!(desc, tag);
  return wrapped;
}

/** The digest a tag names, or `null` when the tag is absent. */
export async function resolveTag(target: ReadOnlyTarget, tag: string): Promise<string | null> {
  try {
    return (await target.resolve(tag)).digest;
  } catch (error) {
    if (isOciError(error, "OCI_NOT_FOUND")) return null;
    throw error;
  }
}

/**
 * Refuse when `tag` names a digest other than `digest` (W1/W2), before any write.
 * @throws PipelineError `RELEASE_TAG_CONFLICT`.
 */
export async function refuseTagConflict(target: ReadOnlyTarget, tag: string, digest: string): Promise<"absent" | "same"> {
  const existing = await resolveTag(target, tag);
  if (existing === null) return "absent";
  if (existing !== digest) {
    throw new PipelineError("RELEASE_TAG_CONFLICT", `refusing to replace a different OCI digest at ${tag}: the tag names ${existing}, expected ${digest}`);
  }
  return "same";
}

/**
 * Bind `tag` to `desc` with `tagIfAbsent` and require the tag to resolve to
 * `desc.digest` afterwards (W1-W3).
 * @returns `"tagged"` (this call wrote the tag) or `"already-tagged"` (no write).
 * @throws PipelineError `RELEASE_TAG_CONFLICT`, `RELEASE_TAG_MISMATCH`; OciError from the target.
 */
export async function bindTag(target: Target, desc: Descriptor, tag: string, mismatchMessage: string): Promise<"tagged" | "already-tagged"> {
  let outcome: "tagged" | "already-tagged";
  try {
    outcome = await tagIfAbsent(target, { mediaType: desc.mediaType, digest: desc.digest, size: desc.size }, tag);
  } catch (error) {
    if (isOciError(error, "OCI_TAG_CONFLICT")) throw new PipelineError("RELEASE_TAG_CONFLICT", error.message, { cause: error });
    if (isOciError(error, "OCI_TAG_MISMATCH")) throw new PipelineError("RELEASE_TAG_MISMATCH", `${mismatchMessage}: ${error.message}`, { cause: error });
    throw error;
  }
  const after = await resolveTag(target, tag);
  if (after !== desc.digest) {
    throw new PipelineError("RELEASE_TAG_MISMATCH", `${mismatchMessage}: ${tag} names ${after ?? "nothing"}, expected ${desc.digest}`);
  }
  return outcome;
}

/** What {@link uploadArtifact} did. */
export interface UploadOutcome {
  /** The manifest descriptor now in the repository. */
  descriptor: Descriptor;
  /** `"tagged"` when this call bound the tag, `"already-tagged"` when it was bound to the same digest before. */
  tag: "tagged" | "already-tagged";
  /** Whether this call uploaded the manifest (false when the repository already had it). */
  copied: boolean;
}

/**
 * Upload a local layout's manifest (by digest) to the repository and bind
 * `tag` to it (reference 3.17 W1, W3, W4): privacy re-check without bootstrap;
 * an existing tag with another digest fails before any write; an existing tag
 * with the same digest is success without a write; otherwise the graph is
 * copied (blobs the target has are skipped) and the tag bound with `tagIfAbsent`.
 * Checkpoints: `<label>:pushed:<n>` after each pushed blob/manifest, `<label>:before-tag`.
 * `createStore` initialises an `oci-layout:` store whose directory the privacy gate created (stage only).
 * @throws PrivacyError `PRIVACY_*`; PipelineError `RELEASE_TAG_CONFLICT`, `RELEASE_TAG_MISMATCH`; OciError.
 */
export async function uploadArtifact(
  access: RegistryAccess,
  layoutDir: string,
  desc: Descriptor,
  tag: string,
  label: string,
  options: { createStore?: boolean } = {},
): Promise<UploadOutcome> {
  await requirePrivateForRead(access.repository, { env: access.env, plainHttp: access.plainHttp });
  const target = await openWriteTarget(access, options.createStore === true);
  const state = await refuseTagConflict(target, tag, desc.digest);
  if (state === "same") return { descriptor: desc, tag: "already-tagged", copied: false };
  const source = await LayoutTarget.open(layoutDir);
  const manifestPresent = await target.exists(desc);
  // The upload's progress bar (stderr by default; a TTY only, after 1 s; nothing when piped unless plain lines were asked for).
  let bar: TransferProgress | undefined;
  const onProgress = (bytes: number, total: number): void => {
    bar ??= new TransferProgress(access.progress, "upload", total, { plainLines: access.progressLines });
    bar.set(bytes);
  };
  try {
    await copy(source, checkpointedTarget(target, label, access.hooks), desc.digest, { tag: null, onProgress });
  } finally {
    bar?.finish();
  }
  await checkpoint(access.hooks, `${label}:before-tag`);
  const outcome = await bindTag(target, desc, tag, "uploaded OCI discovery tag does not match the tested digest");
  return { descriptor: desc, tag: outcome, copied: !manifestPresent };
}

/**
 * Write `bytes` to `path` atomically: a temp file in the same directory
 * (mode 0644), fsync'd, then renamed over `path` (parents created).
 * @throws PipelineError `OUTPUT_WRITE_FAILED`.
 */
export async function writeOutputFile(path: string, bytes: Uint8Array | string): Promise<void> {
  const target = resolve(path);
  const temp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await mkdir(dirname(target), { recursive: true });
    const handle = await open(temp, "wx", 0o644);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw new PipelineError("OUTPUT_WRITE_FAILED", `cannot write ${target}: ${(error as NodeJS.ErrnoException).code ?? "error"}`, { cause: error });
  }
}

/** Canonical compact JSON plus one newline (reference 2.8/2.9). */
export function outputJsonBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), "utf8");
}

/** Make a fresh private (0700) temp directory. */
export async function privateTempDir(parent: string | undefined, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(parent ?? tmpdir(), prefix));
  await chmod(dir, 0o700);
  return dir;
}

/**
 * Download `reference` through the consumer's verifying path (privacy on
 * read, manifest and layer checks, payload checks) from the access's repository.
 */
export async function verifiedDownload(
  access: RegistryAccess,
  reference: string,
  policy: ReleasePolicy,
  options: { expect?: "bundle" | "receipt"; tmpDir?: string; target?: ReadOnlyTarget } = {},
): Promise<VerifiedDownload> {
  return downloadRelease({
    reference,
    repository: access.repository.repository,
    plainHttp: access.plainHttp,
    ...(access.credentials === undefined ? {} : { credentials: access.credentials }),
    ...(options.expect === undefined ? {} : { expect: options.expect }),
    policy: { package: policy.package, gates: policy.gates },
    progress: null,
    env: access.env,
    ...(options.tmpDir === undefined ? {} : { tmpDir: options.tmpDir }),
    ...(options.target === undefined ? {} : { openTarget: async () => options.target as ReadOnlyTarget, requirePrivate: async () => undefined }),
  });
}

/**
 * The bootstrap callback of the privacy gate (reference 2.10, 5.1): push the
 * zero-layer bootstrap artifact to tag `private-bootstrap` (`tagIfAbsent`).
 */
export function bootstrapPusher(access: RegistryAccess, tmpParent: string): () => Promise<void> {
  return async () => {
    const dir = join(tmpParent, `bootstrap-${randomBytes(4).toString("hex")}`);
    const layout = await writeLayout(dir, BOOTSTRAP_ARTIFACT_TYPE, new Map());
    const target = await openWriteTarget(access, true);
    await copy(await LayoutTarget.open(dir), target, layout.manifest.digest, { tag: null });
    await bindTag(target, layout.manifest, BOOTSTRAP_TAG, "bootstrap tag does not match the bootstrap artifact");
  };
}

/**
 * The privacy gate with bootstrap (`release check-private --bootstrap`, and
 * the first thing `stage` does with the registry).
 * @throws PrivacyError `PRIVACY_*`.
 */
export async function requirePrivateWithBootstrap(access: RegistryAccess, tmpParent: string): Promise<PrivacyEvidence> {
  return requirePrivate(access.repository, { env: access.env, plainHttp: access.plainHttp, bootstrap: bootstrapPusher(access, tmpParent) });
}

/** Inputs of {@link stageRelease} (the `release stage` flags). */
export interface StageOptions extends RegistryAccessOptions {
  /** What the tested manifest must match (package, registry repository, gate commands). */
  policy: ReleasePolicy;
  /** `candidate-<run_id>-<source_sha>`. */
  tag: string;
  /** `release-manifest.json` (the file must have exactly this name). */
  manifest: string;
  /** The artifact directory (`dist/`): every entry is staged as `dist/<entry>`. */
  artifactDir: string;
  /** `release-source.bundle`. */
  sourceBundle: string;
  /** `release-payload.sha256`. */
  payloadChecksums: string;
  /** Where `{"bundle_reference": ...}` is written (last); none when absent. */
  output?: string;
}

/** What {@link stageRelease} returns (and `release stage` prints). */
export interface StageResult {
  /** `<repository>@sha256:<64 hex>`. */
  bundle_reference: string;
  /** The candidate tag. */
  tag: string;
  version: string;
  source_sha: string;
  /** `"tagged"` when this run bound the candidate tag, `"already-tagged"` on a retry. */
  upload: "tagged" | "already-tagged";
  /** Whether the privacy gate pushed the bootstrap artifact. */
  bootstrapped: boolean;
  /** Files staged: payload path, SHA-256 (hex), size in bytes; sorted by path. */
  files: { path: string; sha256: string; size: number }[];
}

/** Pass-through that hashes and counts. */
class Sha256Counter extends Transform {
  private readonly hash = createHash("sha256");
  size = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.size += chunk.length;
    this.hash.update(chunk);
    cb(null, chunk);
  }
  hex(): string {
    return this.hash.digest("hex");
  }
}

/**
 * Copy a regular, non-symlink, non-empty file (opened with O_NOFOLLOW) to a
 * new file `dest` (mode 0600), hashing the bytes on the way.
 * @throws PipelineError `STAGE_INPUT_INVALID`.
 */
async function copyInput(source: string, dest: string, payloadPath: string): Promise<{ sha256: string; size: number }> {
  const st = await lstat(source).catch(() => null);
  if (st === null) throw new PipelineError("STAGE_INPUT_INVALID", `stage input ${payloadPath} is missing: ${source}`);
  if (st.isSymbolicLink() || !st.isFile()) {
    throw new PipelineError("STAGE_INPUT_INVALID", `stage input contains an unexpected or unsafe file: ${payloadPath} must be a regular file, not a ${st.isSymbolicLink() ? "symlink" : "non-regular file"}`);
  }
  let handle;
  try {
    handle = await open(source, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch {
    throw new PipelineError("STAGE_INPUT_INVALID", `stage input contains an unexpected or unsafe file: ${payloadPath} cannot be opened without following links`);
  }
  try {
    const fst = await handle.stat();
    if (!fst.isFile() || fst.size === 0) {
      throw new PipelineError("STAGE_INPUT_INVALID", `stage input ${payloadPath} must be a non-empty regular file`);
    }
    await mkdir(dirname(dest), { recursive: true, mode: 0o700 });
    const counter = new Sha256Counter();
    await pipeline(handle.createReadStream({ autoClose: false }), counter, createWriteStream(dest, { flags: "wx", mode: 0o600 }));
    return { sha256: counter.hex(), size: counter.size };
  } finally {
    await handle.close();
  }
}

/**
 * Collect the stage inputs (T1, T2): the three static files, each with its
 * exact payload name, and `dist/<entry>` for every entry of the artifact
 * directory, each on the allow-list for the policy's package.
 * @returns payload path -> source file.
 * @throws PipelineError `STAGE_INPUT_INVALID`.
 */
export async function collectStageInputs(options: Pick<StageOptions, "manifest" | "artifactDir" | "sourceBundle" | "payloadChecksums">, packageName: string): Promise<Map<string, string>> {
  const inputs = new Map<string, string>();
  const statics: [string, string][] = [
    [RELEASE_MANIFEST_FILE, options.manifest],
    [SOURCE_BUNDLE_FILE, options.sourceBundle],
    [PAYLOAD_CHECKSUMS_FILE, options.payloadChecksums],
  ];
  for (const [name, file] of statics) {
    if (basename(file) !== name) {
      throw new PipelineError("STAGE_INPUT_INVALID", `stage input contains an unexpected or unsafe file: expected a file named ${name}, found ${describe(basename(file))}`);
    }
    inputs.set(name, file);
  }
  const st = await lstat(options.artifactDir).catch(() => null);
  if (st === null) throw new PipelineError("STAGE_INPUT_INVALID", `artifact directory ${options.artifactDir} does not exist`);
  if (st.isSymbolicLink()) throw new PipelineError("STAGE_INPUT_INVALID", `artifact directory must not be a symlink: ${options.artifactDir}`);
  if (!st.isDirectory()) throw new PipelineError("STAGE_INPUT_INVALID", `artifact directory ${options.artifactDir} is not a directory`);
  const entries = (await readdir(options.artifactDir)).sort();
  if (entries.length === 0) throw new PipelineError("STAGE_INPUT_INVALID", `artifact directory ${options.artifactDir} is empty`);
  for (const entry of entries) {
    const payloadPath = `dist/${entry}`;
    if (!isAllowedPayloadTitle(payloadPath, packageName) || payloadPath === RECEIPT_FILE) {
      throw new PipelineError("STAGE_INPUT_INVALID", `stage input contains an unexpected or unsafe file: ${describe(payloadPath)} (expected only dist/<${packageName} tarball>)`);
    }
    inputs.set(payloadPath, join(options.artifactDir, entry));
  }
  return inputs;
}

/** The candidate tag of a tested manifest: `candidate-<run_id>-<source_sha>`. */
export function candidateTag(manifest: TestedManifest): string {
  return `candidate-${manifest.evidence.workflow.run_id}-${manifest.source_sha}`;
}

/**
 * `release stage`: see the module comment for the order of checks.
 * Rerunning with the same bytes (mtimes may differ) gives the same reference
 * and uploads nothing.
 *
 * @returns the bundle reference and what was done.
 * @throws PipelineError `STAGE_INPUT_INVALID`, `STAGE_TAG_MISMATCH`, `STAGE_BYTES_DIFFER`,
 *   `RELEASE_REPOSITORY_MISMATCH`, `RELEASE_TAG_CONFLICT`, `RELEASE_TAG_MISMATCH`, `OUTPUT_WRITE_FAILED`;
 *   the payload codes of `downloadRelease` (ReleaseContractError from the tested manifest,
 *   FetchError `PAYLOAD_SHA256_MISMATCH`, `SOURCE_BUNDLE_*`, ...); PrivacyError `PRIVACY_*`; OciError.
 */
export async function stageRelease(options: StageOptions): Promise<StageResult> {
  const { policy } = options;
  const access = resolveAccess(options, policy);
  if (!isDiscoveryTag(options.tag) || !options.tag.startsWith("candidate-")) {
    throw new PipelineError("STAGE_TAG_MISMATCH", `candidate tag must be candidate-<run_id>-<source_sha>, found ${describe(options.tag)}`);
  }
  const inputs = await collectStageInputs(options, policy.package);
  const work = await privateTempDir(options.tmpDir, "hpk-stage-");
  try {
    // T2: copy into a fresh private payload directory, hashing on the way.
    const payloadDir = join(work, "payload");
    const copies = new Map<string, string>();
    const tested = new Map<string, { sha256: string; size: number }>();
    for (const [payloadPath, source] of inputs) {
      const dest = join(payloadDir, payloadPath);
      tested.set(payloadPath, await copyInput(source, dest, payloadPath));
      copies.set(payloadPath, dest);
    }
    // Deterministic layout (reference 4), then T3 through the verifying path.
    const layoutDir = join(work, "layout");
    const layout = await writeLayout(layoutDir, RELEASE_ARTIFACT_TYPE, copies);
    const reference = formatReference(access.repository.repository, layout.manifest.digest);
    const local = await verifiedDownload(access, reference, policy, { expect: "bundle", tmpDir: work, target: await LayoutTarget.open(layoutDir) });
    const manifest = local.document as TestedManifest;
    await local.cleanup();
    // T4.
    const expectedTag = candidateTag(manifest);
    if (options.tag !== expectedTag) {
      throw new PipelineError("STAGE_TAG_MISMATCH", `candidate tag does not match the tested run and source: expected ${expectedTag}, found ${options.tag}`);
    }
    await checkpoint(access.hooks, "stage:verified");
    // Privacy gate with bootstrap, then the upload (W1).
    const evidence = await requirePrivateWithBootstrap(access, work);
    await checkpoint(access.hooks, "stage:private");
    const upload = await uploadArtifact(access, layoutDir, layout.manifest, options.tag, "stage:upload", { createStore: true });
    await checkpoint(access.hooks, "stage:uploaded");
    // SP1: re-download by digest and compare with the tested inputs.
    const remote = await verifiedDownload(access, reference, policy, { expect: "bundle", tmpDir: work });
    try {
      const got = new Map(remote.files.map((f) => [f.path, f]));
      const differs = [...tested.keys()].filter((p) => got.get(p)?.sha256 !== tested.get(p)?.sha256 || got.get(p)?.size !== tested.get(p)?.size);
      if (differs.length > 0 || got.size !== tested.size) {
        throw new PipelineError("STAGE_BYTES_DIFFER", `staged bytes differ from the tested payload: ${differs.join(", ") || "file set differs"} (${reference})`);
      }
    } finally {
      await remote.cleanup();
    }
    await checkpoint(access.hooks, "stage:before-output");
    if (options.output !== undefined) await writeOutputFile(options.output, outputJsonBytes({ bundle_reference: reference }));
    return {
      bundle_reference: reference,
      tag: options.tag,
      version: manifest.version,
      source_sha: manifest.source_sha,
      upload: upload.tag,
      bootstrapped: evidence.bootstrapped,
      files: [...tested.entries()].map(([path, t]) => ({ path, sha256: t.sha256, size: t.size })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
