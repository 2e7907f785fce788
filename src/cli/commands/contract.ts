/**
 * CLI wiring of the offline contract checks: `verify-manifest`,
 * `verify-final-receipt`. Expectations come from the consumer's pins
 * (`--repository`, `--package`, `--expect-gate`, `--expect-bundle-reference`)
 * or an explicit `--policy` file, never from the current directory
 * (docs/architecture.md, "Policy: where expectations come from"). The actions live in
 * `contract-actions.ts` (verify-manifest) and `receipt-action.ts` (verify-final-receipt, without
 * the tarball reader), loaded when one runs; `--help` and other commands start without
 * initialising the contract modules and zod (scripts/bundle-cli.mjs).
 */
import type { Command } from "commander";
import { addGatePolicyOptions } from "../consumer-policy.js";
import { runAction } from "../output.js";
import type { VerifyManifestOptions } from "./contract-actions.js";
import type { VerifyReceiptOptions } from "./receipt-action.js";

/** Register `verify-manifest` and `verify-final-receipt`. */
export function registerContractCommands(program: Command): void {
  const verifyManifestCommand = program
    .command("verify-manifest")
    .description("Verify a tested release-manifest.json against the npm tarball in an artifact directory (offline).")
    .requiredOption("--manifest <file>", "release-manifest.json to verify")
    .requiredOption("--artifact-dir <dir>", "directory holding exactly the one npm tarball")
    .option("--package <name>", "expected package name (default: the manifest's package)")
    .option("--repository <repo>", "the registry repository you trust; required unless --policy names one (the manifest's own registry_repository is never the expectation)")
    .option("--json", "print a JSON result instead of text");
  addGatePolicyOptions(verifyManifestCommand).action(async (opts: VerifyManifestOptions) => {
    process.exitCode = await runAction(opts.json === true, async () => (await import("./contract-actions.js")).verifyManifestAction(opts));
  });

  const verifyReceiptCommand = program
    .command("verify-final-receipt")
    .description("Verify a published release-receipt.json offline against what you pinned; compare its registry_reference with the bundle reference you pinned.")
    .requiredOption("--receipt <file>", "release-receipt.json to verify")
    .option("--repository <repo>", "the only registry repository allowed (default: the repository of --expect-bundle-reference)")
    .option("--package <name>", "expected package name (default: the receipt's package; the repository and bundle reference are the pins)")
    .option("--expect-bundle-reference <ref>", "require registry_reference to equal this digest-pinned bundle reference")
    .option("--expect-receipt-reference <ref>", "require the receipt's own digest reference (its deterministic OCI receipt artifact) to equal this pinned reference")
    .option("--json", "print a JSON result instead of text");
  addGatePolicyOptions(verifyReceiptCommand).action(async (opts: VerifyReceiptOptions) => {
    process.exitCode = await runAction(opts.json === true, async () => (await import("./receipt-action.js")).verifyReceiptAction(opts));
  });
}
