/**
 * Provenance of a release bundle in a repository (docs/architecture.md,
 * "Provenance"): find the Sigstore bundles that refer to it (OCI referrers:
 * the referrers API, else the `sha256-<hex>` tag schema), check each referrer
 * manifest, verify each Sigstore bundle offline, and bind the one statement
 * they carry to the release and to the consumer's policy.
 *
 * Order, each step failing closed with its own code:
 * 1. discovery: at least one referrer of artifactType
 *    `application/vnd.dev.sigstore.bundle.v0.3+json` (`PROVENANCE_NOT_FOUND`), at most 16;
 * 2. each referrer manifest: at most 1 MiB, exact shape, `subject` = the bundle,
 *    one Sigstore bundle layer of at most 1 MiB (`PROVENANCE_ATTESTATION_*`);
 * 3. each Sigstore bundle: verified for the subject digest against the trusted root and
 *    the signer the policy names (a pinned key, or a GitHub Actions certificate identity),
 *    its statement parsed and checked against its certificate (keyless) or the policy (key);
 *    attestations that fail this are set aside (another signer's attestation does not block
 *    yours), and when none is left the first failure is the verdict with its own code;
 * 4. the attestations left all carry the same statement (`PROVENANCE_ATTESTATIONS_DISAGREE`);
 * 5. that statement against the release: subject, tested manifest digest, `source_sha`,
 *    tag, workflow, run id.
 */
import { requireReceiptOfBundle } from "./receipt-bundle.js";
import { artifactManifestProblems, type ArtifactManifest } from "../contract/artifact-manifest.js";
import { canonicalJson, parseStrictJson, type JsonObject } from "../contract/canonical-json.js";
import { MAX_MANIFEST_BYTES, RELEASE_MANIFEST_FILE } from "../contract/constants.js";
import { describeList, describeValue } from "../contract/grammar.js";
import {
  SIGSTORE_BUNDLE_V03_MEDIA_TYPE,
  bindingFromReceipt,
  bindingFromTestedManifest,
  checkReleaseBinding,
  parseProvenanceStatement,
  type ProvenanceFacts,
  type ReleaseBinding,
} from "../contract/provenance.js";
import { readP256PublicKeyFile } from "../contract/key-pem.js";
import { ProvenanceError } from "../contract/provenance-error.js";
import { requireProvenanceCheck } from "./entry-options.js";
import {
  checkSignerIdentity,
  checkStatementAgainstPolicy,
  checkStatementAgainstSigner,
  resolveProvenancePolicy,
  type ProvenancePolicy,
  type ResolvedProvenancePolicy,
  type SignerFacts,
} from "../contract/provenance-policy.js";
import type { PublishedReceipt, TestedManifest } from "../contract/schemas.js";
import type { CheckedTrustedRoot } from "../contract/trusted-root.js";
import { readAllBounded } from "../oci/descriptor.js";
import { isOciError } from "../oci/errors.js";
import { listReferrers, referrersTag, referrersTagEntries, type ReferrersSource } from "../oci/referrers.js";
import type { Descriptor, ReadOnlyTarget } from "../oci/target.js";
import { fetchManifest } from "../oci/transfer.js";
import { embeddedTrustedRoot } from "./sigstore-trust.js";
import { parsePublicKeyPem, parseSigstoreBundle, publicKeyHint, verifySigstoreBundle, type ExpectedSigner } from "./sigstore-verify.js";

/** At most this many attestations of one bundle are considered. */
export const MAX_ATTESTATIONS = 16;

/** Options of {@link verifyReleaseProvenance}. */
export interface ProvenanceCheckOptions {
  /** Who may have signed (key, or GitHub identity flags). */
  policy: ProvenancePolicy;
  /** Trusted root (default: the embedded public-good root). */
  trustedRoot?: CheckedTrustedRoot;
}

/** One attestation found and verified. */
export interface FoundAttestation {
  /** `<repository>@sha256:<hex>` of the referrer manifest. */
  reference: string;
  /** How it was discovered. */
  source: ReferrersSource;
}

/** What {@link verifyReleaseProvenance} proved. */
export interface VerifiedProvenance {
  /** The one statement every attestation carries. */
  facts: ProvenanceFacts;
  attestations: FoundAttestation[];
  /** How many attestations did not verify under the policy and were set aside. */
  ignored: number;
  /** `key <hint>` or `certificate <SAN> (<issuer>)`. */
  signer: string;
}

function attestationInvalid(message: string): never {
  throw new ProvenanceError("PROVENANCE_ATTESTATION_INVALID", message);
}

/**
 * A referrer manifest as Sigstore attestations are stored (the kit's
 * `release attest` and GitHub's attest action write the same shape): the
 * `referrer` profile of the one artifact-manifest schema
 * (src/contract/artifact-manifest.ts: OCI image manifest, the empty config,
 * `subject`, optional string annotations), artifactType Sigstore bundle v0.3,
 * `subject` = the release bundle, exactly one Sigstore bundle layer of at most 1 MiB.
 * @returns the layer descriptor.
 * @throws ProvenanceError `PROVENANCE_ATTESTATION_INVALID`, `PROVENANCE_ATTESTATION_TOO_LARGE`.
 */
export function checkAttestationManifest(bytes: Uint8Array, subjectDigest: string, label: string): Descriptor {
  let json: JsonObject;
  try {
    json = parseStrictJson(bytes, { rejectIntegralFloats: false });
  } catch (error) {
    return attestationInvalid(`${label} is not a JSON object without duplicate keys: ${(error as Error).message}`);
  }
  const [problem] = artifactManifestProblems(json, "referrer");
  if (problem !== undefined) attestationInvalid(`${label} is not an attestation manifest: ${problem.message}`);
  const manifest = json as unknown as ArtifactManifest;
  if (manifest.artifactType !== SIGSTORE_BUNDLE_V03_MEDIA_TYPE) attestationInvalid(`${label} is not an OCI image manifest of artifactType ${SIGSTORE_BUNDLE_V03_MEDIA_TYPE}`);
  if (manifest.subject?.digest !== subjectDigest) {
    attestationInvalid(`${label}: subject is ${describeValue(manifest.subject?.digest)}, not the release bundle ${subjectDigest}`);
  }
  const [layer, ...more] = manifest.layers;
  if (layer === undefined || more.length > 0 || layer.mediaType !== SIGSTORE_BUNDLE_V03_MEDIA_TYPE) {
    return attestationInvalid(`${label} must hold exactly one ${SIGSTORE_BUNDLE_V03_MEDIA_TYPE} layer`);
  }
  if (layer.size > MAX_MANIFEST_BYTES) {
    throw new ProvenanceError("PROVENANCE_ATTESTATION_TOO_LARGE", `${label} holds a Sigstore bundle of ${layer.size} bytes; at most ${MAX_MANIFEST_BYTES} bytes are accepted`);
  }
  return { mediaType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE, digest: layer.digest, size: layer.size };
}

/**
 * The attestation manifest's bytes through `fetchManifest`, the one place a
 * manifest's size (at most 1 MiB) and digest are checked; over the ceiling is
 * this attestation's `PROVENANCE_ATTESTATION_TOO_LARGE` (so it is set aside
 * like any other attestation that does not verify).
 */
async function fetchAttestationManifest(target: ReadOnlyTarget, desc: Descriptor, label: string): Promise<Buffer> {
  try {
    return await fetchManifest(target, { mediaType: desc.mediaType, digest: desc.digest, size: desc.size });
  } catch (error) {
    if (!isOciError(error, "OCI_MANIFEST_TOO_LARGE")) throw error;
    throw new ProvenanceError("PROVENANCE_ATTESTATION_TOO_LARGE", `${label} is ${desc.size} bytes; at most ${MAX_MANIFEST_BYTES} bytes are accepted`, { cause: error });
  }
}

/** The signer `verifySigstoreBundle` expects under `policy`, and where the certificate's run facts land. */
function expectedSigner(policy: ResolvedProvenancePolicy, seen: { signer?: SignerFacts }): { signer: ExpectedSigner; label: string } {
  if (policy.kind === "key") {
    const key = parsePublicKeyPem(policy.key, "the provenance key");
    return { signer: { kind: "key", key }, label: `key ${publicKeyHint(key)}` };
  }
  return {
    signer: { kind: "certificate", check: (identity) => (seen.signer = checkSignerIdentity(identity, policy)) },
    label: `certificate of ${policy.repo ?? policy.owner} (${policy.issuer})`,
  };
}

/** Fetch, check and verify one attestation; returns its statement. */
async function verifyOne(target: ReadOnlyTarget, desc: Descriptor, subject: Descriptor, policy: ResolvedProvenancePolicy, trust: CheckedTrustedRoot, label: string): Promise<ProvenanceFacts> {
  const manifest = await fetchAttestationManifest(target, desc, label);
  const layer = checkAttestationManifest(manifest, subject.digest, label);
  const bytes = await readAllBounded(await target.fetch(layer), layer.size, `Sigstore bundle of ${label}`);
  const bundle = parseSigstoreBundle(bytes, `the Sigstore bundle of ${label}`);
  const seen: { signer?: SignerFacts } = {};
  const verified = verifySigstoreBundle(bundle, { trust, signer: expectedSigner(policy, seen).signer, artifact: { sha256: subject.digest.slice("sha256:".length) } });
  if (verified.statement === undefined) throw new ProvenanceError("PROVENANCE_STATEMENT_INVALID", `${label} does not carry an in-toto statement (DSSE payload type ${describeValue(verified.payloadType)})`);
  const facts = parseProvenanceStatement(verified.statement);
  if (policy.kind === "keyless") checkStatementAgainstSigner(facts, seen.signer as SignerFacts);
  else checkStatementAgainstPolicy(facts, policy);
  return facts;
}

/**
 * What a lookup that found no attestation saw, in words: the referrers listed (and set aside as another
 * artifactType, with their types) by the referrers API or the referrers tag; with the API, also a
 * referrers tag that exists but is not consulted (the API is the registry's own answer).
 */
async function referrersFound(target: ReadOnlyTarget, subject: Descriptor, source: ReferrersSource, otherTypes: readonly Descriptor[]): Promise<string> {
  const tag = referrersTag(subject.digest);
  const where = source === "api" ? "the registry's referrers API" : `the referrers tag ${tag}`;
  const types = [...new Set(otherTypes.map((d) => (d.artifactType === undefined ? "no artifactType" : d.artifactType)))];
  let found =
    otherTypes.length === 0
      ? `no referrers through ${where}${source === "tag-schema" ? " (the tag does not exist, or lists nothing)" : ""}`
      : `${otherTypes.length} referrer${otherTypes.length === 1 ? "" : "s"} through ${where}, all ignored: of ${describeList(types)}, not a Sigstore bundle`;
  if (source === "api") {
    const tagged = await referrersTagEntries(target, subject).catch(() => undefined);
    if (tagged !== undefined) {
      found += `; the referrers tag ${tag} also exists (${tagged.length} entr${tagged.length === 1 ? "y" : "ies"}) but is not consulted, since the registry answers the referrers API, which only lists manifests whose subject is this release`;
    }
  }
  return found;
}

/**
 * The verdict when no listed attestation verified: the first failure, with how many were listed and why
 * each was set aside (its code), so that one failure does not hide the others.
 */
function noneVerified(failures: readonly ProvenanceError[]): ProvenanceError {
  const first = failures[0] as ProvenanceError;
  if (failures.length === 1) return first;
  const codes = new Map<string, number>();
  for (const failure of failures) codes.set(failure.code, (codes.get(failure.code) ?? 0) + 1);
  const why = [...codes].map(([code, n]) => `${n} ${code}`).join(", ");
  return new ProvenanceError(first.code, `${first.message} (none of the ${failures.length} attestations listed verified: ${why}; this is the first)`, { cause: first });
}

/**
 * Find, verify and bind the provenance of the release bundle `subject` in
 * `target` (see the module comment for the order).
 * @param repository the repository string, for the attestation references.
 * @param release what the release's verified documents say (tested manifest or receipt).
 * @throws ProvenanceError `PROVENANCE_NOT_FOUND`, `PROVENANCE_ATTESTATION_INVALID`, `PROVENANCE_ATTESTATION_TOO_LARGE`,
 *   `PROVENANCE_ATTESTATIONS_DISAGREE`, `PROVENANCE_POLICY_INVALID`, every code of `verifySigstoreBundle`,
 *   of the policy checks and of `checkReleaseBinding`; OciError from the transport. `PROVENANCE_POLICY_INVALID`
 *   also for `options` that are not `{ policy, trustedRoot? }` (an unknown key, a policy that is incomplete, a
 *   trusted root that is not a checked one), before anything is read.
 */
export async function verifyReleaseProvenance(target: ReadOnlyTarget, repository: string, subject: Descriptor, release: ReleaseBinding, options: ProvenanceCheckOptions): Promise<VerifiedProvenance> {
  requireProvenanceCheck(options, "verifyReleaseProvenance");
  if (options === undefined) throw new ProvenanceError("PROVENANCE_POLICY_INVALID", "verifyReleaseProvenance needs its options { policy, trustedRoot? }: who may have signed the release, found nothing");
  const policy = resolveProvenancePolicy(options.policy);
  const trust = options.trustedRoot ?? embeddedTrustedRoot();
  const { descriptors, source, otherTypes } = await listReferrers(target, subject, { artifactType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE });
  if (descriptors.length === 0) {
    throw new ProvenanceError(
      "PROVENANCE_NOT_FOUND",
      `no attestation refers to ${repository}@${subject.digest}: expected at least one referrer of artifactType ${SIGSTORE_BUNDLE_V03_MEDIA_TYPE} (as release attest and GitHub's attest action push), found ${await referrersFound(target, subject, source, otherTypes)}; the release was not attested, or not in this repository; fix: attest it (hermes-plugin-kit release attest), or check that the reference names the release in the repository it was attested in`,
    );
  }
  if (descriptors.length > MAX_ATTESTATIONS) attestationInvalid(`${descriptors.length} attestations refer to ${subject.digest}; at most ${MAX_ATTESTATIONS} are considered`);
  // Each attestation is verified under the policy on its own; one that does not verify (another signer,
  // a tampered payload) is set aside, as `gh attestation verify` does. With none left, the first failure is the verdict.
  const verified: Array<{ desc: Descriptor; facts: ProvenanceFacts }> = [];
  const failures: unknown[] = [];
  for (const [i, desc] of descriptors.entries()) {
    const label = `attestation ${repository}@${desc.digest}${descriptors.length > 1 ? ` (${i + 1} of ${descriptors.length})` : ""}`;
    try {
      verified.push({ desc, facts: await verifyOne(target, desc, subject, policy, trust, label) });
    } catch (error) {
      if (!(error instanceof ProvenanceError)) throw error;
      failures.push(error);
    }
  }
  if (verified.length === 0) throw noneVerified(failures as ProvenanceError[]);
  const first = (verified[0] as (typeof verified)[number]).facts;
  const other = verified.find((v) => canonicalJson(v.facts) !== canonicalJson(first));
  if (other !== undefined) {
    throw new ProvenanceError(
      "PROVENANCE_ATTESTATIONS_DISAGREE",
      `the verified attestations of ${subject.digest} disagree: ${verified[0]?.desc.digest} and ${other.desc.digest} carry different statements (source_sha ${first.sourceSha} vs ${other.facts.sourceSha}, run ${first.runId} attempt ${first.runAttempt} vs ${other.facts.runId} attempt ${other.facts.runAttempt})`,
    );
  }
  checkReleaseBinding(first, release);
  return {
    facts: first,
    attestations: verified.map((v) => ({ reference: `${repository}@${v.desc.digest}`, source })),
    ignored: failures.length,
    signer: expectedSigner(policy, {}).label,
  };
}

/** The `provenance` part of a `fetch --provenance` result. */
export interface ProvenanceSummary {
  /** `<repository>@sha256:<hex>` of each verified attestation. */
  attestations: string[];
  /** How they were discovered: the referrers API or the tag schema. */
  discovery: ReferrersSource;
  /** Attestations found that did not verify under the policy (set aside). */
  ignored: number;
  /** `key <hint>` or `certificate of <owner/repo> (<issuer>)`. */
  signer: string;
  /** What the statement records (already bound to the release). */
  source_repository: string;
  source_sha: string;
  workflow: string;
  run_id: string;
  run_attempt: number;
}

/** {@link ProvenanceSummary} of a verification. */
export function provenanceSummary(verified: VerifiedProvenance): ProvenanceSummary {
  return {
    attestations: verified.attestations.map((a) => a.reference),
    discovery: verified.attestations[0]?.source ?? "tag-schema",
    ignored: verified.ignored,
    signer: verified.signer,
    source_repository: verified.facts.sourceRepository,
    source_sha: verified.facts.sourceSha,
    workflow: `${verified.facts.workflow.path}@${verified.facts.workflow.ref}`,
    run_id: verified.facts.runId,
    run_attempt: verified.facts.runAttempt,
  };
}

/** The parts of a verified download the provenance check needs (`VerifiedDownload` of `fetch.ts`). */
export interface DownloadForProvenance {
  kind: "bundle" | "receipt";
  reference: string;
  document: TestedManifest | PublishedReceipt;
  files: Array<{ path: string; sha256: string }>;
  subject: Descriptor;
  target: ReadOnlyTarget;
}

/**
 * `fetch --provenance`: the attestation of a verified download, bound to it.
 * A bundle binds through its tested manifest (digest of its
 * `release-manifest.json` layer); a receipt through its own fields, for the
 * bundle its `registry_reference` names.
 * @throws the codes of {@link verifyReleaseProvenance}; for a receipt, ReleaseContractError
 *   `RECEIPT_BUNDLE_MISMATCH` when it is not exactly the receipt its bundle makes (`requireReceiptOfBundle`),
 *   OciError when the receipt's bundle is absent.
 */
export async function verifyDownloadProvenance(download: DownloadForProvenance, options: ProvenanceCheckOptions): Promise<ProvenanceSummary> {
  const repository = download.reference.slice(0, download.reference.lastIndexOf("@"));
  if (download.kind === "bundle") {
    const tested = download.files.find((f) => f.path === RELEASE_MANIFEST_FILE);
    const binding = bindingFromTestedManifest(download.document as TestedManifest, `sha256:${tested?.sha256 ?? ""}`, download.subject.digest);
    return provenanceSummary(await verifyReleaseProvenance(download.target, repository, download.subject, binding, options));
  }
  const receipt = download.document as PublishedReceipt;
  const binding = bindingFromReceipt(receipt);
  const resolved = await download.target.resolve(binding.bundleDigest);
  const subject = { mediaType: resolved.mediaType, digest: resolved.digest, size: resolved.size };
  const summary = provenanceSummary(await verifyReleaseProvenance(download.target, repository, subject, binding, options));
  // The attestation binds the bundle, its tested manifest and the source; the receipt's other fields
  // (the tarball's records, the gates) must be exactly what that bundle makes.
  await requireReceiptOfBundle(download.target, receipt, `receipt ${download.reference}`);
  return summary;
}

/** Provenance flags as the CLI takes them: the policy's fields, with file paths for the key and the trusted root. */
export interface ProvenanceFlags extends Omit<ProvenancePolicy, "key"> {
  /** PEM public key file (key mode). */
  key?: string;
  /** Trusted root file (default: the embedded public-good root). */
  trustedRoot?: string;
}

/**
 * Read the files the flags name and check the policy (so a bad flag fails
 * before any download): the key must be a PEM public key, the trusted root valid.
 * @throws ProvenanceError `PROVENANCE_POLICY_INVALID`, `PROVENANCE_KEY_INVALID`, `PROVENANCE_TRUSTED_ROOT_INVALID`.
 */
export async function provenanceCheckFromFlags(flags: ProvenanceFlags): Promise<ProvenanceCheckOptions> {
  let key: string | undefined;
  if (flags.key !== undefined) {
    // Normalised to SPKI PEM, the form a fleet lock stores.
    key = (await readP256PublicKeyFile(flags.key)).export({ format: "pem", type: "spki" }).toString();
  }
  const policy: ProvenancePolicy = {
    ...(key === undefined ? {} : { key }),
    ...(flags.owner === undefined ? {} : { owner: flags.owner }),
    ...(flags.repo === undefined ? {} : { repo: flags.repo }),
    ...(flags.signerWorkflow === undefined ? {} : { signerWorkflow: flags.signerWorkflow }),
    ...(flags.sourceRef === undefined ? {} : { sourceRef: flags.sourceRef }),
    ...(flags.certOidcIssuer === undefined ? {} : { certOidcIssuer: flags.certOidcIssuer }),
  };
  resolveProvenancePolicy(policy);
  if (flags.trustedRoot === undefined) return { policy };
  const { readTrustedRootFile } = await import("./sigstore-trust.js");
  return { policy, trustedRoot: await readTrustedRootFile(flags.trustedRoot) };
}
