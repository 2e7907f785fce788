/**
 * The actions of `verify-manifest` and `verify-final-receipt` (declared in
 * `contract.ts`, which loads this module only when one of them runs). Offline:
 * the contract's checks against the consumer's pins (`src/contract/policy.ts`
 * resolves them), and the receipt reference computed from the receipt bytes.
 */
import { join } from "node:path";
import { ReleaseContractError } from "../../contract/errors.js";
import { readReleaseJsonBytesFile, readReleaseJsonFile, readTarballPackageJsonFile, verifyManifest } from "../../contract/manifest.js";
import { checkDeclaredGates, gatesDeclaredBy, policyForDocument, unpinnedRepository } from "../../contract/policy.js";
import { parseReleaseJson, verifyFinalReceiptBytes } from "../../contract/release-document.js";
import { namingFile } from "../../contract/json-file.js";
import { receiptReferenceFor } from "../../fetch/receipt-reference.js";
import { consumerExpectations, type ConsumerPolicyFlags } from "../consumer-policy.js";
import { printJson, printLine } from "../output.js";

/** Flags of `verify-manifest`. */
export interface VerifyManifestOptions extends ConsumerPolicyFlags {
  manifest: string;
  artifactDir: string;
  json?: boolean;
}

/** Flags of `verify-final-receipt`. */
export interface VerifyReceiptOptions extends ConsumerPolicyFlags {
  receipt: string;
  expectReceiptReference?: string;
  expectBundleReference?: string;
  json?: boolean;
}

/** `verify-manifest`: the tested manifest against the tarball in the artifact directory, and the gates its package.json declares. */
export async function verifyManifestAction(opts: VerifyManifestOptions): Promise<void> {
  const doc = await readReleaseJsonFile(opts.manifest);
  // The consumer's pin, never the manifest's own registry_repository (docs/fetch.md "Whose policy").
  if (opts.repository === undefined && opts.policy === undefined) {
    throw unpinnedRepository({ document: `tested manifest ${opts.manifest}`, repository: doc["registry_repository"], fix: "pass --repository <the registry repository you trust>, or --policy <package.json> naming hermesPluginKit.repository" });
  }
  const expectations = await consumerExpectations(opts);
  const policy = policyForDocument(expectations, doc);
  const manifest = await verifyManifest(doc, opts.artifactDir, policy);
  const artifact = manifest.artifacts[0];
  if (artifact !== undefined) {
    const origin = `package/package.json of ${artifact.filename}`;
    checkDeclaredGates(manifest.evidence, gatesDeclaredBy(await readTarballPackageJsonFile(join(opts.artifactDir, artifact.filename)), origin), origin);
  }
  if (opts.json === true) printJson({ ok: true, package: manifest.package, version: manifest.version, source_sha: manifest.source_sha, artifacts: manifest.artifacts });
  else printLine(`verified ${manifest.package} ${manifest.version} (${manifest.release_class}) ${artifact?.filename} sha256:${artifact?.sha256}`);
}

/** `verify-final-receipt`: the receipt bytes, the pinned bundle reference and (optionally) its own reference. */
export async function verifyReceiptAction(opts: VerifyReceiptOptions): Promise<void> {
  const bytes = await readReleaseJsonBytesFile(opts.receipt);
  const doc = namingFile(opts.receipt, () => parseReleaseJson(bytes));
  if (opts.repository === undefined && opts.policy === undefined && opts.expectBundleReference === undefined && opts.expectReceiptReference === undefined) {
    throw unpinnedRepository({ document: `receipt ${opts.receipt}`, repository: doc["registry_repository"], fix: "pass --expect-bundle-reference (the bundle reference you pinned), --repository, or --policy <package.json>" });
  }
  const expectations = await consumerExpectations(opts, opts.expectBundleReference ?? opts.expectReceiptReference);
  const policy = policyForDocument(expectations, doc);
  const receipt = verifyFinalReceiptBytes(bytes, policy, opts.expectBundleReference !== undefined ? { bundleReference: opts.expectBundleReference } : {});
  const receiptReference = receiptReferenceFor(policy.registryRepository, bytes);
  if (opts.expectReceiptReference !== undefined && opts.expectReceiptReference !== receiptReference) {
    throw new ReleaseContractError("RECEIPT_REFERENCE_MISMATCH", `this receipt's reference is ${receiptReference}, not the pinned ${opts.expectReceiptReference}`);
  }
  const artifact = receipt.artifacts[0];
  if (opts.json === true) {
    printJson({ ok: true, package: receipt.package, version: receipt.version, registry_reference: receipt.registry_reference, receipt_reference: receiptReference, source_sha: receipt.source_sha, tarball: { filename: artifact?.filename, sha256: artifact?.sha256 } });
  } else {
    printLine(`verified ${receipt.package} ${receipt.version} receipt ${receiptReference}; bundle ${receipt.registry_reference}; ${artifact?.filename} sha256:${artifact?.sha256}`);
  }
}
