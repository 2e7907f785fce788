/**
 * Safe installation of verified payload files into the output directory `D`.
 *
 * Checks X1-X3 (docs/fetch.md "Installing the verified tarball"), strengthened:
 * `D` and every directory between `D` and a file must be real directories
 * (never symlinks), an existing file with other bytes is never overwritten,
 * identical files are left untouched (a repeated fetch is a no-op), and on
 * any failure or interruption everything this call created is removed again,
 * so `D` is either not created or left exactly as it was.
 *
 * The output path (docs/fetch.md "The output directory"): `D` itself and
 * everything inside it is never a symlink; the directories this call creates
 * (missing ancestors of `D`, and `D`) are made one level at a time and must
 * still be real directories afterwards; an ancestor that already exists may
 * be a symlink (`/tmp -> /private/tmp`, `~/src -> /data/src`) only when
 * nobody but root or the current user can change it: the link owned by root
 * or the user, in a directory owned by root or the user that others cannot
 * write (or that is sticky, like `/tmp`). `D` must be absent, empty, or hold
 * only files a release writes.
 */
import { createHash, randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import type { Dirent, Stats } from "node:fs";
import { chmod, copyFile, link, lstat, mkdir, readdir, readlink, realpath, rmdir, stat, unlink } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { hashFile } from "../contract/file-hash.js";
import { isAllowedPayloadTitle } from "../contract/payload.js";
import { describeValue } from "../contract/grammar.js";
import { readReleaseJsonBytesFile } from "../contract/release-json-file.js";
import { FetchError } from "./errors.js";
import { HermesPluginKitError, ReleaseContractError, throwIfInterrupted } from "../contract/errors.js";
import { requireKnownOptions, requireOptionKinds, requireOptionsObject, requireStringArgument } from "./entry-options.js";
import { acquirePidLock } from "../oci/lock-owner.js";
import { checkDirectoryWritable, makeDirectory, pathTooLong, shortPath } from "../contract/directory.js";

/** One verified file to install. */
export interface InstallFile {
  /** Payload path relative to `D` (an allow-listed title such as `dist/<name>-<version>.tgz`). */
  path: string;
  /** The verified local copy (in the private temp directory). */
  source: string;
  /** SHA-256 of the verified bytes, 64 lowercase hex. */
  sha256: string;
}

/** What {@link installPayload} did. */
export interface InstallResult {
  /** Payload paths written by this call. */
  written: string[];
  /** Payload paths that already held identical bytes and were left untouched. */
  unchanged: string[];
}

/** lstat, or null when nothing is there; `outputDir` (`D` as given) names the target of an ENAMETOOLONG. */
async function lstatOrNull(path: string, outputDir: string = path) {
  try {
    return await lstat(path);
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code;
    // ENOTDIR: a file on the way (`/dev/null/x`); makeDirectory names it when the install creates `D`.
    if (errno === "ENOENT" || errno === "ENOTDIR") return null;
    if (errno === "ENAMETOOLONG") throw pathTooLong(outputDir, path, "output directory (--output-dir)", error);
    throw new FetchError("INSTALL_FAILED", `cannot inspect ${shortPath(path)}: ${errno ?? "error"}`);
  }
}

/** Directories between `root` and `file` (exclusive of both), outermost first. */
function intermediateDirs(root: string, relative: string): string[] {
  const parts = relative.split("/");
  const dirs: string[] = [];
  for (let i = 1; i < parts.length; i += 1) dirs.push(join(root, ...parts.slice(0, i)));
  return dirs;
}

/** Name of the install lock file created inside `D` while files are written (removed afterwards). */
export const INSTALL_LOCK_FILE = ".hermes-plugin-kit-install.lock";

/** Options of {@link installPayload}. */
export interface InstallOptions {
  /** How long to wait for another install into the same `D` (ms). Default 30 000. */
  lockTimeoutMs?: number;
  /**
   * Stop between files (Ctrl-C in the CLI): what this call created is removed,
   * the lock released, and `InterruptedError` (`INTERRUPTED`) thrown.
   */
  signal?: AbortSignal;
  /**
   * Called once, synchronously, the moment the install has committed (the last
   * file linked into place; for {@link replaceInstall} the new directory renamed
   * over `D`). From then on the call resolves with its result even if `signal`
   * aborts: an interruption after the commit does not undo or fail it.
   */
  onCommit?: () => void;
}

/** Names of the temporary copies {@link installPayload} makes next to their targets (`.<name>.hpk-<12 hex>.tmp`). */
const INSTALL_TEMP_NAME = /^\.[^/]+\.hpk-[0-9a-f]{12}\.tmp$/;

/** Octal mode for messages, e.g. `0777`. */
function octal(mode: number): string {
  return "0" + (mode & 0o7777).toString(8);
}

/**
 * Why nobody but root or this user could change the existing symlink `path`
 * (undefined: safe to follow), after the rule in the module comment.
 */
async function untrustedSymlink(path: string, link: Stats): Promise<string | undefined> {
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  if (uid === undefined) return undefined;
  const trusted = (owner: number): boolean => owner === 0 || owner === uid;
  if (!trusted(link.uid)) return `is owned by uid ${link.uid}, neither you (uid ${uid}) nor root`;
  const parent = dirname(path);
  const dir = await stat(parent).catch(() => null);
  if (dir === null) return `sits in ${parent}, which cannot be inspected`;
  if (!trusted(dir.uid)) return `sits in ${parent}, owned by uid ${dir.uid}, who can replace it`;
  if ((dir.mode & 0o022) !== 0 && (dir.mode & 0o1000) === 0) return `sits in ${parent} (mode ${octal(dir.mode)}), which others can write, so they can replace it`;
  return undefined;
}

/**
 * The symlink rule of the output path (module comment): every existing
 * ancestor of `root` that is a symlink must be one only root or this user can
 * change, and `root` itself, when it exists, must be a real directory.
 * @returns the lstat of `root`, or null when it does not exist.
 * @throws FetchError `INSTALL_OUTPUT_SYMLINK` (`D` a symlink, or an ancestor
 *   symlink others can change), `INSTALL_UNSAFE_PATH` (`D` not a directory).
 */
async function checkOutputPath(root: string, outputDir: string): Promise<Stats | null> {
  const parts = root.split(sep).filter((part) => part !== "");
  let current: string = sep;
  for (const part of parts.slice(0, -1)) {
    current = join(current, part);
    const st = await lstatOrNull(current, outputDir);
    if (st === null) break; // from here on the install creates the directories itself
    if (!st.isSymbolicLink()) continue;
    const why = await untrustedSymlink(current, st);
    if (why !== undefined) {
      const to = await readlink(current).catch(() => "?");
      const real = await realpath(current).catch(() => undefined);
      throw new FetchError(
        "INSTALL_OUTPUT_SYMLINK",
        `output directory ${outputDir} would be written through ${current}, a symlink to ${to} that ${why}; expected every symlink on the way to be one only you or root can change; fix: ${real === undefined ? "choose another directory" : `pass the real path (${join(real, root.slice(current.length))}) if you trust it, or choose another directory`}`,
      );
    }
  }
  const rootStat = await lstatOrNull(root, outputDir);
  if (rootStat !== null && rootStat.isSymbolicLink()) {
    throw new FetchError("INSTALL_OUTPUT_SYMLINK", `output directory must not be a symlink: ${outputDir}; fix: pass the directory it points to, if you trust it`);
  }
  if (rootStat !== null && !rootStat.isDirectory()) {
    throw new FetchError("INSTALL_UNSAFE_PATH", `output directory ${outputDir} exists and is not a directory (a file or device is never replaced); fix: pass a directory path, or move the file away`);
  }
  return rootStat;
}

/**
 * The entries the release-directory checks look at: the top level of `root`, and `dist/*` in place of `dist`
 * when `dist` is a directory (`inDist`); a `dist` that is no directory is listed as itself.
 */
/** One entry of {@link releaseEntries}. */
interface ReleaseEntry {
  path: string;
  entry: Dirent;
  inDist: boolean;
}

async function releaseEntries(root: string): Promise<ReleaseEntry[]> {
  const entries: ReleaseEntry[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (entry.name === "dist" && entry.isDirectory()) {
      for (const inner of await readdir(join(root, "dist"), { withFileTypes: true })) entries.push({ path: `dist/${inner.name}`, entry: inner, inDist: true });
    } else {
      entries.push({ path: entry.name, entry, inDist: false });
    }
  }
  return entries;
}

/**
 * Entries of an existing `D` that no release writes (at most 5): anything but
 * the allow-listed payload paths (`release-*.{json,bundle,sha256}`,
 * `dist/<name>-<semver>.tgz`), the install lock and the installer's own
 * temporary copies. With `regularFilesOnly` (`--replace`, whose swap deletes
 * them) those names must also be regular files (and `dist` a directory);
 * without it a payload name of another type is left to the per-file checks
 * (`INSTALL_UNSAFE_PATH` for a symlink, ...).
 */
function foreignEntries(entries: readonly ReleaseEntry[], regularFilesOnly: boolean): string[] {
  const limit = 5;
  const foreign: string[] = [];
  const ours = (name: string): boolean => name === INSTALL_LOCK_FILE || INSTALL_TEMP_NAME.test(name) || isAllowedPayloadTitle(name);
  for (const { path, entry, inDist } of entries) {
    const isForeign = inDist
      ? !(isAllowedPayloadTitle(path) || INSTALL_TEMP_NAME.test(entry.name)) || (regularFilesOnly && !entry.isFile())
      : path === "dist"
        ? regularFilesOnly
        : !ours(path) || (regularFilesOnly && !entry.isFile());
    if (isForeign) foreign.push(path);
    if (foreign.length >= limit) break;
  }
  return foreign;
}

/** The first payload file name (top level or `dist/*`) that exists but is not a regular file. */
function payloadNameNotFile(entries: readonly ReleaseEntry[]): string | undefined {
  return entries.find(({ path, entry }) => path !== "dist" && isAllowedPayloadTitle(path) && !entry.isFile())?.path;
}

function notEmpty(outputDir: string, foreign: readonly string[]): FetchError {
  return new FetchError(
    "INSTALL_OUTPUT_NOT_EMPTY",
    `output directory ${outputDir} holds ${foreign.map((name) => describeValue(name)).join(", ")}${foreign.length >= 5 ? " (and maybe more)" : ""}, which no release writes; expected an absent or empty directory, or one holding only an earlier fetch's files; fix: fetch into a new or empty directory, or move those entries out`,
  );
}

/**
 * `INSTALL_UNSAFE_PATH` for an entry inside `D` that a fetch would have to write through or replace (a
 * symlink, a directory where a file goes, a file where a directory goes, a device): what was expected,
 * what was found and the fix (a fetch never writes through or replaces an entry it did not write).
 */
async function unsafeEntry(path: string, st: Stats, expected: string): Promise<FetchError> {
  const found = st.isSymbolicLink()
    ? `a symlink (to ${describeValue(await readlink(path).catch(() => "?"))}; not followed)`
    : st.isDirectory()
      ? "a directory"
      : st.isFile()
        ? "a regular file"
        : "a device, pipe or socket";
  return new FetchError(
    "INSTALL_UNSAFE_PATH",
    `refusing an unsafe output path: expected ${expected} (a fetch writes only regular files and real directories, and never writes through or replaces anything else), found ${found} at ${path}; fix: move ${path} out of the way if you put it there, or fetch into a new directory`,
  );
}

interface Plan {
  toWrite: InstallFile[];
  unchanged: string[];
}

/**
 * One fact about which release a set of payload files belongs to: its package, version, tarball file name
 * or SHA-256, or the SHA-256 of a payload path. `bytes` claims are hashes of files themselves; the others
 * come from a release document (`release-manifest.json`, `release-receipt.json`) or a tarball's file name.
 */
interface ReleaseClaim {
  field: string;
  value: string;
  from: string;
  bytes?: boolean;
}

/**
 * The bytes of a small release file (a document or `release-payload.sha256`: the release JSON reader's
 * checks, never through a symlink, at most 1 MiB), or null when it is absent or fails them (the per-file
 * checks still apply).
 */
function readSmallFile(path: string): Promise<Buffer | null> {
  return readReleaseJsonBytesFile(path).catch(() => null);
}

/** Claims a release document (`release-manifest.json` or `release-receipt.json`) makes; none when it is not a JSON object. */
function documentClaims(path: string, bytes: Buffer): ReleaseClaim[] {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString("utf8"));
  } catch {
    return [];
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return [];
  const record = doc as Record<string, unknown>;
  const claims: ReleaseClaim[] = [];
  const text = (value: unknown): value is string => typeof value === "string" && value !== "";
  if (text(record["package"])) claims.push({ field: "package", value: record["package"], from: path });
  if (text(record["version"])) claims.push({ field: "version", value: record["version"], from: path });
  const artifact = Array.isArray(record["artifacts"]) ? (record["artifacts"][0] as Record<string, unknown> | undefined) : undefined;
  if (artifact !== undefined && typeof artifact === "object" && artifact !== null) {
    if (text(artifact["filename"])) claims.push({ field: "tarball", value: artifact["filename"], from: path });
    if (text(artifact["sha256"])) claims.push({ field: "tarball sha256", value: artifact["sha256"], from: path });
  }
  // A receipt records the SHA-256 of each bundle file it was published with.
  if (Array.isArray(record["payload"])) {
    for (const entry of record["payload"] as unknown[]) {
      if (typeof entry !== "object" || entry === null) continue;
      const { path: title, sha256 } = entry as Record<string, unknown>;
      if (text(title) && text(sha256)) claims.push({ field: `sha256 of ${title}`, value: sha256, from: path });
    }
  }
  return claims;
}

/** Claims of one payload file at `path` whose bytes are `bytes` (documents only) and whose SHA-256 is `sha256`. */
function fileClaims(path: string, sha256: string | undefined, bytes: Buffer | null): ReleaseClaim[] {
  const claims: ReleaseClaim[] = [];
  if (sha256 !== undefined) claims.push({ field: `sha256 of ${path}`, value: sha256, from: path, bytes: true });
  if (path.startsWith("dist/")) {
    claims.push({ field: "tarball", value: path.slice("dist/".length), from: path });
    if (sha256 !== undefined) claims.push({ field: "tarball sha256", value: sha256, from: path, bytes: true });
  }
  if (bytes !== null && (path === "release-manifest.json" || path === "release-receipt.json")) claims.push(...documentClaims(path, bytes));
  return claims;
}

/** What the files already in `D` say about their release (documents and small files read, never through a symlink). */
async function existingClaims(root: string, entries: readonly ReleaseEntry[]): Promise<ReleaseClaim[]> {
  const claims: ReleaseClaim[] = [];
  const paths: string[] = [];
  for (const { path, entry } of entries) {
    if (entry.isFile() && isAllowedPayloadTitle(path)) paths.push(path);
  }
  for (const path of paths.sort()) {
    // The tarball and the source bundle may be large: only their names count here (their bytes are judged file by file).
    const small = path === "release-manifest.json" || path === "release-receipt.json" || path === "release-payload.sha256";
    const bytes = small ? await readSmallFile(join(root, path)) : null;
    const sha256 = bytes === null ? undefined : createHash("sha256").update(bytes).digest("hex");
    claims.push(...fileClaims(path, sha256, bytes));
  }
  return claims;
}

/** What the files being installed say about their release. */
async function incomingClaims(files: readonly InstallFile[]): Promise<ReleaseClaim[]> {
  const claims: ReleaseClaim[] = [];
  for (const file of files) {
    const document = file.path === "release-manifest.json" || file.path === "release-receipt.json";
    claims.push(...fileClaims(file.path, file.sha256, document ? await readSmallFile(file.source) : null));
  }
  return claims;
}

/** `demo-plugin 0.2.0`, or the tarball's name, from a side's claims. */
function describeRelease(claims: readonly ReleaseClaim[]): string {
  const first = (field: string) => claims.find((c) => c.field === field)?.value;
  const pkg = first("package");
  const version = first("version");
  if (version !== undefined) return `${pkg ?? "release"} ${version}`;
  const tarball = first("tarball");
  return tarball !== undefined ? `the release of ${tarball}` : "another release";
}

/**
 * One directory holds one release: refuse when the files already in `D` belong to another release than
 * `files` (package, version, tarball name or SHA-256, or a receipt's recorded SHA-256 of a bundle file
 * differ). Two hashes of files at one path are left to the per-file check (same release, other bytes).
 * @throws FetchError `INSTALL_OVERWRITE_REFUSED` naming both releases and the fix.
 */
async function checkSameRelease(root: string, outputDir: string, files: readonly InstallFile[], entries: readonly ReleaseEntry[]): Promise<void> {
  const existing = await existingClaims(root, entries);
  if (existing.length === 0) return;
  const incoming = await incomingClaims(files);
  // The most telling difference first: package, version, tarball, then the hashes.
  const rank = (field: string) => ["package", "version", "tarball", "tarball sha256"].indexOf(field) >>> 0;
  for (const mine of [...incoming].sort((a, b) => rank(a.field) - rank(b.field))) {
    const theirs = existing.find((e) => e.field === mine.field && e.value !== mine.value && !(e.bytes === true && mine.bytes === true));
    if (theirs === undefined) continue;
    const was = describeRelease(existing);
    const now = describeRelease(incoming);
    // Both sides named by where they are: a file of the installed directory, and the same name in the release
    // being installed (both are often release-manifest.json).
    const message = (fix: string) =>
      `refusing to mix two releases in one directory: ${outputDir} holds ${was} (${[...new Set(existing.map((c) => c.from))].join(", ")}), the files being installed are ${now} (${[...new Set(incoming.map((c) => c.from))].join(", ")}); they differ in ${mine.field} (${theirs.value} in ${join(outputDir, theirs.from)}, ${mine.value} in ${mine.from} of the ${now} being installed); nothing was written; fix: ${fix}`;
    throw new FetchError("INSTALL_OVERWRITE_REFUSED", message(`install into a new directory (another outputDir), or swap the whole directory for ${now} after verification (fetchRelease with replace: true, or replaceInstall)`), {
      cliMessage: message(`fetch into a new directory (another --output-dir), or pass --replace to swap the whole directory for ${now} after verification`),
    });
  }
}

/** First pass (no writes): see {@link installPayload}. `rootExists` is false when `D` is absent. */
async function planInstall(root: string, outputDir: string, files: readonly InstallFile[]): Promise<Plan & { rootExists: boolean }> {
  const rootStat = await checkOutputPath(root, outputDir);
  if (rootStat !== null) {
    // One listing serves both checks.
    const entries = await releaseEntries(root);
    const foreign = foreignEntries(entries, false);
    if (foreign.length > 0) throw notEmpty(outputDir, foreign);
    await checkSameRelease(root, outputDir, files, entries);
  }
  const toWrite: InstallFile[] = [];
  const unchanged: string[] = [];
  for (const file of files) {
    if (rootStat === null) {
      toWrite.push(file);
      continue;
    }
    for (const dir of intermediateDirs(root, file.path)) {
      const st = await lstatOrNull(dir);
      if (st === null) break;
      if (st.isSymbolicLink() || !st.isDirectory()) throw await unsafeEntry(dir, st, `${relative(root, dir)} in ${outputDir} to be absent or a real directory`);
    }
    const target = join(root, file.path);
    const st = await lstatOrNull(target);
    if (st === null) {
      toWrite.push(file);
      continue;
    }
    if (st.isSymbolicLink() || !st.isFile()) throw await unsafeEntry(target, st, `${file.path} in ${outputDir} to be absent or a regular file`);
    const existing = (await hashFile(target, { noFollow: true })).sha256;
    if (existing !== file.sha256) {
      const message = (fix: string) => `refusing to overwrite different bytes: ${join(outputDir, file.path)} holds sha256 ${existing}, the verified payload's ${file.path} is ${file.sha256}: ${outputDir} holds another release, or that file was changed after it was installed; nothing was written; fix: ${fix}`;
      throw new FetchError("INSTALL_OVERWRITE_REFUSED", message("install into a new directory (another outputDir), or swap the whole directory after verification (fetchRelease with replace: true, or replaceInstall)"), {
        cliMessage: message("fetch into a new directory (another --output-dir), or pass --replace to swap the whole directory after verification"),
      });
    }
    unchanged.push(file.path);
  }
  return { toWrite, unchanged, rootExists: rootStat !== null };
}


/**
 * Take `D/.hermes-plugin-kit-install.lock` (O_EXCL, never through a symlink). What holds it is
 * inspected first ({@link inspectLockFile}): a lock left by a dead process is broken; a symlink, a
 * directory, other content or a PID that now names another program is refused at once
 * (`INSTALL_LOCKED`, naming what was found); only a live holder (or a lock still being written) is
 * waited for, up to `timeoutMs`. Returns the release function.
 */
async function acquireInstallLock(root: string, timeoutMs: number, signal?: AbortSignal): Promise<() => Promise<void>> {
  return acquirePidLock(join(root, INSTALL_LOCK_FILE), {
    holder: `a fetch installing into ${root}`,
    timeoutMs,
    beforeAttempt: () => throwIfInterrupted(signal),
    refuse: (message) => new FetchError("INSTALL_LOCKED", `cannot take the install lock of ${root}: ${message}`),
  });
}

/** The output path rule and writability, shared by the two pre-download checks; the lstat of `D` or null. */
async function checkOutputTarget(outputDir: string, purpose: string): Promise<Stats | null> {
  const root = resolve(outputDir);
  const st = await checkOutputPath(root, outputDir);
  checkDirectoryWritable(root, { purpose });
  return st;
}

/**
 * Before any long work (`fetch` calls it before downloading): the output path
 * rule of the module comment (`INSTALL_OUTPUT_SYMLINK` for `D` a symlink or an
 * ancestor symlink others can change; `INSTALL_UNSAFE_PATH` for `D` not a
 * directory); `D`, or its nearest existing parent, must be a directory this
 * user can create in and write; an existing `D` must hold nothing a release
 * does not write (`INSTALL_OUTPUT_NOT_EMPTY`, naming up to 5 entries; an
 * earlier release's files are left to {@link installPayload}'s rules).
 * Nothing is left behind.
 * @throws FetchError codes above; IoError `IO_NOT_A_DIRECTORY`, `IO_DIRECTORY_UNWRITABLE`.
 */
export async function checkInstallTarget(outputDir: string, purpose = "output directory (--output-dir)"): Promise<void> {
  requireStringArgument(outputDir, "checkInstallTarget", "outputDir", "the output directory to install into");
  requireStringArgument(purpose, "checkInstallTarget", "purpose", "what the directory is, for messages");
  const st = await checkOutputTarget(outputDir, purpose);
  if (st === null) return;
  const foreign = foreignEntries(await releaseEntries(resolve(outputDir)), false);
  if (foreign.length > 0) throw notEmpty(outputDir, foreign);
}

/**
 * The arguments of {@link installPayload} / {@link replaceInstall} from a library caller: `outputDir` a non-empty
 * string, `files` an array of `{ path, source, sha256 }` (strings; `sha256` 64 lowercase hex), `options` only
 * `{ lockTimeoutMs?, signal?, onCommit? }` of their kinds. Checked before anything is read or written.
 * @throws ReleaseContractError `POLICY_INVALID` naming the argument and what was found.
 */
function checkInstallArguments(outputDir: unknown, files: unknown, options: unknown, call: string): void {
  requireStringArgument(outputDir, call, "outputDir", "the output directory to install into");
  if (!Array.isArray(files)) throw new ReleaseContractError("POLICY_INVALID", `${call} argument files must be an array of { path, source, sha256 }, found ${describeValue(files)}`);
  files.forEach((file: unknown, i) => {
    const ok =
      file !== null &&
      typeof file === "object" &&
      typeof (file as InstallFile).path === "string" &&
      typeof (file as InstallFile).source === "string" &&
      (file as InstallFile).source !== "" &&
      /^[0-9a-f]{64}$/.test(String((file as InstallFile).sha256));
    if (!ok) throw new ReleaseContractError("POLICY_INVALID", `${call} argument files[${i}] must be { path, source, sha256 } (strings; sha256 64 lowercase hex), found ${file !== null && typeof file === "object" ? `{ ${Object.keys(file).join(", ")} }` : describeValue(file)}`);
  });
  requireOptionsObject(options, call, "{ lockTimeoutMs?, signal?, onCommit? }");
  requireKnownOptions(options, ["lockTimeoutMs", "signal", "onCommit"], call);
  requireOptionKinds(options, { lockTimeoutMs: "number", signal: "signal", onCommit: "function" }, call);
}

/**
 * Check every target first (no writes), then write the missing files.
 *
 * First pass: the output path rule of the module comment (`INSTALL_OUTPUT_SYMLINK`,
 * `INSTALL_UNSAFE_PATH`); an existing `D` holds only files a release writes
 * (`INSTALL_OUTPUT_NOT_EMPTY`); every directory inside `D` on the way to a file
 * must be absent or a real directory (`INSTALL_UNSAFE_PATH`); an existing
 * target must be a regular file (`INSTALL_UNSAFE_PATH` for a symlink or
 * anything else) with the same SHA-256 (`INSTALL_OVERWRITE_REFUSED`).
 * Second pass: create `D` and parents (mode 0755 before umask; each must still
 * be a real directory after its creation, else `INSTALL_OUTPUT_SYMLINK`), take the
 * install lock `D/.hermes-plugin-kit-install.lock` (so two installs into one
 * `D` run one after the other), repeat the first pass, copy each missing file
 * to a temporary name in its directory, re-check its bytes and hard-link it
 * into place (never replacing anything), then remove the lock.
 *
 * @param outputDir `D`; created if absent (with missing parents).
 * @throws FetchError `INSTALL_PATH_INVALID` (a path not on the payload
 *   allow-list), `INSTALL_OUTPUT_SYMLINK`, `INSTALL_UNSAFE_PATH`, `INSTALL_OUTPUT_NOT_EMPTY`,
 *   `INSTALL_OVERWRITE_REFUSED`, `INSTALL_LOCKED`, `INSTALL_FAILED` (I/O);
 *   InterruptedError `INTERRUPTED` (`options.signal` aborted).
 *   On any throw the files and directories this call created are removed and the lock released.
 */
export async function installPayload(outputDir: string, files: readonly InstallFile[], options: InstallOptions = {}): Promise<InstallResult> {
  checkInstallArguments(outputDir, files, options, "installPayload");
  const root = resolve(outputDir);
  for (const file of files) {
    if (!isAllowedPayloadTitle(file.path) || isAbsolute(file.path) || file.path.includes("\\")) {
      throw new FetchError("INSTALL_PATH_INVALID", `refusing an unsafe output path: ${describeValue(file.path)} is not a payload path`);
    }
  }
  throwIfInterrupted(options.signal);
  // First pass: no writes; fail fast.
  const first = await planInstall(root, outputDir, files);
  if (first.toWrite.length === 0) {
    options.onCommit?.();
    return { written: [], unchanged: first.unchanged };
  }
  // Second pass: writes under the lock, undone on failure.
  const createdDirs: string[] = [];
  const createdFiles: string[] = [];
  const written: string[] = [];
  let release: (() => Promise<void>) | undefined;
  try {
    if (!first.rootExists) {
      // One level at a time (a bounded loop): see src/contract/directory.ts for why not mkdir -p.
      createdDirs.push(...(await makeDirectory(root, { mode: 0o755, purpose: "output directory" })));
      // What this call created must still be real directories (not swapped for symlinks meanwhile).
      for (const dir of [...createdDirs, root]) {
        const st = await lstatOrNull(dir);
        if (st === null || st.isSymbolicLink() || !st.isDirectory()) {
          throw new FetchError("INSTALL_OUTPUT_SYMLINK", `output directory must be written through real directories only: ${dir}, created by this install, is ${st === null ? "gone" : "no longer a directory"} (${outputDir})`);
        }
      }
    }
    release = await acquireInstallLock(root, options.lockTimeoutMs ?? 30_000, options.signal);
    const plan = await planInstall(root, outputDir, files);
    for (const file of plan.toWrite) {
      throwIfInterrupted(options.signal);
      for (const dir of intermediateDirs(root, file.path)) {
        const st = await lstatOrNull(dir);
        if (st === null) {
          await mkdir(dir, { mode: 0o755 });
          createdDirs.push(dir);
        } else if (st.isSymbolicLink() || !st.isDirectory()) {
          throw await unsafeEntry(dir, st, `${relative(root, dir)} in ${outputDir} to be absent or a real directory`);
        }
      }
      const target = join(root, file.path);
      const temp = join(dirname(target), `.${file.path.split("/").pop() as string}.hpk-${randomBytes(6).toString("hex")}.tmp`);
      await copyFile(file.source, temp, fsConstants.COPYFILE_EXCL);
      try {
        await chmod(temp, 0o644);
        const copied = (await hashFile(temp, { noFollow: true })).sha256;
        if (copied !== file.sha256) {
          throw new FetchError("INSTALL_FAILED", `copy of ${file.path} does not match the verified bytes (sha256 ${copied}, expected ${file.sha256})`);
        }
        throwIfInterrupted(options.signal);
        try {
          await link(temp, target);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "EEXIST") {
            const message = (fix: string) => `refusing to overwrite different bytes: ${join(outputDir, file.path)} appeared while installing (written by a process outside the install lock), and a fetch never replaces a file; what this install wrote was removed; fix: ${fix}`;
            throw new FetchError("INSTALL_OVERWRITE_REFUSED", message("find what else writes into this directory, then install into a new directory or swap it (fetchRelease with replace: true, or replaceInstall)"), {
              cliMessage: message("find what else writes into this directory, then fetch into a new directory (another --output-dir), or pass --replace"),
            });
          }
          throw error;
        }
        createdFiles.push(target);
        written.push(file.path);
      } finally {
        await unlink(temp).catch(() => undefined);
      }
    }
    // Committed: every file is in place. No signal check from here on (an interruption now is too late to undo it).
    options.onCommit?.();
    await release();
    release = undefined;
    return { written, unchanged: plan.unchanged };
  } catch (error) {
    for (const file of createdFiles.reverse()) await unlink(file).catch(() => undefined);
    if (release !== undefined) await release();
    for (const dir of createdDirs.reverse()) await rmdir(dir).catch(() => undefined);
    if (error instanceof HermesPluginKitError) throw error;
    if ((error as NodeJS.ErrnoException).code === "ENAMETOOLONG") throw pathTooLong(outputDir, outputDir, "output directory (--output-dir)", error);
    throw new FetchError("INSTALL_FAILED", `cannot install into ${outputDir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
}

/** `INSTALL_REPLACE_REFUSED` naming the replace as the library calls it (`replace: true`, `replaceInstall`) and, for the CLI, as `--replace`. */
function replaceRefused(text: (replace: string) => string): FetchError {
  return new FetchError("INSTALL_REPLACE_REFUSED", text("replacing (fetchRelease with replace: true, or replaceInstall)"), { cliMessage: text("--replace") });
}

/**
 * What `fetch --replace` may swap (docs/fetch.md, "Replacing an installed
 * release"): a directory that does not exist, or one an earlier fetch wrote —
 * every entry an allowed payload path (`release-*.{json,bundle,sha256}`,
 * `dist/<name>-<semver>.tgz`) or a left-over install lock — that is neither
 * the current directory nor one of its parents. Anything else would be
 * deleted by the swap, so it is refused before anything is downloaded or written.
 * @throws FetchError `INSTALL_REPLACE_REFUSED` (naming up to 5 foreign entries),
 *   and the codes of {@link checkInstallTarget}.
 */
export async function checkReplaceTarget(outputDir: string): Promise<void> {
  requireStringArgument(outputDir, "checkReplaceTarget", "outputDir", "the output directory to replace");
  const st = await checkOutputTarget(outputDir, "output directory (--output-dir)");
  const root = resolve(outputDir);
  const cwd = resolve(process.cwd());
  if (cwd === root || cwd.startsWith(root === sep ? root : root + sep)) {
    throw replaceRefused((replace) => `${replace} swaps the whole output directory, but ${outputDir} is the current directory or one of its parents (${cwd}); fix: pass the directory that holds the earlier release, from outside it`);
  }
  if (st === null) return;
  const entries = await releaseEntries(root);
  // A release's own file name that is not a regular file (a symlink, most likely): say what it is.
  const name = payloadNameNotFile(entries);
  const entry = name === undefined ? null : await lstatOrNull(join(root, name));
  if (name !== undefined && entry !== null) {
    const what = entry.isSymbolicLink() ? `a symlink (to ${await readlink(join(root, name)).catch(() => "?")})` : entry.isDirectory() ? "a directory" : "not a regular file";
    throw replaceRefused((replace) => `${replace} swaps a directory that holds an earlier release, but ${join(outputDir, name)} is ${what}, not a file a fetch writes (a fetch never writes through or replaces a link); fix: remove or move ${name} out of ${outputDir} if you put it there, or fetch into a new directory`);
  }
  const foreign = foreignEntries(entries, true);
  if (foreign.length > 0) {
    throw replaceRefused((replace) => `${replace} swaps a directory that holds an earlier release, but ${outputDir} also holds ${foreign.map((name) => describeValue(name)).join(", ")}, which no release writes and the swap would delete; fix: move those out of ${outputDir}, or fetch into a new directory`);
  }
}

/**
 * Replace `D` with a directory holding exactly `files` (`fetch --replace`):
 * the files are installed into a fresh sibling directory with every check of
 * {@link installPayload}, then `D` is moved aside and the new directory is
 * renamed into its place, and the old one is removed. Both renames stay in
 * one parent directory, so each is atomic; if the second fails the old `D` is
 * renamed back. When `D` does not exist this is {@link installPayload}.
 * D must pass {@link checkReplaceTarget} first.
 * @throws FetchError codes of {@link installPayload}; `INSTALL_REPLACE_REFUSED`
 *   (D holds files no release writes, or is the current directory or a parent),
 *   `INSTALL_OUTPUT_SYMLINK` (D is a symlink), `INSTALL_UNSAFE_PATH` (D is not a directory), `INSTALL_FAILED`.
 */
export async function replaceInstall(outputDir: string, files: readonly InstallFile[], options: InstallOptions = {}): Promise<InstallResult> {
  checkInstallArguments(outputDir, files, options, "replaceInstall");
  await checkReplaceTarget(outputDir);
  const root = resolve(outputDir);
  const st = await lstatOrNull(root);
  if (st === null) return installPayload(outputDir, files, options);
  if (st.isSymbolicLink()) throw new FetchError("INSTALL_OUTPUT_SYMLINK", `output directory must not be a symlink: ${outputDir}`);
  if (!st.isDirectory()) throw new FetchError("INSTALL_UNSAFE_PATH", `output directory ${outputDir} exists and is not a directory (a file or device is never replaced); fix: pass a directory path, or move the file away`);
  const tag = randomBytes(6).toString("hex");
  const base = root.split("/").pop() as string;
  const fresh = join(dirname(root), `.${base}.hpk-new-${tag}`);
  const old = join(dirname(root), `.${base}.hpk-old-${tag}`);
  const { rename, rm } = await import("node:fs/promises");
  try {
    const { onCommit, ...inner } = options;
    const result = await installPayload(fresh, files, inner);
    // The last point where an interruption undoes the replacement; after the second rename it is committed.
    throwIfInterrupted(options.signal);
    await rename(root, old);
    try {
      await rename(fresh, root);
    } catch (error) {
      await rename(old, root);
      throw error;
    }
    onCommit?.();
    await rm(old, { recursive: true, force: true });
    return result;
  } catch (error) {
    await rm(fresh, { recursive: true, force: true });
    if (error instanceof HermesPluginKitError) throw error;
    throw new FetchError("INSTALL_FAILED", `cannot replace ${outputDir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
}
