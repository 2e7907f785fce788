/**
 * The action of `verify-final-receipt` (declared in `contract.ts`, which loads this module only
 * when it runs). Offline: the receipt's bytes against the consumer's pins (`src/contract/policy.ts`
 * resolves them), and the receipt reference computed from those bytes. It loads no tarball reader
 * (no zlib or stream modules): `verify-manifest` is in `contract-actions.ts`.
 */
import { receiptReferenceOf } from "../../contract/artifact-document.js";
import { HermesPluginKitError, ReleaseContractError, type ReleaseContractErrorCode } from "../../contract/errors.js";
import { namingFile } from "../../contract/json-file.js";
import { policyForDocument, unpinnedRepository } from "../../contract/policy.js";
import { parseReleaseJson, receiptUnboundFields, verifyParsedFinalReceiptBytes, verifyReceiptReference, type FinalReceiptExpectations } from "../../contract/release-document.js";
import { readReleaseJsonBytesFile } from "../../contract/release-json-file.js";
import { parseReference } from "../../contract/reference.js";
import { consumerExpectations, gatePins, type ConsumerPolicyFlags } from "../consumer-policy.js";
import { printJson, printLine, printWarning } from "../output.js";

/** Flags of `verify-final-receipt`. */
export interface VerifyReceiptOptions extends ConsumerPolicyFlags {
  receipt: string;
  expectReceiptReference?: string;
  expectBundleReference?: string;
  json?: boolean;
}

/**
 * What each field {@link receiptUnboundFields} can list means to a reader of the warning; the warning names
 * exactly the fields that list returns (with `--json`, `unbound_fields`), in its order.
 */
const UNBOUND_FIELD_WORDS: Readonly<Record<string, string>> = {
  registry_reference: "the bundle it names (registry_reference)",
  source_sha: "its source (source_sha)",
  previous_version: "previous version (previous_version)",
  evidence: "gates and their evidence (evidence)",
  artifacts: "tarball digest (artifacts)",
};

/**
 * `value` (the value of `flag`, when given) is a digest-pinned reference: a tag is no pin. Checked before
 * any file is read.
 * @throws ReleaseContractError the code of `parseReference` (`REFERENCE_NOT_PINNED` for a tag,
 *   `REPOSITORY_INVALID`, ...), its message prefixed with the flag.
 */
function requirePinnedFlag(flag: string, value: string | undefined): void {
  if (value === undefined) return;
  try {
    parseReference(value);
  } catch (error) {
    if (!(error instanceof HermesPluginKitError)) throw error;
    throw new ReleaseContractError(error.code as ReleaseContractErrorCode, `${flag}: ${error.message}`, { cause: error });
  }
}

/** `verify-final-receipt`: the receipt bytes, the pinned bundle reference and (optionally) its own reference. */
export async function verifyReceiptAction(opts: VerifyReceiptOptions): Promise<void> {
  // Usage errors in the pins come before any file is read; a pinned reference must pin a digest (a tag is
  // refused as for every reference, with resolve as its fix), whichever of the two is given.
  await gatePins(opts.expectGate);
  requirePinnedFlag("--expect-receipt-reference", opts.expectReceiptReference);
  requirePinnedFlag("--expect-bundle-reference", opts.expectBundleReference);
  const bytes = await readReleaseJsonBytesFile(opts.receipt);
  if (opts.repository === undefined && opts.policy === undefined && opts.expectBundleReference === undefined && opts.expectReceiptReference === undefined) {
    const doc = namingFile(opts.receipt, () => parseReleaseJson(bytes));
    throw unpinnedRepository({ document: `receipt ${opts.receipt}`, repository: doc["registry_repository"], fix: "pass --expect-bundle-reference (the bundle reference you pinned), --repository, or --policy <package.json>" });
  }
  const expectations = await consumerExpectations(opts, opts.expectBundleReference ?? opts.expectReceiptReference);
  // A pinned receipt reference binds the file's bytes: bytes that are not the pinned receipt (edited after the
  // fetch, or another receipt) are refused as such before they are parsed or any field of them is judged.
  if (opts.expectReceiptReference !== undefined) verifyReceiptReference(bytes, expectations.repository, opts.expectReceiptReference);
  const doc = namingFile(opts.receipt, () => parseReleaseJson(bytes));
  const policy = policyForDocument(expectations, doc);
  const expect: FinalReceiptExpectations = {
    ...(opts.expectBundleReference === undefined ? {} : { bundleReference: opts.expectBundleReference }),
    ...(opts.expectReceiptReference === undefined ? {} : { receiptReference: opts.expectReceiptReference }),
  };
  const receipt = verifyParsedFinalReceiptBytes(bytes, doc, policy, expect);
  const receiptReference = receiptReferenceOf(policy.registryRepository, bytes);
  const artifact = receipt.artifacts[0];
  // Offline, only the receipt's own reference binds all of its fields (source, gates, tarball digest): a
  // pinned bundle reference binds registry_reference alone, and without either the receipt is checked
  // against the repository and itself. Say what was not checked, and what to pin.
  const unbound = receiptUnboundFields(expect);
  const receiptPinned = unbound.length === 0;
  if (!receiptPinned) {
    const checked = opts.expectBundleReference !== undefined ? "that it names the bundle you pinned and is consistent" : "the receipt's own consistency and its repository";
    printWarning(
      `the receipt's own reference was not pinned, so this checked ${checked}, not that these fields are the release's: ${unbound.map((field) => UNBOUND_FIELD_WORDS[field] ?? field).join(", ")}; to bind them, pin --expect-receipt-reference <the receipt reference the release published: release run's output or its GitHub Release body, not this file> (this file's own reference is ${receiptReference}: the published one must be exactly that)${unbound.includes("registry_reference") ? ", or --expect-bundle-reference <the bundle reference you pinned> for registry_reference alone" : ""}, or fetch the bundle, which is verified byte for byte`,
    );
  }
  if (opts.json === true) {
    printJson({ ok: true, package: receipt.package, version: receipt.version, registry_reference: receipt.registry_reference, receipt_reference: receiptReference, source_sha: receipt.source_sha, tarball: { filename: artifact?.filename, sha256: artifact?.sha256 }, receipt_pinned: receiptPinned, unbound_fields: unbound });
  } else {
    printLine(`verified ${receipt.package} ${receipt.version} receipt ${receiptReference}; bundle ${receipt.registry_reference}; ${artifact?.filename} sha256:${artifact?.sha256}`);
  }
}
