/**
 * The public key a release policy names (`hermesPluginKit.provenance.key`,
 * release/attest-key.ts) is read with the one key-file reader
 * (src/contract/key-pem.ts): a committed private key, certificate or key of
 * another curve is refused by kind, never derived from, and never shown.
 */
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { policySigningKey } from "../../release/attest-key.js";
import { createFixtureRepo, type FixtureRepo } from "../support/git-fixture.js";

const p256 = generateKeyPairSync("ec", { namedCurve: "P-256" });
const PUBLIC = p256.publicKey.export({ format: "pem", type: "spki" }).toString();
const PRIVATE = p256.privateKey.export({ format: "pem", type: "pkcs8" }).toString();
const P384 = generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey.export({ format: "pem", type: "spki" }).toString();

let repo: FixtureRepo;

beforeAll(async () => {
  repo = await createFixtureRepo({ origin: false, packageJson: { hermesPluginKit: { repository: "oci-layout:/srv/store", provenance: { key: "keys/release.pub" } } }, files: { "keys/release.pub": PUBLIC } });
}, 60_000);

afterAll(async () => {
  await repo?.cleanup();
});

describe("policySigningKey reads the committed key by kind", () => {
  it("a P-256 public key: its fingerprint", async () => {
    expect(await policySigningKey(repo.dir, await repo.head())).toMatchObject({ path: "keys/release.pub", fingerprint: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
  });

  it.each([
    ["a private key (called leaked)", PRIVATE, "PROVENANCE_KEY_NOT_PUBLIC", "treat that private key as leaked"],
    ["a P-384 public key", P384, "PROVENANCE_KEY_UNSUPPORTED", "curve secp384r1"],
    ["garbage", "not a key\n", "PROVENANCE_KEY_INVALID", "no PEM block"],
  ])("%s: %s", async (_label, text, code, says) => {
    const commit = await repo.commit(`chore: commit ${code}`, { "keys/release.pub": text });
    const error = (await policySigningKey(repo.dir, commit).catch((e: unknown) => e)) as { code?: string; message: string };
    expect(error.code).toBe(code);
    expect(error.message).toContain("keys/release.pub named by hermesPluginKit.provenance.key");
    expect(error.message).toContain(says);
    for (const line of text.split("\n").filter((l) => l.length > 16 && !l.startsWith("-----"))) expect(error.message).not.toContain(line);
  });
});
