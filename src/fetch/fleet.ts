/**
 * Fleet pins: `fleet.lock.json` records, for every co-loaded plugin, the
 * digest-pinned bundle and receipt references and the one npm tarball's
 * filename and SHA-256 (docs/architecture.md, "Fetch: data flow"; docs/fetch.md "Fleet pins").
 *
 * - {@link addPluginToLock} (`fleet add`): append a plugin from a verified
 *   local receipt. The receipt reference is the digest of the receipt
 *   artifact's manifest, which is a pure function of the receipt bytes
 *   (deterministic layout, reference section 4), so it is computed, and
 *   `fleet verify` later proves it by fetching it.
 * - {@link verifyFleetLock} (`fleet verify`): for each plugin, fetch the
 *   receipt by digest through the verifying download path, and check that
 *   its `registry_reference` is the pinned bundle reference, that the pinned
 *   bundle's manifest (checked, no blobs downloaded) has exactly the layers
 *   the receipt's `payload` records, and that the
 *   tarball filename and SHA-256 agree between lock, receipt and (with
 *   `installedDir`) the installed file.
 */
import { requireReceiptOfBundle } from "./receipt-bundle.js";
import { randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { access, lstat, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { hashFile } from "../contract/file-hash.js";
import { describeUnreadFile, readRegularFile } from "../contract/fs-async.js";
import { canonicalFormDifference, canonicalJson, canonicalJsonPretty, parseStrictJson, type JsonObject } from "../contract/canonical-json.js";
import { describeValue, isNpmPackageName, NPM_PACKAGE_NAME_RULE, parseStableSemver } from "../contract/grammar.js";
import { requireGatePins, unpinnedRepository, type GateCommands, type ReleasePolicy } from "../contract/policy.js";
import { parseReference, parseRepository, type Repository } from "../contract/reference.js";
import { verifyFinalReceipt } from "../contract/release-document.js";
import { FleetLockSchema, type FleetLock, type FleetPlugin, type PublishedReceipt } from "../contract/schemas.js";
import { OCI_MANIFEST_MEDIA_TYPE } from "../contract/constants.js";
import { bindingFromReceipt } from "../contract/provenance.js";
import { lockedProvenancePolicy, provenancePolicyFromLock, type ProvenancePolicy } from "../contract/provenance-policy.js";
import type { CheckedTrustedRoot } from "../contract/trusted-root.js";
import { receiptReferenceOf } from "../contract/artifact-document.js";

import { HermesPluginKitError, InterruptedError, ReleaseContractError } from "../contract/errors.js";
import { FetchError } from "./errors.js";
import { DOWNLOAD_OPTION_KEYS, FLEET_VERIFY_OPTION_KEYS, PIN_CHECK_OPTION_KEYS, pickOptions, requireFleetRegistryOptions, requireKnownOptions, requireOptionKinds, requirePackageName, requireStringArgument, snapshotEntryOptions, requireOptionsObject, requireStringOption } from "./entry-options.js";
import { OciError } from "../oci/errors.js";
import { acquirePidLock } from "../oci/lock-owner.js";
import { downloadRelease, inspectRelease, isIncompleteRelease, type DownloadOptions, type RegistryCredentials } from "./fetch.js";
import { fileCreateRefused, makeDirectory, pathTooLong } from "../contract/directory.js";
import { parseJsonFileBytes } from "../contract/json-file.js";

/** Largest lock file read, in bytes. */
const MAX_LOCK_BYTES = 4 * 1024 * 1024;
/** Largest receipt file read, in bytes. */
const MAX_RECEIPT_BYTES = 1024 * 1024;

/** An empty lock. */
export function emptyFleetLock(): FleetLock {
  return { schema_version: 1, plugins: [] };
}

/** The exact bytes of a lock file: canonical JSON, 2-space indent, plugins sorted by name, trailing newline. */
export function fleetLockBytes(lock: FleetLock): Buffer {
  const sorted = { ...lock, plugins: [...lock.plugins].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
  return Buffer.from(canonicalJsonPretty(sorted), "utf8");
}

/**
 * Check a parsed lock: the zod schema (exact keys), digest-pinned references,
 * no plugin name or tarball filename twice, bundle and receipt references of
 * one plugin in the same repository and different from each other.
 * @param path the lock file, named in every message.
 * @throws FetchError `FLEET_LOCK_INVALID`.
 */
export function checkFleetLock(value: unknown, path?: string): FleetLock {
  const lockName = path === undefined ? "fleet lock" : `fleet lock ${path}`;
  const result = FleetLockSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new FetchError("FLEET_LOCK_INVALID", `${lockName} does not match its schema at ${issue ? issue.path.map(String).join(".") || "<root>" : "<root>"}: ${issue?.message ?? "invalid"}`);
  }
  const lock = result.data;
  const names = new Set<string>();
  const files = new Set<string>();
  for (const plugin of lock.plugins) {
    if (!isNpmPackageName(plugin.name)) throw new FetchError("FLEET_LOCK_INVALID", `${lockName} plugin name ${describeValue(plugin.name)} is not an npm package name`);
    if (names.has(plugin.name)) throw new FetchError("FLEET_LOCK_INVALID", `${lockName} pins ${plugin.name} twice`);
    if (files.has(plugin.tarball.filename)) throw new FetchError("FLEET_LOCK_INVALID", `${lockName} pins tarball ${plugin.tarball.filename} twice`);
    names.add(plugin.name);
    files.add(plugin.tarball.filename);
    let bundleRepo: string;
    let receiptRepo: string;
    try {
      bundleRepo = parseReference(plugin.bundle_reference).repository.repository;
      receiptRepo = parseReference(plugin.receipt_reference).repository.repository;
    } catch (error) {
      throw new FetchError("FLEET_LOCK_INVALID", `${lockName} plugin ${plugin.name}: ${(error as Error).message}`, { cause: error });
    }
    if (bundleRepo !== receiptRepo) {
      throw new FetchError("FLEET_LOCK_INVALID", `${lockName} plugin ${plugin.name}: bundle and receipt references name different repositories (${bundleRepo}, ${receiptRepo})`);
    }
    if (plugin.bundle_reference === plugin.receipt_reference) {
      throw new FetchError("FLEET_LOCK_INVALID", `${lockName} plugin ${plugin.name}: the bundle and receipt references must differ`);
    }
  }
  return lock;
}

/**
 * Run one registry read of `fleet verify` for `plugin`: an `OCI_NOT_FOUND` names the plugin, which pinned
 * reference is missing (or a blob of it: the release is incomplete) and what to do (the lock holds several plugins; the registry's answer names none).
 */
async function forPlugin<T>(plugin: FleetPlugin, lockPath: string, what: "receipt" | "bundle", reference: string, work: () => Promise<T>, adding?: { receiptPath: string }): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof OciError && error.code === "OCI_NOT_FOUND" && adding !== undefined && !isIncompleteRelease(error)) {
      // fleet add / upgrade: nothing is pinned yet; the file is what does not match the repository.
      const reason =
        what === "receipt"
          ? `the repository holds no receipt with this file's digest (${reference}): ${adding.receiptPath} is not a receipt this repository published (edited, or from another store)`
          : `the receipt names the bundle ${reference}, which the repository does not hold`;
      throw new OciError(
        "OCI_NOT_FOUND",
        `plugin ${plugin.name} ${plugin.version}: ${reason}; nothing was pinned; fix: fetch the receipt by the reference its release published (hermes-plugin-kit fetch --reference <receipt reference> --expect receipt --output-dir <dir>) and pin that file`,
        { cause: error },
      );
    }
    if (error instanceof OciError && error.code === "OCI_NOT_FOUND" && isIncompleteRelease(error)) {
      throw new OciError("OCI_NOT_FOUND", `plugin ${plugin.name} ${plugin.version}: its pinned ${what} ${reference}: ${error.message}`, { cause: error });
    }
    if (error instanceof OciError && error.code === "OCI_NOT_FOUND") {
      throw new OciError(
        "OCI_NOT_FOUND",
        `plugin ${plugin.name} ${plugin.version}: its pinned ${what} ${reference} is not in the registry (${error.cause instanceof OciError ? error.cause.message : error.message}); fix: check the registry still holds that release (and that you can read it), or unpin it with hermes-plugin-kit fleet remove --lock ${lockPath} --name ${plugin.name}`,
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * Read and check a lock file (strict JSON: duplicate keys refused).
 * @param allowMissing return an empty lock when the file does not exist.
 * @throws IoError `IO_PATH_TOO_LONG` (ENAMETOOLONG); FetchError `FLEET_LOCK_UNREADABLE` (unreadable, a symlink, not a
 *   regular file, larger than 4 MiB), `FLEET_LOCK_INVALID`.
 */
export async function readFleetLockFile(path: string, allowMissing = false): Promise<FleetLock> {
  return (await readFleetLockSnapshot(path, allowMissing)).lock;
}

/**
 * A fleet lock as an edit read it: the lock and the bytes it was parsed from (`undefined`: there was no lock
 * file yet). {@link writeFleetLockFile} given the snapshot writes only while the file still holds those bytes.
 */
export interface FleetLockSnapshot {
  lock: FleetLock;
  bytes: Buffer | undefined;
}

/**
 * {@link readFleetLockFile}, keeping the bytes read for the write's check that nobody changed the lock meanwhile.
 * @throws the codes of {@link readFleetLockFile}.
 */
export async function readFleetLockSnapshot(path: string, allowMissing = false): Promise<FleetLockSnapshot> {
  requireStringArgument(path, "readFleetLockFile", "path", "the fleet lock file");
  requireOptionKinds({ allowMissing }, { allowMissing: "boolean" }, "readFleetLockFile");
  const found = await readRegularFile(path, { maxBytes: MAX_LOCK_BYTES });
  if (found.kind === "failed" && found.code === "ENAMETOOLONG") throw pathTooLong(path, path, "fleet lock (--lock)", undefined, "file");
  if (found.kind === "failed" && (found.code === "ENOENT" || found.code === "ENOTDIR")) {
    if (allowMissing) return { lock: emptyFleetLock(), bytes: undefined };
    throw new FetchError("FLEET_LOCK_UNREADABLE", `fleet lock ${path} does not exist (${found.code}); fix: give the path of your fleet lock (hermes-plugin-kit fleet add --lock <file> creates one)`);
  }
  if (found.kind === "not-regular" || (found.kind === "failed" && found.code === "ELOOP")) {
    throw new FetchError("FLEET_LOCK_UNREADABLE", `fleet lock ${path} must be a regular file; found ${found.kind === "not-regular" ? found.what : "a symbolic link (not followed)"}; fix: pass the path of the lock file itself`);
  }
  if (found.kind === "too-large") throw new FetchError("FLEET_LOCK_UNREADABLE", `fleet lock ${path} is larger than ${MAX_LOCK_BYTES} bytes`);
  if (found.kind === "failed") throw new FetchError("FLEET_LOCK_UNREADABLE", `fleet lock ${path} cannot be read (${found.code})`);
  let doc: JsonObject;
  try {
    doc = parseStrictJson(found.bytes);
  } catch (error) {
    throw new FetchError("FLEET_LOCK_INVALID", `fleet lock ${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  return { lock: checkFleetLock(doc, path), bytes: found.bytes };
}

/**
 * Write the lock atomically (temp file in the same directory, then rename), keeping the permission bits
 * of the lock it replaces; a symlinked lock path is refused, and so is a lock this user may not write.
 * Given `readAs` (the snapshot the edit started from), the lock is re-read just before the rename and the
 * write happens only if the file still holds the snapshot's bytes (or is still absent): an edit that read the
 * lock, then spent seconds checking the registry, does not overwrite another edit made meanwhile.
 * @throws FetchError `FLEET_LOCK_UNREADABLE` (the path is no regular file), `FLEET_LOCK_READ_ONLY` (not writable
 *   for this user: nothing changed), `FLEET_LOCK_CHANGED` (the lock is no longer the snapshot: nothing written);
 *   IoError `IO_NOT_A_DIRECTORY`,
 *   `IO_DIRECTORY_UNWRITABLE` (its directory cannot be created or written, e.g. under /proc or /sys), `IO_PATH_TOO_LONG`.
 */
export async function writeFleetLockFile(path: string, lock: FleetLock, readAs?: FleetLockSnapshot): Promise<void> {
  requireStringArgument(path, "writeFleetLockFile", "path", "the fleet lock file");
  if (readAs !== undefined && (readAs === null || typeof readAs !== "object" || !("bytes" in readAs) || !(readAs.bytes === undefined || Buffer.isBuffer(readAs.bytes)))) {
    throw new ReleaseContractError("POLICY_INVALID", `writeFleetLockFile argument readAs must be the snapshot readFleetLockSnapshot returned ({ lock, bytes }), found ${describeValue(readAs)}`);
  }
  const st = await lstat(path).catch(() => null);
  if (st !== null && !st.isFile()) throw new FetchError("FLEET_LOCK_UNREADABLE", `fleet lock ${path} must be a regular file (not a symlink)`);
  // A read-only lock (no owner write bit: chmod a-w says "do not change it", also to root) or one this
  // user may not write (another owner) is not replaced through its directory.
  if (st !== null) {
    const writable = (st.mode & 0o200) !== 0 && (await access(path, fsConstants.W_OK).then(() => true, () => false));
    if (!writable) {
      throw new FetchError(
        "FLEET_LOCK_READ_ONLY",
        `fleet lock ${path}: expected a lock this user may write, found mode ${(st.mode & 0o777).toString(8).padStart(4, "0")} owned by uid ${st.uid}; nothing was changed; fix: make it writable (chmod u+w) if you mean to change it, as its owner`,
      );
    }
  }
  // The lock is checked before anything is created: a refused lock leaves no directory and no temp file.
  const bytes = fleetLockBytes(checkFleetLock(lock));
  await makeDirectory(dirname(resolve(path)), { purpose: "fleet lock directory (--lock)" });
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  let handle;
  try {
    handle = await open(temp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o644);
  } catch (error) {
    throw fileCreateRefused(path, dirname(resolve(path)), error, "fleet lock (--lock)");
  }
  try {
    // The rewritten lock keeps the permission bits of the one it replaces (a 0600 lock stays private).
    if (st !== null) await handle.chmod(st.mode & 0o777);
    await handle.writeFile(bytes);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    // Compare and rename as one step among fleet edits: two editors that both read the lock before either
    // wrote it cannot both succeed (the second finds it changed), whatever the timing.
    await withEditGuard(path, async () => {
      if (readAs !== undefined) await requireUnchangedLock(path, readAs);
      await rename(temp, path);
    });
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** How long an edit waits for another edit's compare-and-rename (milliseconds; that step takes about one). */
const EDIT_GUARD_WAIT_MS = 2000;

/**
 * Run `step` holding the PID lock `<lock>.edit-guard` (the short compare-and-rename of
 * {@link writeFleetLockFile}; `acquirePidLock`: a guard left by a dead process is broken, one that is not
 * the kit's or names another program is refused at once, a live holder is waited for up to
 * {@link EDIT_GUARD_WAIT_MS}).
 * @throws FetchError `FLEET_LOCK_BUSY` naming what holds the guard and the fix.
 */
async function withEditGuard(path: string, step: () => Promise<void>): Promise<void> {
  let release: () => Promise<void>;
  try {
    release = await acquirePidLock(`${path}.edit-guard`, {
      holder: "a fleet add, upgrade or remove of this lock",
      timeoutMs: EDIT_GUARD_WAIT_MS,
      refuse: (message) => new FetchError("FLEET_LOCK_BUSY", `fleet lock ${path}: nothing was written; ${message}`),
    });
  } catch (error) {
    if (error instanceof FetchError) throw error;
    throw fileCreateRefused(path, dirname(resolve(path)), error, "fleet lock (--lock)");
  }
  try {
    await step();
  } finally {
    await release();
  }
}

/** Refuse (`FLEET_LOCK_CHANGED`) when the lock file no longer holds the bytes `readAs` was read from. */
async function requireUnchangedLock(path: string, readAs: FleetLockSnapshot): Promise<void> {
  const now = await readRegularFile(path, { maxBytes: MAX_LOCK_BYTES });
  const absent = now.kind === "failed" && (now.code === "ENOENT" || now.code === "ENOTDIR");
  const same = readAs.bytes === undefined ? absent : now.kind === "read" && now.bytes.equals(readAs.bytes);
  if (same) return;
  const found = absent ? "it was removed" : readAs.bytes === undefined ? "a lock file was created" : "its bytes differ";
  throw new FetchError(
    "FLEET_LOCK_CHANGED",
    `fleet lock ${path} changed while this command ran (${found}: another fleet add, upgrade or remove, or an edit); nothing was written; fix: rerun the command, which reads the lock as it is now`,
  );
}

/** Options of {@link addPluginToLock}. */
export interface FleetAddOptions {
  /** The lock file (created when absent). */
  lockPath: string;
  /** A local `release-receipt.json` (its exact published bytes). */
  receiptPath: string;
  /** Expected package (default: the receipt's). */
  package?: string;
  /**
   * The registry repository the consumer trusts (`--repository`); required:
   * without it `POLICY_REPOSITORY_UNPINNED` (the receipt's own
   * `registry_repository` is never the expectation).
   */
  repository?: string;
  /** Gate commands to pin (`--expect-gate`): the receipt must record them, and the lock keeps them for `fleet verify`. */
  gates?: Partial<GateCommands>;
  /** Provenance policy pinned with the plugin (`fleet verify` then requires its attestation to verify). */
  provenance?: ProvenancePolicy;
  /**
   * How to reach the registry to check the new pin before the lock is written (the reads of `fleet verify`:
   * plain HTTP, credentials, trusted root, target hooks). Default: the repository's own target, no options.
   */
  registry?: FleetPinCheckOptions;
  /**
   * Pin from the receipt file alone, without checking the registry (`fleet verify` checks it later). Default
   * false: the new pin is verified as `fleet verify` verifies it (receipt fetched by its digest, bundle,
   * provenance) before anything is written.
   */
  offline?: boolean;
}

/** The keys of {@link FleetPinCheckOptions}. */
export { PIN_CHECK_OPTION_KEYS };

/** The registry reads {@link addPluginToLock} and `upgradePluginInLock` make before writing a pin: those of {@link verifyFleetLock}. */
export type FleetPinCheckOptions = Omit<FleetVerifyOptions, "lockPath" | "installedDir">;

/**
 * Verify `plugin` against its repository as `fleet verify` would, before a lock is written with it
 * (`fleet add`, `fleet upgrade`): a receipt file that is not the one its repository published (edited,
 * or from another store) pins nothing. Refusals name the plugin; a receipt reference the repository
 * does not hold says the file is not a published receipt.
 * @throws the codes of {@link verifyFleetLock} for one plugin.
 */
export async function checkNewPin(plugin: FleetPlugin, receiptPath: string, lockPath: string, options: FleetPinCheckOptions = {}): Promise<void> {
  await verifyPinnedPlugin(plugin, { ...options, lockPath }, { receiptPath });
}

/**
 * The bytes of the receipt file at `receiptPath`: a regular file (no symlink, FIFO or device) of at most
 * 1 MiB, read with that bound (a FIFO, `/dev/zero` or a huge file is refused, never read to the end).
 * @throws FetchError `FLEET_RECEIPT_UNREADABLE` naming what was found.
 */
export async function readReceiptFile(receiptPath: string): Promise<Buffer> {
  const found = await readRegularFile(receiptPath, { maxBytes: MAX_RECEIPT_BYTES });
  if (found.kind !== "read") {
    throw new FetchError("FLEET_RECEIPT_UNREADABLE", `receipt ${receiptPath}: expected a regular file of at most ${MAX_RECEIPT_BYTES} bytes (the release-receipt.json that fetch --expect receipt writes), found ${describeUnreadFile(found, MAX_RECEIPT_BYTES)}`);
  }
  return found.bytes;
}

/**
 * Read a local receipt file (at most 1 MiB, a regular file), verify it offline
 * against the pins, and require its canonical bytes.
 * @returns the receipt, its bytes and the pin derived from it.
 * @throws Before the file is read: ReleaseContractError `POLICY_INVALID` (`pins.package` not an npm package name,
 *   `pins.gates` not gate pins), `REPOSITORY_INVALID` (`pins.repository`, as `parseRepository`). Then:
 *   ReleaseContractError `POLICY_REPOSITORY_UNPINNED` (no `pins.repository`: the
 *   receipt's own `registry_repository` is never the expectation);
 *   FetchError `FLEET_RECEIPT_UNREADABLE` (also a receipt naming no npm package when none was pinned),
 *   `FLEET_RECEIPT_NOT_CANONICAL`; codes of `verifyFinalReceipt`.
 * @param read the file's bytes when the caller already read them with {@link readReceiptFile} (one read: what
 *   was looked at is what is verified); otherwise read here.
 */
export async function readPinnableReceipt(
  receiptPath: string,
  pins: { package?: string; repository?: string; repositorySource?: string; gates?: Partial<GateCommands> },
  read?: Buffer,
): Promise<{ receipt: PublishedReceipt; bytes: Buffer; pin: FleetPlugin }> {
  // The pins are the caller's, refused as such before any file is read, never blamed on the receipt: a package
  // that is no npm name (uppercase), a repository with a URL or credentials, a misspelt gate (it would pin nothing).
  if (pins.package !== undefined) requirePackageName(pins.package, "package (--package)");
  if (pins.repository !== undefined) parseRepository(pins.repository);
  if (pins.gates !== undefined) requireGatePins(pins.gates, "gates (--expect-gate)");
  const bytes = read ?? (await readReceiptFile(receiptPath));
  const doc = parseJsonFileBytes(receiptPath, bytes);
  // The consumer's pin, never the receipt's own registry_repository (docs/fetch.md "Whose policy").
  const repository = pins.repository;
  if (repository === undefined) {
    throw unpinnedRepository({ document: `receipt ${receiptPath}`, repository: doc["registry_repository"], sources: "--repository", fix: "pass --repository <the registry repository you trust>" });
  }
  // The pin was checked above like every --repository: a URL or credentials in it are refused (REPOSITORY_INVALID), never echoed.
  const pkg = pins.package ?? doc["package"];
  if (!isNpmPackageName(pkg)) {
    throw new FetchError("FLEET_RECEIPT_UNREADABLE", `receipt ${receiptPath} does not name an npm package: expected a package name (${NPM_PACKAGE_NAME_RULE}), found ${describeValue(pkg)}`);
  }
  const policy: ReleasePolicy = {
    package: pkg,
    registryRepository: repository,
    gates: { ...pins.gates },
    sources: {
      package: pins.package === undefined ? "the receipt's own package" : "--package",
      repository: pins.repositorySource ?? "--repository",
      gates: "--expect-gate",
    },
  };
  const receipt: PublishedReceipt = verifyFinalReceipt(doc, policy);
  if (!Buffer.from(canonicalJson(receipt), "utf8").equals(bytes)) {
    throw new FetchError(
      "FLEET_RECEIPT_NOT_CANONICAL",
      `receipt ${receiptPath} is not in its published canonical form: expected the exact published bytes (compact, keys sorted, non-ASCII escaped, one trailing newline; its receipt reference is derived from them), found ${canonicalFormDifference(bytes, canonicalJson(receipt))}; fix: pass the file that fetch --reference <receipt reference> --expect receipt wrote, unreformatted`,
    );
  }
  const artifact = receipt.artifacts[0] as PublishedReceipt["artifacts"][number];
  const pin: FleetPlugin = {
    name: receipt.package,
    version: receipt.version,
    bundle_reference: receipt.registry_reference,
    receipt_reference: receiptReferenceOf(repository, bytes),
    tarball: { filename: artifact.filename, sha256: artifact.sha256 },
    ...(pins.gates !== undefined && Object.keys(pins.gates).length > 0 ? { gates: { ...pins.gates } } : {}),
  };
  return { receipt, bytes, pin };
}

/** Compare two stable versions (`x.y.z`, as receipts carry them): negative, 0 or positive. */
export function compareStableVersions(a: string, b: string): number {
  const x = parseStableSemver(a);
  const y = parseStableSemver(b);
  return x.major - y.major || x.minor - y.minor || x.patch - y.patch;
}

/** True when two pins name the same release: version, both references and the tarball. */
function sameRelease(a: FleetPlugin, b: FleetPlugin): boolean {
  return a.version === b.version && a.bundle_reference === b.bundle_reference && a.receipt_reference === b.receipt_reference && canonicalJson(a.tarball) === canonicalJson(b.tarball);
}

/**
 * The policy fields `fleet add` was asked to pin that the lock's entry pins differently (`provenance`,
 * `gates`); a field not asked for keeps the lock's value and is no conflict.
 */
function policyDifferences(pinned: FleetPlugin, asked: FleetPlugin): string[] {
  const differences: string[] = [];
  if (asked.provenance !== undefined && canonicalJson(pinned.provenance ?? null) !== canonicalJson(asked.provenance)) differences.push("provenance policy (--provenance ...)");
  if (asked.gates !== undefined && canonicalJson(pinned.gates ?? null) !== canonicalJson(asked.gates)) differences.push("gate pins (--expect-gate)");
  return differences;
}

/**
 * `fleet add`: verify the receipt file (`verifyFinalReceipt` against the
 * pinned `repository`, required), require its bytes to be the canonical receipt bytes,
 * verify the new pin against the repository as `fleet verify` would (the receipt fetched by
 * the digest of the file's bytes, the bundle it names, the provenance policy; skipped with `offline`),
 * and append `{name, version, bundle_reference, receipt_reference, tarball}`.
 * Adding the release a plugin is already pinned at is success with no write
 * (`changed: false`, the lock's entry returned, its history and policy kept),
 * unless the add asks for another provenance policy or other gate pins.
 * @returns the plugin entry and whether the lock changed.
 * @throws Before anything is read: ReleaseContractError `POLICY_INVALID` (options not an object, `lockPath` or
 *   `receiptPath` not a non-empty string, `package` not an npm package name such as `"Evil"`, `repository` not a
 *   string, `gates` not gate pins), `REPOSITORY_INVALID` (`repository`, as `parseRepository`), ProvenanceError
 *   `PROVENANCE_POLICY_INVALID` and the key codes of `resolveProvenancePolicy` (`provenance`). Then:
 *   ReleaseContractError `POLICY_REPOSITORY_UNPINNED` (no `repository`, nothing written);
 *   FetchError `FLEET_PLUGIN_CONFLICT` (the plugin is pinned at another release: the message names the
 *   command that moves it, `fleet upgrade` for a newer release of the same repository, else `fleet remove` then
 *   `fleet add`; the same release with another policy; its tarball pinned for another plugin),
 *   `FLEET_RECEIPT_UNREADABLE`, `FLEET_RECEIPT_NOT_CANONICAL`, `FLEET_LOCK_*`; ReleaseContractError codes of `verifyFinalReceipt`;
 *   the codes of {@link verifyFleetLock} for the new pin (`OCI_NOT_FOUND`: the file is not a receipt the repository
 *   published; `PROVENANCE_*` under the pinned policy, e.g. `PROVENANCE_NOT_FOUND`). Nothing is written on any of them.
 */
export async function addPluginToLock(given: FleetAddOptions): Promise<{ plugin: FleetPlugin; changed: boolean }> {
  requireOptionsObject(given, "addPluginToLock", "{ lockPath, receiptPath, repository, package?, gates?, provenance?, registry?, offline? }");
  const options = snapshotEntryOptions(given, "addPluginToLock");
  requireStringOption(options, "lockPath", "addPluginToLock", "the fleet lock file");
  requireStringOption(options, "receiptPath", "addPluginToLock", "the release-receipt.json file to pin");
  requireKnownOptions(options, ["lockPath", "receiptPath", "package", "repository", "gates", "provenance", "registry", "offline"], "addPluginToLock");
  requireOptionKinds(options, { offline: "boolean" }, "addPluginToLock");
  if (options.registry !== undefined) requireFleetRegistryOptions(options.registry, PIN_CHECK_OPTION_KEYS, "addPluginToLock", "registry option");
  // The caller's pins are refused as the caller's before any file is read, never blamed on the receipt (the
  // package, the repository's form and the gates by readPinnableReceipt, before it reads).
  requireStringOption(options, "repository", "addPluginToLock", "the registry repository you trust, e.g. ghcr.io/acme/plugin", true);
  const provenance = options.provenance === undefined ? undefined : lockedProvenancePolicy(options.provenance);
  const { pin } = await readPinnableReceipt(options.receiptPath, options);
  const plugin: FleetPlugin = { ...pin, ...(provenance === undefined ? {} : { provenance }) };
  const snapshot = await readFleetLockSnapshot(options.lockPath, true);
  const { lock } = snapshot;
  const same = lock.plugins.find((p) => p.name === plugin.name);
  if (same !== undefined) {
    const conflict = pinnedConflict(options, same, plugin);
    if (conflict !== undefined) throw conflict;
    // Already pinned (perhaps offline): a rerun without `offline` is the check, as fleet verify of this entry.
    if (options.offline !== true) await checkNewPin(same, options.receiptPath, options.lockPath, options.registry);
    return { plugin: same, changed: false };
  }
  const clash = lock.plugins.find((p) => p.tarball.filename === plugin.tarball.filename);
  if (clash !== undefined) throw new FetchError("FLEET_PLUGIN_CONFLICT", `fleet lock already pins tarball ${plugin.tarball.filename} for ${clash.name}`);
  if (options.offline !== true) await checkNewPin(plugin, options.receiptPath, options.lockPath, options.registry);
  await writeFleetLockFile(options.lockPath, { schema_version: 1, plugins: [...lock.plugins, plugin] }, snapshot);
  return { plugin, changed: true };
}

/**
 * Why `asked` cannot be added next to `pinned` (same plugin name), with the command that works; undefined
 * when it is the release already pinned with no other policy asked for.
 */
function pinnedConflict(options: FleetAddOptions, pinned: FleetPlugin, asked: FleetPlugin): FetchError | undefined {
  const lock = `--lock ${options.lockPath}`;
  const removeThenAdd = `\`fleet remove ${lock} --name ${asked.name}\`, then this \`fleet add\` again`;
  if (sameRelease(pinned, asked)) {
    const differences = policyDifferences(pinned, asked);
    if (differences.length === 0) return undefined;
    return new FetchError(
      "FLEET_PLUGIN_CONFLICT",
      `fleet lock already pins ${asked.name} ${asked.version} (this receipt) with another ${differences.join(" and ")}; fleet add does not change a pin's policy: run ${removeThenAdd} (fleet upgrade only moves a pin to a newer release)`,
    );
  }
  const repository = (reference: string): string => parseReference(reference).repository.repository;
  const newer = compareStableVersions(asked.version, pinned.version) > 0;
  const sameRepository = repository(asked.bundle_reference) === repository(pinned.bundle_reference);
  const found = `fleet lock already pins ${asked.name} ${pinned.version} (${pinned.bundle_reference}), and this receipt is ${asked.version}${sameRepository ? "" : ` from ${repository(asked.bundle_reference)}`}`;
  if (newer && sameRepository) {
    const kept = policyDifferences(pinned, asked).length > 0 ? "; upgrade keeps the pin's provenance policy and takes --expect-gate to replace its gate pins" : "";
    return new FetchError("FLEET_PLUGIN_CONFLICT", `${found}: to move the pin run \`fleet upgrade ${lock} --receipt ${options.receiptPath}\` (the old pin is kept in its history${kept})`);
  }
  const why = !sameRepository ? "another repository" : newer ? "" : asked.version === pinned.version ? "the same version with other bytes" : "an older release";
  return new FetchError("FLEET_PLUGIN_CONFLICT", `${found}, ${why} (fleet upgrade moves a pin only to a newer release of the same repository): to pin it instead run ${removeThenAdd}`);
}

/** Options of {@link verifyFleetLock}. */
export interface FleetVerifyOptions extends Omit<DownloadOptions, "reference" | "repository" | "expect"> {
  lockPath: string;
  /** Directory holding the installed tarballs (`<dir>/<file>` or `<dir>/dist/<file>`). */
  installedDir?: string;
  /** Trusted root for plugins pinned with a keyless provenance policy (default: the embedded public-good root). */
  trustedRoot?: CheckedTrustedRoot;
  /** Credentials per plugin repository (default: `credentials`, for every repository). */
  credentialsFor?: (repository: Repository) => RegistryCredentials | undefined | Promise<RegistryCredentials | undefined>;
}

/** One verified plugin. */
export interface FleetPluginResult {
  name: string;
  version: string;
  bundle_reference: string;
  receipt_reference: string;
  tarball: { filename: string; sha256: string };
  /** Installed files checked (absolute paths), when `installedDir` was given. */
  installed: string[];
  /** The verified attestations, when the plugin is pinned with a provenance policy. */
  attestations?: string[];
}

/** The expectations of one pinned plugin: its name, and its gate pins from the lock over any given ones. */
function pluginPolicy(base: DownloadOptions["policy"], plugin: FleetPlugin): NonNullable<DownloadOptions["policy"]> {
  const gates = { ...base?.gates, ...plugin.gates };
  return {
    ...base,
    package: plugin.name,
    gates,
    sources: { ...base?.sources, package: "the fleet lock", repository: "the fleet lock", ...(plugin.gates !== undefined ? { gates: "the fleet lock" } : {}) },
  };
}

/**
 * The provenance policy pinned with a plugin: the bundle's attestations must
 * verify under it and bind to the receipt (`verifyReleaseProvenance`, loaded only here).
 * @returns the attestation references.
 */
async function verifyPinnedProvenance(
  locked: NonNullable<FleetPlugin["provenance"]>,
  bundle: Awaited<ReturnType<typeof inspectRelease>>,
  repository: string,
  receipt: PublishedReceipt,
  trustedRoot: CheckedTrustedRoot | undefined,
): Promise<string[]> {
  const { verifyReleaseProvenance } = await import("./provenance.js");
  const subject = { mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: bundle.manifest.digest, size: bundle.manifest.size };
  const verified = await verifyReleaseProvenance(bundle.target, repository, subject, bindingFromReceipt(receipt), {
    policy: provenancePolicyFromLock(locked),
    ...(trustedRoot === undefined ? {} : { trustedRoot }),
  });
  return verified.attestations.map((a) => a.reference);
}

/**
 * `fleet verify`: check every pinned plugin (see the module comment).
 * @returns one result per plugin, in lock order.
 * Every plugin is checked; the first refusal is thrown with its code, its message followed by each other
 * failing plugin's message and code.
 * @throws FetchError `FLEET_LOCK_*` (`FLEET_LOCK_EMPTY`: a lock that pins nothing, with `installedDir` given),
 *   `FLEET_BUNDLE_REFERENCE_MISMATCH`,
 *   `FLEET_BUNDLE_MISMATCH` (the pinned bundle's layers are not the receipt's payload),
 *   `FLEET_VERSION_MISMATCH`, `FLEET_TARBALL_MISMATCH` (lock vs. receipt),
 *   `FLEET_INSTALLED_MISSING`, `FLEET_INSTALLED_UNSAFE`, `FLEET_INSTALLED_MISMATCH`;
 *   ReleaseContractError `RECEIPT_BUNDLE_MISMATCH` (any other field of the receipt differs from what the bundle makes);
 *   for a plugin pinned with a provenance policy, every code of `verifyReleaseProvenance`;
 *   every code of the verifying download of the receipt (privacy, OCI, contract).
 *   Messages name the plugin. ReleaseContractError `POLICY_INVALID` (options not an object, `lockPath` not a
 *   non-empty string; before anything is read).
 */
export async function verifyFleetLock(given: FleetVerifyOptions): Promise<FleetPluginResult[]> {
  requireOptionsObject(given, "verifyFleetLock", "{ lockPath, installedDir?, plainHttp?, credentials?, trustedRoot?, signal?, ... }");
  const options = snapshotEntryOptions(given, "verifyFleetLock");
  requireStringOption(options, "lockPath", "verifyFleetLock", "the fleet lock file");
  requireFleetRegistryOptions(options, FLEET_VERIFY_OPTION_KEYS, "verifyFleetLock");
  requireStringOption(options, "installedDir", "verifyFleetLock", "the directory holding the installed tarballs", true);
  const lock = await readFleetLockFile(options.lockPath);
  // Installed files to check, and no pin to check them against: a passing answer would be about nothing.
  if (lock.plugins.length === 0 && options.installedDir !== undefined) {
    throw new FetchError(
      "FLEET_LOCK_EMPTY",
      `fleet lock ${options.lockPath} pins no plugin, so nothing installed in ${options.installedDir} can be verified against a pin; fix: check that --lock names your fleet's lock, or pin the plugins first (hermes-plugin-kit fleet add --lock ${options.lockPath} --receipt <release-receipt.json> --repository <registry/repository>)`,
    );
  }
  // Every plugin is checked, so one bad pin does not hide another: the first refusal is thrown (its code is
  // the answer's), with the others' messages and codes after it. An interruption stops at once.
  const results: FleetPluginResult[] = [];
  const failures: HermesPluginKitError[] = [];
  for (const plugin of lock.plugins) {
    try {
      results.push(await verifyPinnedPlugin(plugin, options));
    } catch (error) {
      if (!(error instanceof HermesPluginKitError) || error instanceof InterruptedError) throw error;
      failures.push(error);
    }
  }
  const [first, ...others] = failures;
  if (first === undefined) return results;
  if (others.length > 0) {
    first.message += `; ${others.length} more of the lock's ${lock.plugins.length} plugins failed too: ${others.map((e) => `${e.message} [${e.code}]`).join("; ")}`;
  }
  throw first;
}

/**
 * {@link verifyFleetLock} for one pinned plugin (also {@link checkNewPin}'s check). Every refusal names the
 * plugin it is about (a lock pins several), whatever area raised it.
 */
async function verifyPinnedPlugin(plugin: FleetPlugin, options: FleetVerifyOptions, adding?: { receiptPath: string }): Promise<FleetPluginResult> {
  try {
    return await verifyOnePlugin(plugin, options, adding);
  } catch (error) {
    if (error instanceof HermesPluginKitError && !(error instanceof InterruptedError) && !error.message.startsWith(`plugin ${plugin.name}`)) {
      error.message = `plugin ${plugin.name} ${plugin.version}: ${error.message}`;
    }
    throw error;
  }
}

/** The checks of {@link verifyPinnedPlugin}. */
async function verifyOnePlugin(plugin: FleetPlugin, options: FleetVerifyOptions, adding?: { receiptPath: string }): Promise<FleetPluginResult> {
  const parsed = parseReference(plugin.receipt_reference).repository;
  const credentials = options.credentialsFor !== undefined ? await options.credentialsFor(parsed) : options.credentials;
  const { credentials: _ignored, ...rest } = options;
  void _ignored;
  // The receipt and the bundle are read alike: this plugin's repository, credentials and policy.
  const pinned = (reference: string, expect: "receipt" | "bundle"): DownloadOptions => ({
    ...pickOptions(rest, DOWNLOAD_OPTION_KEYS),
    ...(credentials === undefined ? {} : { credentials }),
    reference,
    repository: parsed.repository,
    expect,
    policy: pluginPolicy(options.policy, plugin),
  });
  const download = await forPlugin(plugin, options.lockPath, "receipt", plugin.receipt_reference, () => downloadRelease(pinned(plugin.receipt_reference, "receipt")), adding);
  let receipt: PublishedReceipt;
  try {
    receipt = download.document as PublishedReceipt;
  } finally {
    await download.cleanup();
  }
  if (receipt.registry_reference !== plugin.bundle_reference) {
    throw new FetchError(
      "FLEET_BUNDLE_REFERENCE_MISMATCH",
      `plugin ${plugin.name}: the receipt's registry_reference ${receipt.registry_reference} is not the pinned bundle reference ${plugin.bundle_reference}`,
    );
  }
  if (receipt.version !== plugin.version) {
    throw new FetchError(
      "FLEET_VERSION_MISMATCH",
      `plugin ${plugin.name} ${plugin.version}: the lock pins version ${plugin.version}, the receipt it pins (${plugin.receipt_reference}) says ${receipt.version}: the lock entry was edited; fix: restore the lock from version control, or run fleet remove --lock ${options.lockPath} --name ${plugin.name}, then fleet add with the receipt you trust`,
    );
  }
  const artifact = receipt.artifacts[0] as PublishedReceipt["artifacts"][number];
  if (artifact.filename !== plugin.tarball.filename || artifact.sha256 !== plugin.tarball.sha256) {
    throw new FetchError(
      "FLEET_TARBALL_MISMATCH",
      `plugin ${plugin.name} ${plugin.version}: the lock pins ${plugin.tarball.filename} sha256 ${plugin.tarball.sha256}, the receipt it pins (${plugin.receipt_reference}) says ${artifact.filename} sha256 ${artifact.sha256}: the lock entry was edited; fix: restore the lock from version control, or run fleet remove --lock ${options.lockPath} --name ${plugin.name}, then fleet add with the receipt you trust`,
    );
  }
  // The pinned bundle: its manifest (no blobs) must be a bundle whose layers
  // are exactly the receipt's payload records, tarball included.
  const bundle = await forPlugin(plugin, options.lockPath, "bundle", plugin.bundle_reference, () => inspectRelease(pinned(plugin.bundle_reference, "bundle")), adding);
  const layers = bundle.manifest.layers
    .map((l) => ({ path: l.title, sha256: l.descriptor.digest.slice("sha256:".length), size: l.descriptor.size, blob_digest: l.descriptor.digest }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (canonicalJson(layers) !== canonicalJson(receipt.payload)) {
    const fix = adding
      ? "this receipt is not the one published with the bundle it names; fix: add the receipt published with that bundle (fetch it by the receipt reference the release printed); nothing was written"
      : `the lock pins a receipt and a bundle that are not one release; fix: fleet remove --name ${plugin.name}, then fleet add --receipt <the receipt published with the bundle you trust>`;
    throw new FetchError("FLEET_BUNDLE_MISMATCH", `plugin ${plugin.name}: the layers of the pinned bundle ${plugin.bundle_reference} are not the payload its receipt ${plugin.receipt_reference} records, so ${fix}`);
  }
  // Every other field of the receipt (gate records, evidence) is exactly what the bundle's tested manifest makes.
  await forPlugin(plugin, options.lockPath, "bundle", plugin.bundle_reference, () => requireReceiptOfBundle(bundle.target, receipt, `receipt ${plugin.receipt_reference}`, bundle.manifest), adding);
  const attestations = plugin.provenance === undefined ? undefined : await verifyPinnedProvenance(plugin.provenance, bundle, parsed.repository, receipt, options.trustedRoot);
  const installed: string[] = [];
  if (options.installedDir !== undefined) {
    // The directories looked in are real ones, as fetch installs into (a symlinked output directory or dist/ is
    // refused there): a link could be swapped after the check, so what was checked would not be what is installed.
    for (const dir of [options.installedDir, join(options.installedDir, "dist")]) {
      const st = await lstat(dir).catch(() => null);
      if (st?.isSymbolicLink() === true) {
        throw new FetchError("FLEET_INSTALLED_UNSAFE", `plugin ${plugin.name}: ${dir} is a symbolic link (--installed and its dist/ must be real directories, as fetch installs into); fix: give --installed the directory itself (realpath ${options.installedDir})`);
      }
    }
    for (const candidate of [join(options.installedDir, plugin.tarball.filename), join(options.installedDir, "dist", plugin.tarball.filename)]) {
      const st = await lstat(candidate).catch(() => null);
      if (st === null) continue;
      if (!st.isFile()) throw new FetchError("FLEET_INSTALLED_UNSAFE", `plugin ${plugin.name}: installed ${candidate} is not a regular file (symlinks are refused); fix: install the fetched tarball there as a regular file (copy it; do not link it)`);
      const { sha256 } = await hashFile(candidate, { noFollow: true });
      if (sha256 !== plugin.tarball.sha256) {
        throw new FetchError("FLEET_INSTALLED_MISMATCH", `plugin ${plugin.name}: installed ${candidate} has sha256 ${sha256}, the lock and receipt pin ${plugin.tarball.sha256}; fix: install the pinned release again (hermes-plugin-kit fetch --reference ${plugin.bundle_reference} --output-dir <new dir>, then copy its ${plugin.tarball.filename}), or, if the installed file is a newer release you want, pin it with hermes-plugin-kit fleet upgrade`);
      }
      installed.push(candidate);
    }
    if (installed.length === 0) {
      throw new FetchError("FLEET_INSTALLED_MISSING", `plugin ${plugin.name}: ${plugin.tarball.filename} is not installed in ${options.installedDir} (looked in it and in its dist/); fix: fetch it (hermes-plugin-kit fetch --reference ${plugin.bundle_reference} --output-dir <new dir>) and copy its ${plugin.tarball.filename} there, or give --installed the directory that holds it`);
    }
  }
  return { ...plugin, installed, ...(attestations === undefined ? {} : { attestations }) };
}
