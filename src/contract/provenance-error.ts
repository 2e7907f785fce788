/**
 * The error class of provenance (docs/architecture.md, "Provenance"): building
 * and checking the in-toto statement, validating a trusted root, verifying a
 * Sigstore bundle, discovering attestations and binding them to a release.
 * One code per failure a consumer can act on; messages say what was expected,
 * what was found and where the expectation came from, never secrets.
 */
import { HermesPluginKitError } from "./errors.js";

/**
 * Codes of {@link ProvenanceError}:
 *
 * - `PROVENANCE_BUNDLE_INVALID`: not a Sigstore bundle (bad JSON, duplicate key, unknown media type, schema).
 * - `PROVENANCE_TRUSTED_ROOT_INVALID`: the trusted root is not a valid Sigstore trusted root (schema, encodings,
 *   keys, certificates, validity periods).
 * - `PROVENANCE_KEY_INVALID`: a key file is empty, holds no PEM block (or several), or its key block does not decode;
 *   a signing key file is missing, too large or readable by others.
 * - `PROVENANCE_KEY_NOT_PUBLIC`: a public key was expected (`--key`, a lock's or policy's key) and the file holds a
 *   private key, a certificate or another PEM block (src/contract/key-pem.ts).
 * - `PROVENANCE_KEY_NOT_PRIVATE`: a signing (private) key was expected and the file holds a public key or a certificate.
 * - `PROVENANCE_KEY_UNSUPPORTED`: a key of another algorithm or curve than ECDSA P-256, or an encrypted private key.
 * - `PROVENANCE_KEY_MISMATCH`: the bundle names another public key than the one given.
 * - `PROVENANCE_KEY_REQUIRED`: the bundle is signed by a bare public key but no `--key` was given.
 * - `PROVENANCE_CERTIFICATE_REQUIRED`: a certificate identity was asked for but the bundle carries no certificate.
 * - `PROVENANCE_SIGNATURE_INVALID`: the signature does not verify (tampered payload, wrong signer).
 * - `PROVENANCE_CERTIFICATE_INVALID`: the signing certificate does not chain to the trusted root at signing time.
 * - `PROVENANCE_TLOG_INVALID`: a transparency log entry is missing, does not prove inclusion, or does not match.
 * - `PROVENANCE_TIMESTAMP_INVALID`: the signing time cannot be established by a trusted timestamp.
 * - `PROVENANCE_IDENTITY_MISMATCH`: the certificate's subject alternative name is not the expected identity.
 * - `PROVENANCE_ISSUER_MISMATCH`: the certificate's OIDC issuer is not the expected issuer.
 * - `PROVENANCE_REPOSITORY_MISMATCH`: source repository or owner differs from the policy.
 * - `PROVENANCE_WORKFLOW_MISMATCH`: the signer workflow or the statement's workflow differs from the policy or receipt.
 * - `PROVENANCE_REF_MISMATCH`: the source ref differs from the policy.
 * - `PROVENANCE_RUN_ID_MISMATCH`: run id (or attempt) differs between certificate, statement and receipt.
 * - `PROVENANCE_SOURCE_SHA_MISMATCH`: the statement's source commit is not the receipt's `source_sha`.
 * - `PROVENANCE_TAG_MISMATCH`: the statement's tag is not the receipt's tag.
 * - `PROVENANCE_TESTED_MANIFEST_MISMATCH`: the statement's tested-manifest digest is not the release's.
 * - `PROVENANCE_SUBJECT_MISMATCH`: the artifact (or release bundle) is not the statement's subject.
 * - `PROVENANCE_STATEMENT_INVALID`: the DSSE payload is not an in-toto v1 statement with this kit's SLSA v1 predicate.
 * - `PROVENANCE_NOT_FOUND`: no attestation refers to the release bundle.
 * - `PROVENANCE_ATTESTATIONS_DISAGREE`: several attestations refer to the bundle and do not all verify to one statement.
 * - `PROVENANCE_ATTESTATION_TOO_LARGE`: an attestation manifest or Sigstore bundle is larger than 1 MiB.
 * - `PROVENANCE_ATTESTATION_INVALID`: a referrer manifest is not a Sigstore bundle artifact for this subject.
 * - `PROVENANCE_SIGNING_FAILED`: signing failed (key, Fulcio, Rekor); the message names the step.
 * - `PROVENANCE_POLICY_INVALID`: the provenance policy is incomplete or malformed (keyless without `owner`/`repo`,
 *   a repository not `owner/name`, a ref not `refs/...`).
 * - `PROVENANCE_ARTIFACT_INVALID`: the artifact argument is neither a readable file nor `sha256:<64 hex>`, or a
 *   message-signature bundle was given only a digest.
 */
export type ProvenanceErrorCode =
  | "PROVENANCE_BUNDLE_INVALID"
  | "PROVENANCE_TRUSTED_ROOT_INVALID"
  | "PROVENANCE_KEY_INVALID"
  | "PROVENANCE_KEY_NOT_PUBLIC"
  | "PROVENANCE_KEY_NOT_PRIVATE"
  | "PROVENANCE_KEY_UNSUPPORTED"
  | "PROVENANCE_KEY_MISMATCH"
  | "PROVENANCE_KEY_REQUIRED"
  | "PROVENANCE_CERTIFICATE_REQUIRED"
  | "PROVENANCE_SIGNATURE_INVALID"
  | "PROVENANCE_CERTIFICATE_INVALID"
  | "PROVENANCE_TLOG_INVALID"
  | "PROVENANCE_TIMESTAMP_INVALID"
  | "PROVENANCE_IDENTITY_MISMATCH"
  | "PROVENANCE_ISSUER_MISMATCH"
  | "PROVENANCE_REPOSITORY_MISMATCH"
  | "PROVENANCE_WORKFLOW_MISMATCH"
  | "PROVENANCE_REF_MISMATCH"
  | "PROVENANCE_RUN_ID_MISMATCH"
  | "PROVENANCE_SOURCE_SHA_MISMATCH"
  | "PROVENANCE_TAG_MISMATCH"
  | "PROVENANCE_TESTED_MANIFEST_MISMATCH"
  | "PROVENANCE_SUBJECT_MISMATCH"
  | "PROVENANCE_STATEMENT_INVALID"
  | "PROVENANCE_NOT_FOUND"
  | "PROVENANCE_ATTESTATIONS_DISAGREE"
  | "PROVENANCE_ATTESTATION_TOO_LARGE"
  | "PROVENANCE_ATTESTATION_INVALID"
  | "PROVENANCE_SIGNING_FAILED"
  | "PROVENANCE_POLICY_INVALID"
  | "PROVENANCE_ARTIFACT_INVALID";

/** A provenance failure; `code` is one of {@link ProvenanceErrorCode}. */
export class ProvenanceError extends HermesPluginKitError<ProvenanceErrorCode> {}
