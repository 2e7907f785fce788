/**
 * `release attest`: sign the provenance of a staged release bundle and store
 * it in the private repository as an OCI referrer of the bundle
 * (docs/provenance.md; docs/architecture.md, "Provenance"; in-toto Statement v1,
 * SLSA Provenance v1, OCI distribution spec v1.1 referrers).
 *
 * Order: the staged bundle is downloaded through the consumer's verifying path
 * (its tested manifest gives `source_sha`, tag, run id and the tested manifest
 * digest) -> an attestation that already verifies for this release with the
 * same signer is success without a write (idempotent; ECDSA signatures are
 * randomised, so re-signing would add a second copy) -> the statement is
 * signed (local key, or keyless) -> privacy re-check before the write -> push
 * as a referrer (referrers API, else the `sha256-<hex>` tag schema) -> the
 * attestation is discovered again and verified like a consumer would.
 *
 * Shaped as a pipeline step ({@link attestStep}: `{name, run, verify}`), so
 * `release run` adds it as one step.
 */
import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";
import { isAbsolute, resolve } from "node:path";
import { canonicalJsonBytes } from "../src/contract/canonical-json.js";
import { RELEASE_MANIFEST_FILE } from "../src/contract/constants.js";
import { describeValue } from "../src/contract/grammar.js";
import type { ReleasePolicy } from "../src/contract/policy.js";
import { IN_TOTO_PAYLOAD_TYPE, SIGSTORE_BUNDLE_V03_MEDIA_TYPE, SLSA_PROVENANCE_V1, bindingFromTestedManifest, provenanceStatement, type ProvenanceFacts } from "../src/contract/provenance.js";
import { ProvenanceError } from "../src/contract/provenance-error.js";
import { DEFAULT_SOURCE_REF, RELEASE_WORKFLOW_PATH, type ProvenancePolicy } from "../src/contract/provenance-policy.js";
import { parseReference } from "../src/contract/reference.js";
import type { TestedManifest } from "../src/contract/schemas.js";
import type { CheckedTrustedRoot } from "../src/contract/trusted-root.js";
import { verifyReleaseProvenance, type VerifiedProvenance } from "../src/fetch/provenance.js";
import { requirePrivateForRead } from "../src/fetch/privacy.js";
import { pushReferrer } from "../src/oci/referrers.js";
import type { Descriptor } from "../src/oci/target.js";
import { publicKeyPem, signStatement, type ProvenanceSigner } from "./provenance-sign.js";
import { checkpoint } from "./checkpoint.js";
import { outputJsonBytes, writeOutputFile } from "./output.js";
import { openWriteTarget, resolveAccess, verifiedDownload, type RegistryAccess, type RegistryAccessOptions } from "./registry-access.js";

/** Inputs of {@link attestRelease} (the `release attest` flags). */
export interface AttestOptions extends RegistryAccessOptions {
  policy: ReleasePolicy;
  /** The staged bundle reference `<repository>@sha256:<hex>`. */
  reference: string;
  signer: ProvenanceSigner;
  /** Source repository URI (default `$GITHUB_SERVER_URL/$GITHUB_REPOSITORY`). */
  sourceRepository?: string;
  /** Ref the release workflow ran at (default `$GITHUB_REF`, else `refs/heads/main`). */
  workflowRef?: string;
  /** Run attempt recorded (default `$GITHUB_RUN_ATTEMPT`, else the tested manifest's). */
  runAttempt?: number;
  /** How the pushed attestation is verified again (default for a key: that key; keyless needs it). */
  verifyPolicy?: ProvenancePolicy;
  /** Trusted root for that verification (default: the embedded public-good root). */
  trustedRoot?: CheckedTrustedRoot;
  /** Where the result JSON is written (canonical compact + newline). */
  output?: string;
}

/** What {@link attestRelease} returns (and `release attest` prints). */
export interface AttestResult {
  bundle_reference: string;
  /** `<repository>@sha256:<hex>` of the attestation (the referrer manifest). */
  attestation_reference: string;
  /** `attested` (pushed now) or `already-attested` (a verifying attestation was there; nothing written). */
  outcome: "attested" | "already-attested";
  /** How the attestation is discoverable: `api` or `tag-schema`. */
  discovery: "api" | "tag-schema";
  /** SHA-256 (hex) of the canonical statement bytes. */
  statement_sha256: string;
}

/**
 * The statement's source repository URI for a git remote URL: `https://host/owner/name`
 * (`.git` dropped) for an https remote, `file://<absolute path>` for a local one.
 * @throws ProvenanceError `PROVENANCE_STATEMENT_INVALID` for other remotes (ssh, credentials in the URL).
 */
export function sourceRepositoryUri(remote: string, base = process.cwd()): string {
  if (/^https:\/\//.test(remote)) {
    const url = new URL(remote);
    if (url.username !== "" || url.password !== "") throw new ProvenanceError("PROVENANCE_STATEMENT_INVALID", "the source remote URL carries credentials");
    return `https://${url.host}${url.pathname.replace(/\.git$/, "").replace(/\/+$/, "")}`;
  }
  if (remote.startsWith("file://")) return remote.replace(/\/+$/, "");
  if (!/^[a-z][a-z0-9+.-]*:/i.test(remote)) return pathToFileURL(isAbsolute(remote) ? remote : resolve(base, remote)).href.replace(/\/+$/, "");
  throw new ProvenanceError("PROVENANCE_STATEMENT_INVALID", `cannot name source repository ${describeValue(remote)} in provenance: use an https or local remote, or pass --source-repository`);
}

/** {@link AttestOptions} without the signer: what the statement depends on. */
export type AttestInputs = Omit<AttestOptions, "signer">;

function defaults(options: AttestInputs, env: Readonly<Record<string, string | undefined>>, manifest: TestedManifest): { sourceRepository: string; ref: string; attempt: number } {
  const repo = env["GITHUB_REPOSITORY"];
  const sourceRepository = options.sourceRepository ?? (repo !== undefined && repo !== "" ? `${env["GITHUB_SERVER_URL"] ?? "https://github.com"}/${repo}` : undefined);
  if (sourceRepository === undefined) {
    throw new ProvenanceError("PROVENANCE_STATEMENT_INVALID", "the source repository is unknown: pass --source-repository or set GITHUB_REPOSITORY (and GITHUB_SERVER_URL)");
  }
  const attemptText = env["GITHUB_RUN_ATTEMPT"];
  const attempt = options.runAttempt ?? (attemptText !== undefined && /^[1-9][0-9]*$/.test(attemptText) ? Number(attemptText) : manifest.evidence.workflow.run_attempt);
  const ref = options.workflowRef ?? (env["GITHUB_REF"] !== undefined && env["GITHUB_REF"] !== "" ? env["GITHUB_REF"] : DEFAULT_SOURCE_REF);
  return { sourceRepository, ref, attempt };
}

/** The statement facts of a staged release under the options' defaults. */
function factsFor(options: AttestInputs, access: RegistryAccess, staged: { manifest: TestedManifest; testedDigest: string; subject: Descriptor }): ProvenanceFacts {
  const { sourceRepository, ref, attempt } = defaults(options, access.env, staged.manifest);
  return {
    registryRepository: options.policy.registryRepository,
    bundleDigest: staged.subject.digest,
    sourceRepository,
    sourceSha: staged.manifest.source_sha,
    tag: staged.manifest.tag,
    workflow: { path: RELEASE_WORKFLOW_PATH, ref },
    runId: staged.manifest.evidence.workflow.run_id,
    runAttempt: attempt,
    testedManifestDigest: staged.testedDigest,
  };
}

/** The staged bundle: its tested manifest, tested-manifest digest and manifest descriptor. */
async function stagedRelease(access: RegistryAccess, options: AttestInputs): Promise<{ manifest: TestedManifest; testedDigest: string; subject: Descriptor }> {
  const pinned = parseReference(options.reference, access.repository.repository);
  const download = await verifiedDownload(access, options.reference, options.policy, { expect: "bundle", ...(options.tmpDir === undefined ? {} : { tmpDir: options.tmpDir }) });
  try {
    const tested = download.files.find((f) => f.path === RELEASE_MANIFEST_FILE);
    const target = await openWriteTarget(access);
    const resolved = await target.resolve(pinned.digest);
    return { manifest: download.document as TestedManifest, testedDigest: `sha256:${tested?.sha256}`, subject: { mediaType: resolved.mediaType, digest: resolved.digest, size: resolved.size } };
  } finally {
    await download.cleanup();
  }
}

function verifyPolicyOf(options: AttestOptions): ProvenancePolicy {
  if (options.verifyPolicy !== undefined) return options.verifyPolicy;
  if (options.signer.kind === "key") return { key: publicKeyPem(options.signer.privateKey) };
  throw new ProvenanceError("PROVENANCE_POLICY_INVALID", "keyless attestation needs the policy to verify it with (verifyPolicy)");
}

/** Existing verified provenance of the release, or undefined when there is none. */
async function existing(access: RegistryAccess, subject: Descriptor, manifest: TestedManifest, testedDigest: string, options: AttestOptions): Promise<VerifiedProvenance | undefined> {
  const target = await openWriteTarget(access);
  try {
    return await verifyReleaseProvenance(target, access.repository.repository, subject, bindingFromTestedManifest(manifest, testedDigest, subject.digest), {
      policy: verifyPolicyOf(options),
      ...(options.trustedRoot === undefined ? {} : { trustedRoot: options.trustedRoot }),
    });
  } catch (error) {
    if (error instanceof ProvenanceError && error.code === "PROVENANCE_NOT_FOUND") return undefined;
    throw error;
  }
}

/**
 * `release attest` (see the module comment).
 * @throws PipelineError `RELEASE_REPOSITORY_MISMATCH`; PrivacyError `PRIVACY_*`; the codes of the verifying
 *   download; ProvenanceError `PROVENANCE_SIGNING_FAILED`, `PROVENANCE_STATEMENT_INVALID` and every
 *   code of the verification of what was pushed; OciError from the registry.
 */
export async function attestRelease(options: AttestOptions): Promise<AttestResult> {
  const access = resolveAccess(options, options.policy);
  const staged = await stagedRelease(access, options);
  const { manifest, testedDigest, subject } = staged;
  const statementBytes = canonicalJsonBytes(provenanceStatement(factsFor(options, access, staged)));
  const statementSha = createHash("sha256").update(statementBytes).digest("hex");
  const bundleReference = `${access.repository.repository}@${subject.digest}`;
  const before = await existing(access, subject, manifest, testedDigest, options);
  let result: AttestResult;
  if (before !== undefined) {
    result = { bundle_reference: bundleReference, attestation_reference: before.attestations[0]?.reference as string, outcome: "already-attested", discovery: before.attestations[0]?.source ?? "tag-schema", statement_sha256: statementSha };
  } else {
    const bundle = await signStatement(statementBytes, options.signer);
    await requirePrivateForRead(access.repository, { env: access.env, plainHttp: access.plainHttp });
    const target = await openWriteTarget(access);
    const pushed = await pushReferrer(target, subject, {
      artifactType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE,
      layerMediaType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE,
      bytes: bundle,
      annotations: { "dev.sigstore.bundle.content": "dsse-envelope", "dev.sigstore.bundle.predicateType": SLSA_PROVENANCE_V1 },
    });
    await checkpoint(access.hooks, "attest:pushed");
    const after = await existing(access, subject, manifest, testedDigest, options);
    if (after === undefined || !after.attestations.some((a) => a.reference.endsWith(pushed.descriptor.digest))) {
      throw new ProvenanceError("PROVENANCE_NOT_FOUND", `the attestation ${pushed.descriptor.digest} just pushed is not discoverable for ${bundleReference}`);
    }
    result = { bundle_reference: bundleReference, attestation_reference: `${access.repository.repository}@${pushed.descriptor.digest}`, outcome: "attested", discovery: pushed.source, statement_sha256: statementSha };
  }
  if (options.output !== undefined) await writeOutputFile(options.output, outputJsonBytes(result));
  return result;
}

/**
 * The provenance predicate `release attest` would sign, for CI's attest
 * action (`predicate-path`; the action adds the statement around it with the
 * subject it is given): same facts, same defaults.
 * @throws the codes of the verifying download; ProvenanceError `PROVENANCE_STATEMENT_INVALID`.
 */
export async function provenancePredicate(options: AttestInputs): Promise<{ predicate: unknown; subject: { name: string; digest: string }; payloadType: string }> {
  const access = resolveAccess(options, options.policy);
  const staged = await stagedRelease(access, options);
  const statement = provenanceStatement(factsFor(options, access, staged));
  return { predicate: statement["predicate"], subject: { name: options.policy.registryRepository, digest: staged.subject.digest }, payloadType: IN_TOTO_PAYLOAD_TYPE };
}

/** The inputs `release run` hands the attest step. */
export type AttestStepContext = AttestOptions;

/** The attest step in pipeline shape: `run` attests, `verify` re-proves a recorded attestation. */
export const attestStep = Object.freeze({
  name: "attest" as const,
  async run(ctx: AttestStepContext): Promise<Record<string, unknown>> {
    const result = await attestRelease(ctx);
    return { attestation_reference: result.attestation_reference, statement_sha256: result.statement_sha256 };
  },
  async verify(ctx: AttestStepContext, recorded: Record<string, unknown>): Promise<void> {
    const access = resolveAccess(ctx, ctx.policy);
    const { manifest, testedDigest, subject } = await stagedRelease(access, ctx);
    const found = await existing(access, subject, manifest, testedDigest, ctx);
    if (found === undefined || !found.attestations.some((a) => a.reference === recorded["attestation_reference"])) {
      throw new ProvenanceError("PROVENANCE_NOT_FOUND", `the recorded attestation ${describeValue(recorded["attestation_reference"])} no longer verifies for ${ctx.reference}`);
    }
  },
});
