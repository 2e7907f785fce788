/**
 * Provenance policy: who may have signed a release's attestation, as data
 * (docs/architecture.md, "Policy: where expectations come from"; the flags of `gh attestation verify`:
 * `--owner`, `--repo`, `--signer-workflow`, `--source-ref`, `--cert-oidc-issuer`),
 * or a public key for attestations signed with a local key.
 *
 * Pure checks, one function per rule family:
 * {@link resolveProvenancePolicy} (complete and well-formed),
 * {@link checkSignerIdentity} (a Fulcio certificate's GitHub Actions identity,
 * Fulcio OID registry `docs/oid-info.md`), {@link checkStatementAgainstSigner}
 * (the statement says what the certificate says) and
 * {@link checkStatementAgainstPolicy} (key mode: the statement's own source fields).
 */
import { isP256Key, parseP256PublicKeyPem } from "./key-pem.js";
import { describeValue } from "./grammar.js";
import { nearestName } from "./near-name.js";
import { plainObjectProblem } from "./plain-options.js";
import { provenanceFactsProblem, type ProvenanceFacts } from "./provenance.js";
import type { LockedProvenancePolicy } from "./schemas.js";
import { ProvenanceError } from "./provenance-error.js";

export { isP256Key };

/** OIDC issuer of GitHub Actions tokens. */
export const GITHUB_ACTIONS_ISSUER = "https://token.actions.githubusercontent.com";
/** Default source ref: releases run on pushes to `main`. */
export const DEFAULT_SOURCE_REF = "refs/heads/main";
/** Path of the release workflow in the source repository. */
export const RELEASE_WORKFLOW_PATH = ".github/workflows/release.yml";

/** Fulcio certificate extension OIDs (Fulcio `docs/oid-info.md`). */
export const FULCIO_OID = Object.freeze({
  issuer: "1.3.6.1.4.1.57264.1.8",
  buildSignerUri: "1.3.6.1.4.1.57264.1.9",
  sourceRepositoryUri: "1.3.6.1.4.1.57264.1.12",
  sourceRepositoryDigest: "1.3.6.1.4.1.57264.1.13",
  sourceRepositoryRef: "1.3.6.1.4.1.57264.1.14",
  sourceRepositoryOwnerUri: "1.3.6.1.4.1.57264.1.16",
  runInvocationUri: "1.3.6.1.4.1.57264.1.21",
});

/** A provenance policy as given (flags, fleet lock, library callers). */
export interface ProvenancePolicy {
  /** Key mode: the signer's PEM public key (SPKI). Excludes the certificate fields below. */
  key?: string;
  /** GitHub owner of the source repository (`acme`). */
  owner?: string;
  /** Source repository `owner/name`. */
  repo?: string;
  /** Signer workflow `[host/]owner/repo/.github/workflows/<file>` (default: `<repo>/.github/workflows/release.yml`). */
  signerWorkflow?: string;
  /** Git ref the workflow ran at (default `refs/heads/main`). */
  sourceRef?: string;
  /** OIDC issuer of the signing certificate (default GitHub Actions'). */
  certOidcIssuer?: string;
}

/** A checked policy. */
export type ResolvedProvenancePolicy =
  | { kind: "key"; key: string; host: string; owner?: string; repo?: string; signerWorkflow?: string; sourceRef: string }
  | { kind: "keyless"; host: string; owner: string; repo?: string; signerWorkflow?: string; sourceRef: string; issuer: string };

const OWNER_RE = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const REPO_RE = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})$/;
const HOST_RE = /^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::[0-9]{1,5})?$/;
const WORKFLOW_RE = /^(?:([a-z0-9.-]+\.[a-z]{2,}(?::[0-9]{1,5})?)\/)?([A-Za-z0-9-]+\/[A-Za-z0-9._-]+)\/(\.github\/workflows\/[A-Za-z0-9._-]+\.ya?ml)$/;
const REF_RE = /^refs\/(?:heads|tags)\/[^\s@~^:?*[\\]+$/;

function invalid(message: string): never {
  throw new ProvenanceError("PROVENANCE_POLICY_INVALID", message);
}

/** The keys of a {@link ProvenancePolicy}, each a string when given. */
export const PROVENANCE_POLICY_KEYS = Object.freeze(["key", "owner", "repo", "signerWorkflow", "sourceRef", "certOidcIssuer"] as const);

/** `source_ref` -> `sourceRef`: the fleet lock's spelling of a policy key, as the library spells it. */
function camelCase(name: string): string {
  return name.replace(/[_-]([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * The policy's own keys, after its shape is checked: a value inherited through a prototype
 * (`{ __proto__: { repo } }` in a literal) is not part of the policy given, and is not read.
 */
function ownPolicy(given: unknown): ProvenancePolicy {
  requirePolicyShape(given);
  const policy: ProvenancePolicy = {};
  for (const name of PROVENANCE_POLICY_KEYS) if (Object.prototype.hasOwnProperty.call(given, name)) policy[name] = given[name];
  return policy;
}

/** The policy's shape (see {@link resolveProvenancePolicy}). */
function requirePolicyShape(policy: unknown): asserts policy is ProvenancePolicy {
  const problem = plainObjectProblem(policy, "a provenance policy");
  if (problem !== undefined) invalid(`${problem}; expected { key } or { owner?, repo?, signerWorkflow?, sourceRef?, certOidcIssuer? }`);
  const known: readonly string[] = PROVENANCE_POLICY_KEYS;
  for (const name of Object.keys(policy as object)) {
    if (known.includes(name)) continue;
    const camel = camelCase(name);
    const near = known.includes(camel) ? camel : nearestName(name, known);
    invalid(
      `the provenance policy has ${describeValue(name)}, which it does not read (it reads ${known.join(", ")})${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}; an ignored key would check less than you asked`,
    );
  }
  for (const name of known) {
    const value = Object.prototype.hasOwnProperty.call(policy, name) ? (policy as Record<string, unknown>)[name] : undefined;
    if (value !== undefined && (typeof value !== "string" || value === "")) {
      invalid(`the provenance policy's ${name} must be a non-empty string${name === "key" ? " (a PEM public key)" : ""}, found ${value === "" ? "an empty string" : describeValue(value)}`);
    }
  }
}

/**
 * Check a policy and fill the defaults: `sourceRef` `refs/heads/main`,
 * `certOidcIssuer` GitHub Actions', host `github.com` (or the signer
 * workflow's host). Keyless needs `owner` or `repo` (as `gh attestation
 * verify` does); `owner` is derived from `repo`, and both must agree.
 * The policy is an object whose own keys are only those of {@link ProvenancePolicy}, each a string: a key it
 * does not read (`sourceReff`, the lock's `source_ref`, an own `__proto__`) would be ignored and check less, so
 * it is refused with the nearest known name.
 * @throws ProvenanceError `PROVENANCE_POLICY_INVALID` naming the field; the codes of `parseP256PublicKeyPem`
 *   (`PROVENANCE_KEY_NOT_PUBLIC`, `PROVENANCE_KEY_INVALID`, `PROVENANCE_KEY_UNSUPPORTED`) for a key that is not a P-256 public key PEM.
 */
export function resolveProvenancePolicy(given: ProvenancePolicy): ResolvedProvenancePolicy {
  const policy = ownPolicy(given);
  if (policy.repo !== undefined && !REPO_RE.test(policy.repo)) invalid(`--repo must be owner/name, found ${describeValue(policy.repo)}`);
  if (policy.owner !== undefined && !OWNER_RE.test(policy.owner)) invalid(`--owner must be a GitHub owner name, found ${describeValue(policy.owner)}`);
  const repoOwner = policy.repo?.split("/")[0];
  if (policy.owner !== undefined && repoOwner !== undefined && repoOwner.toLowerCase() !== policy.owner.toLowerCase()) {
    invalid(`--owner ${policy.owner} is not the owner of --repo ${policy.repo}`);
  }
  let host = "github.com";
  if (policy.signerWorkflow !== undefined) {
    const match = WORKFLOW_RE.exec(policy.signerWorkflow);
    if (match === null) invalid(`--signer-workflow must be [host/]owner/repo/.github/workflows/<file>.yml, found ${describeValue(policy.signerWorkflow)}`);
    if (match[1] !== undefined) host = match[1];
  }
  if (!HOST_RE.test(host)) invalid(`invalid GitHub host ${describeValue(host)}`);
  const sourceRef = policy.sourceRef ?? DEFAULT_SOURCE_REF;
  if (!REF_RE.test(sourceRef)) invalid(`--source-ref must be a full git ref such as refs/heads/main, found ${describeValue(sourceRef)}`);
  const base = {
    host,
    sourceRef,
    ...(policy.repo === undefined ? {} : { repo: policy.repo }),
    ...(policy.signerWorkflow === undefined ? {} : { signerWorkflow: policy.signerWorkflow.replace(/^[^/]+\.[a-z]{2,}(?::[0-9]+)?\//, "") }),
  };
  if (policy.key !== undefined) {
    // The key is data too: a private key or certificate pasted as "the key" is refused by kind, never derived from.
    parseP256PublicKeyPem(policy.key, "the provenance policy's key");
    if (policy.certOidcIssuer !== undefined) invalid("--cert-oidc-issuer applies to certificate identities, not to --key");
    const owner = policy.owner ?? repoOwner;
    return { kind: "key", key: policy.key, ...base, ...(owner === undefined ? {} : { owner }) };
  }
  const owner = policy.owner ?? repoOwner;
  if (owner === undefined) invalid("a keyless provenance policy needs --owner or --repo (or --key for a locally signed release)");
  const issuer = policy.certOidcIssuer ?? GITHUB_ACTIONS_ISSUER;
  if (!/^https:\/\/\S+$/.test(issuer)) invalid(`--cert-oidc-issuer must be an https URL, found ${describeValue(issuer)}`);
  return { kind: "keyless", ...base, owner, issuer };
}

/** The identity of a certificate signer: SAN, issuer and Fulcio extensions (OID -> decoded string). */
export interface SignerIdentity {
  subjectAlternativeName?: string;
  issuer?: string;
  extensions: ReadonlyMap<string, string>;
}

/** What a GitHub Actions certificate says about the run that signed. */
export interface SignerFacts {
  /** Source repository URI (`https://github.com/owner/name`). */
  sourceRepository: string;
  workflowPath: string;
  ref: string;
  runId: string;
  runAttempt: number;
}

/** `PROVENANCE_POLICY_INVALID` (this module's argument code) for `facts` that are no {@link ProvenanceFacts}. */
function requireFactsArgument(call: string, facts: unknown): void {
  const problem = provenanceFactsProblem(facts);
  if (problem !== undefined) invalid(`${call}: ${problem}`);
}

/** `PROVENANCE_POLICY_INVALID` for a resolved policy of another kind or shape than `kind` ({@link resolveProvenancePolicy}). */
function requireResolvedPolicyArgument(call: string, policy: unknown, kind: ResolvedProvenancePolicy["kind"]): void {
  const p = policy as Record<string, unknown> | null;
  const found =
    p === null || typeof p !== "object" || Array.isArray(p)
      ? describeValue(p)
      : p["kind"] !== kind
        ? `kind ${describeValue(p["kind"])}`
        : typeof p["host"] !== "string" || typeof p["sourceRef"] !== "string" || (kind === "keyless" && (typeof p["owner"] !== "string" || typeof p["issuer"] !== "string"))
          ? `host ${describeValue(p["host"])}, sourceRef ${describeValue(p["sourceRef"])}${kind === "keyless" ? `, owner ${describeValue(p["owner"])}, issuer ${describeValue(p["issuer"])}` : ""}`
          : (["owner", "repo", "signerWorkflow"] as const).filter((key) => p[key] !== undefined && typeof p[key] !== "string").map((key) => `${key} ${describeValue(p[key])}`)[0];
  if (found !== undefined) invalid(`${call}: policy must be a ${kind} policy from resolveProvenancePolicy, found ${found}`);
}

function lower(value: string | undefined): string | undefined {
  return value?.toLowerCase();
}

/** The signer workflow the policy expects, as `owner/repo/<path>` (undefined: any repository of the owner). */
function expectedWorkflow(policy: Extract<ResolvedProvenancePolicy, { kind: "keyless" }>): string | undefined {
  if (policy.signerWorkflow !== undefined) return policy.signerWorkflow;
  return policy.repo === undefined ? undefined : `${policy.repo}/${RELEASE_WORKFLOW_PATH}`;
}

/**
 * A Fulcio certificate's GitHub Actions identity against the policy: issuer,
 * source repository (or owner), signer workflow and ref (SAN
 * `https://<host>/<owner>/<repo>/<path>@<ref>`, Source Repository Ref), and
 * the run id and attempt from the Run Invocation URI.
 * @throws ProvenanceError `PROVENANCE_ISSUER_MISMATCH`, `PROVENANCE_REPOSITORY_MISMATCH`,
 *   `PROVENANCE_WORKFLOW_MISMATCH`, `PROVENANCE_REF_MISMATCH`, `PROVENANCE_RUN_ID_MISMATCH` (no run in the certificate);
 *   `PROVENANCE_POLICY_INVALID` for arguments of another shape (an `identity` without an `extensions` Map, a
 *   `policy` that is no keyless policy from {@link resolveProvenancePolicy}).
 */
export function checkSignerIdentity(identity: SignerIdentity, policy: Extract<ResolvedProvenancePolicy, { kind: "keyless" }>): SignerFacts {
  const call = "checkSignerIdentity(identity, policy)";
  const given = identity as unknown as Record<string, unknown> | null;
  if (given === null || typeof given !== "object" || Array.isArray(given)) invalid(`${call}: identity must be { subjectAlternativeName?, issuer?, extensions: Map }, found ${describeValue(given)}`);
  if (!(given["extensions"] instanceof Map)) invalid(`${call}: identity.extensions must be a Map of certificate extension OIDs to values, found ${describeValue(given["extensions"])}`);
  for (const key of ["subjectAlternativeName", "issuer"]) {
    if (given[key] !== undefined && typeof given[key] !== "string") invalid(`${call}: identity.${key} must be a string or absent, found ${describeValue(given[key])}`);
  }
  requireResolvedPolicyArgument(call, policy, "keyless");
  const from = "(expected from the provenance policy)";
  if (identity.issuer !== policy.issuer) {
    throw new ProvenanceError("PROVENANCE_ISSUER_MISMATCH", `the signing certificate was issued for OIDC issuer ${describeValue(identity.issuer)}, not ${policy.issuer} ${from}`);
  }
  const origin = `https://${policy.host}`;
  const sourceRepository = identity.extensions.get(FULCIO_OID.sourceRepositoryUri);
  const ownerUri = identity.extensions.get(FULCIO_OID.sourceRepositoryOwnerUri) ?? sourceRepository?.slice(0, sourceRepository.lastIndexOf("/"));
  if (policy.repo !== undefined && lower(sourceRepository) !== lower(`${origin}/${policy.repo}`)) {
    throw new ProvenanceError("PROVENANCE_REPOSITORY_MISMATCH", `the signing certificate names source repository ${describeValue(sourceRepository)}, not ${origin}/${policy.repo} ${from}`);
  }
  if (lower(ownerUri) !== lower(`${origin}/${policy.owner}`) || sourceRepository === undefined) {
    throw new ProvenanceError("PROVENANCE_REPOSITORY_MISMATCH", `the signing certificate names source owner ${describeValue(ownerUri)}, not ${origin}/${policy.owner} ${from}`);
  }
  const san = identity.subjectAlternativeName ?? "";
  const at = san.lastIndexOf("@");
  const signer = at < 0 ? san : san.slice(0, at);
  const sanRef = at < 0 ? "" : san.slice(at + 1);
  const workflow = expectedWorkflow(policy);
  const workflowOk =
    workflow !== undefined
      ? lower(signer) === lower(`${origin}/${workflow}`)
      : lower(signer)?.startsWith(lower(`${origin}/${policy.owner}/`) as string) === true && signer.endsWith(`/${RELEASE_WORKFLOW_PATH}`);
  if (!workflowOk) {
    throw new ProvenanceError(
      "PROVENANCE_WORKFLOW_MISMATCH",
      `the attestation was signed by workflow ${describeValue(signer)}, not ${workflow === undefined ? `${origin}/${policy.owner}/<repo>/${RELEASE_WORKFLOW_PATH}` : `${origin}/${workflow}`} ${from}`,
    );
  }
  const certRef = identity.extensions.get(FULCIO_OID.sourceRepositoryRef);
  if (sanRef !== policy.sourceRef || certRef !== policy.sourceRef) {
    throw new ProvenanceError("PROVENANCE_REF_MISMATCH", `the signing workflow ran at ref ${describeValue(certRef ?? sanRef)}, not ${policy.sourceRef} ${from}`);
  }
  const run = /^https:\/\/[^/]+\/[^/]+\/[^/]+\/actions\/runs\/([1-9][0-9]*)\/attempts\/([1-9][0-9]*)$/.exec(identity.extensions.get(FULCIO_OID.runInvocationUri) ?? "");
  if (run === null) {
    throw new ProvenanceError("PROVENANCE_RUN_ID_MISMATCH", `the signing certificate records no workflow run (Run Invocation URI ${describeValue(identity.extensions.get(FULCIO_OID.runInvocationUri))})`);
  }
  return { sourceRepository, workflowPath: signer.slice(sourceRepository.length + 1), ref: certRef, runId: run[1] as string, runAttempt: Number(run[2]) };
}

/**
 * The statement must say what the certificate says: source repository,
 * workflow path and ref, run id and attempt.
 * @throws ProvenanceError `PROVENANCE_REPOSITORY_MISMATCH`, `PROVENANCE_WORKFLOW_MISMATCH`,
 *   `PROVENANCE_REF_MISMATCH`, `PROVENANCE_RUN_ID_MISMATCH`; `PROVENANCE_POLICY_INVALID` for `facts` that are no
 *   {@link ProvenanceFacts} or a `signer` that is no {@link SignerFacts} (from {@link checkSignerIdentity}).
 */
export function checkStatementAgainstSigner(facts: ProvenanceFacts, signer: SignerFacts): void {
  const call = "checkStatementAgainstSigner(facts, signer)";
  requireFactsArgument(call, facts);
  const s = signer as unknown as Record<string, unknown> | null;
  if (s === null || typeof s !== "object" || Array.isArray(s)) invalid(`${call}: signer must be the SignerFacts checkSignerIdentity returns, found ${describeValue(s)}`);
  for (const key of ["sourceRepository", "workflowPath", "ref", "runId"]) {
    if (typeof s[key] !== "string") invalid(`${call}: signer.${key} must be a string, found ${describeValue(s[key])}`);
  }
  if (typeof s["runAttempt"] !== "number") invalid(`${call}: signer.runAttempt must be a number, found ${describeValue(s["runAttempt"])}`);
  const where = "(expected from the signing certificate)";
  if (lower(facts.sourceRepository) !== lower(signer.sourceRepository)) {
    throw new ProvenanceError("PROVENANCE_REPOSITORY_MISMATCH", `the statement records source repository ${facts.sourceRepository}, not ${signer.sourceRepository} ${where}`);
  }
  if (facts.workflow.path !== signer.workflowPath) {
    throw new ProvenanceError("PROVENANCE_WORKFLOW_MISMATCH", `the statement records workflow ${facts.workflow.path}, not ${signer.workflowPath} ${where}`);
  }
  if (facts.workflow.ref !== signer.ref) throw new ProvenanceError("PROVENANCE_REF_MISMATCH", `the statement records ref ${facts.workflow.ref}, not ${signer.ref} ${where}`);
  if (facts.runId !== signer.runId || facts.runAttempt !== signer.runAttempt) {
    throw new ProvenanceError(
      "PROVENANCE_RUN_ID_MISMATCH",
      `the statement records run ${facts.runId} attempt ${facts.runAttempt}, not run ${signer.runId} attempt ${signer.runAttempt} ${where}`,
    );
  }
}

/**
 * Key mode: the statement's own source fields against the policy (`repo`,
 * `owner`, `signerWorkflow` when given; `sourceRef` always).
 * @throws ProvenanceError `PROVENANCE_REPOSITORY_MISMATCH`, `PROVENANCE_WORKFLOW_MISMATCH`, `PROVENANCE_REF_MISMATCH`;
 *   `PROVENANCE_POLICY_INVALID` for `facts` that are no {@link ProvenanceFacts} or a `policy` that is no key-mode
 *   policy from {@link resolveProvenancePolicy}.
 */
export function checkStatementAgainstPolicy(facts: ProvenanceFacts, policy: Extract<ResolvedProvenancePolicy, { kind: "key" }>): void {
  const call = "checkStatementAgainstPolicy(facts, policy)";
  requireFactsArgument(call, facts);
  requireResolvedPolicyArgument(call, policy, "key");
  const from = "(expected from the provenance policy)";
  const origin = `https://${policy.host}`;
  if (policy.repo !== undefined && lower(facts.sourceRepository) !== lower(`${origin}/${policy.repo}`)) {
    throw new ProvenanceError("PROVENANCE_REPOSITORY_MISMATCH", `the statement records source repository ${facts.sourceRepository}, not ${origin}/${policy.repo} ${from}`);
  }
  if (policy.owner !== undefined && !lower(facts.sourceRepository)?.startsWith(lower(`${origin}/${policy.owner}/`) as string)) {
    throw new ProvenanceError("PROVENANCE_REPOSITORY_MISMATCH", `the statement records source repository ${facts.sourceRepository}, not one of ${origin}/${policy.owner} ${from}`);
  }
  if (policy.signerWorkflow !== undefined && lower(`${facts.sourceRepository}/${facts.workflow.path}`) !== lower(`${origin}/${policy.signerWorkflow}`)) {
    throw new ProvenanceError("PROVENANCE_WORKFLOW_MISMATCH", `the statement records workflow ${facts.sourceRepository}/${facts.workflow.path}, not ${origin}/${policy.signerWorkflow} ${from}`);
  }
  if (facts.workflow.ref !== policy.sourceRef) {
    throw new ProvenanceError("PROVENANCE_REF_MISMATCH", `the statement records ref ${facts.workflow.ref}, not ${policy.sourceRef} ${from}`);
  }
}

/** The fleet-lock form of a policy (snake_case keys, `ProvenancePolicySchema`); checked first. */
export function lockedProvenancePolicy(given: ProvenancePolicy): LockedProvenancePolicy {
  const policy = ownPolicy(given);
  resolveProvenancePolicy(policy);
  return {
    ...(policy.key === undefined ? {} : { key: policy.key }),
    ...(policy.owner === undefined ? {} : { owner: policy.owner }),
    ...(policy.repo === undefined ? {} : { repo: policy.repo }),
    ...(policy.signerWorkflow === undefined ? {} : { signer_workflow: policy.signerWorkflow }),
    ...(policy.sourceRef === undefined ? {} : { source_ref: policy.sourceRef }),
    ...(policy.certOidcIssuer === undefined ? {} : { cert_oidc_issuer: policy.certOidcIssuer }),
  };
}

/** A policy from its fleet-lock form. */
export function provenancePolicyFromLock(locked: LockedProvenancePolicy): ProvenancePolicy {
  return {
    ...(locked.key === undefined ? {} : { key: locked.key }),
    ...(locked.owner === undefined ? {} : { owner: locked.owner }),
    ...(locked.repo === undefined ? {} : { repo: locked.repo }),
    ...(locked.signer_workflow === undefined ? {} : { signerWorkflow: locked.signer_workflow }),
    ...(locked.source_ref === undefined ? {} : { sourceRef: locked.source_ref }),
    ...(locked.cert_oidc_issuer === undefined ? {} : { certOidcIssuer: locked.cert_oidc_issuer }),
  };
}
