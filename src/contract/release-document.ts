/**
 * Verification of release documents: the tested manifest (schema 2,
 * `receipt_state: "tested"`) and the published receipt (`"published"`).
 *
 * Checks run in the order of docs/contract.md "Error codes" (identity I1-I16,
 * file records F1-F2, receipt R1-R6), for one npm tarball, each
 * failing with its own {@link ReleaseContractError} code. A final parse with
 * the zod schema (exact key sets) guards the returned type.
 */
import { ReleaseContractError, type ReleaseContractErrorCode } from "./errors.js";
import type { JsonObject } from "./canonical-json.js";
import { canonicalFormDifference, canonicalJson, canonicalJsonBytes, parseStrictJson } from "./canonical-json.js";
import { receiptReferenceOf } from "./artifact-document.js";
import { PAYLOAD_CHECKSUMS_FILE, RELEASE_MANIFEST_FILE, SOURCE_BUNDLE_FILE, WORKFLOW_NAME } from "./constants.js";
import { describeValue, isGitSha, isSha256Hex, isStableSemver, releaseClassOf, requireGitSha, tarballFileName } from "./grammar.js";
import type { ReleaseClass } from "./grammar.js";
import { nearestName } from "./near-name.js";
import { plainObjectProblem } from "./plain-options.js";
import { posix } from "node:path";
import { LAYOUT_PREFIX, parseReference, parseRepository } from "./reference.js";
import { EVIDENCE_KEYS, TEST_GATES, requireGatePins, sourceSuffix } from "./policy.js";
import type { PackagePolicy, ReleasePolicy } from "./policy.js";
import { PublishedReceiptSchema, TestedManifestSchema } from "./release-document-schemas.js";
import { checkInstallTimeRecord } from "./install-time.js";
import type { Promotion, PublishedReceipt, TestedManifest } from "./schemas.js";

/** The 12 top-level keys of a tested manifest. */
export const TESTED_MANIFEST_KEYS = Object.freeze([
  "artifacts",
  "evidence",
  "package",
  "previous_version",
  "promotion",
  "receipt_state",
  "registry_repository",
  "release_class",
  "schema_version",
  "source_sha",
  "tag",
  "version",
]);
/** The 14 top-level keys of a published receipt. */
export const PUBLISHED_RECEIPT_KEYS = Object.freeze([...TESTED_MANIFEST_KEYS, "payload", "registry_reference"].sort());
/**
 * The one optional top-level key of both documents: `install_time`, present
 * exactly when the tarball has install-time behaviour its policy declared
 * (`install-time.ts`), so documents of packages without any keep the exact
 * 12/14 keys of docs/contract.md.
 */
export const OPTIONAL_RELEASE_KEYS = Object.freeze(["install_time"]);

/** `JSON_SYNTAX` (as {@link parseReleaseJson} refuses input that is no bytes) unless `bytes` is a receipt file's bytes (a Uint8Array). */
function requireReceiptBytes(call: string, bytes: unknown): void {
  if (!(bytes instanceof Uint8Array)) fail("JSON_SYNTAX", `${call}: bytes must be the receipt file's bytes (a Uint8Array), found ${describeValue(bytes)}`);
}

/**
 * The promotion object a release class requires (docs/contract.md).
 * @throws ReleaseContractError `POLICY_INVALID` for a class other than "major", "minor" or "patch".
 */
export function promotionFor(cls: ReleaseClass): Promotion {
  if (cls !== "major" && cls !== "minor" && cls !== "patch") fail("POLICY_INVALID", `promotionFor(cls): a release class is "major", "minor" or "patch", found ${describeValue(cls)}`);
  return cls === "major"
    ? { automatic_candidate: false, state: "manual_migration_required" }
    : { automatic_candidate: true, state: "automatic_candidate" };
}

/** The four payload paths of a release bundle for `package@version`, sorted by code point. */
export function bundlePayloadPaths(packageName: string, version: string): string[] {
  return [`dist/${tarballFileName(packageName, version)}`, RELEASE_MANIFEST_FILE, PAYLOAD_CHECKSUMS_FILE, SOURCE_BUNDLE_FILE].sort();
}

function fail(code: ReleaseContractErrorCode, message: string): never {
  throw new ReleaseContractError(code, message);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function sameKeys(value: Record<string, unknown>, expected: readonly string[]): boolean {
  const keys = Object.keys(value).sort();
  return keys.length === expected.length && keys.every((k, i) => k === [...expected].sort()[i]);
}

function isTrueInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}

/**
 * Check a file record (check F1-F2, docs/contract.md): exact keys `{<nameKey>, sha256, size}`
 * plus `blob_digest` when published; name a non-empty string; sha256 64
 * lowercase hex; size a true integer >= 1; `blob_digest` = `sha256:` + sha256.
 * @throws ReleaseContractError `FILE_RECORD_INVALID`, `BLOB_DIGEST_MISMATCH`; `POLICY_INVALID` for a `nameKey` other
 *   than "filename" or "path", a `published` that is no boolean or a `label` that is no string.
 */
export function checkFileRecord(record: unknown, nameKey: "filename" | "path", published: boolean, label: string): void {
  const call = "checkFileRecord(record, nameKey, published, label)";
  if (nameKey !== "filename" && nameKey !== "path") fail("POLICY_INVALID", `${call}: nameKey must be "filename" or "path", found ${describeValue(nameKey)}`);
  if (typeof published !== "boolean") fail("POLICY_INVALID", `${call}: published must be a boolean, found ${describeValue(published)}`);
  if (typeof label !== "string") fail("POLICY_INVALID", `${call}: label must be a string naming the record, found ${describeValue(label)}`);
  const expected = published ? [nameKey, "sha256", "size", "blob_digest"] : [nameKey, "sha256", "size"];
  if (!isObject(record) || !sameKeys(record, expected)) {
    fail("FILE_RECORD_INVALID", `release file identity is incomplete: ${label} must have exactly the keys ${expected.join(", ")}`);
  }
  if (typeof record[nameKey] !== "string" || (record[nameKey] as string).length === 0) {
    fail("FILE_RECORD_INVALID", `release file identity is incomplete: ${label}.${nameKey} must be a non-empty string, found ${describeValue(record[nameKey])}`);
  }
  if (!isSha256Hex(record["sha256"])) {
    fail("FILE_RECORD_INVALID", `release file identity is incomplete: ${label}.sha256 must be 64 lowercase hex, found ${describeValue(record["sha256"])}`);
  }
  if (!isTrueInteger(record["size"]) || record["size"] < 1) {
    fail("FILE_RECORD_INVALID", `release file identity is incomplete: ${label}.size must be an integer >= 1, found ${describeValue(record["size"])}`);
  }
  if (published && record["blob_digest"] !== `sha256:${record["sha256"] as string}`) {
    fail("BLOB_DIGEST_MISMATCH", `release file blob digest mismatch: ${label}.blob_digest must be "sha256:${record["sha256"] as string}" (its own sha256), found ${describeValue(record["blob_digest"])}${ownFieldsDisagree("release receipt")}`);
  }
}

/**
 * Verify the identity part shared by tested manifests and published receipts
 * (check I1-I16, docs/contract.md) for `expectedState`.
 *
 * Codes: `REPOSITORY_INVALID` (the policy's own `registryRepository`: a URL or
 * credentials in it are refused, redacted, before anything is compared),
 * `RECEIPT_SCHEMA_UNSUPPORTED` (I1), `RECEIPT_STATE_MISMATCH` (I2),
 * `RECEIPT_PACKAGE_MISMATCH` (I3), `RECEIPT_REGISTRY_MISMATCH` (I4),
 * `RECEIPT_FIELDS_MISMATCH` (I5), `RECEIPT_IDENTITY_INCOMPLETE` (I6),
 * `GIT_SHA_INVALID`, `SEMVER_INVALID`, `RELEASE_NOT_ONE_BUMP` (I7),
 * `RECEIPT_TAG_MISMATCH` (I8), `RECEIPT_CLASS_MISMATCH` (I9),
 * `RECEIPT_PROMOTION_MISMATCH` (I10), `EVIDENCE_INCOMPLETE` (I11),
 * `GATE_NOT_PASSED`, `GATE_COMMAND_MISMATCH`, `GATE_OTHER_SOURCE` (I12),
 * `GATE_HOST_CONTRACT_INVALID` (I13), `WORKFLOW_EVIDENCE_INVALID` (I14),
 * `ARTIFACTS_INVENTORY` (I15), `FILE_RECORD_INVALID`, `BLOB_DIGEST_MISMATCH`,
 * `ARTIFACT_FILENAME_MISMATCH` (I16), `INSTALL_TIME_INVALID` (the optional
 * `install_time` record).
 */
export function verifyReleaseIdentity(doc: JsonObject, expectedState: "tested" | "published", policy: ReleasePolicy): void {
  checkVerifyArguments(doc, policy);
  const keys = checkDocumentHeader(doc, expectedState, policy);
  const { version, sourceSha } = checkVersionIdentity(doc, documentKind(expectedState));
  checkGateEvidence(doc, sourceSha, policy, expectedState === "tested" ? "tested manifest (release-manifest.json)" : "release receipt (release-receipt.json)", documentKind(expectedState));
  checkArtifactInventory(doc, version, expectedState === "published", policy, documentKind(expectedState));
  if (keys.includes("install_time")) checkInstallTimeRecord(doc["install_time"]);
}

/**
 * The arguments of every verify function, for callers without types (plain JavaScript): `doc` a
 * parsed JSON object (`JSON_NOT_OBJECT`), `policy` a {@link ReleasePolicy} with `package` and
 * `registryRepository` strings (`POLICY_INVALID`, naming where one comes from) - a coded refusal
 * instead of a TypeError from deep inside a check.
 */
function checkVerifyArguments(doc: unknown, policy: unknown): void {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) fail("JSON_NOT_OBJECT", `a release document must be a parsed JSON object (parseReleaseJson), found ${Array.isArray(doc) ? "an array" : describeValue(doc)}`);
  requireReleasePolicyArgument(policy);
}

/**
 * The one check of a {@link ReleasePolicy} argument (the verify functions, `createTestedManifest`,
 * `buildPublishedReceipt`, `inspectDistTarball`): an object with `package` and `registryRepository` strings and
 * `gates` pins, of known keys only.
 * @throws ReleaseContractError `POLICY_INVALID` naming what was found.
 */
export function requireReleasePolicyArgument(policy: unknown): asserts policy is ReleasePolicy {
  const p = policy as Partial<ReleasePolicy> | null | undefined;
  // A misspelt key (`repository` for `registryRepository`) explains a missing one: named first, with the key it meant.
  if (p !== null && typeof p === "object") requirePolicyShape(p as Record<string, unknown>);
  const wrong =
    p === null || typeof p !== "object"
      ? describeValue(p)
      : [
          typeof p.package !== "string" ? `package ${describeValue(p.package)}` : undefined,
          typeof p.registryRepository !== "string" ? `registryRepository ${describeValue(p.registryRepository)}` : undefined,
          p.gates === null || typeof p.gates !== "object" ? `gates ${describeValue(p.gates)}` : undefined,
        ]
          .filter((part) => part !== undefined)
          .join(", ");
  if (wrong !== "") {
    fail("POLICY_INVALID", `the policy argument must be the policy you pin, {package: string, registryRepository: string, gates: object} (a release document is built and verified against it): from policyFromPackageJson(...) or policyForDocument(expectations, doc); found ${p === null || typeof p !== "object" ? wrong : `an object with ${wrong}`}`);
  }
  requireKnownPolicyKeys(p as Record<string, unknown>);
  requireGatePins((p as ReleasePolicy).gates, "policy.gates");
}

/** The keys of a {@link ReleasePolicy}, and those a {@link PackagePolicy} (policyFromPackageJson) adds, which the verify functions accept too. */
const RELEASE_POLICY_KEYS: readonly string[] = ["package", "registryRepository", "gates", "sources", "installTime", "install", "provenanceKey"];
const POLICY_SOURCE_KEYS: readonly string[] = ["package", "repository", "gates"];

/** Refuse the first of `keys` that is not in `known`, naming the known key it most likely meant. */
function unknownKey(keys: string[], known: readonly string[], where: string): void {
  const first = keys.find((key) => !known.includes(key));
  if (first === undefined) return;
  const near = nearestName(first, known);
  fail("POLICY_INVALID", `${where} has ${describeValue(first)}, which is no key it reads (it reads ${known.join(", ")})${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}; an ignored key would check less than you pinned`);
}

/** The policy is plain data ({@link plainObjectProblem}) of known keys only. */
function requirePolicyShape(policy: Record<string, unknown>): void {
  const shape = plainObjectProblem(policy, "the policy");
  if (shape !== undefined) fail("POLICY_INVALID", `${shape}; expected the policy you pin, from policyFromPackageJson(...) or policyForDocument(expectations, doc)`);
  unknownKey(Object.keys(policy), RELEASE_POLICY_KEYS, "the policy");
}

/**
 * A policy's own keys are those of {@link ReleasePolicy} (a misspelt `gatez` would pin nothing, an own
 * `__proto__` is no policy field), `package`, `registryRepository` and `gates` are its own (not inherited),
 * `sources` is absent or an object of strings naming where each expectation came from, and `installTime`
 * absent or an array of strings.
 * @throws ReleaseContractError `POLICY_INVALID` naming the key and the nearest known one.
 */
function requireKnownPolicyKeys(policy: Record<string, unknown>): void {
  requirePolicyShape(policy);
  for (const key of ["package", "registryRepository", "gates"]) {
    if (!Object.prototype.hasOwnProperty.call(policy, key)) fail("POLICY_INVALID", `the policy's ${key} must be its own property, found one inherited through its prototype`);
  }
  const sources = policy["sources"];
  if (sources !== undefined) {
    if (sources === null || typeof sources !== "object" || Array.isArray(sources)) fail("POLICY_INVALID", `the policy's sources must be an object { package?, repository?, gates? } naming where each expectation came from, found ${describeValue(sources)}`);
    unknownKey(Object.keys(sources), POLICY_SOURCE_KEYS, "the policy's sources");
    for (const [key, value] of Object.entries(sources)) if (value !== undefined && typeof value !== "string") fail("POLICY_INVALID", `the policy's sources.${key} must be a string, found ${describeValue(value)}`);
  }
  const installTime = policy["installTime"];
  if (installTime !== undefined && (!Array.isArray(installTime) || installTime.some((entry) => typeof entry !== "string"))) {
    fail("POLICY_INVALID", `the policy's installTime must be an array of strings, found ${describeValue(installTime)}`);
  }
}

/**
 * The tail of a refusal whose cause is two fields of one document disagreeing (a version that is not one bump
 * from its previous version, a tag or gate record naming another version or source, an artifact record that
 * disagrees with its payload record): no pin was compared, so the document contradicts itself. The release
 * pipeline never writes such a document, so it was edited after it was made (the bytes of a file fetched by a
 * pinned reference are checked first, `verifyReceiptReference`) or made wrong; the fix says both.
 * @param kind "tested manifest" or "release receipt".
 */
function ownFieldsDisagree(kind: string): string {
  const fetchAgain = kind === "release receipt" ? "hermes-plugin-kit fetch --reference <receipt reference> --expect receipt --output-dir DIR" : "hermes-plugin-kit fetch --reference <bundle reference> --output-dir DIR";
  return `; the ${kind}'s own fields disagree with each other, which the release pipeline never writes: the file was edited after it was made, or the release was made wrong; fix: do not trust this file; verify the ${kind} the release published (${fetchAgain}, by the reference you pinned), and if that one says the same, do not use this release and tell its publisher`;
}

/** What a release document of `state` is called in messages. */
function documentKind(state: "tested" | "published"): string {
  return state === "tested" ? "tested manifest" : "release receipt";
}

/**
 * The fix for I4, by where the pinned repository came from: a release is bound to the repository it was
 * released to, so one found under another repository (a copy or a mirror) verifies only from its own.
 */
function registryMismatchFix(source: string | undefined, found: unknown, pinned: string): string {
  const own = typeof found === "string" ? describeValue(found) : undefined;
  // One local store written two ways (`./`, `//`, `..`, a trailing `/`, a relative path): repositories compare as written.
  if (typeof found === "string" && found.startsWith(LAYOUT_PREFIX) && pinned.startsWith(LAYOUT_PREFIX)) {
    const dir = (value: string) => posix.normalize(value.slice(LAYOUT_PREFIX.length)).replace(/(.)\/$/, "$1");
    if (dir(found) === dir(pinned)) {
      return `; the repository is compared exactly as the release wrote it, and ${describeValue(pinned)} writes the store's path another way: fix: write it exactly as ${own}`;
    }
    if (!pinned.slice(LAYOUT_PREFIX.length).startsWith("/")) {
      return `; ${describeValue(pinned)} is a relative store path, which is compared as written, never resolved: if you mean the store this release was made for, write it exactly as ${own}`;
    }
  }
  if (source === "the pinned reference") {
    return own === undefined
      ? "; a release verifies only from the repository it was released to"
      : `; this release was made for ${own} and verifies only from there (a release copied to another repository does not): fetch it from ${own}, or pin a release made for the repository you use`;
  }
  if (source === "--repository") return `; the repository you pin is set with --repository${own === undefined ? "" : ` (pin ${own} only if you trust it)`}`;
  if (source?.includes("fleet lock") === true) {
    return `; a fleet lock entry stays in the repository it was pinned from (fleet upgrade moves it only to a newer release there): to pin a release of another repository, run fleet remove --name <plugin>, then fleet add --receipt <file> --repository ${typeof found === "string" ? found : "<repository>"} (only if you trust it)`;
  }
  // sourceSuffix already said where the pin came from (a --policy file).
  if (source !== undefined) return "; fix: pin the repository you trust in that file, or with --repository";
  return "";
}

/** The fix for I3 (another package), by where the pinned package came from. */
function packageMismatchFix(source: string | undefined): string {
  if (source === "--package") return "; fix: check that this is the release you meant to verify";
  if (source?.includes("fleet lock") === true) {
    return "; the lock entry and the release it pins disagree (the lock was edited, or the release replaced): fix: fleet remove --name <plugin>, then fleet add with the receipt you trust";
  }
  if (source?.includes("--policy") === true) return "; fix: name the plugin's own package.json with --policy, or pin the package with --package";
  return "; fix: pin the package you trust with --package";
}

/** I1-I5: schema, state, package, registry and the exact key set. @returns the document's keys. */
function checkDocumentHeader(doc: JsonObject, expectedState: "tested" | "published", policy: ReleasePolicy): string[] {
  // The expectation itself first: a pinned repository with credentials or a URL in it is refused
  // (REPOSITORY_INVALID, redacted) before any message could echo it.
  parseRepository(policy.registryRepository);
  if (doc["schema_version"] !== 2) {
    fail("RECEIPT_SCHEMA_UNSUPPORTED", `unsupported release receipt schema: schema_version must be 2, found ${describeValue(doc["schema_version"])}`);
  }
  if (doc["receipt_state"] !== expectedState) {
    const kind = (state: "tested" | "published") => (state === "tested" ? "a tested manifest (release-manifest.json, receipt_state \"tested\"; verify-manifest)" : "a published receipt (release-receipt.json, receipt_state \"published\"; verify-final-receipt)");
    const other = expectedState === "tested" ? "published" : "tested";
    fail("RECEIPT_STATE_MISMATCH", `expected ${kind(expectedState)}, but receipt_state is ${describeValue(doc["receipt_state"])}${doc["receipt_state"] === other ? `: this document is ${kind(other)}` : ""}`);
  }
  if (doc["package"] !== policy.package) {
    fail("RECEIPT_PACKAGE_MISMATCH", `${documentKind(expectedState)} package mismatch: package must be ${describeValue(policy.package)}${sourceSuffix(policy.sources?.package)}, found ${describeValue(doc["package"])}${packageMismatchFix(policy.sources?.package)}`);
  }
  if (doc["registry_repository"] !== policy.registryRepository) {
    fail("RECEIPT_REGISTRY_MISMATCH", `${documentKind(expectedState)} registry mismatch: registry_repository must be ${describeValue(policy.registryRepository)}${sourceSuffix(policy.sources?.repository)}, found ${describeValue(doc["registry_repository"])}${registryMismatchFix(policy.sources?.repository, doc["registry_repository"], policy.registryRepository)}`);
  }
  const required = expectedState === "tested" ? TESTED_MANIFEST_KEYS : PUBLISHED_RECEIPT_KEYS;
  const keys = Object.keys(doc);
  const expectedKeys = [...required, ...OPTIONAL_RELEASE_KEYS.filter((k) => keys.includes(k))];
  const extra = keys.filter((k) => !expectedKeys.includes(k));
  const missing = expectedKeys.filter((k) => !keys.includes(k));
  if (extra.length > 0 || missing.length > 0) {
    const parts = [extra.length > 0 ? `unexpected ${extra.map((k) => JSON.stringify(k)).join(", ")}` : "", missing.length > 0 ? `missing ${missing.map((k) => JSON.stringify(k)).join(", ")}` : ""].filter(Boolean);
    fail("RECEIPT_FIELDS_MISMATCH", `${documentKind(expectedState)} contains unexpected or missing fields: ${parts.join("; ")}`);
  }
  return keys;
}

/** I6-I10: version, previous version, source SHA, tag, release class and promotion state; `kind` names the document. */
function checkVersionIdentity(doc: JsonObject, kind: string): { version: string; sourceSha: string } {
  const { version, previous_version: previous, source_sha: sourceSha } = doc;
  if (typeof version !== "string" || typeof previous !== "string" || typeof sourceSha !== "string") {
    fail("RECEIPT_IDENTITY_INCOMPLETE", `${kind} identity is incomplete: version, previous_version and source_sha must be strings`);
  }
  requireGitSha(sourceSha, "source_sha");
  // Each version field named when it is no stable SemVer (releaseClassOf's own message names neither).
  for (const [field, value] of [["previous_version", previous], ["version", version]] as const) {
    if (!isStableSemver(value)) fail("SEMVER_INVALID", `release document ${field} must be a stable SemVer (MAJOR.MINOR.PATCH, no leading zeros), found ${describeValue(value)}`);
  }
  let cls: ReleaseClass;
  try {
    cls = releaseClassOf(previous, version);
  } catch (error) {
    if (!(error instanceof ReleaseContractError) || error.code !== "RELEASE_NOT_ONE_BUMP") throw error;
    fail("RELEASE_NOT_ONE_BUMP", `${kind} previous_version ${previous} -> version ${version} is not one SemVer bump (a release moves exactly one of major, minor, patch up by one)${ownFieldsDisagree(kind)}`);
  }
  if (doc["tag"] !== `v${version}`) {
    fail("RECEIPT_TAG_MISMATCH", `${kind} tag mismatch: tag must be "v${version}" (its version), found ${describeValue(doc["tag"])}${ownFieldsDisagree(kind)}`);
  }
  if (doc["release_class"] !== cls) {
    fail("RECEIPT_CLASS_MISMATCH", `${kind} class mismatch: ${previous} -> ${version} is ${cls}, found release_class ${describeValue(doc["release_class"])}${ownFieldsDisagree(kind)}`);
  }
  const promotion = doc["promotion"];
  const expectedPromotion = promotionFor(cls);
  if (!isObject(promotion) || !sameKeys(promotion, ["automatic_candidate", "state"]) || promotion["automatic_candidate"] !== expectedPromotion.automatic_candidate || promotion["state"] !== expectedPromotion.state) {
    fail("RECEIPT_PROMOTION_MISMATCH", `${kind} promotion state mismatch: a ${cls} release requires ${JSON.stringify(expectedPromotion)}, found ${describeValue(promotion)}${ownFieldsDisagree(kind)}`);
  }
  return { version, sourceSha };
}

/** I11-I14: every test gate passed on this source with the policy's command, host contract and workflow evidence. */
/** `document` names what is checked (a tested manifest or a release receipt), for the messages. */
function checkGateEvidence(doc: JsonObject, sourceSha: string, policy: ReleasePolicy, document: string, kind: string): void {
  const evidence = doc["evidence"];
  if (!isObject(evidence) || !sameKeys(evidence, EVIDENCE_KEYS)) {
    fail("EVIDENCE_INCOMPLETE", `${document} evidence is incomplete: evidence must have exactly the keys ${EVIDENCE_KEYS.join(", ")}`);
  }
  for (const gate of TEST_GATES) {
    const entry = evidence[gate];
    const keys = gate === "host_contract" ? ["command", "mcp_sdk_version", "result", "source_sha", "status"] : ["command", "result", "source_sha", "status"];
    if (!isObject(entry) || !sameKeys(entry, keys) || entry["status"] !== "passed" || entry["result"] !== "passed") {
      fail("GATE_NOT_PASSED", `${document} gate ${gate} did not pass: evidence.${gate} must be exactly {${keys.join(", ")}} with status and result "passed"`);
    }
    const command = entry["command"];
    if (typeof command !== "string" || command.trim().length === 0) {
      fail("GATE_NOT_PASSED", `${document} gate ${gate} records no command: evidence.${gate}.command must be a non-empty string, found ${describeValue(command)}`);
    }
    const pinned = policy.gates[gate];
    if (pinned !== undefined && command !== pinned) {
      fail(
        "GATE_COMMAND_MISMATCH",
        `${document} gate ${gate} ran ${JSON.stringify(command)}, not the pinned command ${JSON.stringify(pinned)}${sourceSuffix(policy.sources?.gates)}; fix: do not use this release, or, only if you accept that command as the ${gate} gate, pin it instead (${gate}=${JSON.stringify(command)}${policy.sources?.gates === undefined ? "" : ` in ${policy.sources.gates}`})`,
      );
    }
    if (entry["source_sha"] !== sourceSha) {
      fail("GATE_OTHER_SOURCE", `${document} gate ${gate} used another source: evidence.${gate}.source_sha is ${describeValue(entry["source_sha"])}, but the document's source_sha is ${sourceSha}${ownFieldsDisagree(kind)}`);
    }
  }
  const host = evidence["host_contract"] as Record<string, unknown>;
  if (!isStableSemver(host["mcp_sdk_version"])) {
    fail("GATE_HOST_CONTRACT_INVALID", `evidence.host_contract.mcp_sdk_version must be a stable SemVer, found ${describeValue(host["mcp_sdk_version"])}`);
  }
  const workflow = evidence["workflow"];
  if (isObject(workflow) && isGitSha(workflow["source_sha"]) && workflow["source_sha"] !== sourceSha) {
    fail("WORKFLOW_EVIDENCE_INVALID", `workflow run evidence used another source: evidence.workflow.source_sha is ${describeValue(workflow["source_sha"])}, but the document's source_sha is ${sourceSha}${ownFieldsDisagree(kind)}`);
  }
  if (
    !isObject(workflow) ||
    !sameKeys(workflow, ["name", "run_attempt", "run_id", "source_sha"]) ||
    workflow["name"] !== WORKFLOW_NAME ||
    typeof workflow["run_id"] !== "string" ||
    !/^[1-9][0-9]*$/.test(workflow["run_id"]) ||
    !isTrueInteger(workflow["run_attempt"]) ||
    workflow["run_attempt"] < 1 ||
    !isGitSha(workflow["source_sha"]) ||
    workflow["source_sha"] !== sourceSha
  ) {
    fail("WORKFLOW_EVIDENCE_INVALID", `workflow run evidence is incomplete or used another source: evidence.workflow must be {name: "${WORKFLOW_NAME}", run_id: digits, run_attempt: integer >= 1, source_sha: "${sourceSha}"}`);
  }
}

/** I15-I16: exactly one npm tarball, its file record and its file name. */
function checkArtifactInventory(doc: JsonObject, version: string, published: boolean, policy: ReleasePolicy, kind: string): void {
  const artifacts = doc["artifacts"];
  if (!Array.isArray(artifacts) || artifacts.length !== 1) {
    fail("ARTIFACTS_INVENTORY", `${kind} must name exactly one npm tarball: artifacts has ${Array.isArray(artifacts) ? artifacts.length : "no"} entries`);
  }
  checkFileRecord(artifacts[0], "filename", published, "artifacts[0]");
  const expectedName = tarballFileName(policy.package, version);
  if ((artifacts[0] as Record<string, unknown>)["filename"] !== expectedName) {
    fail("ARTIFACT_FILENAME_MISMATCH", `${kind} artifact filenames mismatch: expected ${JSON.stringify(expectedName)} (its package and version), found ${describeValue((artifacts[0] as Record<string, unknown>)["filename"])}${ownFieldsDisagree(kind)}`);
  }
}

/**
 * Verify a tested manifest (docs/contract.md "Error codes", state `tested`).
 * @returns the typed manifest.
 * @throws ReleaseContractError with the codes of {@link verifyReleaseIdentity}, or `SCHEMA_INVALID`.
 */
export function verifyTestedManifest(doc: JsonObject, policy: ReleasePolicy): TestedManifest {
  verifyReleaseIdentity(doc, "tested", policy);
  return schemaParse(TestedManifestSchema, doc, "tested manifest");
}

/** Options of {@link verifyFinalReceipt}. */
export interface FinalReceiptExpectations {
  /** When set, `registry_reference` must equal it exactly (the bundle reference the consumer pinned). */
  bundleReference?: string;
  /**
   * When set, the receipt's own reference (`receiptReferenceOf` of the policy's repository and the receipt's
   * canonical bytes, docs/contract.md "Receipt reference") must equal it exactly: the receipt reference the
   * release published. The one offline pin that binds every field (source, previous version, gates and their
   * evidence, tarball digest); without it those are the receipt's own claims.
   */
  receiptReference?: string;
}

/**
 * The fields of a published receipt that an offline verify with `expect` leaves as the receipt's own claims
 * (nothing binds them to what the release published): none with `receiptReference` pinned; `source_sha`,
 * `previous_version`, `evidence` (gate commands and results) and `artifacts` (the tarball digest) with only
 * `bundleReference`; `registry_reference` too with neither. Pure.
 */
export function receiptUnboundFields(expect: FinalReceiptExpectations): string[] {
  requireReceiptExpectations(expect);
  if (expect.receiptReference !== undefined) return [];
  const claims = ["source_sha", "previous_version", "evidence", "artifacts"];
  return expect.bundleReference !== undefined ? claims : ["registry_reference", ...claims];
}

/**
 * `expect` is an object whose keys are `bundleReference` and `receiptReference` only: a misspelt key
 * (`receiptRefernce`) would pin nothing and let a tampered receipt pass.
 * @throws ReleaseContractError `POLICY_INVALID` naming what was found.
 */
function requireReceiptExpectations(expect: unknown): asserts expect is FinalReceiptExpectations {
  if (expect === null || typeof expect !== "object" || Array.isArray(expect)) {
    fail("POLICY_INVALID", `expected the receipt expectations as an object ({ bundleReference?, receiptReference? }), found ${describeValue(expect)}`);
  }
  // Plain data only: a getter could answer the pin check one reference and the binding another.
  const shape = plainObjectProblem(expect, "the receipt expectations");
  if (shape !== undefined) fail("POLICY_INVALID", shape);
  const unknown = Object.keys(expect).filter((key) => key !== "bundleReference" && key !== "receiptReference");
  if (unknown.length > 0) {
    const near = nearestName(unknown[0] as string, ["bundleReference", "receiptReference"]);
    fail("POLICY_INVALID", `the receipt expectations have ${unknown.map((k) => JSON.stringify(k)).join(", ")}, which nothing reads (expected { bundleReference?, receiptReference? })${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}; a misspelt pin would bind nothing`);
  }
}

/** The pinned references of `expect` are digest references (a tag pins nothing), before any document is read. */
function requirePinnedReferences(expect: FinalReceiptExpectations): void {
  const pins = [
    [expect.bundleReference, "the pinned bundle reference (--expect-bundle-reference)"],
    [expect.receiptReference, "the pinned receipt reference (--expect-receipt-reference)"],
  ] as const;
  for (const [pinned, what] of pins) {
    if (pinned === undefined) continue;
    try {
      parseReference(pinned);
    } catch (error) {
      if (!(error instanceof ReleaseContractError)) throw error;
      fail(error.code, `${what}: ${error.message}`);
    }
  }
}

/**
 * The receipt file's bytes are the receipt pinned by `receiptReference` (docs/contract.md "Receipt reference": the
 * reference is the digest of the receipt artifact's manifest, a pure function of the receipt's bytes, so this
 * needs no registry). Checked before anything in the receipt is interpreted: bytes that are not the pinned
 * receipt (edited after they were fetched, or another receipt) are reported as such, never as a disagreement
 * between the fields of a receipt nobody published. Bytes that only respell the pinned receipt (its canonical
 * form is the pinned one: reformatted, reindented) pass here and are refused by the canonical-bytes check
 * (`RECEIPT_NOT_CANONICAL`) of {@link verifyFinalReceiptBytes}, which names the spelling. Pure.
 * @param bytes the receipt file's bytes. @param repository the repository the receipt is verified for (the policy's
 *   `registryRepository`). @param receiptReference the pinned receipt reference, `<repository>@sha256:<64 hex>`.
 * @returns the reference of `bytes` in `repository` (equal to `receiptReference`, or to it once respelt canonically).
 * @throws ReleaseContractError `RECEIPT_REFERENCE_MISMATCH`: the bundle reference given in its place, a pin in
 *   another repository, or bytes that are not the pinned receipt (naming the pinned reference, the bytes' own, and
 *   the fix: fetch the pinned receipt again); `REFERENCE_NOT_PINNED` and the codes of `parseReference` for a
 *   `receiptReference` that pins no digest; `REPOSITORY_INVALID` (`repository`); `POLICY_INVALID` (`bytes` not a
 *   Uint8Array, a `repository` or `receiptReference` that is no string).
 */
export function verifyReceiptReference(bytes: Uint8Array, repository: string, receiptReference: string): string {
  const call = "verifyReceiptReference(bytes, repository, receiptReference)";
  if (typeof repository !== "string") fail("POLICY_INVALID", `${call}: repository must be the repository you pin (a string), found ${describeValue(repository)}`);
  if (typeof receiptReference !== "string") fail("POLICY_INVALID", `${call}: receiptReference must be the receipt reference you pin (<repository>@sha256:<64 hex>), found ${describeValue(receiptReference)}`);
  parseReference(receiptReference);
  const own = receiptReferenceOf(repository, bytes);
  if (own === receiptReference) return own;
  // What the bytes say is read only to tell which mistake it is; nothing in them is trusted.
  let doc: JsonObject | undefined;
  try {
    doc = parseStrictJson(bytes);
  } catch {
    doc = undefined;
  }
  if (doc !== undefined && receiptReferenceOf(repository, canonicalJsonBytes(doc)) === receiptReference) return receiptReference;
  if (doc !== undefined && receiptReference === doc["registry_reference"]) {
    fail(
      "RECEIPT_REFERENCE_MISMATCH",
      `the pinned receipt reference ${receiptReference} is the reference of the bundle this receipt names (its registry_reference), not of the receipt; fix: pin it as the bundle reference (--expect-bundle-reference), and the receipt reference the release published as the receipt reference (--expect-receipt-reference)`,
    );
  }
  const pinnedRepository = parseReference(receiptReference).repository.repository;
  if (pinnedRepository !== repository) {
    fail(
      "RECEIPT_REFERENCE_MISMATCH",
      `the pinned receipt reference ${receiptReference} names repository ${pinnedRepository}, but this receipt is verified for ${repository} (its reference there is ${own}); fix: pin the receipt reference the release published in the repository you trust`,
    );
  }
  fail(
    "RECEIPT_REFERENCE_MISMATCH",
    `this receipt's reference is ${own}, not the pinned ${receiptReference}: its bytes differ from the receipt you pinned (the file was changed after it was fetched, or is another receipt), so none of its fields was checked or trusted; fix: do not trust this file; fetch the receipt you pinned (hermes-plugin-kit fetch --reference ${receiptReference} --expect receipt --output-dir DIR) and verify that`,
  );
}

/**
 * Verify a published receipt offline (checks R1-R6, docs/contract.md): identity
 * (I1-I16, state `published`), `registry_reference` digest-pinned in the policy's
 * repository, exactly 4 payload records sorted by path with the bundle paths,
 * and the artifact agreeing with its payload record.
 *
 * Without `expect.receiptReference` this proves only that the receipt is consistent and names the policy's
 * repository (and, with `expect.bundleReference`, the pinned bundle): any consistent receipt for that
 * repository passes, and its source, previous version, gates, evidence and tarball digest are its own claims.
 * `verify-final-receipt` warns so; {@link receiptUnboundFields} lists them.
 *
 * Codes: those of {@link verifyReleaseIdentity}, plus `REFERENCE_NOT_PINNED` (also a pinned reference with a
 * tag), `REFERENCE_REPOSITORY_MISMATCH` (R2), `PAYLOAD_INVENTORY` (R3),
 * `FILE_RECORD_INVALID` (R4), `PAYLOAD_PATHS_MISMATCH` (R5),
 * `ARTIFACT_PAYLOAD_DISAGREE` (R6), `BUNDLE_REFERENCE_MISMATCH`, `RECEIPT_REFERENCE_MISMATCH` (the pinned
 * receipt reference is another receipt's, the bundle's, or in another repository).
 */
export function verifyFinalReceipt(doc: JsonObject, policy: ReleasePolicy, expect: FinalReceiptExpectations = {}): PublishedReceipt {
  requireReceiptExpectations(expect);
  // What was pinned is checked before the document: a tag there is no pin (a receipt can only ever mismatch it).
  requirePinnedReferences(expect);
  // A pinned receipt reference binds every byte: a document that is not the pinned receipt is refused as such
  // before any of its fields is interpreted (its fields would otherwise be blamed for disagreeing).
  if (expect.receiptReference !== undefined) {
    checkVerifyArguments(doc, policy);
    verifyReceiptReference(canonicalJsonBytes(doc), policy.registryRepository, expect.receiptReference);
  }
  verifyReleaseIdentity(doc, "published", policy);
  const ref = parseReference(doc["registry_reference"], policy.registryRepository);
  const payload = doc["payload"];
  if (!Array.isArray(payload) || payload.length !== 4) {
    fail("PAYLOAD_INVENTORY", `final release payload inventory is incomplete: payload must have 4 records, found ${Array.isArray(payload) ? payload.length : describeValue(payload)}`);
  }
  payload.forEach((record, i) => checkFileRecord(record, "path", true, `payload[${i}]`));
  const version = doc["version"] as string;
  const expectedPaths = bundlePayloadPaths(policy.package, version);
  const paths = payload.map((r) => (r as Record<string, unknown>)["path"] as string);
  if (paths.some((p, i) => p !== expectedPaths[i])) {
    fail("PAYLOAD_PATHS_MISMATCH", `final release payload paths mismatch: expected ${expectedPaths.map((p) => JSON.stringify(p)).join(", ")} in this order (the bundle paths of its package and version), found ${paths.map((p) => describeValue(p)).join(", ")}${ownFieldsDisagree("release receipt")}`);
  }
  const artifact = (doc["artifacts"] as Record<string, unknown>[])[0] as Record<string, unknown>;
  const record = payload.find((r) => (r as Record<string, unknown>)["path"] === `dist/${artifact["filename"] as string}`) as Record<string, unknown>;
  if (record["sha256"] !== artifact["sha256"] || record["size"] !== artifact["size"] || record["blob_digest"] !== artifact["blob_digest"]) {
    fail("ARTIFACT_PAYLOAD_DISAGREE", `final release artifact and payload disagree for dist/${artifact["filename"] as string}: artifacts[0] records sha256 ${describeValue(artifact["sha256"])}, size ${describeValue(artifact["size"])}, the payload record sha256 ${describeValue(record["sha256"])}, size ${describeValue(record["size"])}${ownFieldsDisagree("release receipt")}`);
  }
  if (expect.bundleReference !== undefined && ref.reference !== expect.bundleReference) {
    fail(
      "BUNDLE_REFERENCE_MISMATCH",
      `receipt registry_reference ${ref.reference} is not the pinned bundle reference ${expect.bundleReference}; fix: check that you pinned the bundle reference of this release (not its receipt reference, nor another release's), and that this receipt is the one published with it`,
    );
  }
  return schemaParse(PublishedReceiptSchema, doc, "published receipt");
}

function schemaParse<T>(
  schema: { safeParse(v: unknown, params?: { jitless?: boolean }): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } },
  doc: unknown,
  label: string,
): T {
  // A release document is parsed once or twice per process: zod's JIT (code generated on the first
  // parse of each object schema) costs more than it saves here, so it is off for these parses.
  const result = schema.safeParse(doc, { jitless: true });
  if (!result.success) {
    const issue = result.error.issues[0];
    fail("SCHEMA_INVALID", `${label} does not match its schema at ${issue ? issue.path.map(String).join(".") || "<root>" : "<root>"}: ${issue?.message ?? "invalid"}`);
  }
  return result.data;
}

/**
 * Parse release JSON bytes (check J1-J3, docs/contract.md): strict JSON, object top level,
 * no duplicate keys. Codes of `parseStrictJson` (`JSON_DUPLICATE_KEY`, ...).
 */
export function parseReleaseJson(bytes: Uint8Array | string): JsonObject {
  return parseStrictJson(bytes);
}

/**
 * Verify a published receipt from its file bytes: the bytes must be exactly
 * the canonical compact form with one trailing newline
 * (`RECEIPT_NOT_CANONICAL`, docs/contract.md: the receipt reference is the digest
 * of an OCI manifest over these bytes, so any other spelling is another
 * receipt), then every check of {@link verifyFinalReceipt}.
 * @throws ReleaseContractError `JSON_SYNTAX` when `bytes` is not a Uint8Array (the file's bytes), before parsing.
 */
export function verifyFinalReceiptBytes(bytes: Uint8Array, policy: ReleasePolicy, expect: FinalReceiptExpectations = {}): PublishedReceipt {
  requireReceiptBytes("verifyFinalReceiptBytes(bytes, policy, expect)", bytes);
  return verifyParsedFinalReceiptBytes(bytes, parseReleaseJson(bytes), policy, expect);
}

/**
 * {@link verifyFinalReceiptBytes} for a caller that already parsed `bytes` into `doc` (with
 * {@link parseReleaseJson}) and so does not parse them twice. Safe with any `doc`: the bytes must
 * equal `doc`'s canonical form, so a `doc` that is not what `bytes` hold fails `RECEIPT_NOT_CANONICAL`.
 * @throws ReleaseContractError `JSON_SYNTAX` when `bytes` is not a Uint8Array (as {@link parseReleaseJson}); the codes of {@link verifyFinalReceipt}.
 */
export function verifyParsedFinalReceiptBytes(bytes: Uint8Array, doc: JsonObject, policy: ReleasePolicy, expect: FinalReceiptExpectations = {}): PublishedReceipt {
  requireReceiptBytes("verifyParsedFinalReceiptBytes(bytes, doc, policy, expect)", bytes);
  // The file's own bytes against the pinned receipt reference first (not only `doc`'s canonical form): bytes
  // edited after the fetch are named as not the pinned receipt, before their fields are read.
  requireReceiptExpectations(expect);
  requirePinnedReferences(expect);
  if (expect.receiptReference !== undefined) {
    checkVerifyArguments(doc, policy);
    verifyReceiptReference(bytes, policy.registryRepository, expect.receiptReference);
  }
  const receipt = verifyFinalReceipt(doc, policy, expect);
  if (Buffer.compare(Buffer.from(bytes), Buffer.from(canonicalJson(doc), "utf8")) !== 0) {
    const canonical = canonicalJson(doc);
    fail(
      "RECEIPT_NOT_CANONICAL",
      `release receipt is not in its canonical form: expected the exact bytes that were published (canonical JSON: compact, keys sorted, non-ASCII escaped, one trailing newline; docs/contract.md: the receipt reference is the digest of a manifest over these bytes, so any other spelling is another receipt), found ${canonicalFormDifference(bytes, canonical)}; fix: use the exact published bytes (hermes-plugin-kit fetch --reference <receipt reference> --expect receipt writes them as release-receipt.json), and do not reformat the file (no jq ., no editor reindent)`,
    );
  }
  return receipt;
}
