/**
 * CLI wiring of `verify-provenance` (logic in `src/fetch`). Two forms:
 *
 * - `--bundle FILE (--certificate-identity ID --certificate-oidc-issuer URL | --key PEM)
 *   [--trusted-root FILE] FILE_OR_DIGEST`: the Sigstore conformance `verify-bundle` shapes.
 * - `--reference R [--repository P] [--receipt F] (--key PEM | --owner O | --repo O/R)
 *   [--signer-workflow W] [--source-ref REF] [--cert-oidc-issuer URL] [--trusted-root FILE]`:
 *   find the release's attestations in its repository, verify them and bind them
 *   to the tested manifest (and receipt), with `gh attestation verify`-like policy flags.
 *
 * `@sigstore/*` and the modules that pull them are imported inside the
 * action only, so the CLI starts without them.
 */
import type { Command } from "commander";
import { addRegistryOptions, credentialSourceOptions } from "../registry-options.js";
import { printJson, printLine, runAction, UsageError } from "../output.js";
import { POLICY_FLAG_NAMES, addPolicyFlags, provenanceCheckOf, type PolicyFlags } from "./provenance-flags.js";

interface VerifyProvenanceFlags extends PolicyFlags {
  reference?: string;
  repository?: string;
  receipt?: string;
  package?: string;
  plainHttp?: boolean;
  registryConfig?: string;
  bundle?: string;
  certificateIdentity?: string;
  certificateOidcIssuer?: string;
  json?: boolean;
}

/** The reference form: find, verify and bind the release's attestations. */
async function verifyReferenceForm(flags: VerifyProvenanceFlags, artifact: string | undefined): Promise<void> {
  if (artifact !== undefined) throw new UsageError("verify-provenance --reference takes no artifact argument (the reference names the bundle)");
  if (flags.certificateIdentity !== undefined || flags.certificateOidcIssuer !== undefined) {
    throw new UsageError("--certificate-identity/--certificate-oidc-issuer belong to --bundle; with --reference use --owner/--repo, --signer-workflow, --source-ref, --cert-oidc-issuer");
  }
  // The consumer pins the reference; its repository is the expectation unless --repository names another.
  // The reference's own grammar first: a tag, a bare digest or nothing before '@' gets its own message and fix.
  if (flags.reference !== undefined) {
    const { parseReference } = await import("../../contract/reference.js");
    parseReference(flags.reference);
  }
  const repository = flags.repository ?? flags.reference?.slice(0, Math.max(0, (flags.reference ?? "").lastIndexOf("@")));
  if (repository === undefined || repository === "") throw new UsageError("no repository: pass a digest-pinned --reference <repository>@sha256:<64 hex>");
  const provenance = await provenanceCheckOf(flags);
  const { parseRepository } = await import("../../contract/reference.js");
  const { resolveRegistryCredentials } = await import("../../fetch/fetch.js");
  const { verifyReferenceProvenance } = await import("../../fetch/verify-reference.js");
  const credentials = await resolveRegistryCredentials(parseRepository(repository), process.env, credentialSourceOptions(flags));
  const result = await verifyReferenceProvenance({
    reference: flags.reference as string,
    repository,
    plainHttp: flags.plainHttp === true,
    ...(credentials === undefined ? {} : { credentials }),
    provenance,
    ...(flags.receipt === undefined ? {} : { receipt: flags.receipt }),
    ...(flags.package === undefined ? {} : { package: flags.package }),
  });
  if (flags.json === true) printJson(result);
  else {
    printLine(`verified provenance of ${result.reference} (${result.tag}): signed by ${result.signer}; source ${result.source_repository} at ${result.source_sha}, ${result.workflow} run ${result.run_id} attempt ${result.run_attempt}${result.receipt ? "; receipt agrees" : ""}`);
    for (const attestation of result.attestations) printLine(`  attestation ${attestation} (${result.discovery})`);
  }
}

/** The bundle-file form: check the flag combination, verify, print. */
async function verifyBundleForm(flags: VerifyProvenanceFlags, artifact: string | undefined): Promise<void> {
  const misplaced = ["reference", "repository", "receipt", "package", "plainHttp", ...POLICY_FLAG_NAMES].filter((name) => flags[name as keyof VerifyProvenanceFlags] !== undefined);
  if (misplaced.length > 0) throw new UsageError(`--${misplaced[0]?.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())} does not apply to verify-provenance --bundle`);
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
  addPolicyFlags(
    addRegistryOptions(program.command("verify-provenance"), "--reference form")
      .description(
        "Verify Sigstore provenance offline. --bundle FILE ... FILE_OR_DIGEST: one bundle for one artifact (the Sigstore conformance verify-bundle shapes). " +
          "--reference R: find the release bundle's attestations (OCI referrers), verify them and bind them to its tested manifest (and --receipt). " +
          "Without --trusted-root the Sigstore public-good root embedded in @sigstore/tuf is used; nothing is downloaded from Sigstore.",
      )
      .argument("[file-or-digest]", "--bundle form: the artifact, a file or sha256:<64 hex> of it (for a DSSE bundle it must be a subject of the signed statement)")
      .option("--bundle <file>", "the Sigstore bundle (JSON, at most 1 MiB)")
      .option("--certificate-identity <id>", "--bundle form: expected certificate identity (subject alternative name), matched exactly")
      .option("--certificate-oidc-issuer <url>", "--bundle form: expected OIDC issuer of the certificate, matched exactly")
      .option("--reference <ref>", "the digest-pinned release bundle <repository>@sha256:<64 hex> whose attestations to verify")
      .option("--repository <repo>", "--reference form: the pinned repository the reference must name (default: the reference's own)")
      .option("--receipt <file>", "--reference form: a published release-receipt.json the statement must agree with too")
      .option("--package <name>", "--reference form: expected npm package name (default: the one the release names)")
      .option("--key <pem>", "verify with this P-256 public key PEM (-----BEGIN PUBLIC KEY-----) instead of a certificate identity (releases signed with a local key); a private key or certificate is refused")
      .option("--trusted-root <file>", "Sigstore trusted root JSON (validated strictly; default: the embedded public-good root)"),
  )
    .option("--json", "print the result as JSON")
    .action(async (artifact: string | undefined, flags: VerifyProvenanceFlags) => {
      process.exitCode = await runAction(flags.json === true, async () => {
        if ((flags.bundle === undefined) === (flags.reference === undefined)) throw new UsageError("verify-provenance needs exactly one of --bundle FILE or --reference R");
        if (flags.bundle !== undefined) await verifyBundleForm(flags, artifact);
        else await verifyReferenceForm(flags, artifact);
      });
    });
}
