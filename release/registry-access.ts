/**
 * How the release steps reach the registry repository (stage, publish,
 * attest, promote, check-private, dry-run, run):
 * - access: the repository checked against the release policy, credentials,
 *   environment, upload chunk size and progress ({@link resolveAccess});
 * - tag rules (docs/release-run.md, "`release publish`"): a tag never moves to another digest
 *   ({@link refuseTagConflict}, {@link bindTag});
 * - upload of a local layout with crash checkpoints ({@link uploadArtifact});
 * - the verified download through the consumer's path ({@link verifiedDownload});
 * - the privacy gate with bootstrap ({@link requirePrivateWithBootstrap}).
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { BOOTSTRAP_ARTIFACT_TYPE, BOOTSTRAP_TAG } from "../src/contract/constants.js";
import { describeValue } from "../src/contract/grammar.js";
import type { ReleasePolicy } from "../src/contract/policy.js";
import { parseRepository, type Repository } from "../src/contract/reference.js";
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
import { checkpoint, type PipelineHooks } from "./checkpoint.js";
import { PipelineError } from "./errors.js";

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
  /** Time before the bar first appears (ms; default 1000; the CLI's `--verbose` passes 0). */
  progressDelayMs?: number;
  /** Test hooks. */
  hooks?: PipelineHooks;
  /** Stops an upload (`copy`'s `signal`, docs/oci.md "Stopping a copy"): `release run` passes its run's signal (SIGINT/SIGTERM). */
  signal?: AbortSignal;
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
  progressDelayMs: number | undefined;
  /** The signal that stops an upload, when given. */
  signal: AbortSignal | undefined;
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
      `repository ${describeValue(options.repository)} is not the release policy's registry repository ${describeValue(policy.registryRepository)}`,
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
    progressDelayMs: options.progressDelayMs,
    signal: options.signal,
  };
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
 * `tag` to it (the tag rules above): privacy re-check without bootstrap;
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
    bar ??= new TransferProgress(access.progress, "upload", total, { plainLines: access.progressLines, ...(access.progressDelayMs === undefined ? {} : { delayMs: access.progressDelayMs }) });
    bar.set(bytes);
  };
  try {
    await copy(source, checkpointedTarget(target, label, access.hooks), desc.digest, { tag: null, onProgress, ...(access.signal === undefined ? {} : { signal: access.signal }) });
  } finally {
    bar?.finish();
  }
  await checkpoint(access.hooks, `${label}:before-tag`);
  const outcome = await bindTag(target, desc, tag, "uploaded OCI discovery tag does not match the tested digest");
  return { descriptor: desc, tag: outcome, copied: !manifestPresent };
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
 * The bootstrap callback of the privacy gate (docs/release-publish.md, "The privacy gate"): push the
 * zero-layer bootstrap artifact to tag `private-bootstrap` (`tagIfAbsent`).
 */
export function bootstrapPusher(access: RegistryAccess, tmpParent: string): () => Promise<void> {
  return async () => {
    const dir = join(tmpParent, `bootstrap-${randomBytes(4).toString("hex")}`);
    const layout = await writeLayout(dir, BOOTSTRAP_ARTIFACT_TYPE, new Map());
    const target = await openWriteTarget(access, true);
    await copy(await LayoutTarget.open(dir), target, layout.manifest.digest, { tag: null, ...(access.signal === undefined ? {} : { signal: access.signal }) });
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
