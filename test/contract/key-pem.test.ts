/**
 * The provenance key files (src/contract/key-pem.ts): a public key is
 * expected where a verifier reads one, a private key where a signer reads one;
 * every other kind is refused by kind with its own code, and no message
 * carries any of the file's bytes.
 */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyFileKind, parseP256PrivateKeyPem, parseP256PublicKeyPem, readP256PublicKeyFile } from "../../src/contract/key-pem.js";
import { ProvenanceError } from "../../src/contract/provenance-error.js";
import { resolveProvenancePolicy } from "../../src/contract/provenance-policy.js";

const p256 = generateKeyPairSync("ec", { namedCurve: "P-256" });
const pem = (key: KeyObject, type: "pkcs8" | "sec1" | "spki") => key.export({ format: "pem", type } as never).toString();

// A self-signed certificate's PEM framing is all the classifier reads; the body need not decode.
const CERTIFICATE = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2VydGlmaWNhdGVGaXh0dXJlMAoGCCqGSM49BAMC\n-----END CERTIFICATE-----\n";
const PUBLIC = pem(p256.publicKey, "spki");
const PKCS8 = pem(p256.privateKey, "pkcs8");
const SEC1 = pem(p256.privateKey, "sec1");
const ENCRYPTED = p256.privateKey.export({ format: "pem", type: "pkcs8", cipher: "aes-256-cbc", passphrase: "pw" }).toString();
const P384_PUBLIC = pem(generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey, "spki");
const P384_PRIVATE = pem(generateKeyPairSync("ec", { namedCurve: "P-384" }).privateKey, "pkcs8");
const ED25519_PUBLIC = pem(generateKeyPairSync("ed25519").publicKey, "spki");
const RSA_PUBLIC = pem(generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey, "spki");

/** The base64 body lines of a PEM: none of them may appear in a message. */
function secretLines(text: string): string[] {
  return text.split("\n").filter((line) => line.length > 16 && !line.startsWith("-----"));
}

function errorOf(fn: () => unknown): ProvenanceError {
  try {
    fn();
  } catch (error) {
    return error as ProvenanceError;
  }
  throw new Error("expected a throw");
}

describe("keyFileKind", () => {
  it.each([
    ["", "empty"],
    ["  \n", "empty"],
    ["garbage", "not-pem"],
    ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI x@y", "not-pem"],
    [PUBLIC, "public-key"],
    [PKCS8, "private-key"],
    [SEC1, "private-key"],
    [ENCRYPTED, "encrypted-private-key"],
    [CERTIFICATE, "certificate"],
    [PUBLIC + PKCS8, "private-key"],
    ["-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" + SEC1, "private-key"],
    ["-----BEGIN PGP MESSAGE-----\nx\n-----END PGP MESSAGE-----\n", "other-pem"],
  ])("%#: %s", (text, kind) => {
    expect(keyFileKind(text).kind).toBe(kind);
  });
});

describe("parseP256PublicKeyPem", () => {
  it("takes a P-256 SPKI public key", () => {
    expect(parseP256PublicKeyPem(PUBLIC).type).toBe("public");
    expect(parseP256PublicKeyPem(Buffer.from(PUBLIC)).asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
  });

  it.each([
    ["a PKCS#8 private key", PKCS8, "PROVENANCE_KEY_NOT_PUBLIC", "found a PRIVATE key"],
    ["a SEC1 private key", SEC1, "PROVENANCE_KEY_NOT_PUBLIC", "found a PRIVATE key"],
    ["an encrypted private key", ENCRYPTED, "PROVENANCE_KEY_NOT_PUBLIC", "found an encrypted private key"],
    ["a public key followed by its private key", PUBLIC + PKCS8, "PROVENANCE_KEY_NOT_PUBLIC", "found a PRIVATE key"],
    ["a certificate", CERTIFICATE, "PROVENANCE_KEY_NOT_PUBLIC", "found an X.509 certificate"],
    ["another PEM block", "-----BEGIN PGP MESSAGE-----\nx\n-----END PGP MESSAGE-----\n", "PROVENANCE_KEY_NOT_PUBLIC", "not a key"],
    ["an empty file", "", "PROVENANCE_KEY_INVALID", "found an empty file"],
    ["garbage", "not a key at all", "PROVENANCE_KEY_INVALID", "no PEM block"],
    ["two public keys", PUBLIC + PUBLIC, "PROVENANCE_KEY_INVALID", "found 2 PEM blocks"],
    ["a PUBLIC KEY block that does not decode", "-----BEGIN PUBLIC KEY-----\nd3JvbmdrZXk=\n-----END PUBLIC KEY-----\n", "PROVENANCE_KEY_INVALID", "does not decode"],
    ["a P-384 public key", P384_PUBLIC, "PROVENANCE_KEY_UNSUPPORTED", "curve secp384r1"],
    ["an Ed25519 public key", ED25519_PUBLIC, "PROVENANCE_KEY_UNSUPPORTED", "ED25519"],
    ["an RSA public key", RSA_PUBLIC, "PROVENANCE_KEY_UNSUPPORTED", "RSA"],
  ])("refuses %s: %s", (_label, text, code, found) => {
    const error = errorOf(() => parseP256PublicKeyPem(text, "--key k.pem"));
    expect(error).toBeInstanceOf(ProvenanceError);
    expect(error.code).toBe(code);
    expect(error.message).toContain("--key k.pem: expected a P-256 public key PEM (-----BEGIN PUBLIC KEY-----)");
    expect(error.message).toContain(found);
    expect(error.message).toContain("openssl");
    for (const line of secretLines(text)) expect(error.message).not.toContain(line);
  });

  it("a private key names the fix: derive the public half", () => {
    expect(errorOf(() => parseP256PublicKeyPem(SEC1)).message).toContain("openssl pkey -in <private.pem> -pubout");
  });

  it("the library policy refuses a private key given as its key (never derives the public half)", () => {
    expect(() => resolveProvenancePolicy({ key: PKCS8 })).toThrowWithCode(ProvenanceError, "PROVENANCE_KEY_NOT_PUBLIC");
    expect(() => resolveProvenancePolicy({ key: P384_PUBLIC })).toThrowWithCode(ProvenanceError, "PROVENANCE_KEY_UNSUPPORTED");
    expect(resolveProvenancePolicy({ key: PUBLIC }).kind).toBe("key");
  });
});

describe("readP256PublicKeyFile", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "hpk-key-pem-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads a public key file; refuses a missing one, a directory and a private key file", async () => {
    await writeFile(join(dir, "pub.pem"), PUBLIC);
    await writeFile(join(dir, "priv.pem"), PKCS8, { mode: 0o600 });
    expect((await readP256PublicKeyFile(join(dir, "pub.pem"))).type).toBe("public");
    await expect(() => readP256PublicKeyFile(join(dir, "absent.pem"))).toThrowWithCode(ProvenanceError, "PROVENANCE_KEY_INVALID");
    await expect(() => readP256PublicKeyFile(dir)).toThrowWithCode(ProvenanceError, "PROVENANCE_KEY_INVALID");
    await expect(() => readP256PublicKeyFile(join(dir, "priv.pem"))).toThrowWithCode(ProvenanceError, "PROVENANCE_KEY_NOT_PUBLIC");
  });
});

describe("parseP256PrivateKeyPem", () => {
  it("takes PKCS#8 and SEC1 P-256 private keys", () => {
    expect(parseP256PrivateKeyPem(PKCS8).type).toBe("private");
    expect(parseP256PrivateKeyPem(SEC1).type).toBe("private");
  });

  it.each([
    ["a public key", PUBLIC, "PROVENANCE_KEY_NOT_PRIVATE"],
    ["a certificate", CERTIFICATE, "PROVENANCE_KEY_NOT_PRIVATE"],
    ["an encrypted private key", ENCRYPTED, "PROVENANCE_KEY_UNSUPPORTED"],
    ["a P-384 private key", P384_PRIVATE, "PROVENANCE_KEY_UNSUPPORTED"],
    ["an empty file", "", "PROVENANCE_KEY_INVALID"],
    ["garbage", "xyz", "PROVENANCE_KEY_INVALID"],
    ["a PRIVATE KEY block that does not decode", "-----BEGIN PRIVATE KEY-----\nc2VjcmV0c2VjcmV0c2VjcmV0\n-----END PRIVATE KEY-----\n", "PROVENANCE_KEY_INVALID"],
  ])("refuses %s: %s", (_label, text, code) => {
    const error = errorOf(() => parseP256PrivateKeyPem(text, "signing key k.pem"));
    expect(error.code).toBe(code);
    expect(error.message).toContain("signing key k.pem: expected a P-256 private key PEM");
    for (const line of secretLines(text)) expect(error.message).not.toContain(line);
  });
});
