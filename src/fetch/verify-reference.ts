/**
 * `verify-provenance --reference R [--receipt F]`: the provenance of a
 * digest-pinned release bundle in its repository, bound to what the release
 * says about itself (docs/provenance.md), without downloading
 * the payload:
 *
 * 1. the reference is pinned to the repository, the privacy gate passes and
 *    the bundle manifest passes every structural check (`inspectRelease`);
 * 2. its `release-manifest.json` layer (at most 1 MiB, verified while it
 *    streams) is read strictly and checked as a tested manifest of this
 *    repository (schema, identity, evidence; the gate commands are checked only
 *    against `gatesFor`, since gate policy is `fetch`'s and `verify-manifest`'s);
 *    its digest is the tested manifest digest the statement must record;
 * 3. with `--receipt`, the published receipt is verified offline (canonical
 *    bytes, `registry_reference` = R) and the statement must agree with it too;
 * 4. the attestations are found and verified (`verifyReleaseProvenance`).
 */
import { OCI_MANIFEST_MEDIA_TYPE, RELEASE_MANIFEST_FILE } from "../contract/constants.js";
import { describeValue, isNpmPackageName } from "../contract/grammar.js";
import { checkReceiptOfBundle, readReleaseJsonBytesFile } from "../contract/manifest.js";
import { DEFAULT_GATE_COMMANDS, type GateCommands, type ReleasePolicy } from "../contract/policy.js";
import { bindingFromReceipt, bindingFromTestedManifest, checkReleaseBinding } from "../contract/provenance.js";
import { parseReleaseJson, verifyFinalReceiptBytes, verifyTestedManifest } from "../contract/release-document.js";
import { readAllBounded } from "../oci/descriptor.js";
import { FetchError } from "./errors.js";
import { inspectRelease, type DownloadOptions } from "./fetch.js";
import { DOWNLOAD_OPTION_KEYS, VERIFY_REFERENCE_OPTION_KEYS, pickOptions, requireKnownOptions, requireOptionKinds, requireOptionsObject, requirePackageName, requireProvenanceCheck, requireStringOption, snapshotEntryOptions } from "./entry-options.js";
import { ProvenanceError } from "../contract/provenance-error.js";
import { provenanceSummary, verifyReleaseProvenance, type ProvenanceCheckOptions, type ProvenanceSummary } from "./provenance.js";
import { namingFile } from "../contract/json-file.js";
import { bundleLayers } from "./receipt-bundle.js";

/** Options of {@link verifyReferenceProvenance}. */
export interface VerifyReferenceOptions extends Pick<DownloadOptions, "reference" | "repository" | "plainHttp" | "credentials" | "env" | "openTarget" | "requirePrivate"> {
  provenance: ProvenanceCheckOptions;
  /** A published `release-receipt.json` the statement must also agree with. */
  receipt?: string;
  /** Expected package (default: the one the tested manifest names). */
  package?: string;
  /** Gate commands the tested manifest must record (default: `gatesFor(package)`, else whatever it records: gate policy is fetch's). */
  gatesFor?: (packageName: string) => GateCommands | undefined;
}

/** What `verify-provenance --reference` prints with `--json`. */
export interface VerifyReferenceResult extends ProvenanceSummary {
  ok: true;
  reference: string;
  version: string;
  tag: string;
  /** Whether a receipt was bound too. */
  receipt: boolean;
}

/** The gate commands the tested manifest records (provenance does not judge gate policy; fetch and verify-manifest do). */
function recordedGates(doc: Record<string, unknown>): GateCommands {
  const evidence = doc["evidence"] as Record<string, { command?: unknown } | undefined> | undefined;
  const gates = { ...DEFAULT_GATE_COMMANDS };
  for (const gate of Object.keys(gates) as Array<keyof GateCommands>) {
    const command = evidence?.[gate]?.command;
    if (typeof command === "string") gates[gate] = command;
  }
  return gates;
}

function policyFor(doc: Record<string, unknown>, packageName: unknown, repository: string, gatesFor: VerifyReferenceOptions["gatesFor"]): ReleasePolicy {
  if (!isNpmPackageName(packageName)) throw new FetchError("FETCH_PACKAGE_INVALID", `the release names package ${describeValue(packageName)}, which is not an npm package name`);
  return { package: packageName, registryRepository: repository, gates: gatesFor?.(packageName) ?? recordedGates(doc) };
}

/**
 * `verify-provenance --reference` (see the module comment).
 * @throws the codes of `inspectRelease` (reference, privacy, manifest), of the tested manifest
 *   and receipt checks, OciError from the transfer, and every code of `verifyReleaseProvenance`.
 *   Before any read: ReleaseContractError `POLICY_INVALID` (options not an object, an option it does not read,
 *   e.g. a misspelt `receipt` that would bind nothing, `receipt` not a non-empty string, `package` not an npm
 *   package name, `gatesFor` not a function, a wrongly typed transport option); ProvenanceError
 *   `PROVENANCE_POLICY_INVALID` (`provenance` missing, or not `{ policy, trustedRoot? }`).
 */
export async function verifyReferenceProvenance(given: VerifyReferenceOptions): Promise<VerifyReferenceResult> {
  const call = "verifyReferenceProvenance";
  requireOptionsObject(given, call, "{ reference, provenance, repository?, receipt?, package?, gatesFor?, plainHttp?, credentials?, ... }");
  const options = snapshotEntryOptions(given, call);
  requireKnownOptions(options, VERIFY_REFERENCE_OPTION_KEYS, call);
  requireStringOption(options, "receipt", call, "the published release-receipt.json file to bind", true);
  requireOptionKinds(options, { gatesFor: "function" }, call);
  if (options.package !== undefined) requirePackageName(options.package, `${call} option package`);
  if (options.provenance === undefined) {
    throw new ProvenanceError("PROVENANCE_POLICY_INVALID", `${call} needs option provenance { policy, trustedRoot? }: who may have signed the release (a key, or owner/repo/workflow), found nothing`);
  }
  requireProvenanceCheck(options.provenance, call);
  const { pinned, target, manifest } = await inspectRelease({
    ...pickOptions(options, DOWNLOAD_OPTION_KEYS),
    reference: options.reference,
    expect: "bundle",
    ...(options.package === undefined ? {} : { policy: { package: options.package } }),
  });
  const layer = manifest.layers.find((l) => l.title === RELEASE_MANIFEST_FILE);
  if (layer === undefined) throw new FetchError("FETCH_LAYER_INVENTORY", `bundle ${pinned.reference} has no ${RELEASE_MANIFEST_FILE} layer`);
  const bytes = await readAllBounded(await target.fetch(layer.descriptor), layer.descriptor.size, `${RELEASE_MANIFEST_FILE} of ${pinned.reference}`);
  const doc = parseReleaseJson(bytes);
  const repository = pinned.repository.repository;
  const policy = policyFor(doc, options.package ?? doc["package"], repository, options.gatesFor);
  const tested = verifyTestedManifest(doc, policy);
  const subject = { mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: manifest.digest, size: manifest.size };
  const verified = await verifyReleaseProvenance(target, repository, subject, bindingFromTestedManifest(tested, layer.descriptor.digest, manifest.digest), options.provenance);
  if (options.receipt !== undefined) {
    const receiptBytes = await readReleaseJsonBytesFile(options.receipt);
    // Gates pinned by the caller bind the receipt too; without them the bundle's recorded commands are no pin
    // (GATE_COMMAND_MISMATCH would advise pinning a forged command): the receipt must then be exactly the one
    // this bundle makes, gates included (checkReceiptOfBundle: RECEIPT_BUNDLE_MISMATCH).
    const receiptPolicy = options.gatesFor === undefined ? { ...policy, gates: {} } : policy;
    const receipt = namingFile(options.receipt, () => verifyFinalReceiptBytes(receiptBytes, receiptPolicy, { bundleReference: pinned.reference }));
    checkReleaseBinding(verified.facts, bindingFromReceipt(receipt));
    // Every other field too (the tarball's records, the gates): exactly the receipt this bundle makes.
    checkReceiptOfBundle(receipt, tested, pinned.reference, bundleLayers(manifest.layers), `receipt ${options.receipt}`);
  }
  return { ok: true, reference: pinned.reference, version: tested.version, tag: tested.tag, receipt: options.receipt !== undefined, ...provenanceSummary(verified) };
}
