/**
 * CLI wiring of `verify-provenance` (logic in `src/fetch`). Two forms:
 *
 * - `--bundle FILE (--certificate-identity ID --certificate-oidc-issuer URL | --key PEM)
 *   [--trusted-root FILE] FILE_OR_DIGEST`: the Sigstore conformance `verify-bundle` shapes.
 *
 * `@sigstore/*` and the modules that pull them are imported inside the
 * action only, so the CLI starts without them.
 */
import type { Command } from "commander";
import { printJson, printLine, runAction, UsageError } from "../output.js";

interface VerifyProvenanceFlags {
  bundle?: string;
  certificateIdentity?: string;
  certificateOidcIssuer?: string;
  key?: string;
  trustedRoot?: string;
  json?: boolean;
}

/** The bundle-file form: check the flag combination, verify, print. */
async function verifyBundleForm(flags: VerifyProvenanceFlags, artifact: string | undefined): Promise<void> {
  if (artifact === undefined) throw new UsageError("verify-provenance --bundle needs the artifact: a file or sha256:<64 hex>");
  const identity = flags.certificateIdentity !== undefined || flags.certificateOidcIssuer !== undefined;
  if (identity && flags.key !== undefined) throw new UsageError("give either --key or --certificate-identity with --certificate-oidc-issuer, not both");
  if (!identity && flags.key === undefined) throw new UsageError("verify-provenance --bundle needs --key PEM or --certificate-identity ID --certificate-oidc-issuer URL");
  if (identity && (flags.certificateIdentity === undefined || flags.certificateOidcIssuer === undefined)) {
    throw new UsageError("--certificate-identity and --certificate-oidc-issuer go together");
  }
  const { verifyBundleFile } = await import("../../fetch/verify-bundle-file.js");
  const result = await verifyBundleFile({
    bundle: flags.bundle as string,
    artifact,
    signer: flags.key !== undefined ? { keyFile: flags.key } : { identity: flags.certificateIdentity as string, issuer: flags.certificateOidcIssuer as string },
    ...(flags.trustedRoot === undefined ? {} : { trustedRoot: flags.trustedRoot }),
  });
  if (flags.json === true) printJson(result);
  else printLine(`verified ${result.bundle} for ${result.artifact} (${result.artifactDigest}, ${result.content}): signed by ${result.signer}`);
}

/** Register `verify-provenance` on `program`. */
export function registerProvenanceCommands(program: Command): void {
  program
    .command("verify-provenance")
    .description(
      "Verify a Sigstore provenance bundle offline: a bundle file for an artifact (Sigstore conformance verify-bundle shapes). " +
        "Without --trusted-root the Sigstore public-good root embedded in @sigstore/tuf is used; nothing is downloaded.",
    )
    .argument("[file-or-digest]", "the artifact: a file, or sha256:<64 hex> of it (for a DSSE bundle it must be a subject of the signed statement)")
    .option("--bundle <file>", "the Sigstore bundle (JSON, at most 1 MiB)")
    .option("--certificate-identity <id>", "expected certificate identity (subject alternative name), matched exactly")
    .option("--certificate-oidc-issuer <url>", "expected OIDC issuer of the certificate, matched exactly")
    .option("--key <pem>", "verify with this PEM public key instead of a certificate identity (bundles signed with a local key)")
    .option("--trusted-root <file>", "Sigstore trusted root JSON (validated strictly; default: the embedded public-good root)")
    .option("--json", "print the result as JSON")
    .action(async (artifact: string | undefined, flags: VerifyProvenanceFlags) => {
      process.exitCode = await runAction(flags.json === true, async () => {
        if (flags.bundle === undefined) throw new UsageError("verify-provenance needs --bundle FILE");
        await verifyBundleForm(flags, artifact);
      });
    });
}
