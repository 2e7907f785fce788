/**
 * `release stage`: put the exact tested bytes into the private registry
 * repository under the candidate tag, and prove they arrived intact.
 *
 * How it reaches the registry (access, tag rules, upload, verified download,
 * bootstrap) lives in `registry-access.ts`; the output writer in `output.ts`.
 *
 * Order (docs/release-run.md, "`release stage`"; docs/architecture.md,
 * "Release: steps and data flow"):
 * 1. T1/T2: the inputs are exactly `release-manifest.json`,
 *    `release-source.bundle`, `release-payload.sha256` and every entry of the
 *    artifact directory as `dist/<entry>`; each a regular file (never a
 *    symlink) with an allow-listed name. They are copied (O_NOFOLLOW) into a
 *    fresh private temp directory, hashed on the way.
 * 2. The deterministic layout is written from the copies (docs/oci.md; OCI image-spec layout).
 * 3. T3: the layout is read back through the consumer's verifying download
 *    path (`downloadRelease`), which runs every payload check (tested
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
import { createHash } from "node:crypto";
import { constants as fsConstants, createWriteStream } from "node:fs";
import { lstat, open, readdir, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { Transform, type TransformCallback } from "node:stream";
import {
  PAYLOAD_CHECKSUMS_FILE,
  RECEIPT_FILE,
  RELEASE_ARTIFACT_TYPE,
  RELEASE_MANIFEST_FILE,
  SOURCE_BUNDLE_FILE,
} from "../src/contract/constants.js";
import { describeValue, isDiscoveryTag } from "../src/contract/grammar.js";
import { isAllowedPayloadTitle } from "../src/contract/payload.js";
import type { ReleasePolicy } from "../src/contract/policy.js";
import { formatReference } from "../src/contract/reference.js";
import type { TestedManifest } from "../src/contract/schemas.js";
import { writeLayout } from "../src/oci/layout.js";
import { LayoutTarget } from "../src/oci/layout-target.js";
import { checkpoint } from "./checkpoint.js";
import { PipelineError } from "./errors.js";
import { outputJsonBytes, privateTempDir, writeOutputFile } from "./output.js";
import { requirePrivateWithBootstrap, resolveAccess, uploadArtifact, verifiedDownload, type RegistryAccessOptions } from "./registry-access.js";
import { makeDirectory } from "../src/contract/directory.js";

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
    await makeDirectory(dirname(dest), { mode: 0o700, purpose: "stage layout directory" });
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
      throw new PipelineError("STAGE_INPUT_INVALID", `stage input contains an unexpected or unsafe file: expected a file named ${name}, found ${describeValue(basename(file))}`);
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
      throw new PipelineError("STAGE_INPUT_INVALID", `stage input contains an unexpected or unsafe file: ${describeValue(payloadPath)} (expected only dist/<${packageName} tarball>)`);
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
    throw new PipelineError("STAGE_TAG_MISMATCH", `candidate tag must be candidate-<run_id>-<source_sha>, found ${describeValue(options.tag)}`);
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
    // Deterministic layout (docs/oci.md), then T3 through the verifying path.
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
