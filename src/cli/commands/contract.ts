/**
 * CLI wiring of the offline contract checks: `verify-manifest`, `verify-final-receipt`.
 * The contract modules (zod schemas) load inside the actions, so `--help` and
 * other commands start without them.
 */
import type { Command } from "commander";
import { printJson, printLine, runAction } from "../output.js";

interface VerifyManifestOptions {
  manifest: string;
  artifactDir: string;
  package?: string;
  repository?: string;
  json?: boolean;
}

interface VerifyReceiptOptions {
  receipt: string;
  expectReceiptReference?: string;
  package?: string;
  repository?: string;
  expectBundleReference?: string;
  json?: boolean;
}

/** Register `verify-manifest` and `verify-final-receipt`. */
export function registerContractCommands(program: Command): void {
  program
    .command("verify-manifest")
    .description("Verify a tested release-manifest.json against the npm tarball in an artifact directory (offline).")
    .requiredOption("--manifest <file>", "release-manifest.json to verify")
    .requiredOption("--artifact-dir <dir>", "directory holding exactly the one npm tarball")
    .option("--package <name>", "expected package name (default: the manifest's package)")
    .option("--repository <repo>", "expected registry repository (default: package.json hermesPluginKit.repository)")
    .option("--json", "print a JSON result instead of text")
    .action(async (opts: VerifyManifestOptions) => {
      process.exitCode = await runAction(opts.json === true, async () => {
        const { readReleaseJsonFile, verifyManifest } = await import("../../contract/manifest.js");
        const { resolveVerificationPolicy } = await import("../../contract/policy.js");
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
      });
    });

  program
    .command("verify-final-receipt")
    .description("Verify a published release-receipt.json offline; compare its registry_reference with the bundle reference you pinned.")
    .requiredOption("--receipt <file>", "release-receipt.json to verify")
    .option("--repository <repo>", "the only registry repository allowed (default: package.json hermesPluginKit.repository, else the repository of --expect-bundle-reference)")
    .option("--package <name>", "expected package name (default: the receipt's package; the repository and bundle reference are the pins)")
    .option("--expect-bundle-reference <ref>", "require registry_reference to equal this digest-pinned bundle reference")
    .option("--expect-receipt-reference <ref>", "require the receipt's own digest reference (its deterministic OCI receipt artifact) to equal this pinned reference")
    .option("--json", "print a JSON result instead of text")
    .action(async (opts: VerifyReceiptOptions) => {
      process.exitCode = await runAction(opts.json === true, async () => {
        const { readReleaseJsonBytesFile } = await import("../../contract/manifest.js");
        const { parseReleaseJson, verifyFinalReceiptBytes } = await import("../../contract/release-document.js");
        const { resolveVerificationPolicy } = await import("../../contract/policy.js");
        const { ReleaseContractError } = await import("../../contract/errors.js");
        const { receiptReferenceFor } = await import("../../fetch/receipt-reference.js");
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
      });
    });
}
