/**
 * The tested manifest (`release-manifest.json`) and the distribution
 * directory it describes: inspection of `dist/` recomputed from bytes
 * (one npm tarball), `createTestedManifest`, `verifyManifest` and the
 * published receipt builder (docs/contract.md, docs/release-build.md).
 *
 * Functions whose name ends in `File`/`Dir` or that take a directory read files;
 * everything else is pure.
 */
import { dirname, join } from "node:path";
import { ReleaseContractError, type ReleaseContractErrorCode } from "./errors.js";
import { canonicalJson, canonicalJsonPretty } from "./canonical-json.js";
import type { JsonObject } from "./canonical-json.js";
import { WORKFLOW_NAME } from "./constants.js";
import { lstatAsync, readdirAsync, writeFileAsync } from "./fs-async.js";
import { notTheRecordedFile, readNpmTarballFile, type NpmTarball, type ReadNpmTarballOptions } from "./npm-tarball.js";
import { installTimeBehaviour, requireInstallTimeAllowed } from "./install-time.js";
import { describeList, describeValue, releaseClassOf, requireGitSha, tarballFileName } from "./grammar.js";
import type { ReleasePolicy, TestGate } from "./policy.js";
import { TEST_GATES } from "./policy.js";
import { parseReference } from "./reference.js";
import { promotionFor, requireReleasePolicyArgument, verifyFinalReceipt, verifyTestedManifest } from "./release-document.js";
import { plainObjectProblem } from "./plain-options.js";
import type { Evidence, PayloadRecord, PublishedReceipt, TestedArtifact, TestedManifest } from "./schemas.js";
import { makeDirectory } from "./directory.js";

function fail(code: ReleaseContractErrorCode, message: string): never {
  throw new ReleaseContractError(code, message);
}

/** `POLICY_INVALID` for an argument of another shape, naming the call. */
function invalidArgument(call: string, message: string): never {
  return fail("POLICY_INVALID", `${call}: ${message}`);
}

/** Refuses a value that is not a string (a path, a version, a reference) with `POLICY_INVALID`. */
function requireStringArgument(call: string, name: string, value: unknown, what: string): void {
  if (typeof value !== "string") invalidArgument(call, `${name} must be ${what} (a string), found ${describeValue(value)}`);
}

/** Refuses a tested manifest or receipt argument that is no object with an `artifacts` array (a parsed, verified document). */
function requireDocumentArgument(call: string, name: string, value: unknown): void {
  const shape = value === null || typeof value !== "object" || Array.isArray(value) ? describeValue(value) : Array.isArray((value as { artifacts?: unknown }).artifacts) ? undefined : `an object whose artifacts is ${describeValue((value as { artifacts?: unknown }).artifacts)}`;
  if (shape !== undefined) invalidArgument(call, `${name} must be a verified release document (verifyTestedManifest, verifyFinalReceipt), found ${shape}`);
}

/** Refuses `layers` that are no array of `{ path, digest, size }` (the bundle manifest's layers). */
function requireBundleLayersArgument(call: string, layers: unknown): void {
  if (!Array.isArray(layers)) invalidArgument(call, `layers must be an array of { path, digest, size }, found ${describeValue(layers)}`);
  for (const [at, layer] of (layers as unknown[]).entries()) {
    const l = layer as Partial<BundleLayer> | null;
    if (l === null || typeof l !== "object" || Array.isArray(l) || typeof l.path !== "string" || typeof l.digest !== "string" || typeof l.size !== "number") {
      const found = l === null || typeof l !== "object" || Array.isArray(l) ? describeValue(l) : `path ${describeValue(l.path)}, digest ${describeValue(l.digest)}, size ${describeValue(l.size)}`;
      invalidArgument(call, `layers[${at}] must be { path: string, digest: string, size: number }, found ${found}`);
    }
  }
}

export { hashFile } from "./file-hash.js";

/**
 * Read `package/package.json` out of an npm tarball through the one strict
 * reader ({@link readNpmTarballFile}: every member checked, not only this one).
 * @throws ReleaseContractError every `TARBALL_*` code of `readNpmTarballFile`.
 */
export async function readTarballPackageJsonFile(path: string): Promise<JsonObject> {
  return (await readNpmTarballFile(path)).packageJson;
}

/** What {@link inspectDistTarball} found: the artifact record and the verified listing. */
export interface DistInspection {
  /** `{filename, sha256, size}` recomputed from the bytes that were listed. */
  artifact: TestedArtifact;
  /** The strict listing of the tarball (members, package.json, kept bytes). */
  tarball: NpmTarball;
}

/**
 * Inspect a distribution directory for `policy.package@version` (checks
 * D1-D9, docs/release-build.md): the directory is not a symlink (`DIST_SYMLINK`); it
 * holds exactly one entry (`DIST_INVENTORY`), named `<name>-<version>.tgz`
 * (`DIST_FILENAME_MISMATCH`), a regular non-symlink file
 * (`ARTIFACT_NOT_REGULAR`), which the one strict tarball reader accepts
 * (every `TARBALL_*` code of {@link readNpmTarballFile}) and whose
 * `package/package.json` has the policy's name (`TARBALL_NAME_MISMATCH`) and
 * `version` (`TARBALL_VERSION_MISMATCH`).
 * @param options `keep` selects member bytes to return (check-dist lints them).
 * @throws ReleaseContractError also `POLICY_INVALID` (before any read) for a `distDir` that is no string, a
 *   `policy` that is no release policy, or `options` that are no plain object; `SEMVER_INVALID` for the version.
 */
export async function inspectDistTarball(distDir: string, policy: ReleasePolicy, version: string, options: ReadNpmTarballOptions = {}): Promise<DistInspection> {
  const call = "inspectDistTarball(distDir, policy, version, options)";
  requireStringArgument(call, "distDir", distDir, "a directory path");
  requireReleasePolicyArgument(policy);
  const shape = plainObjectProblem(options, "options");
  if (shape !== undefined) invalidArgument(call, shape);
  const expected = tarballFileName(policy.package, version);
  let dirStat;
  try {
    dirStat = await lstatAsync(distDir);
  } catch {
    fail("DIST_INVENTORY", `artifact directory ${distDir} does not exist`);
  }
  if (dirStat.isSymbolicLink()) fail("DIST_SYMLINK", `artifact directory must not be a symlink: ${distDir}`);
  if (!dirStat.isDirectory()) fail("DIST_INVENTORY", `artifact directory ${distDir} is not a directory`);
  const entries = (await readdirAsync(distDir)).sort();
  const tarballs = entries.filter((e) => e.endsWith(".tgz"));
  if (tarballs.length !== 1) {
    // A fetched bundle keeps its tarball in dist/: say so when that is where it is.
    const hint = tarballs.length === 0 && entries.includes("dist") ? `; the tarball is likely in ${join(distDir, "dist")}: pass that directory` : "";
    fail("DIST_INVENTORY", `the artifact directory ${distDir} must contain exactly one npm tarball, found ${tarballs.length} (${entries.length === 0 ? "empty" : describeList(entries)})${hint}`);
  }
  if (entries.length !== 1) {
    fail("DIST_UNEXPECTED_FILE", `the artifact directory ${distDir} holds more than the tarball: ${describeList(entries.filter((e) => e !== tarballs[0]))}`);
  }
  const filename = tarballs[0] as string;
  if (filename !== expected) {
    fail("DIST_FILENAME_MISMATCH", `dist filenames do not match the release version: expected ${expected}, found ${filename}`);
  }
  const path = join(distDir, filename);
  const st = await lstatAsync(path);
  if (!st.isFile()) fail("ARTIFACT_NOT_REGULAR", `release artifact must be a regular file: ${filename}`);
  const tarball = await readNpmTarballFile(path, options);
  const pkg = tarball.packageJson;
  if (pkg["name"] !== policy.package) {
    fail("TARBALL_NAME_MISMATCH", `unexpected package name in ${filename}: expected ${describeValue(policy.package)} (the package the policy pins${policy.sources?.package === undefined ? "" : `, from ${policy.sources.package}`}), found ${describeValue(pkg["name"])}; fix: pass the artifact directory of a ${policy.package} build, or pin the package this tarball is`);
  }
  if (pkg["version"] !== version) {
    fail("TARBALL_VERSION_MISMATCH", `${filename} metadata has version ${describeValue(pkg["version"])}; expected version ${version} (the release's version); fix: rebuild the tarball with npm pack from the release commit, whose package.json says ${version}`);
  }
  return { artifact: { filename, sha256: tarball.sha256, size: tarball.size }, tarball };
}

/**
 * {@link inspectDistTarball} returning only the artifact records.
 * @returns the one artifact record `{filename, sha256, size}` recomputed from bytes.
 * @throws ReleaseContractError the codes of {@link inspectDistTarball}, `POLICY_INVALID` among them.
 */
export async function inspectDistDir(distDir: string, policy: ReleasePolicy, version: string): Promise<TestedArtifact[]> {
  return [(await inspectDistTarball(distDir, policy, version)).artifact];
}

/** A test gate's evidence as recorded by `release gate`. */
export interface GateResult {
  status: string;
  result: string;
  source_sha: string;
  command: string;
  mcp_sdk_version?: string;
}

/** Input of {@link createTestedManifest}. */
export interface TestedManifestInput {
  policy: ReleasePolicy;
  previousVersion: string;
  version: string;
  tag: string;
  sourceSha: string;
  runId: string;
  runAttempt: number;
  /** The four test gates' evidence. */
  gates: Record<TestGate, GateResult>;
  /** The artifact records from {@link inspectDistDir}. */
  artifacts: TestedArtifact[];
  /**
   * The tarball's install-time behaviours (`installTimeBehaviour`), each
   * declared by the policy; recorded as `install_time` when non-empty.
   */
  installTime?: readonly string[];
}

/**
 * Assemble and validate a tested manifest (checks C1-C6, docs/contract.md): release class
 * from the versions (`RELEASE_NOT_ONE_BUMP`), tag `v<version>`
 * (`TAG_VERSION_MISMATCH`), SHAs (`GIT_SHA_INVALID`), workflow run id/attempt
 * (`WORKFLOW_EVIDENCE_INVALID`), install-time behaviours declared by the
 * policy (`INSTALL_TIME_NOT_ALLOWED`), then every check of `verifyTestedManifest`. An `input` of another
 * shape (no plain object, a policy that is no release policy, `gates` or `artifacts` of another type) is
 * `POLICY_INVALID`, before anything is built.
 */
export function createTestedManifest(input: TestedManifestInput): TestedManifest {
  const call = "createTestedManifest(input)";
  const shape = plainObjectProblem(input, "input");
  if (shape !== undefined) invalidArgument(call, `${shape}; expected { policy, previousVersion, version, tag, sourceSha, runId, runAttempt, gates, artifacts, installTime? }`);
  requireReleasePolicyArgument(input.policy);
  const gates: unknown = input.gates;
  if (gates === null || typeof gates !== "object" || Array.isArray(gates)) invalidArgument(call, `input.gates must be an object of the four gates' evidence { ${TEST_GATES.join(", ")} }, found ${describeValue(gates)}`);
  for (const gate of TEST_GATES) {
    const entry: unknown = (gates as Record<string, unknown>)[gate];
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) invalidArgument(call, `input.gates.${gate} must be the gate's evidence { status, result, source_sha, command }, found ${describeValue(entry)}`);
  }
  if (!Array.isArray(input.artifacts)) invalidArgument(call, `input.artifacts must be an array of { filename, sha256, size } (inspectDistDir), found ${describeValue(input.artifacts)}`);
  if (input.installTime !== undefined && (!Array.isArray(input.installTime) || input.installTime.some((b) => typeof b !== "string"))) {
    invalidArgument(call, `input.installTime must be an array of behaviours (strings) or omitted, found ${describeValue(input.installTime)}`);
  }
  const cls = releaseClassOf(input.previousVersion, input.version);
  requireInstallTimeAllowed(input.installTime ?? [], input.policy.installTime, `the ${input.policy.package} tarball`);
  if (input.tag !== `v${input.version}`) fail("TAG_VERSION_MISMATCH", `tag ${input.tag} does not match version ${input.version}`);
  requireGitSha(input.sourceSha, "source_sha");
  if (!/^[1-9][0-9]*$/.test(input.runId) || !Number.isSafeInteger(input.runAttempt) || input.runAttempt < 1) {
    fail("WORKFLOW_EVIDENCE_INVALID", `workflow run evidence is incomplete: run id ${describeValue(input.runId)}, attempt ${describeValue(input.runAttempt)}`);
  }
  const evidence: Record<string, unknown> = {};
  for (const gate of TEST_GATES) evidence[gate] = { ...input.gates[gate] };
  evidence["workflow"] = { name: WORKFLOW_NAME, run_id: input.runId, run_attempt: input.runAttempt, source_sha: input.sourceSha };
  const doc = {
    schema_version: 2,
    receipt_state: "tested",
    package: input.policy.package,
    previous_version: input.previousVersion,
    version: input.version,
    tag: input.tag,
    source_sha: input.sourceSha,
    release_class: cls,
    promotion: promotionFor(cls),
    registry_repository: input.policy.registryRepository,
    artifacts: [...input.artifacts].sort((a, b) => (a.filename < b.filename ? -1 : 1)),
    evidence: evidence as Evidence,
    ...(input.installTime !== undefined && input.installTime.length > 0 ? { install_time: [...new Set(input.installTime)].sort() } : {}),
  };
  return verifyTestedManifest(JSON.parse(canonicalJson(doc)) as JsonObject, input.policy);
}

/**
 * The exact bytes of `release-manifest.json`: canonical, 2-space indented, trailing newline.
 * @throws ReleaseContractError `POLICY_INVALID` for a `manifest` that is no release document (no object with `artifacts`).
 */
export function testedManifestBytes(manifest: TestedManifest): Buffer {
  requireDocumentArgument("testedManifestBytes(manifest)", "manifest", manifest);
  return Buffer.from(canonicalJsonPretty(manifest), "utf8");
}

/**
 * Write a tested manifest's canonical bytes to `path` (parents created, file overwritten).
 * @throws ReleaseContractError `POLICY_INVALID` (before anything is written) when `path` is not a string or
 *   `manifest` is no release document.
 */
export async function writeTestedManifestFile(path: string, manifest: TestedManifest): Promise<void> {
  const call = "writeTestedManifestFile(path, manifest)";
  requireStringArgument(call, "path", path, "a file path");
  requireDocumentArgument(call, "manifest", manifest);
  await makeDirectory(dirname(path), { purpose: "manifest directory" });
  await writeFileAsync(path, testedManifestBytes(manifest));
}

// Reading release JSON files lives in release-json-file.ts (the receipt check needs it without the tarball reader).
export { MAX_RELEASE_JSON_BYTES, readReleaseJsonBytesFile, readReleaseJsonFile } from "./release-json-file.js";

/**
 * Verify a tested manifest against a distribution directory (docs/contract.md):
 * validate the manifest, recompute the dist records and compare sha256
 * (`ARTIFACT_SHA256_MISMATCH`) and size (`ARTIFACT_SIZE_MISMATCH`), then the
 * tarball's install-time behaviour with the recorded `install_time`
 * (`INSTALL_TIME_MISMATCH`; `INSTALL_TIME_UNSAFE` for escaping links). The
 * record is not checked against `policy.installTime` here: a consumer's
 * policy does not carry the producer's declaration; `fetch` reports it.
 */
export async function verifyManifest(doc: JsonObject, distDir: string, policy: ReleasePolicy): Promise<TestedManifest> {
  return (await verifyManifestDist(doc, distDir, policy)).manifest;
}

/**
 * {@link verifyManifest}, also returning the strict listing of the tarball it verified (its
 * `packageJson` is the one to check the gates it declares against: the tarball is read once, so
 * what is checked is the file whose bytes matched the manifest). Same codes.
 */
export async function verifyManifestDist(doc: JsonObject, distDir: string, policy: ReleasePolicy): Promise<{ manifest: TestedManifest; tarball: NpmTarball }> {
  const manifest = verifyTestedManifest(doc, policy);
  const expected = manifest.artifacts[0] as TestedArtifact;
  // Another file of the pinned name is refused by size, or (read whole) by digest, before it is unpacked.
  const { artifact: actual, tarball } = await inspectDistTarball(distDir, policy, manifest.version, { expected: { sha256: expected.sha256, size: expected.size, by: "the tested manifest" } });
  if (actual.filename !== expected.filename) fail("DIST_FILENAME_MISMATCH", `dist is missing ${expected.filename}`);
  // The size was compared before reading; a streamed tarball's digest is known only now.
  if (actual.sha256 !== expected.sha256) fail("ARTIFACT_SHA256_MISMATCH", `SHA-256 mismatch for ${expected.filename}: the tested manifest says ${expected.sha256}, bytes hash to ${actual.sha256}${notTheRecordedFile("the tested manifest")}`);
  const found = installTimeBehaviour(tarball);
  const recorded = manifest.install_time ?? [];
  if (found.join("\n") !== recorded.join("\n")) {
    fail("INSTALL_TIME_MISMATCH", `${expected.filename} has install-time behaviour ${found.join(", ") || "none"}, the tested manifest records ${recorded.join(", ") || "none"}`);
  }
  return { manifest, tarball };
}

/** A bundle layer as published: its payload path and the layer's digest and size. */
export interface BundleLayer {
  path: string;
  digest: string;
  size: number;
}

/**
 * Build the published receipt from the tested manifest, the bundle reference
 * and the bundle's layers (docs/contract.md): `receipt_state` published,
 * `registry_reference`, `blob_digest` per artifact, `payload` sorted by path;
 * then verify it with `verifyFinalReceipt` before returning (SP4).
 * @throws ReleaseContractError `POLICY_INVALID` (before anything is built) for arguments of another shape: a
 *   `manifest` that is no tested manifest, a `bundleReference` that is no string, `layers` that are no array of
 *   `{ path, digest, size }`, a `policy` that is no release policy; then the codes of `parseReference` and
 *   `verifyFinalReceipt`.
 */
export function buildPublishedReceipt(manifest: TestedManifest, bundleReference: string, layers: BundleLayer[], policy: ReleasePolicy): PublishedReceipt {
  const call = "buildPublishedReceipt(manifest, bundleReference, layers, policy)";
  requireDocumentArgument(call, "manifest", manifest);
  requireStringArgument(call, "bundleReference", bundleReference, "the bundle's digest reference");
  requireBundleLayersArgument(call, layers);
  requireReleasePolicyArgument(policy);
  parseReference(bundleReference, policy.registryRepository);
  return verifyFinalReceipt(publishedReceiptDocument(manifest, bundleReference, layers), policy, { bundleReference });
}

/** The published receipt's fields as {@link buildPublishedReceipt} makes them, before its verification. */
function publishedReceiptDocument(manifest: TestedManifest, bundleReference: string, layers: readonly BundleLayer[]): JsonObject {
  const payload: PayloadRecord[] = layers
    .map((l) => ({ path: l.path, sha256: l.digest.slice("sha256:".length), size: l.size, blob_digest: l.digest }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const doc = {
    ...manifest,
    receipt_state: "published",
    artifacts: manifest.artifacts.map((a) => ({ ...a, blob_digest: `sha256:${a.sha256}` })),
    registry_reference: bundleReference,
    payload,
  };
  return JSON.parse(canonicalJson(doc)) as JsonObject;
}

/** The first place (`artifacts[0].sha256`, `payload`, `evidence.unit`) where two JSON values differ, with each side's value; undefined when equal. */
function firstDifference(expected: unknown, found: unknown, at = ""): { at: string; expected: unknown; found: unknown } | undefined {
  if (expected === undefined || found === undefined) return expected === found ? undefined : { at: at === "" ? "(the document)" : at, expected, found };
  if (canonicalJson(expected as JsonObject) === canonicalJson(found as JsonObject)) return undefined;
  if (Array.isArray(expected) && Array.isArray(found) && expected.length === found.length) {
    for (let i = 0; i < expected.length; i += 1) {
      const d = firstDifference(expected[i], found[i], `${at}[${i}]`);
      if (d !== undefined) return d;
    }
  }
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  if (isObject(expected) && isObject(found)) {
    for (const key of [...new Set([...Object.keys(expected), ...Object.keys(found)])].sort()) {
      const d = firstDifference(expected[key], found[key], at === "" ? key : `${at}.${key}`);
      if (d !== undefined) return d;
    }
  }
  return { at: at === "" ? "(the document)" : at, expected, found };
}

/**
 * A published receipt must be exactly the receipt its bundle makes: the one
 * {@link buildPublishedReceipt} builds from the bundle's verified tested manifest, its reference and its
 * layers (every field, the tarball's `artifacts` and `payload` records included). Used wherever a
 * receipt is taken together with a bundle (`verify-provenance --receipt`, `fetch --provenance` of a
 * receipt, `fleet verify`), so that a receipt with another tarball digest, size or gate record than
 * the bundle's is refused even when the fields an attestation binds agree.
 * @param receipt a receipt that passed `verifyFinalReceipt`.
 * @param tested the bundle's tested manifest (`release-manifest.json`), verified or authenticated.
 * @param bundleReference `host/repo@sha256:<hex>` of the bundle.
 * @param layers the bundle manifest's layers: `path` (the title annotation), `digest`, `size` (bytes).
 * @throws ReleaseContractError `RECEIPT_BUNDLE_MISMATCH` naming the first field that differs, both
 *   values and the fix; `POLICY_INVALID` (before any comparison) for arguments of another shape: a `receipt` or
 *   `tested` that is no release document, a `bundleReference` or `receiptSource` that is no string, `layers` that
 *   are no array of `{ path, digest, size }`.
 */
export function checkReceiptOfBundle(receipt: PublishedReceipt, tested: TestedManifest, bundleReference: string, layers: readonly BundleLayer[], receiptSource = "the receipt"): void {
  const call = "checkReceiptOfBundle(receipt, tested, bundleReference, layers, receiptSource)";
  requireDocumentArgument(call, "receipt", receipt);
  requireDocumentArgument(call, "tested", tested);
  requireStringArgument(call, "bundleReference", bundleReference, "the bundle's digest reference");
  requireBundleLayersArgument(call, layers);
  requireStringArgument(call, "receiptSource", receiptSource, "where the receipt came from, for messages");
  const difference = firstDifference(publishedReceiptDocument(tested, bundleReference, layers), receipt);
  if (difference === undefined) return;
  const describe = (v: unknown): string => (Array.isArray(v) ? `an array of ${v.length} entries` : describeValue(v));
  fail(
    "RECEIPT_BUNDLE_MISMATCH",
    `${receiptSource} is not the receipt of bundle ${bundleReference}: at ${difference.at} it has ${describe(difference.found)}, the bundle's tested manifest and layers give ${describe(difference.expected)}; fix: use the receipt published with this bundle (fetch it by the receipt reference the release printed), or the bundle its registry_reference names`,
  );
}

/**
 * The exact bytes of `release-receipt.json`: canonical compact JSON plus newline.
 * @throws ReleaseContractError `POLICY_INVALID` for a `receipt` that is no release document (no object with `artifacts`).
 */
export function receiptBytes(receipt: PublishedReceipt): Buffer {
  requireDocumentArgument("receiptBytes(receipt)", "receipt", receipt);
  return Buffer.from(canonicalJson(receipt), "utf8");
}
