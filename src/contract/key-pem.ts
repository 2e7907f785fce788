/**
 * The one reader of the provenance key files (docs/provenance.md, "Error codes"): a
 * P-256 public key PEM where a verifier expects one (`verify-provenance --key`,
 * `fetch`/`fleet add --provenance --key`, a fleet lock's key, a release
 * policy's `hermesPluginKit.provenance.key`) and a P-256 private key PEM where
 * a signer expects one (`release attest --key`, `release run --attest-key`).
 *
 * A file of another kind is refused by kind, before any key is built from it:
 * Node's `createPublicKey` would otherwise derive the public half of a private
 * key (or take a certificate's key) without a word, so a private key handed
 * out as "the public key" would verify silently. Messages name the kind found
 * (from the PEM labels, never the bytes) and how to get the right file.
 */
import { readRegularFile } from "./fs-async.js";
import { createPrivateKey, createPublicKey, KeyObject } from "node:crypto";
import { describeValue } from "./grammar.js";
import { ProvenanceError } from "./provenance-error.js";

/**
 * True when `key` is an ECDSA P-256 (prime256v1) key: the only curve a provenance key may use.
 * @throws ProvenanceError `PROVENANCE_KEY_INVALID` when `key` is not a `KeyObject` (a PEM string: parse it first).
 */
export function isP256Key(key: KeyObject): boolean {
  if (!(key instanceof KeyObject)) throw new ProvenanceError("PROVENANCE_KEY_INVALID", `isP256Key(key): key must be a KeyObject (from parseP256PublicKeyPem or node:crypto), found ${describeValue(key)}`);
  return key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1";
}

/** What a key file holds, judged by its PEM labels only. */
export type KeyFileKind = "empty" | "not-pem" | "public-key" | "private-key" | "encrypted-private-key" | "certificate" | "other-pem";

/** Largest key file read, in bytes (a PEM key is well under 1 KiB). */
export const MAX_KEY_FILE_BYTES = 64 * 1024;

const PUBLIC_EXPECTED = "expected a P-256 public key PEM (-----BEGIN PUBLIC KEY-----)";
const PRIVATE_EXPECTED = "expected a P-256 private key PEM (-----BEGIN PRIVATE KEY----- or -----BEGIN EC PRIVATE KEY-----)";

/**
 * The kind of a key file from its PEM labels (`-----BEGIN <LABEL>-----`). A
 * private key block anywhere wins over every other block (a public key with
 * its private key appended is still a private key file).
 * @throws ProvenanceError `PROVENANCE_KEY_INVALID` when `bytes` is neither a Buffer (Uint8Array) nor a string.
 */
export function keyFileKind(bytes: Buffer | string): { kind: KeyFileKind; blocks: number } {
  requirePemArgument("keyFileKind(bytes)", bytes);
  const text = typeof bytes === "string" ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  if (text.trim() === "") return { kind: "empty", blocks: 0 };
  const labels = [...text.matchAll(/-----BEGIN ([A-Z0-9 ]{1,40})-----/g)].map((m) => m[1] as string);
  if (labels.length === 0) return { kind: "not-pem", blocks: 0 };
  const kinds = labels.map((label): KeyFileKind => {
    if (label === "ENCRYPTED PRIVATE KEY") return "encrypted-private-key";
    if (label.endsWith("PRIVATE KEY")) return "private-key";
    if (label === "PUBLIC KEY") return "public-key";
    if (label.endsWith("CERTIFICATE")) return "certificate";
    return "other-pem";
  });
  for (const kind of ["private-key", "encrypted-private-key", "certificate", "other-pem"] as const) if (kinds.includes(kind)) return { kind, blocks: labels.length };
  return { kind: "public-key", blocks: labels.length };
}

/** Refuses a key file's contents of another type than bytes or text, and a label that is no string (a coded error, never a TypeError). */
function requirePemArgument(call: string, pem: unknown, label: unknown = ""): void {
  if (typeof pem !== "string" && !(pem instanceof Uint8Array)) {
    throw new ProvenanceError("PROVENANCE_KEY_INVALID", `${call}: expected a key file's contents (a Buffer, Uint8Array or string), found ${describeValue(pem)}`);
  }
  if (typeof label !== "string") throw new ProvenanceError("PROVENANCE_KEY_INVALID", `${call}: label must be a string naming the key file, found ${describeValue(label)}`);
}

/** The words of a message for what was found. */
function foundText(kind: KeyFileKind, size: number): string {
  switch (kind) {
    case "empty":
      return "found an empty file";
    case "not-pem":
      return `found ${size} bytes with no PEM block`;
    case "private-key":
      return "found a PRIVATE key";
    case "encrypted-private-key":
      return "found an encrypted private key";
    case "certificate":
      return "found an X.509 certificate";
    case "other-pem":
      return "found a PEM block that is not a key";
    case "public-key":
      return "found a public key";
  }
}

/** `an RSA key`, `an EC key on curve secp384r1`, ... for a key that is not P-256. */
function algorithmText(key: KeyObject): string {
  const type = key.asymmetricKeyType ?? "unknown";
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return type === "ec" ? `an EC key on curve ${curve ?? "unknown"}` : `${/^(?:rsa|ed|x|ec)/.test(type) ? "an" : "a"} ${type.toUpperCase()} key`;
}

/**
 * A P-256 public key from PEM bytes (SPKI, `-----BEGIN PUBLIC KEY-----`, one block).
 * @param label names the file in messages (`--key keys/release.pub`).
 * @throws ProvenanceError `PROVENANCE_KEY_NOT_PUBLIC` (a private key, certificate or other PEM block),
 *   `PROVENANCE_KEY_INVALID` (empty, no PEM, more than one block, a PUBLIC KEY block that does not decode),
 *   `PROVENANCE_KEY_UNSUPPORTED` (a public key of another algorithm or curve); `PROVENANCE_KEY_INVALID` also when
 *   `pem` is neither bytes nor a string, or `label` is not a string.
 */
export function parseP256PublicKeyPem(pem: Buffer | string, label = "--key"): KeyObject {
  requirePemArgument("parseP256PublicKeyPem(pem, label)", pem, label);
  const { kind, blocks } = keyFileKind(pem);
  const size = Buffer.byteLength(pem);
  if (kind === "private-key" || kind === "encrypted-private-key") {
    throw new ProvenanceError(
      "PROVENANCE_KEY_NOT_PUBLIC",
      `${label}: ${PUBLIC_EXPECTED}, ${foundText(kind, size)} (its contents are not shown); fix: derive the public half with \`openssl pkey -in <private.pem> -pubout -out key.pub\`, pass key.pub, and keep the private key off the consumer's machines`,
    );
  }
  if (kind === "certificate" || kind === "other-pem") {
    const fix = kind === "certificate" ? "extract its public key with `openssl x509 -in <cert.pem> -pubkey -noout > key.pub`" : "pass the public key file the release was attested with (`openssl pkey -in <private.pem> -pubout` prints it)";
    throw new ProvenanceError("PROVENANCE_KEY_NOT_PUBLIC", `${label}: ${PUBLIC_EXPECTED}, ${foundText(kind, size)}; fix: ${fix}`);
  }
  const fix = "fix: pass the public key the release was attested with (`openssl pkey -in <private.pem> -pubout -out key.pub` derives it)";
  if (kind !== "public-key") throw new ProvenanceError("PROVENANCE_KEY_INVALID", `${label}: ${PUBLIC_EXPECTED}, ${foundText(kind, size)}; ${fix}`);
  if (blocks !== 1) throw new ProvenanceError("PROVENANCE_KEY_INVALID", `${label}: ${PUBLIC_EXPECTED}, found ${blocks} PEM blocks; ${fix}`);
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: "pem" });
  } catch {
    throw new ProvenanceError("PROVENANCE_KEY_INVALID", `${label}: ${PUBLIC_EXPECTED}, found a PUBLIC KEY block that does not decode to a key; ${fix}`);
  }
  if (key.type !== "public") throw new ProvenanceError("PROVENANCE_KEY_NOT_PUBLIC", `${label}: ${PUBLIC_EXPECTED}, found a ${key.type} key; ${fix}`);
  if (!isP256Key(key)) {
    throw new ProvenanceError("PROVENANCE_KEY_UNSUPPORTED", `${label}: ${PUBLIC_EXPECTED}, found the public key of ${algorithmText(key)}; releases are attested with ECDSA P-256 (prime256v1) keys only; fix: pass the P-256 public key the release was attested with (\`openssl pkey -in <private.pem> -pubout -out key.pub\` derives it)`);
  }
  return key;
}

/**
 * A P-256 private key from PEM bytes (PKCS#8 or SEC1, unencrypted, one key).
 * @param label names the file in messages (`signing key keys/release.pem`).
 * @throws ProvenanceError `PROVENANCE_KEY_NOT_PRIVATE` (a public key or certificate),
 *   `PROVENANCE_KEY_INVALID` (empty, no PEM, does not decode), `PROVENANCE_KEY_UNSUPPORTED`
 *   (encrypted, another algorithm or curve); `PROVENANCE_KEY_INVALID` also when `pem` is neither bytes nor a
 *   string, or `label` is not a string.
 */
export function parseP256PrivateKeyPem(pem: Buffer | string, label = "signing key"): KeyObject {
  requirePemArgument("parseP256PrivateKeyPem(pem, label)", pem, label);
  const { kind } = keyFileKind(pem);
  const size = Buffer.byteLength(pem);
  if (kind === "public-key" || kind === "certificate") {
    throw new ProvenanceError("PROVENANCE_KEY_NOT_PRIVATE", `${label}: ${PRIVATE_EXPECTED}, ${foundText(kind, size)}; fix: pass the private key file the public key was derived from (generate one with \`openssl ecparam -name prime256v1 -genkey -noout | openssl pkey -out release.pem\`)`);
  }
  if (kind === "encrypted-private-key") {
    throw new ProvenanceError("PROVENANCE_KEY_UNSUPPORTED", `${label}: ${PRIVATE_EXPECTED}, ${foundText(kind, size)}; fix: write an unencrypted copy readable only by you (\`openssl pkey -in <encrypted.pem> -out release.pem\`, chmod 600)`);
  }
  const fix = "fix: pass a P-256 private key PEM (generate one with `openssl ecparam -name prime256v1 -genkey -noout | openssl pkey -out release.pem`)";
  if (kind !== "private-key") throw new ProvenanceError("PROVENANCE_KEY_INVALID", `${label}: ${PRIVATE_EXPECTED}, ${foundText(kind, size)}; ${fix}`);
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: "pem" });
  } catch {
    throw new ProvenanceError("PROVENANCE_KEY_INVALID", `${label}: ${PRIVATE_EXPECTED}, found a PRIVATE KEY block that does not decode to a key (its contents are not shown); ${fix}`);
  }
  if (!isP256Key(key)) throw new ProvenanceError("PROVENANCE_KEY_UNSUPPORTED", `${label}: ${PRIVATE_EXPECTED}, found ${algorithmText(key)}; ${fix}`);
  return key;
}

/**
 * Read a P-256 public key PEM file (a regular file of at most {@link MAX_KEY_FILE_BYTES}).
 * @param label names the file in messages (default `--key <path>`).
 * @throws ProvenanceError `PROVENANCE_KEY_INVALID` (missing, not a regular file, too large) and the codes of {@link parseP256PublicKeyPem}.
 */
export async function readP256PublicKeyFile(path: string, label = `--key ${path}`): Promise<KeyObject> {
  const found = await readRegularFile(path, { maxBytes: MAX_KEY_FILE_BYTES });
  if (found.kind !== "read") {
    const what = found.kind === "too-large" ? `a file of ${found.size} bytes (at most ${MAX_KEY_FILE_BYTES})` : found.kind === "failed" && found.code === "ENOENT" ? "no such file" : "something that is not a regular file";
    throw new ProvenanceError("PROVENANCE_KEY_INVALID", `${label}: ${PUBLIC_EXPECTED}, found ${what}`);
  }
  return parseP256PublicKeyPem(found.bytes, label);
}
