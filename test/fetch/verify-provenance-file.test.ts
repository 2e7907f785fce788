/**
 * Local-key provenance end to end through the CLI's bundle-file form: a
 * statement signed with `@sigstore/sign` and a P-256 key (DSSE, no log)
 * verifies with the public key; a tampered payload, another key, another
 * subject, an oversized bundle, a bad trusted root and wrong flag shapes
 * each fail with their own code (or exit 2 for usage).
 */
import { generateKeyPairSync, sign as cryptoSign, type KeyObject } from "node:crypto";
import { execFileSync } from "node:child_process";
import { chmod, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJsonBytes } from "../../src/contract/canonical-json.js";
import { provenanceStatement, type ProvenanceFacts } from "../../src/contract/provenance.js";
import { parseSigningKey, publicKeyPem, readSigningKeyFile, signStatement } from "../../release/provenance-sign.js";
import { runCli } from "../support/cli.js";

const facts: ProvenanceFacts = {
  registryRepository: "oci-layout:/srv/store",
  bundleDigest: "sha256:" + "b".repeat(64),
  sourceRepository: "file:///srv/demo/origin.git",
  sourceSha: "a".repeat(40),
  tag: "v0.8.0",
  workflow: { path: ".github/workflows/release.yml", ref: "refs/heads/main" },
  runId: "12345",
  runAttempt: 1,
  testedManifestDigest: "sha256:" + "1".repeat(64),
};

let dir: string;
let key: KeyObject;
let bundle: Record<string, any>;
const files = { bundle: "", pub: "", otherPub: "", key: "" };

function p256(): KeyObject {
  return generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
}

async function writeBundle(name: string, value: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(value));
  return path;
}

async function verify(bundlePath: string, extra: string[], artifact = facts.bundleDigest) {
  return runCli(["verify-provenance", "--bundle", bundlePath, ...extra, artifact]);
}

function codeIn(stderr: string): string | undefined {
  return /\[([A-Z_]+)\]\n$/.exec(stderr)?.[1];
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hpk-provenance-file-"));
  key = p256();
  files.key = join(dir, "signing.pem");
  await writeFile(files.key, key.export({ format: "pem", type: "pkcs8" }), { mode: 0o600 });
  files.pub = join(dir, "signing.pub");
  await writeFile(files.pub, publicKeyPem(key));
  files.otherPub = join(dir, "other.pub");
  await writeFile(files.otherPub, publicKeyPem(p256()));
  const bytes = await signStatement(canonicalJsonBytes(provenanceStatement(facts)), { kind: "key", privateKey: await readSigningKeyFile(files.key) });
  bundle = JSON.parse(bytes.toString("utf8"));
  files.bundle = join(dir, "provenance.sigstore.json");
  await writeFile(files.bundle, bytes);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a statement signed with a local key", () => {
  it("is a v0.3 DSSE bundle with the key's hint and no log entries", () => {
    expect(bundle["mediaType"]).toBe("application/vnd.dev.sigstore.bundle.v0.3+json");
    expect(bundle["dsseEnvelope"]["payloadType"]).toBe("application/vnd.in-toto+json");
    expect(bundle["verificationMaterial"]["publicKey"]["hint"]).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(bundle["verificationMaterial"]["tlogEntries"] ?? []).toEqual([]);
  });

  it("verifies with the public key for the subject digest (exit 0, JSON result)", async () => {
    const result = await verify(files.bundle, ["--key", files.pub, "--json"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, artifactDigest: facts.bundleDigest, content: "dsse", signer: `key ${bundle["verificationMaterial"]["publicKey"]["hint"]}` });
  });

  it("a tampered DSSE payload fails: PROVENANCE_SIGNATURE_INVALID", async () => {
    const statement = JSON.parse(Buffer.from(bundle["dsseEnvelope"]["payload"], "base64").toString());
    statement.predicate.buildDefinition.resolvedDependencies[0].digest.gitCommit = "c".repeat(40);
    const tampered = structuredClone(bundle);
    tampered["dsseEnvelope"]["payload"] = Buffer.from(JSON.stringify(statement)).toString("base64");
    const result = await verify(await writeBundle("tampered.json", tampered), ["--key", files.pub]);
    expect(result.code).toBe(1);
    expect(codeIn(result.stderr)).toBe("PROVENANCE_SIGNATURE_INVALID");
  });

  it("verification with another key fails: PROVENANCE_KEY_MISMATCH", async () => {
    const result = await verify(files.bundle, ["--key", files.otherPub]);
    expect(result.code).toBe(1);
    expect(codeIn(result.stderr)).toBe("PROVENANCE_KEY_MISMATCH");
  });

  it("a signature by another key under our key's hint fails: PROVENANCE_SIGNATURE_INVALID", async () => {
    const forged = structuredClone(bundle);
    const pae = Buffer.concat([Buffer.from(`DSSEv1 28 application/vnd.in-toto+json ${Buffer.from(bundle["dsseEnvelope"]["payload"], "base64").length} `), Buffer.from(bundle["dsseEnvelope"]["payload"], "base64")]);
    forged["dsseEnvelope"]["signatures"][0]["sig"] = cryptoSign("sha256", pae, p256()).toString("base64");
    const result = await verify(await writeBundle("forged.json", forged), ["--key", files.pub]);
    expect(codeIn(result.stderr)).toBe("PROVENANCE_SIGNATURE_INVALID");
  });

  it("an artifact that is not a subject fails: PROVENANCE_SUBJECT_MISMATCH (digest and file forms)", async () => {
    const byDigest = await verify(files.bundle, ["--key", files.pub], "sha256:" + "f".repeat(64));
    expect(codeIn(byDigest.stderr)).toBe("PROVENANCE_SUBJECT_MISMATCH");
    // The statement's subjects are listed by digest (not "an array"), with what to check.
    expect(byDigest.stderr).toMatch(/the artifact's sha256:f{64} is not a subject of the signed statement \(its subjects: sha256:[0-9a-f]{64}\); the bundle attests other bytes: check that FILE_OR_DIGEST is the artifact this bundle was made for/);
    const file = join(dir, "artifact.txt");
    await writeFile(file, "not the bundle\n");
    const byFile = await verify(files.bundle, ["--key", files.pub], file);
    expect(codeIn(byFile.stderr)).toBe("PROVENANCE_SUBJECT_MISMATCH");
  });

  it("a key-signed bundle asked for a certificate identity fails: PROVENANCE_CERTIFICATE_REQUIRED", async () => {
    const result = await verify(files.bundle, ["--certificate-identity", "x", "--certificate-oidc-issuer", "https://token.actions.githubusercontent.com"]);
    expect(codeIn(result.stderr)).toBe("PROVENANCE_CERTIFICATE_REQUIRED");
  });

  it("a bundle over 1 MiB fails before parsing: PROVENANCE_ATTESTATION_TOO_LARGE", async () => {
    const large = join(dir, "large.json");
    await writeFile(large, Buffer.alloc(1024 * 1024 + 1, 0x20));
    expect(codeIn((await verify(large, ["--key", files.pub])).stderr)).toBe("PROVENANCE_ATTESTATION_TOO_LARGE");
  });

  it("malformed inputs fail with their codes: bundle, key, trusted root, artifact", async () => {
    expect(codeIn((await verify(await writeBundle("dup.json", {}), ["--key", files.pub])).stderr)).toBe("PROVENANCE_BUNDLE_INVALID");
    const dup = join(dir, "dupkey.json");
    await writeFile(dup, JSON.stringify(bundle).replace('"mediaType":', '"mediaType":"x","mediaType":'));
    expect(codeIn((await verify(dup, ["--key", files.pub])).stderr)).toBe("PROVENANCE_BUNDLE_INVALID");
    expect(codeIn((await verify(files.bundle, ["--key", files.bundle])).stderr)).toBe("PROVENANCE_KEY_INVALID");
    expect(codeIn((await verify(files.bundle, ["--key", files.pub, "--trusted-root", files.pub])).stderr)).toBe("PROVENANCE_TRUSTED_ROOT_INVALID");
    expect(codeIn((await verify(files.bundle, ["--key", files.pub], join(dir, "absent"))).stderr)).toBe("PROVENANCE_ARTIFACT_INVALID");
  });

  it("an artifact that is a FIFO, a link or a directory is PROVENANCE_ARTIFACT_INVALID from its opened descriptor, saying what was found (a FIFO never blocks the read)", async () => {
    const fifo = join(dir, "artifact.fifo");
    execFileSync("mkfifo", [fifo]);
    const link = join(dir, "artifact.link");
    await symlink(fifo, link);
    for (const [path, found] of [
      [fifo, "a FIFO, socket or device"],
      [link, "a symbolic link (ELOOP), which is not followed; pass the path of the file it points to"],
      [dir, "a directory"],
      [join(dir, "absent"), "no such file (ENOENT)"],
    ] as const) {
      const r = await verify(files.bundle, ["--key", files.pub], path);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`hermes-plugin-kit: artifact ${path} must be a regular file or sha256:<64 lowercase hex>, found ${found}; fix: pass the path of the artifact file itself (a link is not followed), or its sha256:<hex> (DSSE bundles) [PROVENANCE_ARTIFACT_INVALID]\n`);
    }
    // A regular file is read and hashed: not a subject of this statement, so the subject check answers.
    const regular = join(dir, "artifact.bin");
    await writeFile(regular, "not the bundle");
    expect(codeIn((await verify(files.bundle, ["--key", files.pub], regular)).stderr)).toBe("PROVENANCE_SUBJECT_MISMATCH");
  });

  it("a bundle path that is missing or no regular file: PROVENANCE_BUNDLE_INVALID saying what was found", async () => {
    for (const [path, found] of [
      [join(dir, "absent.json"), "no such file (ENOENT)"],
      [dir, "a directory, not a regular file; pass the path of the file itself"],
    ] as const) {
      const r = await verify(path, ["--key", files.pub]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`hermes-plugin-kit: bundle ${path}: expected a regular file, found ${found} [PROVENANCE_BUNDLE_INVALID]\n`);
    }
  });

  describe("every --key that expects a public key refuses other kinds by kind, never echoing the file", () => {
    const sec1 = (): string => key.export({ format: "pem", type: "sec1" }).toString();
    const kinds: [string, () => string, string][] = [
      ["a private key (PKCS#8)", () => key.export({ format: "pem", type: "pkcs8" }).toString(), "PROVENANCE_KEY_NOT_PUBLIC"],
      ["a private key (SEC1)", sec1, "PROVENANCE_KEY_NOT_PUBLIC"],
      ["a certificate", () => "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n", "PROVENANCE_KEY_NOT_PUBLIC"],
      ["garbage", () => "definitely not a key\n", "PROVENANCE_KEY_INVALID"],
      ["an empty file", () => "", "PROVENANCE_KEY_INVALID"],
      ["a P-384 public key", () => generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey.export({ format: "pem", type: "spki" }).toString(), "PROVENANCE_KEY_UNSUPPORTED"],
    ];
    const store = (): string => `oci-layout:${join(dir, "no-store")}`;
    const commands: [string, (keyFile: string) => string[]][] = [
      ["verify-provenance --bundle", (k) => ["verify-provenance", "--bundle", files.bundle, "--key", k, facts.bundleDigest]],
      ["verify-provenance --reference", (k) => ["verify-provenance", "--reference", `${store()}@${facts.bundleDigest}`, "--key", k]],
      ["fetch --provenance", (k) => ["fetch", "--reference", `${store()}@${facts.bundleDigest}`, "--output-dir", join(dir, "out"), "--provenance", "--key", k]],
      ["fleet add --provenance", (k) => ["fleet", "add", "--lock", join(dir, "fleet.lock.json"), "--receipt", join(dir, "absent-receipt.json"), "--provenance", "--key", k]],
    ];
    it.each(kinds.flatMap(([kind, text, code]) => commands.map(([command, args]) => [command, kind, text, code, args] as const)))("%s --key <%s>: %s", async (_command, kind, text, code, args) => {
      const keyFile = join(dir, `kind-${kind.replace(/[^a-z0-9]+/gi, "-")}.pem`);
      const body = text();
      await writeFile(keyFile, body, { mode: 0o600 });
      const result = await runCli(args(keyFile));
      expect(result.code).toBe(1);
      expect(codeIn(result.stderr)).toBe(code);
      expect(result.stderr).toContain("expected a P-256 public key PEM (-----BEGIN PUBLIC KEY-----)");
      for (const line of body.split("\n").filter((l) => l.length > 16 && !l.startsWith("-----"))) expect(result.stderr).not.toContain(line);
    });

    it("a private key: the message says how to derive the public half", async () => {
      const keyFile = join(dir, "private-for-message.pem");
      await writeFile(keyFile, sec1(), { mode: 0o600 });
      const result = await verify(files.bundle, ["--key", keyFile]);
      expect(result.stderr).toContain("found a PRIVATE key");
      expect(result.stderr).toContain("openssl pkey -in <private.pem> -pubout");
    });
  });

  it.each([
    ["no --bundle", ["verify-provenance", "--key", "k", "x"]],
    ["no artifact", ["verify-provenance", "--bundle", "b", "--key", "k"]],
    ["no signer", ["verify-provenance", "--bundle", "b", "x"]],
    ["--key and an identity", ["verify-provenance", "--bundle", "b", "--key", "k", "--certificate-identity", "i", "--certificate-oidc-issuer", "u", "x"]],
    ["an identity without issuer", ["verify-provenance", "--bundle", "b", "--certificate-identity", "i", "x"]],
  ])("usage error with %s: exit 2", async (_label, args) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
  });
});

describe("keyless signing failures", () => {
  it("PROVENANCE_SIGNING_FAILED never echoes the identity token", async () => {
    const secret = "not-a-jwt-" + "S3cr3t".repeat(4);
    let error: unknown;
    try {
      await signStatement(Buffer.from("{}"), { kind: "keyless", identityToken: async () => secret, fulcioUrl: "http://127.0.0.1:9", rekorUrl: "http://127.0.0.1:9" });
    } catch (e) {
      error = e;
    }
    expect((error as { code?: string }).code).toBe("PROVENANCE_SIGNING_FAILED");
    expect((error as Error).message).not.toContain(secret);
    expect((error as Error).message).toContain("<identity token>");
  });
});

describe("signing keys", () => {
  it("refuses a key file readable by others (PROVENANCE_KEY_INVALID), a public key (PROVENANCE_KEY_NOT_PRIVATE), another curve (PROVENANCE_KEY_UNSUPPORTED)", async () => {
    const open = join(dir, "open.pem");
    await writeFile(open, key.export({ format: "pem", type: "pkcs8" }));
    await chmod(open, 0o644);
    await expect(() => readSigningKeyFile(open)).toThrowWithCode("PROVENANCE_KEY_INVALID");
    await expect(() => parseSigningKey(generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }))).toThrowWithCode("PROVENANCE_KEY_UNSUPPORTED");
    await expect(() => parseSigningKey(publicKeyPem(key))).toThrowWithCode("PROVENANCE_KEY_NOT_PRIVATE");
    await expect(() => readSigningKeyFile(join(dir, "absent.pem"))).toThrowWithCode("PROVENANCE_KEY_INVALID");
    // A public key given as the signing key is named as such, not asked to be chmod 600.
    const openPub = join(dir, "open.pub");
    await writeFile(openPub, publicKeyPem(key));
    await chmod(openPub, 0o644);
    await expect(() => readSigningKeyFile(openPub)).toThrowWithCode("PROVENANCE_KEY_NOT_PRIVATE");
  });

  it("a signing key that is a FIFO, a link, a directory or too large is PROVENANCE_KEY_INVALID before any byte is read, saying what was found", async () => {
    const good = join(dir, "good.pem");
    await writeFile(good, key.export({ format: "pem", type: "pkcs8" }), { mode: 0o600 });
    expect(publicKeyPem(await readSigningKeyFile(good))).toBe(publicKeyPem(key));
    const fifo = join(dir, "key.fifo");
    execFileSync("mkfifo", [fifo]);
    const link = join(dir, "link.pem");
    await symlink(good, link);
    const large = join(dir, "large.pem");
    await writeFile(large, Buffer.alloc(64 * 1024 + 1, 0x41), { mode: 0o600 });
    for (const [path, found] of [[fifo, "a FIFO, socket or device"], [link, "a symbolic link"], [dir, "a directory"], [large, "a file of 65537 bytes"], [join(dir, "absent.pem"), "no such file"]] as const) {
      const error = await readSigningKeyFile(path).then(() => null, (e: unknown) => e as Error & { code?: string });
      expect(error?.code).toBe("PROVENANCE_KEY_INVALID");
      expect(error?.message).toBe(`signing key ${path} must be a regular file of at most 65536 bytes; found ${found}`);
    }
  });

  it("release attest --key PUBLIC is refused before anything is read from a registry: PROVENANCE_KEY_NOT_PRIVATE", async () => {
    const result = await runCli(["release", "attest", "--reference", `oci-layout:${join(dir, "no-store")}@${facts.bundleDigest}`, "--repository", `oci-layout:${join(dir, "no-store")}`, "--key", files.pub]);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).code).toBe("PROVENANCE_KEY_NOT_PRIVATE");
  });
});
