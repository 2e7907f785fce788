/**
 * Safe installation of verified payload files into the output directory `D`.
 *
 * Checks X1-X3 (docs/fetch.md "Installing the verified tarball"), strengthened:
 * `D` and every directory between `D` and a file must be real directories
 * (never symlinks), an existing file with other bytes is never overwritten,
 * identical files are left untouched (a repeated fetch is a no-op), and on
 * any failure everything this call created is removed again, so `D` is
 * either not created or left exactly as it was.
 */
import { randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { chmod, copyFile, link, lstat, mkdir, open, readdir, readFile, rmdir, unlink } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { hashFile } from "../contract/file-hash.js";
import { isAllowedPayloadTitle } from "../contract/payload.js";
import { describeValue } from "../contract/grammar.js";
import { FetchError } from "./errors.js";
import { HermesPluginKitError } from "../contract/errors.js";
import { isStaleLockOwner } from "../oci/lock-owner.js";
import { checkDirectoryWritable, makeDirectory } from "../contract/directory.js";

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

async function lstatOrNull(path: string) {
  try {
    return await lstat(path);
  } catch (error) {
    // ENOTDIR: a file on the way (`/dev/null/x`); makeDirectory names it when the install creates `D`.
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR") return null;
    throw new FetchError("INSTALL_FAILED", `cannot inspect ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
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
}

interface Plan {
  toWrite: InstallFile[];
  unchanged: string[];
}

/** First pass (no writes): see {@link installPayload}. `rootExists` is false when `D` is absent. */
async function planInstall(root: string, outputDir: string, files: readonly InstallFile[]): Promise<Plan & { rootExists: boolean }> {
  const rootStat = await lstatOrNull(root);
  if (rootStat !== null && rootStat.isSymbolicLink()) {
    throw new FetchError("INSTALL_OUTPUT_SYMLINK", `output directory must not be a symlink: ${outputDir}`);
  }
  if (rootStat !== null && !rootStat.isDirectory()) {
    throw new FetchError("INSTALL_UNSAFE_PATH", `output directory ${outputDir} exists and is not a directory`);
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
      if (st.isSymbolicLink() || !st.isDirectory()) {
        throw new FetchError("INSTALL_UNSAFE_PATH", `refusing an unsafe output path: ${dir} is ${st.isSymbolicLink() ? "a symlink" : "not a directory"}`);
      }
    }
    const target = join(root, file.path);
    const st = await lstatOrNull(target);
    if (st === null) {
      toWrite.push(file);
      continue;
    }
    if (st.isSymbolicLink()) throw new FetchError("INSTALL_UNSAFE_PATH", `refusing an unsafe output path: ${target} is a symlink`);
    if (!st.isFile()) throw new FetchError("INSTALL_OVERWRITE_REFUSED", `refusing to overwrite different bytes: ${file.path} exists and is not a regular file`);
    const existing = (await hashFile(target, { noFollow: true })).sha256;
    if (existing !== file.sha256) {
      throw new FetchError(
        "INSTALL_OVERWRITE_REFUSED",
        `refusing to overwrite different bytes: ${file.path} holds sha256 ${existing}, the verified payload is ${file.sha256} (${outputDir} holds another release: fetch into a new directory, or pass --replace to swap the whole directory after verification)`,
      );
    }
    unchanged.push(file.path);
  }
  return { toWrite, unchanged, rootExists: rootStat !== null };
}


/**
 * Take `D/.hermes-plugin-kit-install.lock` (O_EXCL, never through a symlink),
 * waiting up to `timeoutMs` for another install; a lock left by a dead process
 * is broken. Returns the release function.
 */
async function acquireInstallLock(root: string, timeoutMs: number): Promise<() => Promise<void>> {
  const path = join(root, INSTALL_LOCK_FILE);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const handle = await open(path, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o600);
      try {
        await handle.writeFile(`${process.pid}\n`);
      } finally {
        await handle.close();
      }
      return () => unlink(path).catch(() => undefined);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const st = await lstatOrNull(path);
    if (st !== null && st.isFile() && st.size < 32) {
      const pid = Number((await readFile(path, "utf8").catch(() => "")).trim());
      if (isStaleLockOwner(pid)) {
        await unlink(path).catch(() => undefined);
        continue;
      }
    }
    if (Date.now() > deadline) {
      throw new FetchError("INSTALL_LOCKED", `another install into ${root} holds ${INSTALL_LOCK_FILE} (waited ${timeoutMs} ms)`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Before any long work (`fetch` calls it before downloading): `D` must not be
 * a symlink (`INSTALL_OUTPUT_SYMLINK`) and, if it exists, must be a directory
 * (`INSTALL_UNSAFE_PATH`); `D`, or its nearest existing parent, must be a
 * directory this user can create in and write. Nothing is left behind.
 * @throws FetchError codes above; IoError `IO_NOT_A_DIRECTORY`, `IO_DIRECTORY_UNWRITABLE`.
 */
export async function checkInstallTarget(outputDir: string, purpose = "output directory (--output-dir)"): Promise<void> {
  const root = resolve(outputDir);
  const st = await lstatOrNull(root);
  if (st !== null && st.isSymbolicLink()) throw new FetchError("INSTALL_OUTPUT_SYMLINK", `output directory must not be a symlink: ${outputDir}`);
  if (st !== null && !st.isDirectory()) throw new FetchError("INSTALL_UNSAFE_PATH", `output directory ${outputDir} exists and is not a directory`);
  checkDirectoryWritable(root, { purpose });
}

/**
 * Check every target first (no writes), then write the missing files.
 *
 * First pass: `D` must not be a symlink (`INSTALL_OUTPUT_SYMLINK`) and must be
 * a directory if it exists; every directory inside `D` on the way to a file
 * must be absent or a real directory (`INSTALL_UNSAFE_PATH`); an existing
 * target must be a regular file (`INSTALL_UNSAFE_PATH` for a symlink or
 * anything else) with the same SHA-256 (`INSTALL_OVERWRITE_REFUSED`).
 * Second pass: create `D` and parents (mode 0755 before umask), take the
 * install lock `D/.hermes-plugin-kit-install.lock` (so two installs into one
 * `D` run one after the other), repeat the first pass, copy each missing file
 * to a temporary name in its directory, re-check its bytes and hard-link it
 * into place (never replacing anything), then remove the lock.
 *
 * @param outputDir `D`; created if absent (with missing parents).
 * @throws FetchError `INSTALL_PATH_INVALID` (a path not on the payload
 *   allow-list), `INSTALL_OUTPUT_SYMLINK`, `INSTALL_UNSAFE_PATH`,
 *   `INSTALL_OVERWRITE_REFUSED`, `INSTALL_LOCKED`, `INSTALL_FAILED` (I/O).
 *   On any throw the files and directories this call created are removed.
 */
export async function installPayload(outputDir: string, files: readonly InstallFile[], options: InstallOptions = {}): Promise<InstallResult> {
  const root = resolve(outputDir);
  for (const file of files) {
    if (!isAllowedPayloadTitle(file.path) || isAbsolute(file.path) || file.path.includes("\\")) {
      throw new FetchError("INSTALL_PATH_INVALID", `refusing an unsafe output path: ${describeValue(file.path)} is not a payload path`);
    }
  }
  // First pass: no writes; fail fast.
  const first = await planInstall(root, outputDir, files);
  if (first.toWrite.length === 0) return { written: [], unchanged: first.unchanged };
  // Second pass: writes under the lock, undone on failure.
  const createdDirs: string[] = [];
  const createdFiles: string[] = [];
  const written: string[] = [];
  let release: (() => Promise<void>) | undefined;
  try {
    if (!first.rootExists) {
      // One level at a time (a bounded loop): see src/contract/directory.ts for why not mkdir -p.
      createdDirs.push(...(await makeDirectory(root, { mode: 0o755, purpose: "output directory" })));
      const st = await lstatOrNull(root);
      if (st === null || st.isSymbolicLink() || !st.isDirectory()) {
        throw new FetchError("INSTALL_OUTPUT_SYMLINK", `output directory must be a real directory: ${outputDir}`);
      }
    }
    release = await acquireInstallLock(root, options.lockTimeoutMs ?? 30_000);
    const plan = await planInstall(root, outputDir, files);
    for (const file of plan.toWrite) {
      for (const dir of intermediateDirs(root, file.path)) {
        const st = await lstatOrNull(dir);
        if (st === null) {
          await mkdir(dir, { mode: 0o755 });
          createdDirs.push(dir);
        } else if (st.isSymbolicLink() || !st.isDirectory()) {
          throw new FetchError("INSTALL_UNSAFE_PATH", `refusing an unsafe output path: ${dir} is ${st.isSymbolicLink() ? "a symlink" : "not a directory"}`);
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
        try {
          await link(temp, target);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "EEXIST") {
            throw new FetchError("INSTALL_OVERWRITE_REFUSED", `refusing to overwrite different bytes: ${file.path} appeared while installing`);
          }
          throw error;
        }
        createdFiles.push(target);
        written.push(file.path);
      } finally {
        await unlink(temp).catch(() => undefined);
      }
    }
    await release();
    release = undefined;
    return { written, unchanged: plan.unchanged };
  } catch (error) {
    for (const file of createdFiles.reverse()) await unlink(file).catch(() => undefined);
    if (release !== undefined) await release();
    for (const dir of createdDirs.reverse()) await rmdir(dir).catch(() => undefined);
    if (error instanceof HermesPluginKitError) throw error;
    throw new FetchError("INSTALL_FAILED", `cannot install into ${outputDir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
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
  await checkInstallTarget(outputDir);
  const root = resolve(outputDir);
  const cwd = resolve(process.cwd());
  if (cwd === root || cwd.startsWith(root === sep ? root : root + sep)) {
    throw new FetchError(
      "INSTALL_REPLACE_REFUSED",
      `--replace swaps the whole output directory, but ${outputDir} is the current directory or one of its parents (${cwd}); fix: pass the directory that holds the earlier release, from outside it`,
    );
  }
  if ((await lstatOrNull(root)) === null) return;
  const foreign: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (entry.name === "dist" && entry.isDirectory()) {
      for (const inner of await readdir(join(root, "dist"), { withFileTypes: true })) {
        if (!inner.isFile() || !isAllowedPayloadTitle(`dist/${inner.name}`)) foreign.push(`dist/${inner.name}`);
      }
    } else if (!entry.isFile() || (entry.name !== INSTALL_LOCK_FILE && !isAllowedPayloadTitle(entry.name))) {
      foreign.push(entry.name);
    }
    if (foreign.length >= 5) break;
  }
  if (foreign.length > 0) {
    throw new FetchError(
      "INSTALL_REPLACE_REFUSED",
      `--replace swaps a directory that holds an earlier release, but ${outputDir} also holds ${foreign.map((name) => describeValue(name)).join(", ")}, which no release writes and the swap would delete; fix: move those out of ${outputDir}, or fetch into a new directory`,
    );
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
  await checkReplaceTarget(outputDir);
  const root = resolve(outputDir);
  const st = await lstatOrNull(root);
  if (st === null) return installPayload(outputDir, files, options);
  if (st.isSymbolicLink()) throw new FetchError("INSTALL_OUTPUT_SYMLINK", `output directory must not be a symlink: ${outputDir}`);
  if (!st.isDirectory()) throw new FetchError("INSTALL_UNSAFE_PATH", `output directory ${outputDir} exists and is not a directory`);
  const tag = randomBytes(6).toString("hex");
  const base = root.split("/").pop() as string;
  const fresh = join(dirname(root), `.${base}.hpk-new-${tag}`);
  const old = join(dirname(root), `.${base}.hpk-old-${tag}`);
  const { rename, rm } = await import("node:fs/promises");
  try {
    const result = await installPayload(fresh, files, options);
    await rename(root, old);
    try {
      await rename(fresh, root);
    } catch (error) {
      await rename(old, root);
      throw error;
    }
    await rm(old, { recursive: true, force: true });
    return result;
  } catch (error) {
    await rm(fresh, { recursive: true, force: true });
    if (error instanceof HermesPluginKitError) throw error;
    throw new FetchError("INSTALL_FAILED", `cannot replace ${outputDir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
}
