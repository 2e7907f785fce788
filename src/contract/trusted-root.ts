/**
 * Strict validation of a Sigstore trusted root (protobuf-specs
 * `sigstore_trustroot.proto`, JSON form `application/vnd.dev.sigstore.trustedroot+json`).
 * A trusted root is an input like any other: instead of trusting whatever
 * parses, every field is checked before a verifier sees it (docs/architecture.md,
 * "Provenance"; Sigstore `TrustedRoot` protobuf-specs).
 *
 * Rules: strict JSON (duplicate keys refused), known media type, exact key
 * sets, canonical standard base64, known key types whose bytes parse as a key
 * of that type, RFC 3339 validity periods with `start <= end`, URLs, non-empty
 * certificate chains whose certificates parse, each certificate issued and
 * signed by the next one in its chain, and at least one certificate authority
 * or transparency log to trust.
 */
import { X509Certificate, createPublicKey, type KeyObject } from "node:crypto";
import * as z from "zod";
import { parseStrictJson } from "./canonical-json.js";
import { describeValue } from "./grammar.js";
import { ProvenanceError } from "./provenance-error.js";

/** Trusted root media types understood. */
export const TRUSTED_ROOT_MEDIA_TYPES = Object.freeze([
  "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
  "application/vnd.dev.sigstore.trustedroot.v0.2+json",
]);

/** Largest trusted root read, in bytes. */
export const MAX_TRUSTED_ROOT_BYTES = 1024 * 1024;

const base64 = z.string().min(1).max(64 * 1024).refine((s) => /^[A-Za-z0-9+/]+={0,2}$/.test(s) && Buffer.from(s, "base64").toString("base64") === s, "canonical standard base64");
const timestamp = z.string().refine((s) => /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,9})?Z$/.test(s) && !Number.isNaN(Date.parse(s)), "RFC 3339 UTC timestamp");
const validFor = z.strictObject({ start: timestamp, end: timestamp.nullable().optional() });
const url = z.string().refine((s) => /^https?:\/\/[^\s]+$/.test(s), "http(s) URL");
const KEY_DETAILS = ["PKIX_ECDSA_P256_SHA_256", "PKIX_ECDSA_P384_SHA_384", "PKIX_ECDSA_P521_SHA_512", "PKIX_ED25519", "PKCS1_RSA_PKCS1V5", "PKIX_RSA_PKCS1V5", "PKIX_RSA_PKCS1V15_2048_SHA256", "PKIX_RSA_PKCS1V15_3072_SHA256", "PKIX_RSA_PKCS1V15_4096_SHA256"] as const;

const TransparencyLogSchema = z.strictObject({
  baseUrl: url,
  hashAlgorithm: z.enum(["SHA2_256", "SHA2_384", "SHA2_512"]),
  publicKey: z.strictObject({ rawBytes: base64, keyDetails: z.enum(KEY_DETAILS), validFor }),
  logId: z.strictObject({ keyId: base64 }),
  checkpointKeyId: z.strictObject({ keyId: base64 }).nullable().optional(),
  operator: z.string().nullable().optional(),
});

const AuthoritySchema = z.strictObject({
  subject: z.strictObject({ organization: z.string(), commonName: z.string() }),
  uri: z.string(),
  certChain: z.strictObject({ certificates: z.array(z.strictObject({ rawBytes: base64 })).min(1).max(16) }),
  validFor,
  operator: z.string().nullable().optional(),
});

const TrustedRootSchema = z.strictObject({
  mediaType: z.enum(TRUSTED_ROOT_MEDIA_TYPES as unknown as [string, ...string[]]),
  tlogs: z.array(TransparencyLogSchema).max(64).optional(),
  certificateAuthorities: z.array(AuthoritySchema).max(64).optional(),
  ctlogs: z.array(TransparencyLogSchema).max(64).optional(),
  timestampAuthorities: z.array(AuthoritySchema).max(64).optional(),
});

/** A trusted root after {@link parseTrustedRoot}: the JSON object (for the protobuf reader) and what it trusts. */
export interface CheckedTrustedRoot {
  /** The validated JSON document. */
  json: Record<string, unknown>;
  /** Counts of what it trusts. */
  counts: { tlogs: number; certificateAuthorities: number; ctlogs: number; timestampAuthorities: number };
}

function invalid(where: string, message: string): never {
  throw new ProvenanceError("PROVENANCE_TRUSTED_ROOT_INVALID", `trusted root: ${where}: ${message}`);
}

/** {@link invalid} for a finding about the whole document, whose `label` already says what it is. */
function invalidDocument(label: string, message: string): never {
  throw new ProvenanceError("PROVENANCE_TRUSTED_ROOT_INVALID", `${label}: ${message}`);
}

function keyTypeOf(key: KeyObject): string {
  const details = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType === "ec") return `ec:${details?.namedCurve ?? "?"}`;
  return key.asymmetricKeyType ?? "?";
}

const EXPECTED_KEY_TYPE: Record<(typeof KEY_DETAILS)[number], string> = {
  PKIX_ECDSA_P256_SHA_256: "ec:prime256v1",
  PKIX_ECDSA_P384_SHA_384: "ec:secp384r1",
  PKIX_ECDSA_P521_SHA_512: "ec:secp521r1",
  PKIX_ED25519: "ed25519",
  PKCS1_RSA_PKCS1V5: "rsa",
  PKIX_RSA_PKCS1V5: "rsa",
  PKIX_RSA_PKCS1V15_2048_SHA256: "rsa",
  PKIX_RSA_PKCS1V15_3072_SHA256: "rsa",
  PKIX_RSA_PKCS1V15_4096_SHA256: "rsa",
};

function checkValidity(where: string, period: { start: string; end?: string | null | undefined }): void {
  if (period.end !== undefined && period.end !== null && Date.parse(period.end) < Date.parse(period.start)) {
    invalid(`${where}.validFor`, `end ${period.end} is before start ${period.start}`);
  }
}

function checkLog(where: string, log: z.infer<typeof TransparencyLogSchema>): void {
  const raw = Buffer.from(log.publicKey.rawBytes, "base64");
  let key: KeyObject;
  try {
    key = log.publicKey.keyDetails === "PKCS1_RSA_PKCS1V5" ? createPublicKey({ key: raw, format: "der", type: "pkcs1" }) : createPublicKey({ key: raw, format: "der", type: "spki" });
  } catch {
    invalid(`${where}.publicKey.rawBytes`, `not a ${log.publicKey.keyDetails} public key`);
  }
  if (keyTypeOf(key) !== EXPECTED_KEY_TYPE[log.publicKey.keyDetails]) {
    invalid(`${where}.publicKey`, `keyDetails says ${log.publicKey.keyDetails}, the key is ${keyTypeOf(key)}`);
  }
  checkValidity(`${where}.publicKey`, log.publicKey.validFor);
}

function checkAuthority(where: string, authority: z.infer<typeof AuthoritySchema>): void {
  const chain: X509Certificate[] = authority.certChain.certificates.map((c, i) => {
    try {
      return new X509Certificate(Buffer.from(c.rawBytes, "base64"));
    } catch {
      return invalid(`${where}.certChain.certificates.${i}`, "not a DER X.509 certificate");
    }
  });
  chain.forEach((cert, i) => {
    const issuer = chain[i + 1] ?? cert;
    if (!cert.checkIssued(issuer) || !cert.verify(issuer.publicKey)) {
      invalid(`${where}.certChain.certificates.${i}`, i + 1 < chain.length ? "not issued and signed by the next certificate of the chain" : "the last certificate of the chain is not self-signed");
    }
  });
  checkValidity(where, authority.validFor);
}

/**
 * Validate a trusted root document (see the module comment).
 * @param bytes the JSON bytes (at most {@link MAX_TRUSTED_ROOT_BYTES}).
 * @param label where the root came from, for messages (a file name, `the embedded public-good root`).
 * @throws ProvenanceError `PROVENANCE_TRUSTED_ROOT_INVALID` naming the field and the rule.
 */
export function parseTrustedRoot(bytes: Uint8Array, label = "trusted root"): CheckedTrustedRoot {
  if (!(bytes instanceof Uint8Array)) invalidDocument(label, `expected its bytes (a Buffer or Uint8Array), found ${bytes === null ? "null" : typeof bytes === "string" ? "a string (read the file into a Buffer first)" : typeof bytes}`);
  if (bytes.length > MAX_TRUSTED_ROOT_BYTES) invalidDocument(label, `larger than ${MAX_TRUSTED_ROOT_BYTES} bytes`);
  let json: Record<string, unknown>;
  try {
    json = parseStrictJson(bytes, { rejectIntegralFloats: false });
  } catch (error) {
    return invalidDocument(label, `not a JSON object without duplicate keys (${(error as Error).message})`);
  }
  const result = TrustedRootSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    invalidDocument(`${label} at ${issue === undefined || issue.path.length === 0 ? "<root>" : issue.path.map(String).join(".")}`, issue?.message ?? "invalid");
  }
  const root = result.data;
  (root.tlogs ?? []).forEach((log, i) => checkLog(`tlogs.${i}`, log));
  (root.ctlogs ?? []).forEach((log, i) => checkLog(`ctlogs.${i}`, log));
  (root.certificateAuthorities ?? []).forEach((ca, i) => checkAuthority(`certificateAuthorities.${i}`, ca));
  (root.timestampAuthorities ?? []).forEach((tsa, i) => checkAuthority(`timestampAuthorities.${i}`, tsa));
  const counts = {
    tlogs: root.tlogs?.length ?? 0,
    certificateAuthorities: root.certificateAuthorities?.length ?? 0,
    ctlogs: root.ctlogs?.length ?? 0,
    timestampAuthorities: root.timestampAuthorities?.length ?? 0,
  };
  if (counts.tlogs + counts.certificateAuthorities + counts.timestampAuthorities === 0) {
    invalid(label, `trusts nothing: no transparency log, certificate authority or timestamp authority (found ${describeValue(counts)})`);
  }
  return { json, counts };
}
