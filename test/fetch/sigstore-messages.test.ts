/**
 * The refusals of one Sigstore bundle say what was expected, what was found and the fix: a bundle that
 * breaks the bundle spec names its fields (0 or 2 DSSE signatures), a key mismatch names both keys' hints.
 */
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { describe, expect, it } from "vitest";
import { canonicalJsonBytes } from "../../src/contract/canonical-json.js";
import { provenanceStatement, type ProvenanceFacts } from "../../src/contract/provenance.js";
import { embeddedTrustedRoot } from "../../src/fetch/sigstore-trust.js";
import { parseSigstoreBundle, publicKeyHint, verifySigstoreBundle } from "../../src/fetch/sigstore-verify.js";
import { publicKeyPem, signStatement } from "../../release/provenance-sign.js";
import { createPublicKey } from "node:crypto";

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

const p256 = (): KeyObject => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;

async function signed(key: KeyObject): Promise<Record<string, any>> {
  return JSON.parse((await signStatement(canonicalJsonBytes(provenanceStatement(facts)), { kind: "key", privateKey: key })).toString("utf8"));
}

function failure(fn: () => unknown): { code?: string; message: string } {
  try {
    fn();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error("expected a refusal");
}

describe("Sigstore bundle refusals", () => {
  it("a DSSE envelope with 0 or 2 signatures: PROVENANCE_BUNDLE_INVALID says how many and the rule, with the fix", async () => {
    const bundle = await signed(p256());
    expect(parseSigstoreBundle(Buffer.from(JSON.stringify(bundle)))).toBeTruthy();
    for (const count of [0, 2]) {
      const broken = structuredClone(bundle);
      broken["dsseEnvelope"]["signatures"] = Array.from({ length: count }, () => bundle["dsseEnvelope"]["signatures"][0]);
      const problem = failure(() => parseSigstoreBundle(Buffer.from(JSON.stringify(broken)), "bundle x.json"));
      expect(problem.code).toBe("PROVENANCE_BUNDLE_INVALID");
      expect(problem.message).toContain(
        `bundle x.json is not a valid Sigstore bundle: expected the shape of the Sigstore bundle spec (protobuf-specs sigstore_bundle.proto, as @sigstore/bundle checks it), found dsseEnvelope.signatures holding ${count} signatures (a bundle's DSSE envelope carries exactly one); fix: use the bundle exactly as the Sigstore client wrote it`,
      );
      expect(problem.message).not.toMatch(/: invalid bundle$/);
    }
    const noMedia = structuredClone(bundle);
    noMedia["mediaType"] = "application/json";
    expect(failure(() => parseSigstoreBundle(Buffer.from(JSON.stringify(noMedia)))).message).toContain('found mediaType "application/json" (expected application/vnd.dev.sigstore.bundle.v0.3+json');
  });

  it("signed by another key: PROVENANCE_KEY_MISMATCH names both hints and the fix", async () => {
    const signer = p256();
    const pinned = createPublicKey(publicKeyPem(p256()));
    const bundle = parseSigstoreBundle(Buffer.from(JSON.stringify(await signed(signer))));
    const problem = failure(() => verifySigstoreBundle(bundle, { trust: embeddedTrustedRoot(), signer: { kind: "key", key: pinned }, artifact: { sha256: "b".repeat(64) } }));
    expect(problem.code).toBe("PROVENANCE_KEY_MISMATCH");
    expect(problem.message).toBe(
      `expected a bundle signed by the key given (--key or the policy's key, hint ${publicKeyHint(pinned)}; a hint is the base64 SHA-256 of the public key's DER), found one signed by key hint ${publicKeyHint(createPublicKey(signer))}; fix: pass the public key the release's publisher attests with, or, if you pinned the right key, do not trust this attestation: another key signed it`,
    );
  });
});
