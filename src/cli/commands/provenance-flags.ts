/**
 * The provenance policy flags of `verify-provenance --reference`, `fetch
 * --provenance` and `fleet add --provenance` (the flags of `gh attestation
 * verify`), and their reading into a provenance check (in the action only).
 */
import type { Command } from "commander";
import type { ProvenanceFlags } from "../../fetch/provenance.js";
import { UsageError } from "../output.js";

/** The `gh attestation verify`-like policy flags shared by `verify-provenance --reference`, `fetch` and `fleet add` (`--key` and `--trusted-root` name files). */
export type PolicyFlags = ProvenanceFlags;

/** Camel-case names of the certificate-policy flags (for "does not apply" checks). */
export const POLICY_FLAG_NAMES = ["owner", "repo", "signerWorkflow", "sourceRef", "certOidcIssuer"] as const;

/** Add the policy flags (all but `--key` and `--trusted-root`, which commands word themselves). */
export function addPolicyFlags(command: Command): Command {
  return command
    .option("--owner <owner>", "GitHub owner the source repository must belong to (keyless)")
    .option("--repo <owner/name>", "source repository the release must come from (keyless: the certificate's; with --key: the statement's)")
    .option("--signer-workflow <workflow>", "[host/]owner/repo/.github/workflows/<file> that must have signed (default: <repo>/.github/workflows/release.yml)")
    .option("--source-ref <ref>", "git ref the release workflow ran at (default: refs/heads/main)")
    .option("--cert-oidc-issuer <url>", "OIDC issuer of the signing certificate (default: https://token.actions.githubusercontent.com)");
}

/** True when any provenance policy flag was given. */
export function hasPolicyFlags(flags: PolicyFlags): boolean {
  return flags.key !== undefined || flags.trustedRoot !== undefined || POLICY_FLAG_NAMES.some((name) => flags[name] !== undefined);
}

/** Read and check the provenance flags; a policy that cannot work is a usage error (exit 2). */
export async function provenanceCheckOf(flags: PolicyFlags) {
  const { provenanceCheckFromFlags } = await import("../../fetch/provenance.js");
  const { ProvenanceError } = await import("../../contract/provenance-error.js");
  try {
    return await provenanceCheckFromFlags(flags);
  } catch (error) {
    if (error instanceof ProvenanceError && error.code === "PROVENANCE_POLICY_INVALID") throw new UsageError(error.message);
    throw error;
  }
}
