/**
 * Provenance test helpers: throwaway P-256 keys on disk, the statement facts
 * of a staged release fixture, and attestations signed and pushed as OCI
 * referrers (optionally doctored after signing), for the fail-closed cases.
 */
import { createHash, generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { canonicalJsonBytes } from "../../src/contract/canonical-json.js";
import { RELEASE_MANIFEST_FILE } from "../../src/contract/constants.js";
import { SIGSTORE_BUNDLE_V03_MEDIA_TYPE, provenanceStatement, type ProvenanceFacts } from "../../src/contract/provenance.js";
import { pushReferrer } from "../../src/oci/referrers.js";
import type { Descriptor, Target } from "../../src/oci/target.js";
import { publicKeyPem, signStatement, type ProvenanceSigner } from "../../release/provenance-sign.js";
import type { ReleaseFixture } from "./release-fixture.js";

/** A P-256 key pair written to `dir` (`<name>.pem` mode 0600, `<name>.pub`). */
export interface TestKey {
  privateKey: KeyObject;
  publicPem: string;
  keyFile: string;
  pubFile: string;
}

/** Make a throwaway P-256 key pair in `dir`. */
export async function makeTestKey(dir: string, name: string): Promise<TestKey> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const keyFile = join(dir, `${name}.pem`);
  const pubFile = join(dir, `${name}.pub`);
  await writeFile(keyFile, privateKey.export({ format: "pem", type: "pkcs8" }), { mode: 0o600 });
  const publicPem = publicKeyPem(privateKey);
  await writeFile(pubFile, publicPem);
  return { privateKey, publicPem, keyFile, pubFile };
}

/** The facts `release attest` records for a fixture staged at `bundleDigest` (local defaults). */
export async function fixtureFacts(fixture: ReleaseFixture, repository: string, bundleDigest: string, overrides: Partial<ProvenanceFacts> = {}): Promise<ProvenanceFacts> {
  const tested = await readFile(fixture.files.get(RELEASE_MANIFEST_FILE) as string);
  return {
    registryRepository: repository,
    bundleDigest,
    sourceRepository: "https://github.com/acme/demo-plugin",
    sourceSha: fixture.manifest.source_sha,
    tag: fixture.manifest.tag,
    workflow: { path: ".github/workflows/release.yml", ref: "refs/heads/main" },
    runId: fixture.manifest.evidence.workflow.run_id,
    runAttempt: fixture.manifest.evidence.workflow.run_attempt,
    testedManifestDigest: `sha256:${createHash("sha256").update(tested).digest("hex")}`,
    ...overrides,
  };
}

/**
 * Sign `facts` (or raw statement bytes) and push the bundle as a referrer of
 * `subject`; `doctor` may edit the Sigstore bundle JSON after signing.
 * @returns the referrer manifest descriptor.
 */
export async function pushAttestation(
  target: Target,
  subject: Descriptor,
  facts: ProvenanceFacts | Buffer,
  signer: ProvenanceSigner,
  doctor?: (bundle: Record<string, any>) => void,
): Promise<Descriptor> {
  const statement = Buffer.isBuffer(facts) ? facts : canonicalJsonBytes(provenanceStatement(facts));
  let bytes = await signStatement(statement, signer);
  if (doctor !== undefined) {
    const bundle = JSON.parse(bytes.toString("utf8")) as Record<string, any>;
    doctor(bundle);
    bytes = Buffer.from(JSON.stringify(bundle));
  }
  const pushed = await pushReferrer(target, subject, { artifactType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE, layerMediaType: SIGSTORE_BUNDLE_V03_MEDIA_TYPE, bytes });
  return pushed.descriptor;
}
