/**
 * The actions of `verify-manifest` and `verify-final-receipt` (declared in
 * `contract.ts`, which loads this module only when one of them runs). Offline:
 * the contract's checks, and the receipt reference computed from the receipt bytes.
 */
import { ReleaseContractError } from "../../contract/errors.js";
import { readReleaseJsonBytesFile, readReleaseJsonFile, verifyManifest } from "../../contract/manifest.js";
import { resolveVerificationPolicy } from "../../contract/policy.js";
import { parseReleaseJson, verifyFinalReceiptBytes } from "../../contract/release-document.js";
import { receiptReferenceFor } from "../../fetch/receipt-reference.js";
import { printJson, printLine } from "../output.js";
import type { VerifyManifestOptions, VerifyReceiptOptions } from "./contract.js";

/** `verify-manifest`: the tested manifest against the tarball in the artifact directory. */
export async function verifyManifestAction(opts: VerifyManifestOptions): Promise<void> {
  const doc = await readReleaseJsonFile(opts.manifest);
  const policy = await resolveVerificationPolicy(process.cwd(), {
    package: opts.package ?? (typeof doc["package"] === "string" ? doc["package"] : undefined),
    repository: opts.repository,
    fallbackRepository: typeof doc["registry_repository"] === "string" ? doc["registry_repository"] : undefined,
  });
  const manifest = await verifyManifest(doc, opts.artifactDir, policy);
  const artifact = manifest.artifacts[0];
  if (opts.json === true) printJson({ ok: true, package: manifest.package, version: manifest.version, source_sha: manifest.source_sha, artifacts: manifest.artifacts });
  else printLine(`verified ${manifest.package} ${manifest.version} (${manifest.release_class}) ${artifact?.filename} sha256:${artifact?.sha256}`);
}

/** `verify-final-receipt`: the receipt bytes, the pinned bundle reference and (optionally) its own reference. */
export async function verifyReceiptAction(opts: VerifyReceiptOptions): Promise<void> {
  const bytes = await readReleaseJsonBytesFile(opts.receipt);
  const doc = parseReleaseJson(bytes);
  const pinnedRepo = opts.expectBundleReference?.slice(0, Math.max(0, opts.expectBundleReference.lastIndexOf("@")));
  const policy = await resolveVerificationPolicy(process.cwd(), {
    package: opts.package ?? (typeof doc["package"] === "string" ? doc["package"] : undefined),
    repository: opts.repository,
    fallbackRepository: pinnedRepo !== undefined && pinnedRepo.length > 0 ? pinnedRepo : undefined,
  });
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
