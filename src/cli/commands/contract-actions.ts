/**
 * The action of `verify-manifest` (declared in `contract.ts`, which loads this
 * module only when it runs; `verify-final-receipt` is in `receipt-action.ts`,
 * which needs no tarball reader). Offline: the contract's checks against the
 * consumer's pins (`src/contract/policy.ts` resolves them).
 */
import { readReleaseJsonFile, verifyManifestDist } from "../../contract/manifest.js";
import { checkDeclaredGates, gatesDeclaredBy, policyForDocument, unpinnedRepository } from "../../contract/policy.js";
import { consumerExpectations, gatePins, type ConsumerPolicyFlags } from "../consumer-policy.js";
import { printJson, printLine, printWarning } from "../output.js";

/** Flags of `verify-manifest`. */
export interface VerifyManifestOptions extends ConsumerPolicyFlags {
  manifest: string;
  artifactDir: string;
  json?: boolean;
}

/** `verify-manifest`: the tested manifest against the tarball in the artifact directory, and the gates its package.json declares. */
export async function verifyManifestAction(opts: VerifyManifestOptions): Promise<void> {
  // Usage errors in the pins come before any file is read.
  await gatePins(opts.expectGate);
  const doc = await readReleaseJsonFile(opts.manifest);
  // The consumer's pin, never the manifest's own registry_repository (docs/fetch.md "Whose policy").
  if (opts.repository === undefined && opts.policy === undefined) {
    throw unpinnedRepository({ document: `tested manifest ${opts.manifest}`, repository: doc["registry_repository"], fix: "pass --repository <the registry repository you trust>, or --policy <package.json> naming hermesPluginKit.repository" });
  }
  const expectations = await consumerExpectations(opts);
  const policy = policyForDocument(expectations, doc);
  const { manifest, tarball } = await verifyManifestDist(doc, opts.artifactDir, policy);
  const artifact = manifest.artifacts[0];
  if (artifact !== undefined) {
    const origin = `package/package.json of ${artifact.filename}`;
    checkDeclaredGates(manifest.evidence, gatesDeclaredBy(tarball.packageJson, origin), origin);
  }
  // The tarball binds its own bytes, name, version and declared gates; the manifest's source_sha, gate evidence
  // and workflow run are its own claims, bound only by what signs or pins it (the bundle digest, an attestation).
  printWarning(
    `this checked the tarball against the manifest (bytes, name, version, the gates its package.json declares) and the manifest's own consistency; its source_sha (${manifest.source_sha}), previous_version, gate evidence (commands, MCP SDK version) and workflow run are the manifest's claims, which no file here binds: to trust them, fetch the release by its pinned bundle reference (hermes-plugin-kit fetch, byte for byte) or verify its attestation (hermes-plugin-kit verify-provenance)`,
  );
  if (opts.json === true) printJson({ ok: true, package: manifest.package, version: manifest.version, source_sha: manifest.source_sha, artifacts: manifest.artifacts, claims_bound: false });
  else printLine(`verified ${manifest.package} ${manifest.version} (${manifest.release_class}) ${artifact?.filename} sha256:${artifact?.sha256}`);
}
