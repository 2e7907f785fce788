/**
 * Offline verification of one Sigstore bundle (protobuf-specs
 * `sigstore_bundle.proto`, v0.1-v0.3) with `@sigstore/verify`: signature,
 * certificate chain and SCTs, transparency log inclusion and body, timestamps,
 * then the signer (a pinned public key, or a certificate identity checked by
 * the caller) and the artifact (a message digest, or a subject of the DSSE
 * in-toto statement).
 *
 * One gap of `@sigstore/verify` 3.1.1 is closed here, by the Sigstore client
 * spec for Rekor v2: a DSSE envelope logged as a `hashedrekord` v0.0.2 entry
 * records the SHA-256 of the DSSE pre-authentication encoding (PAE) and the
 * envelope's one signature. The library compares such an entry against the
 * payload digest, so it refuses every such bundle. {@link rekorV2DsseContent}
 * gives the verifier the envelope as what the log saw (a signature over the
 * PAE message): the log entry, its inclusion proof and checkpoint, the
 * timestamps and the signature are then all verified by the library as usual,
 * and {@link checkHashedRekordV2Verifiers} requires the entry's verifier to be
 * the bundle's own certificate or key (the library does not compare it).
 */
import { X509Certificate, createHash, timingSafeEqual, type KeyObject } from "node:crypto";
import { bundleFromJSON, type Bundle, type TransparencyLogEntry } from "@sigstore/bundle";
import { dsse } from "@sigstore/core";
import { PolicyError, VerificationError, Verifier, toSignedEntity, type SignedEntity, type Signer } from "@sigstore/verify";
import { parseStrictJson } from "../contract/canonical-json.js";
import { MAX_MANIFEST_BYTES } from "../contract/constants.js";
import { describeList, describeValue } from "../contract/grammar.js";
import { IN_TOTO_PAYLOAD_TYPE } from "../contract/provenance.js";
import { parseP256PublicKeyPem } from "../contract/key-pem.js";
import { ProvenanceError, type ProvenanceErrorCode } from "../contract/provenance-error.js";
import type { SignerIdentity } from "../contract/provenance-policy.js";
import type { CheckedTrustedRoot } from "../contract/trusted-root.js";
import { trustMaterialFor } from "./sigstore-trust.js";

/** Largest Sigstore bundle accepted, in bytes (1 MiB). */
export const MAX_SIGSTORE_BUNDLE_BYTES = MAX_MANIFEST_BYTES;

/** Who must have signed: a pinned public key, or a certificate whose identity `check` accepts (throwing otherwise). */
export type ExpectedSigner = { kind: "key"; key: KeyObject } | { kind: "certificate"; check: (identity: SignerIdentity) => void };

/** The artifact a bundle must cover: its bytes, or only its SHA-256 (hex). */
export type BundleArtifact = { bytes: Buffer } | { sha256: string };

/** What {@link verifySigstoreBundle} proved. */
export interface VerifiedSigstoreBundle {
  content: "dsse" | "message";
  /** The DSSE payload type and bytes (DSSE only). */
  payloadType?: string;
  payload?: Buffer;
  /** The parsed in-toto statement when the payload type is in-toto. */
  statement?: Record<string, unknown>;
  /** The certificate identity (certificate signers only). */
  identity?: SignerIdentity;
}

/**
 * Parse Sigstore bundle bytes: at most 1 MiB, strict JSON (duplicate keys
 * refused), a known bundle media type and shape (`@sigstore/bundle`).
 * @throws ProvenanceError `PROVENANCE_ATTESTATION_TOO_LARGE`, `PROVENANCE_BUNDLE_INVALID`.
 */
export function parseSigstoreBundle(bytes: Uint8Array, label = "Sigstore bundle"): Bundle {
  if (bytes.length > MAX_SIGSTORE_BUNDLE_BYTES) {
    throw new ProvenanceError("PROVENANCE_ATTESTATION_TOO_LARGE", `${label} is ${bytes.length} bytes; at most ${MAX_SIGSTORE_BUNDLE_BYTES} bytes are accepted`);
  }
  let json: Record<string, unknown>;
  try {
    json = parseStrictJson(bytes, { rejectIntegralFloats: false });
  } catch (error) {
    throw new ProvenanceError("PROVENANCE_BUNDLE_INVALID", `${label} is not a JSON object without duplicate keys: ${(error as Error).message}`);
  }
  try {
    return bundleFromJSON(json);
  } catch (error) {
    const fields = (error as { fields?: unknown }).fields;
    const found = Array.isArray(fields) && fields.length > 0 ? fields.slice(0, 5).map((field) => bundleFieldProblem(String(field), json)).join(", ") + (fields.length > 5 ? `, and ${fields.length - 5} more` : "") : (error as Error).message;
    throw new ProvenanceError(
      "PROVENANCE_BUNDLE_INVALID",
      `${label} is not a valid Sigstore bundle: expected the shape of the Sigstore bundle spec (protobuf-specs sigstore_bundle.proto, as @sigstore/bundle checks it), found ${found}; fix: use the bundle exactly as the Sigstore client wrote it (hermes-plugin-kit release attest and GitHub's attest action write one signature over one payload), or attest the release again`,
    );
  }
}

/** What is wrong with one field @sigstore/bundle names (its JSON path, `content.` for the bundle's content), read from `json`. */
function bundleFieldProblem(field: string, json: Record<string, unknown>): string {
  const at = (path: string): unknown => path.split(".").reduce<unknown>((value, key) => (value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined), json);
  switch (field) {
    case "content.dsseEnvelope.signatures": {
      const signatures = at("dsseEnvelope.signatures");
      return `dsseEnvelope.signatures holding ${Array.isArray(signatures) ? signatures.length : 0} signatures (a bundle's DSSE envelope carries exactly one)`;
    }
    case "content.dsseEnvelope.signatures[0].sig":
      return "an empty dsseEnvelope.signatures[0].sig";
    case "content.dsseEnvelope.payload":
      return "an empty dsseEnvelope.payload";
    case "content":
      return "neither dsseEnvelope nor messageSignature";
    case "mediaType":
      return `mediaType ${describeValue(json["mediaType"])} (expected application/vnd.dev.sigstore.bundle.v0.3+json or an earlier bundle version)`;
    case "verificationMaterial.content.$case":
      return "an x509CertificateChain in a v0.3 bundle (v0.3 carries one certificate)";
    default:
      return `${field.replace(/^content\./, "")} missing or empty`;
  }
}

/** `base64(sha256(SPKI DER))`, the public-key hint Sigstore clients write. */
export function publicKeyHint(key: KeyObject): string {
  return createHash("sha256").update(key.export({ format: "der", type: "spki" })).digest("base64");
}

/**
 * Read a P-256 PEM public key (SPKI) for `--key` (src/contract/key-pem.ts).
 * @throws ProvenanceError `PROVENANCE_KEY_NOT_PUBLIC`, `PROVENANCE_KEY_INVALID`, `PROVENANCE_KEY_UNSUPPORTED`.
 */
export function parsePublicKeyPem(pem: string | Buffer, label = "--key"): KeyObject {
  return parseP256PublicKeyPem(pem, label);
}

function sha256(bytes: Buffer): Buffer {
  return createHash("sha256").update(bytes).digest();
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function entryBody(entry: TransparencyLogEntry): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(entry.canonicalizedBody.toString("utf8"));
  } catch {
    body = undefined;
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new ProvenanceError("PROVENANCE_TLOG_INVALID", `transparency log entry ${entry.logIndex} has a body that is not a JSON object`);
  }
  return body as Record<string, unknown>;
}

function isHashedRekordV2(entry: TransparencyLogEntry): boolean {
  return entry.kindVersion.kind === "hashedrekord" && entry.kindVersion.version === "0.0.2";
}

/**
 * The signature content of a DSSE bundle whose log entries are Rekor v2
 * `hashedrekord` v0.0.2 records: the logged digest is SHA-256 over the PAE,
 * the logged signature the envelope's signature, and the signature verifies
 * over the PAE exactly as for any DSSE envelope.
 */
function rekorV2DsseContent(bundle: Bundle, entity: SignedEntity): SignedEntity["signature"] {
  if (bundle.content.$case !== "dsseEnvelope") throw new Error("not a DSSE bundle");
  const envelope = bundle.content.dsseEnvelope;
  const paeDigest = sha256(dsse.preAuthEncoding(envelope.payloadType, envelope.payload));
  const original = entity.signature;
  return {
    signature: original.signature,
    compareSignature: (signature) => original.compareSignature(signature),
    compareDigest: (digest) => sameBytes(digest, paeDigest),
    verifySignature: (key) => original.verifySignature(key),
  };
}

/**
 * Every `hashedrekord` v0.0.2 entry must name the bundle's own verifier: the
 * leaf certificate's DER bytes, or (key mode) the pinned key's SPKI bytes.
 */
function checkHashedRekordV2Verifiers(bundle: Bundle, signer: ExpectedSigner): void {
  const material = bundle.verificationMaterial.content;
  const expected =
    material.$case === "certificate"
      ? { kind: "x509Certificate" as const, bytes: material.certificate.rawBytes }
      : material.$case === "x509CertificateChain"
        ? { kind: "x509Certificate" as const, bytes: material.x509CertificateChain.certificates[0]?.rawBytes }
        : { kind: "publicKey" as const, bytes: signer.kind === "key" ? signer.key.export({ format: "der", type: "spki" }) : undefined };
  for (const entry of bundle.verificationMaterial.tlogEntries.filter(isHashedRekordV2)) {
    const spec = (entryBody(entry)["spec"] as Record<string, Record<string, unknown>> | undefined)?.["hashedRekordV002"];
    const verifier = (spec?.["signature"] as { verifier?: Record<string, { rawBytes?: unknown } | undefined> } | undefined)?.verifier;
    const logged = verifier?.[expected.kind]?.rawBytes;
    if (typeof logged !== "string" || expected.bytes === undefined || !sameBytes(Buffer.from(logged, "base64"), expected.bytes)) {
      throw new ProvenanceError("PROVENANCE_TLOG_INVALID", `transparency log entry ${entry.logIndex} records another verifier than the bundle's signing ${expected.kind === "publicKey" ? "key" : "certificate"}`);
    }
  }
}

/** Build the entity the verifier checks, closing the Rekor v2 DSSE gap (module comment). */
function signedEntity(bundle: Bundle, artifact: Buffer | undefined, signer: ExpectedSigner): SignedEntity {
  let entity: SignedEntity;
  try {
    entity = toSignedEntity(bundle, artifact);
  } catch (error) {
    throw new ProvenanceError("PROVENANCE_BUNDLE_INVALID", `the Sigstore bundle cannot be read for verification: ${(error as Error).message}`);
  }
  const entries = bundle.verificationMaterial.tlogEntries;
  if (bundle.content.$case === "dsseEnvelope" && entries.some(isHashedRekordV2)) {
    if (!entries.every(isHashedRekordV2)) {
      throw new ProvenanceError("PROVENANCE_TLOG_INVALID", "the DSSE bundle mixes Rekor v2 hashedrekord entries with other entry kinds");
    }
    if (bundle.content.dsseEnvelope.signatures.length !== 1) {
      throw new ProvenanceError("PROVENANCE_SIGNATURE_INVALID", `a logged DSSE envelope must carry exactly one signature, found ${bundle.content.dsseEnvelope.signatures.length}`);
    }
    entity = { ...entity, signature: rekorV2DsseContent(bundle, entity) };
  }
  checkHashedRekordV2Verifiers(bundle, signer);
  return entity;
}

const LIBRARY_CODES: Record<string, ProvenanceErrorCode> = {
  TLOG_ERROR: "PROVENANCE_TLOG_INVALID",
  TLOG_INCLUSION_PROOF_ERROR: "PROVENANCE_TLOG_INVALID",
  TLOG_INCLUSION_PROMISE_ERROR: "PROVENANCE_TLOG_INVALID",
  TLOG_MISSING_INCLUSION_ERROR: "PROVENANCE_TLOG_INVALID",
  TLOG_BODY_ERROR: "PROVENANCE_TLOG_INVALID",
  CERTIFICATE_ERROR: "PROVENANCE_CERTIFICATE_INVALID",
  PUBLIC_KEY_ERROR: "PROVENANCE_KEY_MISMATCH",
  SIGNATURE_ERROR: "PROVENANCE_SIGNATURE_INVALID",
  TIMESTAMP_ERROR: "PROVENANCE_TIMESTAMP_INVALID",
  UNTRUSTED_SIGNER_ERROR: "PROVENANCE_IDENTITY_MISMATCH",
};

function runVerifier(trust: CheckedTrustedRoot, signer: ExpectedSigner, entity: SignedEntity): Signer {
  const material = trustMaterialFor(trust, signer.kind === "key" ? signer.key : undefined);
  // A pinned key is its own trust anchor: locally signed bundles carry no log entry or timestamp.
  // Entries that are present are still verified (the verifier checks every entry it is given).
  // A certificate needs an SCT from a CT log the root trusts; a root without CT logs (a private Sigstore
  // instance) cannot vouch for any, so none is required, and a certificate carrying SCTs still fails there.
  // Likewise a root without transparency logs (GitHub's instance for private repositories) requires no log
  // entry; the signing time must then come from a timestamp authority it trusts (timestampThreshold 1).
  const thresholds =
    signer.kind === "key"
      ? { tlogThreshold: 0, ctlogThreshold: 0, timestampThreshold: 0 }
      : { ctlogThreshold: trust.counts.ctlogs > 0 ? 1 : 0, tlogThreshold: trust.counts.tlogs > 0 ? 1 : 0, timestampThreshold: 1 };
  try {
    return new Verifier(material, thresholds).verify(entity);
  } catch (error) {
    if (error instanceof VerificationError || error instanceof PolicyError) {
      const code = LIBRARY_CODES[error.code] ?? "PROVENANCE_SIGNATURE_INVALID";
      if (code === "PROVENANCE_KEY_MISMATCH" && signer.kind === "key") throw new ProvenanceError(code, keyMismatch(`the verifier refused (${error.message})`, signer.key), { cause: error });
      throw new ProvenanceError(code, `Sigstore verification failed: ${error.message}`, { cause: error });
    }
    throw new ProvenanceError("PROVENANCE_BUNDLE_INVALID", `Sigstore verification failed on a malformed bundle: ${(error as Error).message}`, { cause: error });
  }
}

/** DER UTF8String (tag 0x0c, short or long length) -> its text; anything else as UTF-8 (legacy raw extensions). */
function extensionText(value: Buffer): string {
  if (value[0] === 0x0c && value.length >= 2) {
    const first = value[1] as number;
    const lengthBytes = first & 0x80 ? first & 0x7f : 0;
    const length = lengthBytes === 0 ? first : value.subarray(2, 2 + lengthBytes).reduce((n, b) => n * 256 + b, 0);
    const start = 2 + lengthBytes;
    if (start + length === value.length) return value.subarray(start).toString("utf8");
  }
  return value.toString("utf8");
}

function identityOf(signer: Signer): SignerIdentity {
  const extensions = new Map<string, string>();
  for (const oid of signer.identity?.oids ?? []) {
    const id = oid.oid?.id.join(".");
    if (id !== undefined && id.startsWith("1.3.6.1.4.1.57264.")) extensions.set(id, extensionText(Buffer.from(oid.value)));
  }
  return {
    ...(signer.identity?.subjectAlternativeName === undefined ? {} : { subjectAlternativeName: signer.identity.subjectAlternativeName }),
    ...(signer.identity?.extensions?.issuer === undefined ? {} : { issuer: signer.identity.extensions.issuer }),
    extensions,
  };
}

/**
 * A certificate chain in a bundle must not carry a self-signed (root)
 * certificate: roots come only from the trusted root (Sigstore client spec,
 * "Certificate"), so a bundle cannot bring its own anchor.
 */
function checkNoRootInChain(bundle: Bundle): void {
  const material = bundle.verificationMaterial.content;
  if (material.$case !== "x509CertificateChain") return;
  material.x509CertificateChain.certificates.forEach((c, i) => {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(c.rawBytes);
    } catch {
      throw new ProvenanceError("PROVENANCE_BUNDLE_INVALID", `certificate ${i} of the bundle's chain is not a DER X.509 certificate`);
    }
    if (cert.checkIssued(cert) && cert.verify(cert.publicKey)) {
      throw new ProvenanceError("PROVENANCE_BUNDLE_INVALID", `certificate ${i} of the bundle's chain is a self-signed root (${cert.subject.replace(/\n/g, ", ")}); roots must come from the trusted root`);
    }
  });
}

/** The PROVENANCE_KEY_MISMATCH message: the key pinned (its hint: base64 SHA-256 of the SPKI DER), what signed, and the fix. */
function keyMismatch(found: string, key: KeyObject): string {
  return `expected a bundle signed by the key given (--key or the policy's key, hint ${publicKeyHint(key)}; a hint is the base64 SHA-256 of the public key's DER), found one ${found}; fix: pass the public key the release's publisher attests with, or, if you pinned the right key, do not trust this attestation: another key signed it`;
}

function checkKeyMaterial(bundle: Bundle, signer: ExpectedSigner): void {
  const material = bundle.verificationMaterial.content;
  checkNoRootInChain(bundle);
  if (signer.kind === "key") {
    if (material.$case !== "publicKey") {
      throw new ProvenanceError(
        "PROVENANCE_KEY_MISMATCH",
        `expected a bundle signed with the key given (--key, hint ${publicKeyHint(signer.key)}), found one signed with a certificate (keyless signing, as GitHub's attest action does); fix: verify it by its certificate identity instead of a key: drop --key and pass --owner/--repo (with --reference) or --certificate-identity and --certificate-oidc-issuer (with --bundle)`,
      );
    }
    const hint = material.publicKey.hint;
    if (hint !== "" && hint !== publicKeyHint(signer.key)) {
      throw new ProvenanceError("PROVENANCE_KEY_MISMATCH", keyMismatch(`signed by key hint ${hint}`, signer.key));
    }
  } else if (material.$case === "publicKey") {
    throw new ProvenanceError("PROVENANCE_CERTIFICATE_REQUIRED", "the bundle is signed with a bare public key and carries no certificate identity; verify it with --key");
  }
}

/** The key the bundle says signed: the leaf certificate's, or (key mode) the pinned key; undefined when unreadable (the library decides). */
function signingKeyOf(bundle: Bundle, signer: ExpectedSigner): KeyObject | undefined {
  const material = bundle.verificationMaterial.content;
  const der = material.$case === "certificate" ? material.certificate.rawBytes : material.$case === "x509CertificateChain" ? material.x509CertificateChain.certificates[0]?.rawBytes : undefined;
  if (der === undefined) return signer.kind === "key" ? signer.key : undefined;
  try {
    return new X509Certificate(der).publicKey;
  } catch {
    return undefined;
  }
}

/**
 * The signature over the content (DSSE PAE, or the artifact's bytes), checked
 * before the library's log checks: `@sigstore/verify` compares log entry bodies
 * first, so a tampered payload or a wrong signature would otherwise read as a log
 * mismatch. The library still verifies everything afterwards.
 * @throws ProvenanceError `PROVENANCE_SIGNATURE_INVALID`.
 */
function checkSignatureFirst(bundle: Bundle, entity: SignedEntity, signer: ExpectedSigner): void {
  const key = signingKeyOf(bundle, signer);
  if (key === undefined) return;
  let ok = false;
  try {
    ok = entity.signature.verifySignature(key);
  } catch {
    ok = false;
  }
  if (!ok) {
    const what = bundle.content.$case === "dsseEnvelope" ? "the DSSE payload" : "the artifact";
    throw new ProvenanceError("PROVENANCE_SIGNATURE_INVALID", `the signature does not verify over ${what} with the signing ${signer.kind === "key" ? "key" : "certificate's key"}: the payload or the signature was altered, or another key signed`);
  }
}

/** A message signature signs one digest: it must be the artifact's (checked before any signature work). */
function checkMessageDigest(bundle: Bundle, artifact: BundleArtifact | undefined): void {
  if (bundle.content.$case === "messageSignature") checkArtifact(bundle, artifact, undefined);
}

function artifactSha256(artifact: BundleArtifact): string {
  return "bytes" in artifact ? sha256(artifact.bytes).toString("hex") : artifact.sha256;
}

function checkArtifact(bundle: Bundle, artifact: BundleArtifact | undefined, statement: Record<string, unknown> | undefined): void {
  if (artifact === undefined) return;
  const want = artifactSha256(artifact);
  if (bundle.content.$case === "messageSignature") {
    const digest = bundle.content.messageSignature.messageDigest;
    // HashAlgorithm.SHA2_256 = 1 (protobuf-specs sigstore_common.proto).
    if (digest.algorithm === 1 && digest.digest.toString("hex") !== want) {
      throw new ProvenanceError("PROVENANCE_SUBJECT_MISMATCH", `the bundle signs digest sha256:${digest.digest.toString("hex")}, not the artifact's sha256:${want}`);
    }
    return;
  }
  const subjects = Array.isArray(statement?.["subject"]) ? (statement["subject"] as unknown[]) : [];
  const digests = subjects.map((s) => (s as { digest?: { sha256?: unknown } } | null)?.digest?.sha256);
  if (!digests.includes(want)) {
    const listed = digests.map((d) => (typeof d === "string" ? `sha256:${d}` : `a subject without a sha256 digest (${describeValue(d)})`));
    throw new ProvenanceError("PROVENANCE_SUBJECT_MISMATCH", `the artifact's sha256:${want} is not a subject of the signed statement (its subjects: ${listed.length === 0 ? "none" : describeList(listed)}); the bundle attests other bytes: check that FILE_OR_DIGEST is the artifact this bundle was made for`);
  }
}

function statementOf(bundle: Bundle): Record<string, unknown> | undefined {
  if (bundle.content.$case !== "dsseEnvelope" || bundle.content.dsseEnvelope.payloadType !== IN_TOTO_PAYLOAD_TYPE) return undefined;
  try {
    return parseStrictJson(bundle.content.dsseEnvelope.payload, { rejectIntegralFloats: false });
  } catch (error) {
    throw new ProvenanceError("PROVENANCE_STATEMENT_INVALID", `the DSSE payload is not a JSON object without duplicate keys: ${(error as Error).message}`);
  }
}

/**
 * Verify a parsed bundle offline against `trust`, the expected signer and
 * (optionally) the artifact. A message signature needs the artifact's bytes;
 * a DSSE bundle needs its in-toto statement to list the artifact's SHA-256.
 * @throws ProvenanceError `PROVENANCE_BUNDLE_INVALID`, `PROVENANCE_KEY_MISMATCH`,
 *   `PROVENANCE_CERTIFICATE_REQUIRED`, `PROVENANCE_SIGNATURE_INVALID`, `PROVENANCE_CERTIFICATE_INVALID`,
 *   `PROVENANCE_TLOG_INVALID`, `PROVENANCE_TIMESTAMP_INVALID`, `PROVENANCE_STATEMENT_INVALID`,
 *   `PROVENANCE_SUBJECT_MISMATCH`, `PROVENANCE_ARTIFACT_INVALID`, and what `signer.check` throws.
 */
export function verifySigstoreBundle(bundle: Bundle, options: { trust: CheckedTrustedRoot; signer: ExpectedSigner; artifact?: BundleArtifact }): VerifiedSigstoreBundle {
  checkKeyMaterial(bundle, options.signer);
  let artifactBytes: Buffer | undefined;
  if (bundle.content.$case === "messageSignature") {
    if (options.artifact === undefined || !("bytes" in options.artifact)) {
      throw new ProvenanceError("PROVENANCE_ARTIFACT_INVALID", "a message-signature bundle can only be verified against the artifact's bytes (give the file, not its digest)");
    }
    artifactBytes = options.artifact.bytes;
  }
  checkMessageDigest(bundle, options.artifact);
  const entity = signedEntity(bundle, artifactBytes, options.signer);
  checkSignatureFirst(bundle, entity, options.signer);
  const signer = runVerifier(options.trust, options.signer, entity);
  const statement = statementOf(bundle);
  let identity: SignerIdentity | undefined;
  if (options.signer.kind === "certificate") {
    identity = identityOf(signer);
    options.signer.check(identity);
  }
  checkArtifact(bundle, options.artifact, statement);
  if (bundle.content.$case === "dsseEnvelope") {
    const envelope = bundle.content.dsseEnvelope;
    return { content: "dsse", payloadType: envelope.payloadType, payload: envelope.payload, ...(statement === undefined ? {} : { statement }), ...(identity === undefined ? {} : { identity }) };
  }
  return { content: "message", ...(identity === undefined ? {} : { identity }) };
}

/**
 * The identity check of the Sigstore conformance `verify-bundle`: the
 * certificate's subject alternative name and OIDC issuer equal the given ones exactly.
 * @throws ProvenanceError `PROVENANCE_IDENTITY_MISMATCH`, `PROVENANCE_ISSUER_MISMATCH`.
 */
export function exactIdentity(expected: { identity: string; issuer: string }): (identity: SignerIdentity) => void {
  return (identity) => {
    if (identity.subjectAlternativeName !== expected.identity) {
      throw new ProvenanceError("PROVENANCE_IDENTITY_MISMATCH", `the signing certificate's identity is ${describeValue(identity.subjectAlternativeName)}, not ${expected.identity} (--certificate-identity)`);
    }
    if (identity.issuer !== expected.issuer) {
      throw new ProvenanceError("PROVENANCE_ISSUER_MISMATCH", `the signing certificate's OIDC issuer is ${describeValue(identity.issuer)}, not ${expected.issuer} (--certificate-oidc-issuer)`);
    }
  };
}
