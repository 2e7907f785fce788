/**
 * Signing a provenance statement into a Sigstore bundle with `@sigstore/sign`
 * (DSSE envelope, payload type `application/vnd.in-toto+json`; Sigstore
 * bundle v0.3; docs/provenance.md, "Signing"):
 *
 * - with a local P-256 key (`release attest --key`): the bundle carries the
 *   key's hint (`base64(sha256(SPKI))`) and no transparency log entry;
 * - keylessly: a Fulcio certificate for an OIDC identity token, and a Rekor
 *   entry and/or an RFC 3161 timestamp (a Sigstore instance without a log, such
 *   as GitHub's for private repositories, timestamps only). CI uses GitHub's
 *   attest action instead; this path serves tests against `@sigstore/mock` and
 *   self-hosted Sigstore instances.
 *
 * The private key never leaves this process: it is read from a file that
 * must be private to the user (like ssh refuses a group-readable key).
 */
import { createHash, createPublicKey, sign as cryptoSign, type KeyObject } from "node:crypto";
import { bundleToJSON, type Bundle } from "@sigstore/bundle";
import { DSSEBundleBuilder, FulcioSigner, RekorWitness, TSAWitness, type Signer, type Witness } from "@sigstore/sign";
import { canonicalJsonBytes } from "../src/contract/canonical-json.js";
import { IN_TOTO_PAYLOAD_TYPE } from "../src/contract/provenance.js";
import { ProvenanceError } from "../src/contract/provenance-error.js";
import { readRegularFile } from "../src/contract/fs-async.js";
import { keyFileKind, MAX_KEY_FILE_BYTES, parseP256PrivateKeyPem } from "../src/contract/key-pem.js";

/** How to sign: a local key, or keyless through Fulcio + Rekor. */
export type ProvenanceSigner =
  | { kind: "key"; privateKey: KeyObject }
  | {
      kind: "keyless";
      identityToken: () => Promise<string>;
      fulcioUrl: string;
      /** Rekor base URL (omit for an instance without a transparency log; then `tsaUrl` is needed). */
      rekorUrl?: string;
      /** Timestamp authority base URL (RFC 3161, `POST /api/v1/timestamp`). */
      tsaUrl?: string;
      /** Rekor v1 entry kind for the envelope (default `dsse`; `intoto` for logs that store proposed entries as given). */
      rekorEntryType?: "dsse" | "intoto";
      /** Per-request timeout in milliseconds (default 30,000). */
      timeoutMs?: number;
      /**
       * Retries of one request to Fulcio, Rekor or the TSA after a network failure or a 408, 429 or 5xx
       * answer (default 2; backoff 500 ms, doubling). A Rekor entry that a lost answer had already
       * created (409) is fetched instead of failing.
       */
      retries?: number;
    };

/**
 * Read a PEM private key (PKCS#8 or SEC1) for P-256 ECDSA signing. The file
 * must be a regular file of the current user with no group/other permission bits
 * (a public key or certificate given by mistake is named as such first).
 * @throws ProvenanceError `PROVENANCE_KEY_INVALID` (unreadable, too open, does not decode),
 *   `PROVENANCE_KEY_NOT_PRIVATE`, `PROVENANCE_KEY_UNSUPPORTED`.
 */
export async function readSigningKeyFile(path: string): Promise<KeyObject> {
  // Type, size, mode and owner come from the opened descriptor: nothing can be swapped in after the checks.
  const found = await readRegularFile(path, { maxBytes: MAX_KEY_FILE_BYTES });
  if (found.kind !== "read") {
    const what = found.kind === "too-large" ? `a file of ${found.size} bytes` : found.kind === "not-regular" ? found.what : found.code === "ENOENT" ? "no such file" : found.code === "ELOOP" ? "a symbolic link" : `a file it cannot read (${found.code})`;
    throw new ProvenanceError("PROVENANCE_KEY_INVALID", `signing key ${path} must be a regular file of at most ${MAX_KEY_FILE_BYTES} bytes; found ${what}`);
  }
  const { bytes, mode, uid } = found;
  const { kind } = keyFileKind(bytes);
  const label = `signing key ${path}`;
  // A public key or certificate is not secret: say what it is before asking for private permissions.
  if (kind === "public-key" || kind === "certificate") parseSigningKey(bytes, label);
  if ((mode & 0o077) !== 0 || (typeof process.getuid === "function" && uid !== process.getuid())) {
    throw new ProvenanceError("PROVENANCE_KEY_INVALID", `${label} must belong to you and be private (chmod 600); found mode ${(mode & 0o777).toString(8)}`);
  }
  return parseSigningKey(bytes, label);
}

/**
 * A P-256 private key from PEM bytes (src/contract/key-pem.ts).
 * @throws ProvenanceError `PROVENANCE_KEY_NOT_PRIVATE`, `PROVENANCE_KEY_INVALID`, `PROVENANCE_KEY_UNSUPPORTED`.
 */
export function parseSigningKey(pem: Buffer | string, label = "signing key"): KeyObject {
  return parseP256PrivateKeyPem(pem, label);
}

/** The PEM (SPKI) public key of a private key: what consumers pin with `--key`. */
export function publicKeyPem(privateKey: KeyObject): string {
  return createPublicKey(privateKey).export({ format: "pem", type: "spki" }).toString();
}

/** A `@sigstore/sign` signer over a local key (ECDSA P-256 with SHA-256, DER signature). */
function localKeySigner(privateKey: KeyObject): Signer {
  const publicKey = createPublicKey(privateKey);
  const hint = createHash("sha256").update(publicKey.export({ format: "der", type: "spki" })).digest("base64");
  const pem = publicKey.export({ format: "pem", type: "spki" }).toString();
  return {
    sign: async (data: Buffer) => ({ signature: cryptoSign("sha256", data, privateKey), key: { $case: "publicKey", publicKey: pem, hint } }),
  };
}

/** Timeout and retry policy of every request to a Sigstore service (`@sigstore/sign` hands `retry` to promise-retry). */
function serviceOptions(signer: Extract<ProvenanceSigner, { kind: "keyless" }>) {
  return { timeout: signer.timeoutMs ?? 30_000, retry: { retries: signer.retries ?? 2, factor: 2, minTimeout: 500, maxTimeout: 4_000 } };
}

/**
 * An error and its causes as one line: `@sigstore/sign` wraps a failed request
 * ("error creating signing certificate") around the reason (refused, reset,
 * timed out), which alone says what to fix. At most 4 causes; a cause whose text
 * the line already holds is skipped.
 */
function describeWithCauses(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const text = current.message.trim();
    if (text !== "" && !parts.some((part) => part.includes(text))) parts.push(text);
    current = (current as { cause?: unknown }).cause;
  }
  return parts.length === 0 ? String(error) : parts.join(": ");
}

/**
 * The witnesses of a keyless signature: the Rekor log and/or the timestamp authority.
 * @throws ProvenanceError `PROVENANCE_SIGNING_FAILED` when neither is given (nothing would vouch for the signing time).
 */
function keylessWitnesses(signer: Extract<ProvenanceSigner, { kind: "keyless" }>): Witness[] {
  const options = serviceOptions(signer);
  const witnesses: Witness[] = [];
  if (signer.rekorUrl !== undefined) witnesses.push(new RekorWitness({ rekorBaseURL: signer.rekorUrl, entryType: signer.rekorEntryType ?? "dsse", fetchOnConflict: true, ...options }));
  if (signer.tsaUrl !== undefined) witnesses.push(new TSAWitness({ tsaBaseURL: signer.tsaUrl, ...options }));
  if (witnesses.length === 0) throw new ProvenanceError("PROVENANCE_SIGNING_FAILED", "keyless signing needs a Rekor URL or a timestamp authority URL to vouch for the signing time");
  return witnesses;
}

/**
 * Sign the statement's exact bytes as a DSSE envelope and return the
 * Sigstore bundle (v0.3) as canonical JSON bytes.
 * @throws ProvenanceError `PROVENANCE_SIGNING_FAILED` when signing or a Sigstore service fails (message names the step).
 */
export async function signStatement(statementBytes: Uint8Array, signer: ProvenanceSigner): Promise<Buffer> {
  // The identity token is a secret: remember it to scrub it from any error text the libraries produce.
  let token: string | undefined;
  const getToken = signer.kind === "keyless" ? async () => (token = await signer.identityToken()) : async () => "";
  const builder =
    signer.kind === "key"
      ? new DSSEBundleBuilder({ signer: localKeySigner(signer.privateKey), witnesses: [] })
      : new DSSEBundleBuilder({
          signer: new FulcioSigner({ identityProvider: { getToken }, fulcioBaseURL: signer.fulcioUrl, ...serviceOptions(signer) }),
          witnesses: keylessWitnesses(signer),
        });
  let bundle: Bundle;
  try {
    bundle = await builder.create({ data: Buffer.from(statementBytes), type: IN_TOTO_PAYLOAD_TYPE });
  } catch (error) {
    const message = describeWithCauses(error);
    const scrubbed = token === undefined || token === "" ? message : message.split(token).join("<identity token>");
    throw new ProvenanceError("PROVENANCE_SIGNING_FAILED", `signing the provenance statement failed (${signer.kind}): ${scrubbed}`);
  }
  return canonicalJsonBytes(bundleToJSON(bundle));
}
