/**
 * CLI wiring of `fleet add | verify | list | remove | upgrade` (logic in
 * `src/fetch/fleet.ts` and `src/fetch/fleet-edit.ts`). Gate pins come from
 * `--expect-gate` and are kept in the lock; nothing is read from the current
 * directory's package.json.
 */
import type { Command } from "commander";
import type { GroupRegistration } from "../usage.js";
import { addRegistryOptions, credentialSourceOptions } from "../registry-options.js";
import type { FleetPlugin } from "../../contract/schemas.js";
import { collect, gatePins } from "../consumer-policy.js";
import { printJson, printLine, printWarning, runAction, UsageError } from "../output.js";
import { addPolicyFlags, hasPolicyFlags, provenanceCheckOf, type PolicyFlags } from "./provenance-flags.js";

/** The flags of the commands that read the registry to check pins (`fleet add`, `upgrade`, `verify`). */
interface FleetRegistryFlags {
  trustedRoot?: string;
  plainHttp?: boolean;
  registryConfig?: string;
  offline?: boolean;
}

interface FleetAddOptions extends PolicyFlags, FleetRegistryFlags {
  provenance?: boolean;
  lock: string;
  receipt: string;
  repository?: string;
  package?: string;
  expectGate?: string[];
  json?: boolean;
}

/** `--plain-http`, `--registry-config` and `--trusted-root` of a command that checks pins against the registry. */
function addPinCheckOptions(command: Command, offline: boolean): Command {
  addRegistryOptions(command).option("--trusted-root <file>", "Sigstore trusted root for plugins pinned with a keyless provenance policy (default: the embedded public-good root)");
  if (offline) command.option("--offline", "pin from the receipt file alone, without checking the registry (a warning says so; fleet verify checks it later)");
  return command;
}

/**
 * The registry reads of a pin check from the flags: plain HTTP, the trusted root, and credentials per
 * repository (found once each, as fetch finds them).
 */
async function pinCheckOptions(flags: FleetRegistryFlags, signal?: AbortSignal): Promise<import("../../fetch/fleet.js").FleetPinCheckOptions> {
  let trustedRoot: import("../../contract/trusted-root.js").CheckedTrustedRoot | undefined;
  if (flags.trustedRoot !== undefined) {
    const { readTrustedRootFile } = await import("../../fetch/sigstore-trust.js");
    trustedRoot = await readTrustedRootFile(flags.trustedRoot);
  }
  const { resolveRegistryCredentials } = await import("../../fetch/fetch.js");
  type Credentials = Awaited<ReturnType<typeof resolveRegistryCredentials>>;
  const credentialCache = new Map<string, Credentials>();
  return {
    plainHttp: flags.plainHttp === true,
    ...(trustedRoot === undefined ? {} : { trustedRoot }),
    ...(signal === undefined ? {} : { signal }),
    credentialsFor: async (repository) => {
      if (!credentialCache.has(repository.repository)) credentialCache.set(repository.repository, await resolveRegistryCredentials(repository, process.env, credentialSourceOptions(flags)));
      return credentialCache.get(repository.repository);
    },
  };
}

/** The interruption message of `fleet add`/`upgrade`: the lock is replaced in one rename, only after the check. */
function lockInterrupted(what: string): (signal: string) => string {
  return (signal) => `${what} interrupted (${signal}): the registry check's temporary files were removed; the lock is replaced in one step only after the check passed, so it holds either its earlier pins or the new one, never a part`;
}

/** The warning of a pin written with `--offline`: nothing about it was checked against the registry. */
function offlineWarning(lock: string): void {
  printWarning(`--offline: the pin was made from the receipt file alone and not checked against the registry (that the repository published this receipt, its bundle, provenance); check it with hermes-plugin-kit fleet verify --lock ${lock}`);
}

interface FleetVerifyOptions extends FleetRegistryFlags {
  lock: string;
  installed?: string;
  plainHttp?: boolean;
  registryConfig?: string;
  json?: boolean;
}

function pinLine(plugin: FleetPlugin): string {
  return `${plugin.name} ${plugin.version}: bundle ${plugin.bundle_reference}, receipt ${plugin.receipt_reference}, ${plugin.tarball.filename} sha256:${plugin.tarball.sha256}`;
}

function registerAdd(fleet: Command): void {
  const add = addPolicyFlags(
    fleet
      .command("add")
      .description("Pin a plugin in the fleet lock from its verified published receipt (release-receipt.json); with --provenance also pin who must have signed its attestation.")
      .requiredOption("--lock <file>", "fleet lock file (created when absent)")
      .requiredOption("--receipt <file>", "the plugin's published release-receipt.json")
      .option("--repository <repo>", "the registry repository you trust; required (the receipt's own registry_repository is never the expectation)")
      .option("--package <name>", "the package the receipt must name (default: the receipt's own)")
      .option("--provenance", "pin a provenance policy (--key, or --owner/--repo ...): fleet verify then requires a verifying attestation")
      .option("--key <pem>", "with --provenance: the P-256 public key PEM (-----BEGIN PUBLIC KEY-----) the plugin's releases are attested with (stored in the lock); a private key or certificate is refused"),
  ).option("--json", "print the pinned entry as JSON");
  add.option("--expect-gate <gate=command>", 'pin a gate command its releases must have run, e.g. unit="npm test", kept in the lock; spaces around = are ignored (repeatable)', collect);
  addPinCheckOptions(add, true);
  add.action(async (opts: FleetAddOptions) => {
    // Ctrl-C / SIGTERM during the registry check: nothing is written; the download removes its temp directory.
    const { withInterrupts } = await import("../interrupt.js");
    process.exitCode = await withInterrupts("fleet add", (signal) => runAction(opts.json === true, async () => {
      // --trusted-root is also the registry check's (as fleet verify takes it); the policy flags need --provenance.
      if (opts.provenance !== true && hasPolicyFlags({ ...opts, trustedRoot: undefined })) throw new UsageError("--key, --owner, --repo, --signer-workflow, --source-ref and --cert-oidc-issuer need --provenance");
      const provenance = opts.provenance === true ? (await provenanceCheckOf(opts)).policy : undefined;
      const { addPluginToLock } = await import("../../fetch/fleet.js");
      const gates = await gatePins(opts.expectGate);
      const { plugin, changed } = await addPluginToLock({
        lockPath: opts.lock,
        receiptPath: opts.receipt,
        ...(opts.repository === undefined ? {} : { repository: opts.repository }),
        ...(opts.package === undefined ? {} : { package: opts.package }),
        ...(gates === undefined ? {} : { gates }),
        ...(provenance === undefined ? {} : { provenance }),
        ...(opts.offline === true ? { offline: true } : { registry: await pinCheckOptions(opts, signal) }),
      });
      if (opts.offline === true) offlineWarning(opts.lock);
      if (opts.json === true) printJson({ ok: true, changed, plugin, checked_against_registry: opts.offline !== true });
      else printLine(`${changed ? "pinned" : "already pinned"} ${pinLine(plugin)}${opts.offline !== true ? " (verified against the registry)" : ""}`);
    }), lockInterrupted("fleet add"));
  });
}

function registerVerify(fleet: Command): void {
  const verify = fleet
    .command("verify")
    .description("Fetch and verify each pinned receipt by digest and check it against the pinned bundle reference, gate pins and tarball (and the installed file).")
    .requiredOption("--lock <file>", "fleet lock file")
    .option("--installed <dir>", "directory holding the installed tarballs (<dir>/<file> or <dir>/dist/<file>)")
    .option("--json", "print the verified plugins as JSON");
  addPinCheckOptions(verify, false)
    .action(async (opts: FleetVerifyOptions) => {
      // Ctrl-C / SIGTERM: the receipt download in progress removes its temp directory, then exits 130 / 143.
      const { withInterrupts } = await import("../interrupt.js");
      process.exitCode = await withInterrupts("fleet verify", (signal) => runAction(opts.json === true, async () => {
        const { verifyFleetLock } = await import("../../fetch/fleet.js");
        const results = await verifyFleetLock({
          lockPath: opts.lock,
          ...(opts.installed === undefined ? {} : { installedDir: opts.installed }),
          ...(await pinCheckOptions(opts, signal)),
        });
        // An empty lock verifies nothing: say so, so that a fleet check run against the wrong (or a
        // fresh) lock is not read as a fleet that verified.
        if (results.length === 0) printWarning(`fleet lock ${opts.lock} pins no plugin: nothing was verified; pin one with hermes-plugin-kit fleet add --lock ${opts.lock} --receipt <release-receipt.json> --repository <registry/repository>`);
        if (opts.json === true) printJson({ ok: true, plugins: results });
        else {
          for (const r of results) printLine(`verified ${r.name} ${r.version}: ${r.tarball.filename} sha256:${r.tarball.sha256}${r.installed.length > 0 ? " (installed copy matches)" : ""}${r.attestations !== undefined ? `; provenance ${r.attestations.join(", ")}` : ""}`);
          printLine(`fleet lock ${opts.lock}: ${results.length} plugin(s) verified`);
        }
      }));
    });
}

function registerEdits(fleet: Command): void {
  fleet
    .command("list")
    .description("List the plugins a fleet lock pins (name, version, references, tarball, gate pins, history length).")
    .requiredOption("--lock <file>", "fleet lock file")
    .option("--json", "print the pinned plugins as JSON")
    .action(async (opts: { lock: string; json?: boolean }) => {
      process.exitCode = await runAction(opts.json === true, async () => {
        const { listFleetLock } = await import("../../fetch/fleet-edit.js");
        const plugins = await listFleetLock(opts.lock);
        if (opts.json === true) printJson({ ok: true, plugins });
        else {
          for (const p of plugins) printLine(`${pinLine(p)}${p.history !== undefined ? ` (${p.history.length} earlier pin(s))` : ""}`);
          printLine(`fleet lock ${opts.lock}: ${plugins.length} plugin(s)`);
        }
      });
    });

  fleet
    .command("remove")
    .description("Remove a plugin's pin (and its history) from the fleet lock.")
    .requiredOption("--lock <file>", "fleet lock file")
    .requiredOption("--name <name>", "npm package name of the pinned plugin")
    .option("--json", "print the removed entry as JSON")
    .action(async (opts: { lock: string; name: string; json?: boolean }) => {
      process.exitCode = await runAction(opts.json === true, async () => {
        const { removePluginFromLock } = await import("../../fetch/fleet-edit.js");
        const removed = await removePluginFromLock(opts.lock, opts.name);
        if (opts.json === true) printJson({ ok: true, removed });
        else printLine(`removed ${pinLine(removed)}`);
      });
    });

  const upgrade = fleet
    .command("upgrade")
    .description("Move a plugin's pin to a newer verified release of the same package and repository (checked against the registry first); the old pin is kept in its history.")
    .requiredOption("--lock <file>", "fleet lock file")
    .requiredOption("--receipt <file>", "the newer release's published release-receipt.json")
    .option("--expect-gate <gate=command>", "replace the plugin's gate pins, e.g. unit=\"npm test\"; spaces around = are ignored (repeatable; default: keep the lock's)", collect)
    .option("--json", "print the new entry and the previous pin as JSON");
  addPinCheckOptions(upgrade, true)
    .action(async (opts: FleetRegistryFlags & { lock: string; receipt: string; expectGate?: string[]; json?: boolean }) => {
      const { withInterrupts } = await import("../interrupt.js");
      process.exitCode = await withInterrupts("fleet upgrade", (signal) => runAction(opts.json === true, async () => {
        const { upgradePluginInLock } = await import("../../fetch/fleet-edit.js");
        const gates = await gatePins(opts.expectGate);
        const { plugin, previous, changed } = await upgradePluginInLock({
          lockPath: opts.lock,
          receiptPath: opts.receipt,
          ...(gates === undefined ? {} : { gates }),
          ...(opts.offline === true ? { offline: true } : { registry: await pinCheckOptions(opts, signal) }),
        });
        if (opts.offline === true) offlineWarning(opts.lock);
        if (opts.json === true) printJson({ ok: true, changed, plugin, ...(previous === undefined ? {} : { previous }), checked_against_registry: opts.offline !== true });
        else if (previous === undefined) printLine(`already pinned ${pinLine(plugin)}${opts.offline !== true ? " (verified against the registry)" : ""}`);
        else printLine(`upgraded ${plugin.name} ${previous.version} -> ${plugin.version}: bundle ${plugin.bundle_reference}, receipt ${plugin.receipt_reference} (previous pin kept in history${opts.offline === true ? "" : "; verified against the registry"})`);
      }), lockInterrupted("fleet upgrade"));
    });
}

/** Register `fleet` and its verbs on `program`. */
export function registerFleetCommands(program: Command, options: GroupRegistration = {}): void {
  const fleet = program.command("fleet").description("Pin co-loaded plugins by digest in a fleet lock, verify, list, remove and upgrade the pins.");
  if (options.subcommands === false) return;
  registerAdd(fleet);
  registerVerify(fleet);
  registerEdits(fleet);
}
