/**
 * CLI wiring of the consumer commands `fetch` and `resolve` (logic in
 * `src/fetch`; the fleet verbs are in `fleet.ts`). Credentials come from the
 * environment only (`REGISTRY_USERNAME` + `REGISTRY_PASSWORD`, or `GH_TOKEN`
 * for ghcr.io). Expectations come only from what the consumer pins
 * (`consumer-policy.ts`); area modules load inside the action handlers.
 */
import type { Command } from "commander";
import { addRegistryOptions, credentialSourceOptions } from "../registry-options.js";
import { addGatePolicyOptions, consumerExpectations, type ConsumerPolicyFlags } from "../consumer-policy.js";
import { printJson, printLine, printWarning, runAction, transferProgress, UsageError } from "../output.js";
import { addPolicyFlags, hasPolicyFlags, provenanceCheckOf, type PolicyFlags } from "./provenance-flags.js";

interface FetchOptions extends ConsumerPolicyFlags, PolicyFlags {
  provenance?: boolean;
  reference: string;
  outputDir: string;
  expect?: string;
  replace?: boolean;
  plainHttp?: boolean;
  registryConfig?: string;
  json?: boolean;
}

interface ResolveOptions {
  reference: string;
  plainHttp?: boolean;
  registryConfig?: string;
  json?: boolean;
}

/** Register `fetch` and `resolve` on `program`. */
export function registerFetchCommands(program: Command): void {
  const fetch = addPolicyFlags(
    addRegistryOptions(program.command("fetch"))
      .description("Download a digest-pinned release bundle or receipt, verify every byte (and with --provenance its Sigstore attestation), then install it into the output directory.")
      .requiredOption("--reference <ref>", "digest-pinned reference <repository>@sha256:<64 hex> (tags are refused: pin one with `resolve`)")
      .requiredOption("--output-dir <dir>", "output directory (created; never written through a symlink; different existing bytes are never overwritten)")
      .option("--repository <repo>", "the pinned repository the reference must name (default: the repository the reference names)")
      .option("--package <name>", "expected npm package name (default: the one the release names)")
      .option("--expect <kind>", "refuse the other artifact kind: bundle or receipt")
      .option("--replace", "the output directory holds another release: verify, then swap the whole directory for the new payload")
      .option("--provenance", "require a verifying attestation bound to the release before installing (policy: --key, or --owner/--repo ...)")
      .option("--key <pem>", "with --provenance: the P-256 public key PEM (-----BEGIN PUBLIC KEY-----) a locally signed release was attested with; a private key or certificate is refused")
      .option("--trusted-root <file>", "with --provenance: Sigstore trusted root (default: the embedded public-good root)"),
  ).option("--json", "print {reference, artifactType, version, files, install_time[, provenance]} as JSON");
  addGatePolicyOptions(fetch).action(async (opts: FetchOptions) => {
    // Ctrl-C / SIGTERM: the fetch removes its temp directory (and any install under way), then exits 130 / 143.
    const { withInterrupts } = await import("../interrupt.js");
    process.exitCode = await withInterrupts("fetch", (signal, commit) => runAction(opts.json === true, async () => {
      if (opts.expect !== undefined && opts.expect !== "bundle" && opts.expect !== "receipt") {
        throw new UsageError(`--expect must be bundle or receipt, not ${JSON.stringify(opts.expect)}`);
      }
      if (opts.provenance !== true && hasPolicyFlags(opts)) throw new UsageError("--key, --trusted-root, --owner, --repo, --signer-workflow, --source-ref and --cert-oidc-issuer need --provenance");
      const provenance = opts.provenance === true ? await provenanceCheckOf(opts) : undefined;
      const expectations = await consumerExpectations(opts, opts.reference);
      const { fetchRelease, resolveRegistryCredentials } = await import("../../fetch/fetch.js");
      const { parseRepository } = await import("../../contract/reference.js");
      const credentials = await resolveRegistryCredentials(parseRepository(expectations.repository), process.env, credentialSourceOptions(opts));
      // The library's fixes name its options (replace: true); the CLI says its flags (--replace).
      const result = await fetchRelease({
        reference: opts.reference,
        outputDir: opts.outputDir,
        repository: expectations.repository,
        plainHttp: opts.plainHttp === true,
        replace: opts.replace === true,
        ...(credentials === undefined ? {} : { credentials }),
        ...(opts.expect === undefined ? {} : { expect: opts.expect as "bundle" | "receipt" }),
        policy: { ...(expectations.package === undefined ? {} : { package: expectations.package }), gates: expectations.gates, sources: expectations.sources },
        ...(provenance === undefined ? {} : { provenance }),
        ...transferProgress(),
        signal,
        // From the commit on, a signal changes nothing: the result is printed and decides the exit status.
        onCommit: commit,
      }).catch((error: unknown) => {
        // A FetchError whose fix names library options (replace: true) carries the CLI's wording (--replace).
        const cliMessage = error instanceof Error ? (error as { cliMessage?: unknown }).cliMessage : undefined;
        if (typeof cliMessage === "string") (error as Error).message = cliMessage;
        throw error;
      });
      if (result.install_time.length > 0) {
        printWarning(
          `installing this tarball makes npm run or link outside the package: ${result.install_time.join(", ")} (recorded in the tested manifest); install it with npm install --ignore-scripts unless you reviewed them`,
        );
      }
      if (opts.json === true) printJson({ ok: true, ...result });
      else {
        printLine(`verified and installed ${result.artifactType} ${result.version} from ${result.reference} into ${opts.outputDir}`);
        for (const file of result.files) printLine(`  ${file.path}  sha256:${file.sha256}  ${file.size} bytes`);
        printLine(`  install-time behaviour: ${result.install_time.length > 0 ? result.install_time.join(", ") : "none"}`);
        if (result.provenance !== undefined) {
          printLine(`  provenance: signed by ${result.provenance.signer}; ${result.provenance.source_repository} at ${result.provenance.source_sha}, run ${result.provenance.run_id}`);
          for (const attestation of result.provenance.attestations) printLine(`  attestation ${attestation} (${result.provenance.discovery})`);
        }
      }
    }));
  });

  addRegistryOptions(program.command("resolve"))
    .description("Print the digest reference a tag points to now, for pinning (fetch refuses tags). Reads only after the privacy gate.")
    .requiredOption("--reference <repo:tag>", "<repository>:<tag>, e.g. ghcr.io/acme/plugin:v1.2.0 or oci-layout:/srv/store:v1.2.0")
    .option("--json", "print {reference, digest, mediaType, size, tag} as JSON")
    .action(async (opts: ResolveOptions) => {
      process.exitCode = await runAction(opts.json === true, async () => {
        const { parseTagReference, resolveTagReference } = await import("../../fetch/resolve.js");
        const { resolveRegistryCredentials } = await import("../../fetch/fetch.js");
        const credentials = await resolveRegistryCredentials(parseTagReference(opts.reference).repository, process.env, credentialSourceOptions(opts));
        const resolved = await resolveTagReference(opts.reference, { plainHttp: opts.plainHttp === true, ...(credentials === undefined ? {} : { credentials }) });
        if (opts.json === true) printJson({ ok: true, ...resolved });
        else printLine(resolved.reference);
      });
    });
}
