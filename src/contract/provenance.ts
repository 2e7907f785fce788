/**
 * The provenance statement of a release (docs/architecture.md, "Provenance"):
 * an in-toto Statement v1 (in-toto attestation spec, `statement.md`) whose one
 * subject is the release bundle's manifest digest, named by the registry
 * repository, with a SLSA Provenance v1 predicate (slsa.dev/provenance/v1)
 * recording the source repository, `source_sha`, tag, workflow, run id and
 * attempt, and the tested manifest's digest.
 *
 * Pure: {@link provenanceStatement} builds the statement,
 * {@link parseProvenanceStatement} reads one back strictly, and
 * {@link checkReleaseBinding} checks it against the release's own verified
 * documents (tested manifest or published receipt).
 */
import * as z from "zod";
import { RELEASE_MANIFEST_FILE } from "./constants.js";
import { ReleaseContractError } from "./errors.js";
import { describeValue, isDigest } from "./grammar.js";
import { plainObjectProblem } from "./plain-options.js";
import { ProvenanceError } from "./provenance-error.js";
import type { PublishedReceipt, TestedManifest } from "./schemas.js";

/** `_type` of an in-toto Statement v1. */
export const IN_TOTO_STATEMENT_V1 = "https://in-toto.io/Statement/v1";
/** `predicateType` of SLSA Provenance v1. */
export const SLSA_PROVENANCE_V1 = "https://slsa.dev/provenance/v1";
/** DSSE `payloadType` of an in-toto statement. */
export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";
/** Media type (and OCI artifactType) of a Sigstore bundle v0.3. */
export const SIGSTORE_BUNDLE_V03_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json";
/** `buildType` of this kit's release provenance (the meaning of its parameters is documented there). */
export const RELEASE_BUILD_TYPE = "https://github.com/offendingcommit/hermes-plugin-kit/blob/main/docs/provenance.md#release-build-v1";

/** What one release's provenance records (all values validated by {@link provenanceStatement}). */
export interface ProvenanceFacts {
  /** Subject name: the registry repository, e.g. `ghcr.io/acme/plugin` or `oci-layout:/srv/store`. */
  registryRepository: string;
  /** Subject digest: the release bundle's manifest digest `sha256:<64 hex>`. */
  bundleDigest: string;
  /** Source repository URI, e.g. `https://github.com/acme/plugin` (a local run: `file:///...`). */
  sourceRepository: string;
  /** The release commit (40 hex). */
  sourceSha: string;
  /** The release tag `v<semver>`. */
  tag: string;
  /** The release workflow: its path in the source repository and the ref it ran at. */
  workflow: { path: string; ref: string };
  /** Workflow run id (decimal, no leading zero). */
  runId: string;
  /** Workflow run attempt (>= 1). */
  runAttempt: number;
  /** SHA-256 digest `sha256:<64 hex>` of the tested `release-manifest.json` bytes. */
  testedManifestDigest: string;
}

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const gitSha = z.string().regex(/^[0-9a-f]{40}$/);
const sourceRepositoryRe = /^(?:https:\/\/[A-Za-z0-9.-]+(?::[0-9]{1,5})?|file:\/\/)\/[^\s@?#]*[^\s@?#/]$/;
const workflowPathRe = /^\.github\/workflows\/[A-Za-z0-9._-]+\.ya?ml$/;
const gitRefRe = /^refs\/(?:heads|tags)\/[^\s@~^:?*[\\]+$/;
const tagRe = /^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;
const runIdRe = /^[1-9][0-9]{0,19}$/;

const PredicateSchema = z.strictObject({
  buildDefinition: z.strictObject({
    buildType: z.literal(RELEASE_BUILD_TYPE),
    externalParameters: z.strictObject({
      workflow: z.strictObject({ repository: z.string().regex(sourceRepositoryRe), path: z.string().regex(workflowPathRe), ref: z.string().regex(gitRefRe) }),
      release: z.strictObject({ tag: z.string().regex(tagRe) }),
    }),
    internalParameters: z.strictObject({ run_id: z.string().regex(runIdRe), run_attempt: z.number().int().min(1).max(1_000_000) }),
    resolvedDependencies: z.tuple([
      z.strictObject({ uri: z.string().min(1), digest: z.strictObject({ gitCommit: gitSha }) }),
      z.strictObject({ name: z.literal(RELEASE_MANIFEST_FILE), digest: z.strictObject({ sha256: hex64 }) }),
    ]),
  }),
  runDetails: z.strictObject({
    builder: z.strictObject({ id: z.string().min(1) }),
    metadata: z.strictObject({ invocationId: z.string().min(1) }),
  }),
});

const StatementSchema = z.strictObject({
  _type: z.literal(IN_TOTO_STATEMENT_V1),
  subject: z.array(z.strictObject({ name: z.string().min(1), digest: z.strictObject({ sha256: hex64 }) })).length(1),
  predicateType: z.literal(SLSA_PROVENANCE_V1),
  predicate: PredicateSchema,
});

function sourceDependencyUri(facts: Pick<ProvenanceFacts, "sourceRepository" | "tag">): string {
  return `git+${facts.sourceRepository}@refs/tags/${facts.tag}`;
}

function builderId(facts: Pick<ProvenanceFacts, "sourceRepository" | "workflow">): string {
  return `${facts.sourceRepository}/${facts.workflow.path}@${facts.workflow.ref}`;
}

function invocationId(facts: Pick<ProvenanceFacts, "sourceRepository" | "runId" | "runAttempt">): string {
  return `${facts.sourceRepository}/actions/runs/${facts.runId}/attempts/${facts.runAttempt}`;
}

function digestHex(value: string, label: string): string {
  const match = /^sha256:([0-9a-f]{64})$/.exec(value);
  if (match === null) throw new ProvenanceError("PROVENANCE_STATEMENT_INVALID", `${label} must be sha256:<64 hex>, found ${describeValue(value)}`);
  return match[1] as string;
}

/** An object value (not null, not an array), for the argument checks below. */
function isObjectValue(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * What is wrong with `facts` as {@link ProvenanceFacts} (what `parseProvenanceStatement` returns) for reading, or
 * `undefined`: not a plain object, a `workflow` that is no `{ path, ref }` of strings, or a string field that is
 * no string. Each module raises it under its own code (this one `PROVENANCE_STATEMENT_INVALID`, the provenance
 * policy checks `PROVENANCE_POLICY_INVALID`). Pure.
 */
export function provenanceFactsProblem(facts: unknown, name = "facts"): string | undefined {
  const shape = plainObjectProblem(facts, name);
  if (shape !== undefined) return `${shape}; expected the facts of a statement (parseProvenanceStatement)`;
  const f = facts as Record<string, unknown>;
  const workflow = f["workflow"];
  if (!isObjectValue(workflow) || typeof workflow["path"] !== "string" || typeof workflow["ref"] !== "string") {
    return `${name}.workflow must be { path: string, ref: string }, found ${isObjectValue(workflow) ? `path ${describeValue(workflow["path"])}, ref ${describeValue(workflow["ref"])}` : describeValue(workflow)}`;
  }
  for (const key of ["registryRepository", "bundleDigest", "sourceRepository", "sourceSha", "tag", "runId", "testedManifestDigest"]) {
    if (typeof f[key] !== "string") return `${name}.${key} must be a string, found ${describeValue(f[key])}`;
  }
  if (typeof f["runAttempt"] !== "number") return `${name}.runAttempt must be a number, found ${describeValue(f["runAttempt"])}`;
  return undefined;
}

/** `POLICY_INVALID` for a release document or binding argument of another shape, naming the call. */
function invalidArgument(call: string, message: string): never {
  throw new ReleaseContractError("POLICY_INVALID", `${call}: ${message}`);
}

/** Refuses a verified release document (tested manifest or receipt) argument whose fields read below are of another type. */
function requireReleaseDocumentArgument(call: string, name: string, doc: unknown): void {
  if (!isObjectValue(doc)) invalidArgument(call, `${name} must be a verified release document (verifyTestedManifest, verifyFinalReceipt), found ${describeValue(doc)}`);
  const d = doc as Record<string, unknown>;
  const evidence = d["evidence"];
  const workflow = isObjectValue(evidence) ? evidence["workflow"] : undefined;
  if (!isObjectValue(workflow)) invalidArgument(call, `${name}.evidence.workflow must be an object { name, run_id, ... }, found ${describeValue(workflow)}`);
  for (const key of ["registry_repository", "source_sha", "tag"]) {
    if (typeof d[key] !== "string") invalidArgument(call, `${name}.${key} must be a string, found ${describeValue(d[key])}`);
  }
}

/**
 * The statement object for `facts` (keys in any order; serialise with
 * canonical JSON). Every value is checked against the grammar
 * {@link parseProvenanceStatement} reads back, so a statement built here always parses.
 * @throws ProvenanceError `PROVENANCE_STATEMENT_INVALID` naming the bad value (a `facts` that is no plain object
 *   of {@link ProvenanceFacts} among them: {@link provenanceFactsProblem}).
 */
export function provenanceStatement(facts: ProvenanceFacts): Record<string, unknown> {
  const problem = provenanceFactsProblem(facts);
  if (problem !== undefined) throw new ProvenanceError("PROVENANCE_STATEMENT_INVALID", `provenanceStatement(facts): ${problem}`);
  const statement = {
    _type: IN_TOTO_STATEMENT_V1,
    subject: [{ name: facts.registryRepository, digest: { sha256: digestHex(facts.bundleDigest, "the bundle digest") } }],
    predicateType: SLSA_PROVENANCE_V1,
    predicate: {
      buildDefinition: {
        buildType: RELEASE_BUILD_TYPE,
        externalParameters: {
          workflow: { repository: facts.sourceRepository, path: facts.workflow.path, ref: facts.workflow.ref },
          release: { tag: facts.tag },
        },
        internalParameters: { run_id: facts.runId, run_attempt: facts.runAttempt },
        resolvedDependencies: [
          { uri: sourceDependencyUri(facts), digest: { gitCommit: facts.sourceSha } },
          { name: RELEASE_MANIFEST_FILE, digest: { sha256: digestHex(facts.testedManifestDigest, "the tested manifest digest") } },
        ],
      },
      runDetails: { builder: { id: builderId(facts) }, metadata: { invocationId: invocationId(facts) } },
    },
  };
  parseProvenanceStatement(statement);
  return statement;
}

/**
 * Read a statement strictly: exact keys everywhere (in-toto Statement v1,
 * SLSA Provenance v1 with {@link RELEASE_BUILD_TYPE}), exactly one subject,
 * and the derived fields (source dependency URI, builder id, invocation id)
 * consistent with the recorded ones.
 * @throws ProvenanceError `PROVENANCE_STATEMENT_INVALID` with the path of the first problem.
 */
export function parseProvenanceStatement(value: unknown): ProvenanceFacts {
  const result = StatementSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? "<root>" : issue.path.map(String).join(".");
    throw new ProvenanceError(
      "PROVENANCE_STATEMENT_INVALID",
      `the attestation is not an in-toto v1 statement with this kit's SLSA provenance v1 predicate: at ${where}: ${issue?.message ?? "invalid"}`,
    );
  }
  const s = result.data;
  const subject = s.subject[0] as (typeof s.subject)[number];
  const def = s.predicate.buildDefinition;
  const [source, tested] = def.resolvedDependencies;
  const facts: ProvenanceFacts = {
    registryRepository: subject.name,
    bundleDigest: `sha256:${subject.digest.sha256}`,
    sourceRepository: def.externalParameters.workflow.repository,
    sourceSha: source.digest.gitCommit,
    tag: def.externalParameters.release.tag,
    workflow: { path: def.externalParameters.workflow.path, ref: def.externalParameters.workflow.ref },
    runId: def.internalParameters.run_id,
    runAttempt: def.internalParameters.run_attempt,
    testedManifestDigest: `sha256:${tested.digest.sha256}`,
  };
  const derived: Array<[string, string, string]> = [
    ["predicate.buildDefinition.resolvedDependencies.0.uri", source.uri, sourceDependencyUri(facts)],
    ["predicate.runDetails.builder.id", s.predicate.runDetails.builder.id, builderId(facts)],
    ["predicate.runDetails.metadata.invocationId", s.predicate.runDetails.metadata.invocationId, invocationId(facts)],
  ];
  for (const [where, found, expected] of derived) {
    if (found !== expected) {
      throw new ProvenanceError("PROVENANCE_STATEMENT_INVALID", `the statement is inconsistent at ${where}: expected ${describeValue(expected)}, found ${describeValue(found)}`);
    }
  }
  return facts;
}

/** What a verified release says about itself; the statement must agree with every field. */
export interface ReleaseBinding {
  /** The registry repository the release lives in (subject name). */
  registryRepository: string;
  /** The release bundle manifest digest (subject digest). */
  bundleDigest: string;
  sourceSha: string;
  tag: string;
  /** `evidence.workflow.name` (`release.yml`). */
  workflowName: string;
  /** `evidence.workflow.run_id`. */
  runId: string;
  /** `sha256:<hex>` of the tested `release-manifest.json` bytes. */
  testedManifestDigest: string;
  /** Where these values came from, for messages (e.g. `the receipt`, `the tested manifest`). */
  origin: string;
}

/**
 * {@link ReleaseBinding} of a verified tested manifest fetched from the bundle `bundleDigest`.
 * @throws ReleaseContractError `POLICY_INVALID` for arguments of another shape: a `manifest` that is no verified
 *   tested manifest, a digest that is no `sha256:<64 hex>`.
 */
export function bindingFromTestedManifest(manifest: TestedManifest, testedManifestDigest: string, bundleDigest: string): ReleaseBinding {
  const call = "bindingFromTestedManifest(manifest, testedManifestDigest, bundleDigest)";
  requireReleaseDocumentArgument(call, "manifest", manifest);
  if (!isDigest(testedManifestDigest)) invalidArgument(call, `testedManifestDigest must be sha256:<64 hex>, found ${describeValue(testedManifestDigest)}`);
  if (!isDigest(bundleDigest)) invalidArgument(call, `bundleDigest must be sha256:<64 hex>, found ${describeValue(bundleDigest)}`);
  return {
    registryRepository: manifest.registry_repository,
    bundleDigest,
    sourceSha: manifest.source_sha,
    tag: manifest.tag,
    workflowName: manifest.evidence.workflow.name,
    runId: manifest.evidence.workflow.run_id,
    testedManifestDigest,
    origin: "the tested manifest",
  };
}

/**
 * {@link ReleaseBinding} of a verified published receipt: the bundle digest
 * from `registry_reference`, the tested manifest digest from its payload record.
 * @throws ProvenanceError `PROVENANCE_TESTED_MANIFEST_MISMATCH` when the payload lacks `release-manifest.json`;
 *   ReleaseContractError `POLICY_INVALID` for a `receipt` that is no verified published receipt (no `payload`
 *   array, no `registry_reference` string, no `evidence.workflow`).
 */
export function bindingFromReceipt(receipt: PublishedReceipt): ReleaseBinding {
  const call = "bindingFromReceipt(receipt)";
  requireReleaseDocumentArgument(call, "receipt", receipt);
  if (!Array.isArray(receipt.payload) || !receipt.payload.every(isObjectValue)) invalidArgument(call, `receipt.payload must be an array of payload records, found ${describeValue(receipt.payload)}`);
  if (typeof receipt.registry_reference !== "string") invalidArgument(call, `receipt.registry_reference must be a string, found ${describeValue(receipt.registry_reference)}`);
  const record = receipt.payload.find((p) => p.path === RELEASE_MANIFEST_FILE);
  if (record === undefined) throw new ProvenanceError("PROVENANCE_TESTED_MANIFEST_MISMATCH", `the receipt's payload records no ${RELEASE_MANIFEST_FILE}`);
  return {
    registryRepository: receipt.registry_repository,
    bundleDigest: receipt.registry_reference.slice(receipt.registry_reference.lastIndexOf("@") + 1),
    sourceSha: receipt.source_sha,
    tag: receipt.tag,
    workflowName: receipt.evidence.workflow.name,
    runId: receipt.evidence.workflow.run_id,
    testedManifestDigest: `sha256:${record.sha256}`,
    origin: "the receipt",
  };
}

/**
 * The statement must describe exactly this release: subject (repository and
 * bundle digest), tested manifest digest, `source_sha`, tag, workflow file and run id.
 * @throws ProvenanceError `PROVENANCE_SUBJECT_MISMATCH`, `PROVENANCE_TESTED_MANIFEST_MISMATCH`,
 *   `PROVENANCE_SOURCE_SHA_MISMATCH`, `PROVENANCE_TAG_MISMATCH`, `PROVENANCE_WORKFLOW_MISMATCH`,
 *   `PROVENANCE_RUN_ID_MISMATCH`; `PROVENANCE_STATEMENT_INVALID` for `facts` that are no {@link ProvenanceFacts}
 *   ({@link provenanceFactsProblem}); ReleaseContractError `POLICY_INVALID` for a `release` that is no
 *   {@link ReleaseBinding} (an object of strings).
 */
export function checkReleaseBinding(facts: ProvenanceFacts, release: ReleaseBinding): void {
  const call = "checkReleaseBinding(facts, release)";
  const problem = provenanceFactsProblem(facts);
  if (problem !== undefined) throw new ProvenanceError("PROVENANCE_STATEMENT_INVALID", `${call}: ${problem}`);
  if (!isObjectValue(release)) invalidArgument(call, `release must be a ReleaseBinding (bindingFromReceipt, bindingFromTestedManifest), found ${describeValue(release)}`);
  for (const key of ["registryRepository", "bundleDigest", "sourceSha", "tag", "workflowName", "runId", "testedManifestDigest", "origin"] as const) {
    if (typeof release[key] !== "string") invalidArgument(call, `release.${key} must be a string, found ${describeValue(release[key])}`);
  }
  const where = `(expected from ${release.origin})`;
  if (facts.bundleDigest !== release.bundleDigest || facts.registryRepository !== release.registryRepository) {
    throw new ProvenanceError(
      "PROVENANCE_SUBJECT_MISMATCH",
      `the attestation's subject is ${facts.registryRepository}@${facts.bundleDigest}, not the release bundle ${release.registryRepository}@${release.bundleDigest} ${where}`,
    );
  }
  const checks: Array<[ProvenanceError["code"], string, string, string]> = [
    ["PROVENANCE_TESTED_MANIFEST_MISMATCH", "tested manifest digest", facts.testedManifestDigest, release.testedManifestDigest],
    ["PROVENANCE_SOURCE_SHA_MISMATCH", "source_sha", facts.sourceSha, release.sourceSha],
    ["PROVENANCE_TAG_MISMATCH", "tag", facts.tag, release.tag],
    ["PROVENANCE_WORKFLOW_MISMATCH", "workflow file", facts.workflow.path.slice(facts.workflow.path.lastIndexOf("/") + 1), release.workflowName],
    ["PROVENANCE_RUN_ID_MISMATCH", "workflow run id", facts.runId, release.runId],
  ];
  for (const [code, label, found, expected] of checks) {
    if (found !== expected) throw new ProvenanceError(code, `the attestation records ${label} ${describeValue(found)}, but the release has ${describeValue(expected)} ${where}`);
  }
}
