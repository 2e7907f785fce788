/**
 * Creating and checking the directories a command writes into (fetch's output
 * directory, a release workspace, an `oci-layout:` store, `init`'s target,
 * `plugin build`'s out dir): one primitive with bounded work and coded errors.
 *
 * Why not `mkdir(dir, { recursive: true })`: Node's recursive mkdir retries a
 * level whose creation fails with ENOENT after its parent exists, which is
 * exactly what procfs answers (`mkdir /proc/x` -> ENOENT with `/proc` present),
 * so `mkdir("/proc/x", { recursive: true })` never returns. Here every level
 * is created once, outermost first, and the loop is bounded by the number of
 * path components. File-system access only where a function's name says so
 * (docs/architecture.md, "Areas").
 */
import { accessSync, constants as fsConstants, lstatSync, mkdirSync, rmdirSync, statSync, type Stats } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { HermesPluginKitError } from "./errors.js";

/**
 * Codes of {@link IoError}:
 * `IO_NOT_A_DIRECTORY` (the path, or one of its parents, exists and is not a directory),
 * `IO_DIRECTORY_UNWRITABLE` (the directory cannot be created or written: permissions,
 * a read-only file system, a virtual file system such as /proc or /sys),
 * `IO_PATH_TOO_LONG` (the system refuses the path: ENAMETOOLONG, a name over 255 bytes
 * or a path over 4096 bytes on Linux).
 */
export type IoErrorCode = "IO_NOT_A_DIRECTORY" | "IO_DIRECTORY_UNWRITABLE" | "IO_PATH_TOO_LONG";

/** A directory a command must create or write into is unusable (docs/contract.md "Error codes"). */
export class IoError extends HermesPluginKitError<IoErrorCode> {
  /** The path the error is about (the blocking parent for `IO_NOT_A_DIRECTORY`). */
  readonly path: string;

  constructor(code: IoErrorCode, path: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.path = path;
  }
}

/** Options of {@link makeDirectory}. */
export interface MakeDirectoryOptions {
  /** Mode of each created directory (before umask). Default 0o755. */
  mode?: number;
  /** What the directory is for, in the user's words, e.g. `output directory (--output-dir)`; names the flag in errors. */
  purpose?: string;
}

/** What a path that is no directory is, in words ("a regular file", "a symlink", "a character device", ...), for error messages. */
export function kindOfEntry(st: Stats): string {
  if (st.isFile()) return "a regular file";
  if (st.isSymbolicLink()) return "a symlink";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isFIFO()) return "a named pipe";
  if (st.isSocket()) return "a socket";
  return "not a directory";
}

function notADirectory(target: string, blocking: string, st: Stats, purpose: string): IoError {
  const where = blocking === target ? `${target} is ${kindOfEntry(st)}` : `${blocking} (a parent of ${target}) is ${kindOfEntry(st)}`;
  return new IoError(
    "IO_NOT_A_DIRECTORY",
    blocking,
    `cannot use ${purpose} ${target}: expected a directory (or a path that can be created), found ${where}; fix: choose another path, or move ${blocking} out of the way`,
  );
}

/**
 * A file could not be created in the directory `dir` that {@link makeDirectory} accepted (procfs and
 * sysfs pass its access check and then refuse the create: ENOENT, EACCES, EPERM).
 * @returns IoError `IO_DIRECTORY_UNWRITABLE` naming `target`, `dir` and the fix.
 */
export function fileCreateRefused(target: string, dir: string, error: unknown, purpose: string): IoError {
  const errno = errnoOf(error);
  if (errno === "ENAMETOOLONG") return pathTooLong(target, target, purpose, error, "file");
  return unwritable(target, dir, errno, purpose, false, error);
}

/** `failed` is the level whose creation failed (`creating`), or the existing directory that is not writable. */
function unwritable(target: string, failed: string, errno: string, purpose: string, creating: boolean, cause?: unknown): IoError {
  const why =
    errno === "EROFS"
      ? `${failed} is on a read-only file system (EROFS)`
      : errno === "EACCES"
        ? `permission denied ${creating ? `creating ${failed}` : `writing into ${failed}`} (EACCES)`
        : creating && (errno === "ENOENT" || errno === "EPERM")
          ? `${dirname(failed)} does not accept new directories (${errno}: a virtual file system such as /proc or /sys, or a mount that forbids it)`
          : `${failed} is not writable (${errno}${errno === "EPERM" ? ": a virtual file system such as /proc or /sys, or a mount that forbids it" : ""})`;
  return new IoError(
    "IO_DIRECTORY_UNWRITABLE",
    failed,
    `cannot use ${purpose} ${target}: expected a directory this user can create and write, but ${why}; fix: choose a path on a writable disk you own (e.g. under $HOME or the current directory), or fix its permissions`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * `path` for an error message: as is up to 160 characters; longer, its first 80 and last 60
 * characters around "…" and its length in bytes (a path of thousands of characters would bury
 * the message).
 */
export function shortPath(path: string): string {
  return path.length <= 160 ? path : `${path.slice(0, 80)}…${path.slice(-60)} (${Buffer.byteLength(path)} bytes)`;
}

/** Longest name of one path component Linux accepts (bytes). */
export const NAME_MAX_BYTES = 255;
/** Longest path Linux accepts (bytes, without the terminating NUL: PATH_MAX 4096 with it). */
export const PATH_MAX_BYTES = 4095;

/** True when the system would refuse `path` as too long: a component over {@link NAME_MAX_BYTES} or the whole over {@link PATH_MAX_BYTES}. */
export function exceedsPathLimits(path: string): boolean {
  return Buffer.byteLength(path) > PATH_MAX_BYTES || path.split("/").some((name) => Buffer.byteLength(name) > NAME_MAX_BYTES);
}

/**
 * The system refused `failed` (on the way to `target`) as too long (ENAMETOOLONG).
 * @returns IoError `IO_PATH_TOO_LONG` naming the longest name on the path and the fix.
 */
export function pathTooLong(target: string, failed: string, purpose: string, cause?: unknown, kind: "directory" | "file" = "directory"): IoError {
  const longest = failed.split("/").reduce((a, b) => (Buffer.byteLength(b) > Buffer.byteLength(a) ? b : a), "");
  const detail = Buffer.byteLength(longest) > NAME_MAX_BYTES ? `a name of ${Buffer.byteLength(longest)} bytes (at most ${NAME_MAX_BYTES})` : `a path of ${Buffer.byteLength(failed)} bytes (at most ${PATH_MAX_BYTES + 1})`;
  return new IoError(
    "IO_PATH_TOO_LONG",
    failed,
    `cannot use ${purpose} ${shortPath(target)}: expected a ${kind} path this system accepts, found ${detail}, refused as too long (ENAMETOOLONG); fix: choose a shorter path`,
    cause === undefined ? undefined : { cause },
  );
}

function errnoOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : "error";
}

/**
 * lstat, or null when nothing is there; ENOTDIR (a file on the way) also answers null so the walk
 * goes up to it. ENAMETOOLONG is `IO_PATH_TOO_LONG` for `target`.
 */
function lstatOrNull(path: string, target: string, purpose: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    const errno = errnoOf(error);
    if (errno === "ENOENT" || errno === "ENOTDIR") return null;
    if (errno === "ENAMETOOLONG") throw pathTooLong(target, path, purpose, error);
    throw error;
  }
}

/**
 * The missing directories of `abs`, outermost first, after checking that the
 * nearest existing ancestor is a directory (a symlink to one counts for a
 * parent). Bounded by the number of path components.
 */
function missingChain(abs: string, purpose: string): { missing: string[]; existing: string } {
  const missing: string[] = [];
  let current = abs;
  for (let depth = 0; depth <= abs.length; depth += 1) {
    const st = lstatOrNull(current, abs, purpose);
    if (st !== null) {
      const resolved = st.isSymbolicLink() ? statOrNull(current) : st;
      if (resolved === null || !resolved.isDirectory()) throw notADirectory(abs, current, st, purpose);
      return { missing, existing: current };
    }
    missing.unshift(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  throw unwritable(abs, abs, "ENOENT", purpose, true);
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function requireWritable(target: string, dir: string, purpose: string): void {
  try {
    accessSync(dir, fsConstants.W_OK | fsConstants.X_OK);
  } catch (error) {
    throw unwritable(target, dir, errnoOf(error), purpose, false, error);
  }
}

/**
 * Create `dir` and its missing parents, one level at a time, and check that
 * the directory is writable by this user.
 * @returns the directories this call created, outermost first (empty when `dir` existed).
 * @throws IoError `IO_NOT_A_DIRECTORY` (the path or a parent is a file,
 *   device, ...), `IO_DIRECTORY_UNWRITABLE` (EACCES, EROFS, a virtual file
 *   system), `IO_PATH_TOO_LONG` (ENAMETOOLONG); on a throw every directory this
 *   call created is removed again.
 */
export function makeDirectorySync(dir: string, options: MakeDirectoryOptions = {}): string[] {
  const purpose = options.purpose ?? "directory";
  const abs = resolve(dir);
  const { missing, existing } = missingChain(abs, purpose);
  const created: string[] = [];
  try {
    if (missing.length === 0) {
      requireWritable(abs, abs, purpose);
      return created;
    }
    requireWritable(abs, existing, purpose);
    for (const level of missing) {
      try {
        mkdirSync(level, { mode: options.mode ?? 0o755 });
        created.push(level);
      } catch (error) {
        const errno = errnoOf(error);
        if (errno === "ENAMETOOLONG") throw pathTooLong(abs, level, purpose, error);
        const st = errno === "EEXIST" ? lstatOrNull(level, abs, purpose) : null;
        if (st !== null && st.isDirectory()) continue; // created concurrently: fine
        if (st !== null) throw notADirectory(abs, level, st, purpose);
        throw unwritable(abs, level, errno, purpose, true, error);
      }
    }
    requireWritable(abs, abs, purpose);
    return created;
  } catch (error) {
    removeCreated(created);
    throw error;
  }
}

/** Async form of {@link makeDirectorySync} (the few metadata calls run synchronously; same result and codes). */
export async function makeDirectory(dir: string, options: MakeDirectoryOptions = {}): Promise<string[]> {
  return makeDirectorySync(dir, options);
}

/**
 * Fail fast, before any long work, when `dir` could not be created or written:
 * {@link makeDirectorySync}, then remove what it created, so nothing is left
 * behind (`fetch` checks its output directory before downloading).
 * @throws the codes of {@link makeDirectorySync}.
 */
export function checkDirectoryWritable(dir: string, options: MakeDirectoryOptions = {}): void {
  removeCreated(makeDirectorySync(dir, options));
}

/**
 * `mkdtemp` of `<base>/<prefix>XXXXXX` (mode 0700) for a command's private scratch space; `base` defaults
 * to the system temp directory (`TMPDIR`). A base that is missing, no directory or not writable is a coded
 * error naming `TMPDIR` when that is where it came from.
 * @returns the created directory's path.
 * @throws IoError `IO_NOT_A_DIRECTORY` (ENOTDIR: base or a parent is a file), `IO_DIRECTORY_UNWRITABLE`
 *   (ENOENT, EACCES, EROFS, a relative base...), `IO_PATH_TOO_LONG`.
 */
export async function makeTempDirectory(prefix: string, base?: string): Promise<string> {
  const fromEnv = base === undefined;
  const root = base ?? tmpdir();
  const purpose = fromEnv ? "temporary directory (TMPDIR, else /tmp)" : "temporary directory";
  const fix = fromEnv ? "fix: set TMPDIR to an existing directory you can write (absolute path), or unset it" : "fix: choose an existing directory you can write";
  if (!isAbsolute(root)) {
    throw new IoError("IO_DIRECTORY_UNWRITABLE", root, `cannot use ${purpose} ${shortPath(root)}: expected an absolute path, found a relative one; ${fix}`);
  }
  try {
    return await mkdtemp(join(root, prefix));
  } catch (error) {
    const errno = errnoOf(error);
    if (errno === "ENAMETOOLONG") throw pathTooLong(root, root, purpose, error);
    const found = errno === "ENOENT" ? "it does not exist" : errno === "ENOTDIR" ? "it (or a parent) is not a directory" : errno === "EACCES" ? "permission denied (EACCES)" : errno === "EROFS" ? "it is on a read-only file system (EROFS)" : `it cannot be written (${errno})`;
    throw new IoError(errno === "ENOTDIR" ? "IO_NOT_A_DIRECTORY" : "IO_DIRECTORY_UNWRITABLE", root, `cannot use ${purpose} ${shortPath(root)}: expected a directory this user can create files in, but ${found}; ${fix}`, { cause: error });
  }
}

/** Remove directories created by {@link makeDirectorySync} (innermost first), ignoring failures. */
export function removeCreated(created: readonly string[]): void {
  for (const level of [...created].reverse()) {
    try {
      rmdirSync(level);
    } catch {
      // not empty or already gone: leave it
    }
  }
}
