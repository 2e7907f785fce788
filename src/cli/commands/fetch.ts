/**
 * CLI wiring of the consumer commands: `fetch`, `fleet add`, `fleet verify`
 * (logic in `src/fetch`). Credentials come from the environment only
 * (`REGISTRY_USERNAME` + `REGISTRY_PASSWORD`, or `GH_TOKEN` for ghcr.io).
 * The fetch, fleet and registry modules load inside the actions only.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Command } from "commander";
import type { GateCommands } from "../../contract/policy.js";
import type { RegistryCredentials } from "../../fetch/fetch.js";
import { printJson, printLine, progressStream, runAction, UsageError } from "../output.js";
import { addPolicyFlags, hasPolicyFlags, provenanceCheckOf, type PolicyFlags } from "./provenance-flags.js";

interface FetchOptions extends PolicyFlags {
  provenance?: boolean;
  reference: string;
  outputDir: string;
  repository?: string;
  package?: string;
  expect?: string;
  plainHttp?: boolean;
  registryConfig?: string;
  json?: boolean;
}

interface FleetAddOptions extends PolicyFlags {
  provenance?: boolean;
  lock: string;
  receipt: string;
  json?: boolean;
}

interface FleetVerifyOptions {
  trustedRoot?: string;
  lock: string;
  installed?: string;
  plainHttp?: boolean;
  registryConfig?: string;
  json?: boolean;
}

/** The checkout's package.json (or undefined when absent or unreadable as JSON). */
export async function checkoutPackageJson(dir: string): Promise<Record<string, unknown> | undefined> {
  const { parseStrictJson } = await import("../../contract/canonical-json.js");
  let bytes: Buffer;
  try {
    bytes = await readFile(join(dir, "package.json"));
  } catch {
    return undefined;
  }
  return parseStrictJson(bytes, { rejectIntegralFloats: false });
}

/** `hermesPluginKit.repository` of the checkout's package.json, if any. */
function declaredRepository(pkg: Record<string, unknown> | undefined): string | undefined {
  const kit = pkg?.["hermesPluginKit"];
  if (kit === null || typeof kit !== "object" || Array.isArray(kit)) return undefined;
  const repo = (kit as Record<string, unknown>)["repository"];
  return typeof repo === "string" ? repo : undefined;
}

/** Gate commands the checkout declares for itself, used when the fetched package is the checkout's own. */
export async function gatesFromCheckout(pkg: Record<string, unknown> | undefined): Promise<(name: string) => GateCommands | undefined> {
  const { policyFromPackageJson } = await import("../../contract/policy.js");
  return (name) => {
    if (pkg === undefined || pkg["name"] !== name || declaredRepository(pkg) === undefined) return undefined;
    try {
      return policyFromPackageJson(pkg).gates;
    } catch {
      return undefined;
    }
  };
}

/** Register `fetch` and `fleet add|verify` on `program`. */
export function registerFetchCommands(program: Command): void {
  addPolicyFlags(
    program
      .command("fetch")
      .description("Download a digest-pinned release bundle or receipt, verify every byte (and with --provenance its Sigstore attestation), then install it into the output directory.")
      .requiredOption("--reference <ref>", "digest-pinned reference <repository>@sha256:<64 hex> (tags are refused)")
      .requiredOption("--output-dir <dir>", "output directory (created; never written through a symlink; different existing bytes are never overwritten)")
      .option("--repository <repo>", "the pinned repository the reference must name (default: package.json hermesPluginKit.repository)")
      .option("--package <name>", "expected npm package name (default: the one the release names)")
      .option("--expect <kind>", "refuse the other artifact kind: bundle or receipt")
      .option("--plain-http", "use plain HTTP (loopback registries only)")
      .option("--registry-config <file>", "Docker client config with registry credentials (default: $DOCKER_CONFIG/config.json, else ~/.docker/config.json; REGISTRY_* variables come first)")
      .option("--provenance", "require a verifying attestation bound to the release before installing (policy: --key, or --owner/--repo ...)")
      .option("--key <pem>", "with --provenance: the public key a locally signed release was attested with")
      .option("--trusted-root <file>", "with --provenance: Sigstore trusted root (default: the embedded public-good root)"),
  )
    .option("--json", "print {reference, artifactType, version, files, install_time[, provenance]} as JSON")
    .action(async (opts: FetchOptions) => {
      process.exitCode = await runAction(opts.json === true, async () => {
        if (opts.expect !== undefined && opts.expect !== "bundle" && opts.expect !== "receipt") {
          throw new UsageError(`--expect must be bundle or receipt, not ${JSON.stringify(opts.expect)}`);
        }
        if (opts.provenance !== true && hasPolicyFlags(opts)) throw new UsageError("--key, --trusted-root, --owner, --repo, --signer-workflow, --source-ref and --cert-oidc-issuer need --provenance");
        const provenance = opts.provenance === true ? await provenanceCheckOf(opts) : undefined;
        const { parseReference, parseRepository } = await import("../../contract/reference.js");
        const { fetchRelease, resolveRegistryCredentials } = await import("../../fetch/fetch.js");
        const pkg = await checkoutPackageJson(process.cwd());
        const repository = opts.repository ?? declaredRepository(pkg);
        if (repository === undefined) {
          throw new UsageError("no pinned repository: pass --repository or set hermesPluginKit.repository in package.json");
        }
        const parsedRepo = parseRepository(repository);
        parseReference(opts.reference, repository);
        const credentials = await resolveRegistryCredentials(parsedRepo, process.env, opts.registryConfig === undefined ? {} : { registryConfig: opts.registryConfig });
        const result = await fetchRelease({
          reference: opts.reference,
          outputDir: opts.outputDir,
          repository,
          plainHttp: opts.plainHttp === true,
          ...(credentials === undefined ? {} : { credentials }),
          ...(opts.expect === undefined ? {} : { expect: opts.expect as "bundle" | "receipt" }),
          policy: { ...(opts.package === undefined ? {} : { package: opts.package }), gatesFor: await gatesFromCheckout(pkg) },
          ...(provenance === undefined ? {} : { provenance }),
          progress: progressStream(true),
        });
        if (result.install_time.length > 0) {
          process.stderr.write(
            `hermes-plugin-kit: note: installing this tarball makes npm run or link outside the package: ${result.install_time.join(", ")} (recorded in the tested manifest); install it with npm install --ignore-scripts unless you reviewed them\n`,
          );
        }
        if (opts.json === true) printJson(result);
        else {
          printLine(`verified and installed ${result.artifactType} ${result.version} from ${result.reference} into ${opts.outputDir}`);
          for (const file of result.files) printLine(`  ${file.path}  sha256:${file.sha256}  ${file.size} bytes`);
          printLine(`  install-time behaviour: ${result.install_time.length > 0 ? result.install_time.join(", ") : "none"}`);
          if (result.provenance !== undefined) {
            printLine(`  provenance: signed by ${result.provenance.signer}; ${result.provenance.source_repository} at ${result.provenance.source_sha}, run ${result.provenance.run_id}`);
            for (const attestation of result.provenance.attestations) printLine(`  attestation ${attestation} (${result.provenance.discovery})`);
          }
        }
      });
    });

  const fleet = program.command("fleet").description("Pin co-loaded plugins by digest in a fleet lock and verify the pins.");
  addPolicyFlags(
    fleet
      .command("add")
      .description("Append a plugin to the fleet lock from a verified published receipt (release-receipt.json); with --provenance also pin who must have signed its attestation.")
      .requiredOption("--lock <file>", "fleet lock file (created when absent)")
      .requiredOption("--receipt <file>", "the plugin's published release-receipt.json")
      .option("--provenance", "pin a provenance policy (--key, or --owner/--repo ...): fleet verify then requires a verifying attestation")
      .option("--key <pem>", "with --provenance: the public key the plugin's releases are attested with (stored in the lock)"),
  )
    .option("--json", "print the pinned entry as JSON")
    .action(async (opts: FleetAddOptions) => {
      process.exitCode = await runAction(opts.json === true, async () => {
        if (opts.provenance !== true && hasPolicyFlags(opts)) throw new UsageError("--key, --owner, --repo, --signer-workflow, --source-ref and --cert-oidc-issuer need --provenance");
        const provenance = opts.provenance === true ? (await provenanceCheckOf(opts)).policy : undefined;
        const { parseStrictJson } = await import("../../contract/canonical-json.js");
        const { addPluginToLock } = await import("../../fetch/fleet.js");
        const pkg = await checkoutPackageJson(process.cwd());
        // The receipt's package name selects the checkout's gate commands when it is the checkout's own
        // package; addPluginToLock reads and verifies the receipt itself.
        let name: unknown;
        try {
          name = parseStrictJson(await readFile(opts.receipt))["package"];
        } catch {
          name = undefined;
        }
        const gates = typeof name === "string" ? (await gatesFromCheckout(pkg))(name) : undefined;
        const { plugin, changed } = await addPluginToLock({ lockPath: opts.lock, receiptPath: opts.receipt, ...(gates === undefined ? {} : { gates }), ...(provenance === undefined ? {} : { provenance }) });
        if (opts.json === true) printJson({ ok: true, changed, plugin });
        else printLine(`${changed ? "pinned" : "already pinned"} ${plugin.name} ${plugin.version}: bundle ${plugin.bundle_reference}, receipt ${plugin.receipt_reference}, ${plugin.tarball.filename} sha256:${plugin.tarball.sha256}`);
      });
    });

  fleet
    .command("verify")
    .description("Fetch and verify each pinned receipt by digest and check it against the pinned bundle reference and tarball (and the installed file).")
    .requiredOption("--lock <file>", "fleet lock file")
    .option("--installed <dir>", "directory holding the installed tarballs (<dir>/<file> or <dir>/dist/<file>)")
    .option("--plain-http", "use plain HTTP (loopback registries only)")
    .option("--trusted-root <file>", "Sigstore trusted root for plugins pinned with a keyless provenance policy (default: the embedded public-good root)")
    .option("--registry-config <file>", "Docker client config with registry credentials (default: $DOCKER_CONFIG/config.json, else ~/.docker/config.json; REGISTRY_* variables come first)")
    .option("--json", "print the verified plugins as JSON")
    .action(async (opts: FleetVerifyOptions) => {
      process.exitCode = await runAction(opts.json === true, async () => {
        let trustedRoot: import("../../contract/trusted-root.js").CheckedTrustedRoot | undefined;
        if (opts.trustedRoot !== undefined) {
          const { readTrustedRootFile } = await import("../../fetch/sigstore-trust.js");
          trustedRoot = await readTrustedRootFile(opts.trustedRoot);
        }
        const { resolveRegistryCredentials } = await import("../../fetch/fetch.js");
        const { verifyFleetLock } = await import("../../fetch/fleet.js");
        const pkg = await checkoutPackageJson(process.cwd());
        const credentialCache = new Map<string, RegistryCredentials | undefined>();
        const results = await verifyFleetLock({
          lockPath: opts.lock,
          plainHttp: opts.plainHttp === true,
          ...(opts.installed === undefined ? {} : { installedDir: opts.installed }),
          policy: { gatesFor: await gatesFromCheckout(pkg) },
          ...(trustedRoot === undefined ? {} : { trustedRoot }),
          credentialsFor: async (repository) => {
            if (!credentialCache.has(repository.repository)) credentialCache.set(repository.repository, await resolveRegistryCredentials(repository, process.env, opts.registryConfig === undefined ? {} : { registryConfig: opts.registryConfig }));
            return credentialCache.get(repository.repository);
          },
        });
        if (opts.json === true) printJson({ ok: true, plugins: results });
        else {
          for (const r of results) printLine(`verified ${r.name} ${r.version}: ${r.tarball.filename} sha256:${r.tarball.sha256}${r.installed.length > 0 ? " (installed copy matches)" : ""}${r.attestations !== undefined ? `; provenance ${r.attestations.join(", ")}` : ""}`);
          printLine(`fleet lock ${opts.lock}: ${results.length} plugin(s) verified`);
        }
      });
    });
}
