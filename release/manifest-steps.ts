/**
 * `release create-manifest`, `release verify-manifest` and `release checksums`:
 * the glue between the gate evidence files, the artifact directory and the
 * pure contract in `src/contract/manifest.ts` and `src/contract/payload.ts`
 * (docs/release-build.md, "Steps"; docs/contract.md).
 *
 * create-manifest reads `<evidence dir>/<gate>.json` for the four test gates
 * (written by `release gate`), recomputes the artifact record from the
 * tarball bytes, assembles the tested manifest with `createTestedManifest`
 * (which validates it completely before anything is written) and writes its
 * canonical pretty bytes. verify-manifest re-reads and re-checks it against
 * the artifact directory. checksums verifies the manifest against the
 * artifact directory again and writes `release-payload.sha256` over the
 * source bundle, the manifest and the tarball, in that order.
 */
import { lstat, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join, resolve as resolvePath } from "node:path";
import { PAYLOAD_CHECKSUMS_FILE, RELEASE_MANIFEST_FILE, SOURCE_BUNDLE_FILE } from "../src/contract/constants.js";
import { createTestedManifest, hashFile, inspectDistTarball, readReleaseJsonFile, verifyManifest, writeTestedManifestFile, type GateResult } from "../src/contract/manifest.js";
import { installTimeBehaviour } from "../src/contract/install-time.js";
import { bundleChecksumPaths, formatPayloadChecksums, parsePayloadChecksums } from "../src/contract/payload.js";
import { TEST_GATES, type TestGate } from "../src/contract/policy.js";
import { isStableSemver } from "../src/contract/grammar.js";
import type { TestedManifest } from "../src/contract/schemas.js";
import { readReleaseConfig } from "./config.js";
import { ReleaseStepError } from "./errors.js";
import { evidenceFile } from "./gate.js";
import { resolveCommit } from "./git.js";
import { makeDirectory } from "../src/contract/directory.js";

const GATE_KEYS = ["command", "result", "source_sha", "status"];

/**
 * Read one gate evidence file written by `release gate`: strict JSON, an
 * object with exactly `status`, `result`, `source_sha`, `command` (strings),
 * plus `mcp_sdk_version` for `host_contract` only.
 * @throws ReleaseContractError J1-J3 codes; ReleaseStepError `RELEASE_EVIDENCE_INVALID`.
 */
export async function readGateEvidence(path: string, gate: TestGate): Promise<GateResult> {
  const doc = await readReleaseJsonFile(path);
  const allowed = gate === "host_contract" ? [...GATE_KEYS, "mcp_sdk_version"] : GATE_KEYS;
  const keys = Object.keys(doc).sort();
  const unexpected = keys.filter((k) => !allowed.includes(k));
  const missing = GATE_KEYS.filter((k) => !keys.includes(k));
  if (unexpected.length > 0 || missing.length > 0) {
    throw new ReleaseStepError("RELEASE_EVIDENCE_INVALID", `evidence ${path} for gate ${gate}: unexpected keys [${unexpected.join(", ")}], missing keys [${missing.join(", ")}]`);
  }
  for (const k of keys) {
    if (typeof doc[k] !== "string") throw new ReleaseStepError("RELEASE_EVIDENCE_INVALID", `evidence ${path} for gate ${gate}: ${k} must be a string`);
  }
  return doc as unknown as GateResult;
}

/** Options of {@link createManifestStep}. */
export interface CreateManifestOptions {
  /** The releasing package's checkout (package.json gives the policy; default `process.cwd()`). */
  dir?: string;
  previousVersion: string;
  version: string;
  tag: string;
  /** The release commit (40 lowercase hex). */
  sourceSha: string;
  /** Workflow run id (`[1-9][0-9]*`). */
  runId: string;
  /** Workflow run attempt (integer >= 1). */
  runAttempt: number;
  /** Directory holding exactly the tarball (default `./dist`). */
  artifactDir?: string;
  /** Directory of gate evidence files (default `./evidence`). */
  evidenceDir?: string;
  /** MCP SDK version exercised by the host contract; must agree with the host_contract evidence when both exist. */
  mcpSdkVersion?: string;
  /** Output path (default `./release-manifest.json`). */
  output?: string;
}

/** Output of `release create-manifest` and `release verify-manifest`. */
export interface ManifestStepResult {
  /** Absolute manifest path. */
  manifest: string;
  /** SHA-256 of the manifest bytes. */
  sha256: string;
  package: string;
  version: string;
  tag: string;
  release_class: string;
  source_sha: string;
  promotion: TestedManifest["promotion"];
  artifacts: TestedManifest["artifacts"];
}

function summary(path: string, sha256: string, m: TestedManifest): ManifestStepResult {
  return { manifest: path, sha256, package: m.package, version: m.version, tag: m.tag, release_class: m.release_class, source_sha: m.source_sha, promotion: m.promotion, artifacts: m.artifacts };
}

async function refuseSymlink(path: string): Promise<void> {
  const st = await lstat(path).catch(() => undefined);
  if (st?.isSymbolicLink() === true) throw new ReleaseStepError("RELEASE_OUTPUT_NOT_EMPTY", `output ${path} is a symlink`);
}

/**
 * `release create-manifest`: validate everything, then write.
 *
 * @throws ReleaseContractError codes of `createTestedManifest` and
 *   `inspectDistTarball` (`RELEASE_NOT_ONE_BUMP` for a skip or downgrade,
 *   `TAG_VERSION_MISMATCH`, `GIT_SHA_INVALID`, `WORKFLOW_EVIDENCE_INVALID`, a
 *   gate that did not pass or used another source, `DIST_*`, `TARBALL_*`,
 *   `INSTALL_TIME_UNSAFE`, `INSTALL_TIME_NOT_ALLOWED`: the tarball's
 *   install-time behaviour is recorded as `install_time` only when package.json
 *   `hermesPluginKit.installTime` declares it);
 *   ReleaseStepError `RELEASE_EVIDENCE_INVALID`, `RELEASE_MCP_SDK_VERSION`,
 *   `RELEASE_CONFIG_INVALID` (package.json version differs),
 *   `RELEASE_IDENTITY_MISMATCH` (the checkout's HEAD is not `sourceSha`).
 *   Nothing is written unless every check passed.
 */
export async function createManifestStep(options: CreateManifestOptions): Promise<ManifestStepResult> {
  const dir = resolvePath(options.dir ?? process.cwd());
  const artifactDir = resolvePath(options.artifactDir ?? "dist");
  const evidenceDir = resolvePath(options.evidenceDir ?? "evidence");
  const output = resolvePath(options.output ?? RELEASE_MANIFEST_FILE);
  const config = await readReleaseConfig(dir);
  if (config.version !== options.version) {
    throw new ReleaseStepError("RELEASE_CONFIG_INVALID", `package.json in ${dir} has version ${config.version}, expected the release version ${options.version}`);
  }
  const head = await resolveCommit(dir, "HEAD").catch(() => undefined);
  if (head !== undefined && head !== options.sourceSha) {
    throw new ReleaseStepError("RELEASE_IDENTITY_MISMATCH", `checkout ${dir} is at ${head}, expected the release commit ${options.sourceSha}`);
  }
  const gates = {} as Record<TestGate, GateResult>;
  for (const gate of TEST_GATES) gates[gate] = await readGateEvidence(evidenceFile(evidenceDir, gate), gate);
  const host = gates.host_contract;
  if (options.mcpSdkVersion !== undefined) {
    if (!isStableSemver(options.mcpSdkVersion)) throw new ReleaseStepError("RELEASE_MCP_SDK_VERSION", `--mcp-sdk-version must be stable SemVer, found ${JSON.stringify(options.mcpSdkVersion)}`);
    if (host.mcp_sdk_version !== undefined && host.mcp_sdk_version !== options.mcpSdkVersion) {
      throw new ReleaseStepError("RELEASE_MCP_SDK_VERSION", `--mcp-sdk-version ${options.mcpSdkVersion} disagrees with the host_contract evidence (${host.mcp_sdk_version})`);
    }
    gates.host_contract = { ...host, mcp_sdk_version: options.mcpSdkVersion };
  } else if (host.mcp_sdk_version === undefined) {
    throw new ReleaseStepError("RELEASE_MCP_SDK_VERSION", "the MCP SDK version exercised by host_contract is unknown: pass --mcp-sdk-version or record it with release gate host_contract");
  }
  const { artifact, tarball } = await inspectDistTarball(artifactDir, config.policy, options.version);
  const manifest = createTestedManifest({
    policy: config.policy,
    previousVersion: options.previousVersion,
    version: options.version,
    tag: options.tag,
    sourceSha: options.sourceSha,
    runId: options.runId,
    runAttempt: options.runAttempt,
    gates,
    artifacts: [artifact],
    installTime: installTimeBehaviour(tarball),
  });
  await refuseSymlink(output);
  await writeTestedManifestFile(`${output}.partial`, manifest);
  await rename(`${output}.partial`, output);
  const { sha256 } = await hashFile(output);
  return summary(output, sha256, manifest);
}

/** Options of {@link verifyManifestStep}. */
export interface VerifyManifestOptions {
  /** The releasing package's checkout (package.json gives the policy; default `process.cwd()`). */
  dir?: string;
  /** Manifest path (default `./release-manifest.json`). */
  manifest?: string;
  /** Artifact directory (default `./dist`). */
  artifactDir?: string;
}

/**
 * `release verify-manifest`: strict read, full validation,
 * then the artifact records recomputed from the bytes must match.
 * @throws ReleaseContractError (`RELEASE_JSON_UNREADABLE`, `JSON_DUPLICATE_KEY`,
 *   identity codes, `ARTIFACT_SHA256_MISMATCH`, `ARTIFACT_SIZE_MISMATCH`, `DIST_*`).
 */
export async function verifyManifestStep(options: VerifyManifestOptions = {}): Promise<ManifestStepResult> {
  const dir = resolvePath(options.dir ?? process.cwd());
  const path = resolvePath(options.manifest ?? RELEASE_MANIFEST_FILE);
  const config = await readReleaseConfig(dir);
  const doc = await readReleaseJsonFile(path);
  const manifest = await verifyManifest(doc, resolvePath(options.artifactDir ?? "dist"), config.policy);
  const { sha256 } = await hashFile(path);
  return summary(path, sha256, manifest);
}

/** Options of {@link checksumsStep}. */
export interface ChecksumsOptions {
  /** The releasing package's checkout (default `process.cwd()`). */
  dir?: string;
  /** Source bundle path (default `./release-source.bundle`). */
  bundle?: string;
  /** Manifest path (default `./release-manifest.json`). */
  manifest?: string;
  /** Artifact directory (default `./dist`). */
  artifactDir?: string;
  /** Output path (default `./release-payload.sha256`). */
  output?: string;
}

/** Output of `release checksums`. */
export interface ChecksumsResult {
  /** Absolute path of the checksum file. */
  output: string;
  /** Its lines as `{path, sha256}` in file order. */
  entries: { path: string; sha256: string }[];
}

async function regularFile(path: string, label: string): Promise<void> {
  const st = await lstat(path).catch(() => undefined);
  if (st === undefined || st.isSymbolicLink() || !st.isFile()) {
    throw new ReleaseStepError("RELEASE_DIST_INVALID", `${label} ${path} must be a regular file (not a symlink)`);
  }
}

/**
 * `release checksums`: verify the manifest against the
 * artifact directory, then write `release-payload.sha256` listing
 * `release-source.bundle`, `release-manifest.json`, `dist/<tarball>` (in that
 * order, `sha256sum` text format) and re-parse it as a self-check.
 * @throws every code of {@link verifyManifestStep}; ReleaseStepError
 *   `RELEASE_DIST_INVALID` (a listed file missing or a symlink); ReleaseContractError payload codes.
 */
export async function checksumsStep(options: ChecksumsOptions = {}): Promise<ChecksumsResult> {
  const artifactDir = resolvePath(options.artifactDir ?? "dist");
  const manifestPath = resolvePath(options.manifest ?? RELEASE_MANIFEST_FILE);
  const bundle = resolvePath(options.bundle ?? SOURCE_BUNDLE_FILE);
  const output = resolvePath(options.output ?? PAYLOAD_CHECKSUMS_FILE);
  const verified = await verifyManifestStep({ ...(options.dir !== undefined ? { dir: options.dir } : {}), manifest: manifestPath, artifactDir });
  const paths = bundleChecksumPaths(verified.package, verified.version);
  const tarball = verified.artifacts[0]?.filename ?? "";
  const local = new Map<string, string>([
    [SOURCE_BUNDLE_FILE, bundle],
    [RELEASE_MANIFEST_FILE, manifestPath],
    [`dist/${tarball}`, join(artifactDir, tarball)],
  ]);
  const entries: { path: string; sha256: string }[] = [];
  for (const path of paths) {
    const file = local.get(path);
    if (file === undefined) throw new ReleaseStepError("RELEASE_DIST_INVALID", `no local file for payload path ${path}`);
    await regularFile(file, path);
    entries.push({ path, sha256: (await hashFile(file)).sha256 });
  }
  const text = formatPayloadChecksums(entries);
  parsePayloadChecksums(text, paths);
  await refuseSymlink(output);
  await makeDirectory(dirname(output), { purpose: "release-payload.sha256 directory" });
  await writeFile(`${output}.partial`, text, "ascii");
  await rename(`${output}.partial`, output);
  const reread = await readFile(output, "ascii");
  if (reread !== text) throw new ReleaseStepError("RELEASE_DIST_INVALID", `${output} changed while being written`);
  return { output, entries };
}
