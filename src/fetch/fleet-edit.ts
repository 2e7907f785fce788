/**
 * Day-to-day edits of a fleet lock (docs/architecture.md, "Fetch: data flow"): `fleet list`,
 * `fleet remove --name N`, `fleet upgrade --receipt F`. An upgrade moves a
 * pin only to a newer verified release of the same package in the same
 * repository, and keeps the old pin in the plugin's `history`. Lock bytes
 * and atomic writes are those of `fleet.ts`.
 */
import { canonicalJson } from "../contract/canonical-json.js";
import { parseJsonFileBytes } from "../contract/json-file.js";
import { requireGatePins, type GateCommands } from "../contract/policy.js";
import { parseReference } from "../contract/reference.js";
import type { FleetPin, FleetPlugin } from "../contract/schemas.js";
import { FetchError } from "./errors.js";
import { requireFleetRegistryOptions, requireKnownOptions, requireOptionKinds, requireOptionsObject, requireStringArgument, requireStringOption, snapshotEntryOptions } from "./entry-options.js";
import { PIN_CHECK_OPTION_KEYS, checkNewPin, compareStableVersions, readFleetLockFile, readFleetLockSnapshot, readPinnableReceipt, readReceiptFile, writeFleetLockFile, type FleetAddOptions, type FleetPinCheckOptions } from "./fleet.js";

/**
 * `fleet list`: the pinned plugins, in lock order (sorted by name).
 * @throws FetchError `FLEET_LOCK_UNREADABLE`, `FLEET_LOCK_INVALID`.
 */
export async function listFleetLock(lockPath: string): Promise<FleetPlugin[]> {
  requireStringArgument(lockPath, "listFleetLock", "lockPath", "the fleet lock file");
  return (await readFleetLockFile(lockPath)).plugins;
}

/**
 * `fleet remove`: drop the plugin named `name` (with its history).
 * @returns the removed entry.
 * @throws FetchError `FLEET_PLUGIN_NOT_PINNED` (no such plugin; the message lists the pinned names), `FLEET_LOCK_*`.
 */
export async function removePluginFromLock(lockPath: string, name: string): Promise<FleetPlugin> {
  requireStringArgument(lockPath, "removePluginFromLock", "lockPath", "the fleet lock file");
  requireStringArgument(name, "removePluginFromLock", "name", "the name of a pinned plugin");
  const snapshot = await readFleetLockSnapshot(lockPath);
  const { lock } = snapshot;
  const found = lock.plugins.find((p) => p.name === name);
  if (found === undefined) {
    const names = lock.plugins.map((p) => p.name);
    throw new FetchError("FLEET_PLUGIN_NOT_PINNED", `fleet lock ${lockPath} does not pin ${JSON.stringify(name)} (it pins ${names.length > 0 ? names.join(", ") : "nothing"}); fix: give the name of a pinned plugin (hermes-plugin-kit fleet list --lock ${lockPath})`);
  }
  await writeFleetLockFile(lockPath, { ...lock, plugins: lock.plugins.filter((p) => p !== found) }, snapshot);
  return found;
}

/** Options of {@link upgradePluginInLock}. */
export interface FleetUpgradeOptions {
  lockPath: string;
  /** The newer release's published `release-receipt.json`. */
  receiptPath: string;
  /** Gate pins to replace the plugin's pinned ones (default: keep the lock's). */
  gates?: Partial<GateCommands>;
  /** How to reach the registry to check the new pin before the lock is written (as {@link FleetAddOptions.registry}). */
  registry?: FleetPinCheckOptions;
  /** Move the pin from the receipt file alone, without checking the registry (as {@link FleetAddOptions.offline}). */
  offline?: boolean;
}


/**
 * `fleet upgrade`: verify the receipt offline against the lock's pins (the
 * plugin's package, the repository of its pinned references, its gate pins),
 * require a strictly newer version, verify the new pin against its repository as `fleet verify` would
 * (unless `offline`), then move the pin and append the old pin to the plugin's `history`. The release the plugin is already pinned at is
 * success with no write (`changed: false`; a rerun after an upgrade).
 * @returns the new entry, the pin it replaced (none when unchanged) and whether the lock changed.
 * @throws FetchError `FLEET_PLUGIN_NOT_PINNED` (use `fleet add`), `FLEET_UPGRADE_NOT_NEWER` (an older release, or
 *   the pinned version with other bytes: the message names `fleet remove` then `fleet add`),
 *   `FLEET_PLUGIN_CONFLICT` (the tarball file name is pinned by another plugin),
 *   `FLEET_RECEIPT_*` (`FLEET_RECEIPT_UNREADABLE`: no regular file of at most 1 MiB, read with that bound, so a
 *   FIFO or `/dev/zero` is refused), `FLEET_LOCK_*`; the `JSON_*` codes for a receipt that is no strict JSON;
 *   ReleaseContractError codes of `verifyFinalReceipt`
 *   (`RECEIPT_PACKAGE_MISMATCH`, `RECEIPT_REGISTRY_MISMATCH` for another repository, `GATE_COMMAND_MISMATCH`, ...);
 *   the codes of `fleet verify` for the new pin (`OCI_NOT_FOUND`: the receipt file is not one the repository
 *   published; provenance codes under the plugin's policy); ReleaseContractError `POLICY_INVALID` (options not an
 *   object, `lockPath` or `receiptPath` not a non-empty string, `gates` not gate pins; before anything is read). Nothing is written on any of them.
 */
export async function upgradePluginInLock(given: FleetUpgradeOptions): Promise<{ plugin: FleetPlugin; previous?: FleetPin; changed: boolean }> {
  requireOptionsObject(given, "upgradePluginInLock", "{ lockPath, receiptPath, gates?, registry?, offline? }");
  const options = snapshotEntryOptions(given, "upgradePluginInLock");
  requireStringOption(options, "lockPath", "upgradePluginInLock", "the fleet lock file");
  requireStringOption(options, "receiptPath", "upgradePluginInLock", "the release-receipt.json file to pin");
  requireKnownOptions(options, ["lockPath", "receiptPath", "gates", "registry", "offline"], "upgradePluginInLock");
  requireOptionKinds(options, { offline: "boolean" }, "upgradePluginInLock");
  if (options.registry !== undefined) requireFleetRegistryOptions(options.registry, PIN_CHECK_OPTION_KEYS, "upgradePluginInLock", "registry option");
  // Gate pins are the caller's: refused before the lock or the receipt is read (both are read before readPinnableReceipt here).
  if (options.gates !== undefined) requireGatePins(options.gates, "gates (--expect-gate)");
  const snapshot = await readFleetLockSnapshot(options.lockPath);
  const { lock } = snapshot;
  // One bounded read (a FIFO or /dev/zero is FLEET_RECEIPT_UNREADABLE, never read to the end): the plugin is found
  // by the package these bytes name, and these same bytes are verified below.
  const bytes = await readReceiptFile(options.receiptPath);
  const named: unknown = parseJsonFileBytes(options.receiptPath, bytes)["package"];
  const current = lock.plugins.find((p) => p.name === named);
  if (current === undefined) {
    throw new FetchError(
      "FLEET_PLUGIN_NOT_PINNED",
      `fleet lock ${options.lockPath} does not pin the receipt's package ${JSON.stringify(named)}; pin it with \`fleet add --lock ${options.lockPath} --receipt ${options.receiptPath} --repository <the registry repository you trust>\``,
    );
  }
  const repository = parseReference(current.bundle_reference).repository.repository;
  const gates = options.gates !== undefined && Object.keys(options.gates).length > 0 ? options.gates : current.gates;
  const { pin } = await readPinnableReceipt(options.receiptPath, { package: current.name, repository, repositorySource: "the repository of the plugin's pinned references in the fleet lock", ...(gates === undefined ? {} : { gates }) }, bytes);
  const samePin = pin.version === current.version && pin.bundle_reference === current.bundle_reference && pin.receipt_reference === current.receipt_reference;
  if (samePin && (options.gates === undefined || Object.keys(options.gates).length === 0 || canonicalJson(options.gates) === canonicalJson(current.gates ?? null))) {
    // Already there (perhaps moved offline): a rerun without `offline` checks the pin against the registry.
    if (options.offline !== true) await checkNewPin(current, options.receiptPath, options.lockPath, options.registry);
    return { plugin: current, changed: false };
  }
  if (compareStableVersions(pin.version, current.version) <= 0) {
    const what = samePin ? "with other gate pins (fleet upgrade replaces gate pins only when it moves the pin)" : pin.version === current.version ? "with other bytes" : "an older release";
    throw new FetchError(
      "FLEET_UPGRADE_NOT_NEWER",
      `fleet upgrade moves a pin only to a newer release: ${current.name} is pinned at ${current.version}, the receipt is ${pin.version}, ${what}; to pin it instead run \`fleet remove --lock ${options.lockPath} --name ${current.name}\`, then \`fleet add --lock ${options.lockPath} --receipt ${options.receiptPath} --repository ${repository}\``,
    );
  }
  const clash = lock.plugins.find((p) => p !== current && p.tarball.filename === pin.tarball.filename);
  if (clash !== undefined) throw new FetchError("FLEET_PLUGIN_CONFLICT", `fleet lock already pins tarball ${pin.tarball.filename} for ${clash.name}`);
  const previous: FleetPin = { version: current.version, bundle_reference: current.bundle_reference, receipt_reference: current.receipt_reference, tarball: current.tarball };
  const plugin: FleetPlugin = { ...pin, ...(gates === undefined ? {} : { gates }), ...(current.provenance === undefined ? {} : { provenance: current.provenance }), history: [...(current.history ?? []), previous] };
  // The new pin is verified against its repository (and the plugin's provenance policy) before the good pin moves.
  if (options.offline !== true) await checkNewPin(plugin, options.receiptPath, options.lockPath, options.registry);
  await writeFleetLockFile(options.lockPath, { ...lock, plugins: lock.plugins.map((p) => (p === current ? plugin : p)) }, snapshot);
  return { plugin, previous, changed: true };
}
