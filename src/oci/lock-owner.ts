/**
 * Owners of PID lock files (the layout store's `index.json.lock`, the install
 * lock of `fetch`, the workspace lock of `release run`): a lock whose owner
 * process is gone may be broken; a lock that is not what the kit writes (a
 * symlink, a directory, other content), whose PID was reused (its process
 * started after the lock was written) or whose PID runs a live program that is
 * not a kit process is refused at once, never waited for nor broken.
 */
import { constants as fsConstants } from "node:fs";
import { lstat, open, readFile, readlink, unlink } from "node:fs/promises";
import { describeValue } from "../contract/grammar.js";
import { requireOptionalFunction, requireOptionalNumber, requireStringArgument } from "./arguments.js";
import { OciError } from "./errors.js";

/** True when `pid` names a running process (EPERM: it runs under another user). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** True when `owner` (the PID read from a lock file) is a valid PID of another process that no longer runs. */
export function isStaleLockOwner(owner: number): boolean {
  return Number.isSafeInteger(owner) && owner > 0 && owner !== process.pid && !isProcessAlive(owner);
}

/** What a kit lock file holds: its holder's PID in decimal, an optional line break, nothing else. */
const LOCK_PID_RE = /^[1-9][0-9]{0,9}\n?$/;
/** A kit lock file is at most this many bytes (a PID and a line break). */
const MAX_LOCK_BYTES = 32;
/** Clock ticks per second of `/proc/<pid>/stat` start times (USER_HZ, 100 on every Linux ABI). */
const USER_HZ = 100;
/** Process names (`/proc/<pid>/comm`) a kit process runs under: a JavaScript runtime or the kit itself. */
const KIT_PROCESS_NAME_RE = /^(?:node|nodejs|bun|deno|electron|hermes)/i;

/**
 * What a lock path holds, read once with {@link inspectLockFile}:
 * - `absent`: nothing (the holder just released it);
 * - `held`: a live process that may be a kit process (wait for it);
 * - `empty`: a file with no PID yet (being taken now, or left by a process killed while taking it);
 * - `dead`: the recorded PID runs no process (a stale lock, safe to break);
 * - `reused`: the recorded PID names a process started after the lock was written (the holder is gone and
 *   its PID was reused: a stale lock; refuse, name the fix);
 * - `other-program`: the recorded PID names a live process that is not a kit process (by its name): the lock
 *   is not that process's, and whether its holder ended (and the PID was reused) or something else wrote the
 *   file cannot be told; refuse at once, neither wait for it nor break it;
 * - `foreign`: not what the kit writes (a symlink, a directory, a device, a large file, other content).
 * `found` says what was found, for the message.
 */
export type LockInspection =
  | { kind: "absent" }
  | { kind: "held"; pid: number }
  | { kind: "empty" }
  | { kind: "dead"; pid: number }
  | { kind: "reused"; pid: number; found: string }
  | { kind: "other-program"; pid: number; found: string }
  | { kind: "foreign"; found: string };

/** Start time (ms since the epoch) and name of process `pid` from Linux procfs; undefined elsewhere or when unreadable. */
async function processFacts(pid: number): Promise<{ startedMs: number; name: string } | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    const close = stat.lastIndexOf(")");
    const name = stat.slice(stat.indexOf("(") + 1, close);
    // Fields after the name, from field 3 (state); field 22 is the start time in ticks after boot.
    const ticks = Number(stat.slice(close + 2).split(" ")[19]);
    const boot = /^btime (\d+)$/m.exec(await readFile("/proc/stat", "utf8"));
    if (!Number.isFinite(ticks) || boot === null) return undefined;
    return { startedMs: Number(boot[1]) * 1000 + (ticks * 1000) / USER_HZ, name };
  } catch {
    return undefined;
  }
}

/** Our own process name, for comparison with a lock holder's (the kit may run under any runtime's name). */
let ownName: string | undefined;
async function ownProcessName(): Promise<string | undefined> {
  ownName ??= (await processFacts(process.pid))?.name;
  return ownName;
}

/** The type of a non-regular directory entry, in words. */
function entryKind(st: import("node:fs").Stats): string {
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a named pipe";
  if (st.isSocket()) return "a socket";
  if (st.isBlockDevice() || st.isCharacterDevice()) return "a device";
  return "not a regular file";
}

/**
 * Inspect the lock file at `path` without following a symlink (see {@link LockInspection}).
 * Whether a live PID is a kit process is known only on Linux (procfs: the holder's name and start
 * time); elsewhere a live PID is `held`.
 * @throws OciError `OCI_ARGUMENT_INVALID` (`path` not a non-empty string); the file system's error for anything but ENOENT.
 */
export async function inspectLockFile(path: string): Promise<LockInspection> {
  requireStringArgument(path, "inspectLockFile(path)", "path", "the lock file's path");
  const st = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
  if (st === null) return { kind: "absent" };
  if (st.isSymbolicLink()) return { kind: "foreign", found: `a symlink (to ${describeValue(await readlink(path).catch(() => "?"))}; not followed)` };
  if (!st.isFile()) return { kind: "foreign", found: entryKind(st) };
  if (st.size > MAX_LOCK_BYTES) return { kind: "foreign", found: `a file of ${st.size} bytes` };
  let text: string;
  try {
    const handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
    try {
      text = (await handle.readFile()).subarray(0, MAX_LOCK_BYTES).toString("utf8");
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { kind: "absent" };
    throw error;
  }
  if (text === "") return { kind: "empty" };
  if (!LOCK_PID_RE.test(text)) return { kind: "foreign", found: `a file holding ${describeValue(text)}` };
  const pid = Number(text.trim());
  if (pid === process.pid) return { kind: "held", pid };
  if (!isProcessAlive(pid)) return { kind: "dead", pid };
  const facts = await processFacts(pid);
  if (facts === undefined) return { kind: "held", pid };
  // The holder started before it wrote the lock; a process started later got the PID afterwards.
  if (facts.startedMs > st.mtimeMs + 2000) {
    return { kind: "reused", pid, found: `PID ${pid}, now process ${describeValue(facts.name)} started ${new Date(facts.startedMs).toISOString()}, after the lock was written (${new Date(st.mtimeMs).toISOString()}): the PID was reused` };
  }
  const own = await ownProcessName();
  if (facts.name !== own && !KIT_PROCESS_NAME_RE.test(facts.name)) {
    return { kind: "other-program", pid, found: `PID ${pid}, a live process ${describeValue(facts.name)}, which is no JavaScript runtime, so no hermes-plugin-kit process` };
  }
  return { kind: "held", pid };
}

/**
 * The message of a lock that cannot be taken: what was expected (the lock file the kit writes: its
 * holder's PID, nothing else), what was found, and the fix.
 * @param lockPath the lock file. @param holder who holds it when it is genuine (e.g. "a fetch installing into /out").
 * @param waitedMs how long the caller waited (for `held` and `empty`).
 * @throws OciError `OCI_ARGUMENT_INVALID` when `found` is not an inspection that refuses ({@link inspectLockFile}'s
 *   answer other than `absent` and `dead`).
 */
export function lockRefusal(found: Exclude<LockInspection, { kind: "absent" } | { kind: "dead" }>, lockPath: string, holder: string, waitedMs: number): string {
  const expected = `a lock file holding the PID of its holder (${holder}), which the kit writes when it takes the lock and removes when done`;
  const remove = `if no hermes-plugin-kit process (${holder}) is running, remove ${lockPath}`;
  const kind: unknown = (found as { kind?: unknown } | null)?.kind;
  if (kind !== "held" && kind !== "empty" && kind !== "reused" && kind !== "other-program" && kind !== "foreign") {
    throw new OciError("OCI_ARGUMENT_INVALID", `lockRefusal(found, lockPath, holder, waitedMs): found must be what inspectLockFile answered for a lock that is refused (kind held, empty, reused, other-program or foreign), found ${describeValue(kind ?? found)}`);
  }
  switch (found.kind) {
    case "held":
      return `${lockPath} is still held by PID ${found.pid} after ${waitedMs} ms (expected ${holder} to release it when done); fix: wait for PID ${found.pid} to finish and rerun; if PID ${found.pid} is not ${holder}, remove ${lockPath}`;
    case "empty":
      return `${lockPath} is still empty after ${waitedMs} ms: expected ${expected}; an empty lock is left by a process killed while taking it; fix: ${remove}, and rerun`;
    case "reused":
      return `${lockPath} is stale: expected ${expected}, found ${found.found}; the process that took the lock is gone; fix: ${remove}, and rerun`;
    case "other-program":
      return `${lockPath} names a live process that is not the kit's: expected ${expected}, found ${found.found}; the lock is not that process's, and whether the process that took it ended (its PID now reused) or something else wrote the file cannot be told, so it is neither waited for nor removed; fix: ${remove}, and rerun`;
    case "foreign": {
      const how = found.found.startsWith("a symlink") ? " (rm removes the link, not its target)" : found.found === "a directory" ? " (it is a directory: check what it holds first)" : "";
      return `${lockPath} is not a lock the kit writes: expected ${expected}, found ${found.found}; it is neither waited for nor removed; fix: ${remove}${how}, and rerun`;
    }
  }
}

/** Options of {@link acquirePidLock}. */
export interface PidLockOptions {
  /** Who takes such a lock, for messages (e.g. `a fetch installing into D`). */
  holder: string;
  /** Longest wait for a live holder (milliseconds). */
  timeoutMs: number;
  /** The caller's error for a lock it cannot take: `message` says what was found and the fix. */
  refuse: (message: string) => Error;
  /** Checked before each attempt (throws `INTERRUPTED` when aborted). */
  beforeAttempt?: () => void;
}

/**
 * Take the PID lock file `path` (O_EXCL, never through a symlink, holding this process's pid). What holds it
 * is inspected first ({@link inspectLockFile}): a lock left by a dead process is broken; a symlink, a
 * directory, other content, a reused PID or a PID that runs a live program that is not a kit process is refused
 * at once; only a live holder
 * (or a lock still being written) is waited for, up to `timeoutMs`, polling every 25 ms (bounded).
 * @returns the release function (removes the lock).
 * @throws what `refuse` makes ({@link lockRefusal}'s message); the open's own error for anything but EEXIST;
 *   OciError `OCI_ARGUMENT_INVALID` before anything is written (`path` not a non-empty string, `options` not
 *   `{holder, timeoutMs, refuse, beforeAttempt?}`).
 */
export async function acquirePidLock(path: string, options: PidLockOptions): Promise<() => Promise<void>> {
  const call = "acquirePidLock(path, options)";
  requireStringArgument(path, call, "path", "the lock file's path");
  if (options === null || typeof options !== "object") throw new OciError("OCI_ARGUMENT_INVALID", `${call}: options must be an object { holder, timeoutMs, refuse, beforeAttempt? }, found ${describeValue(options)}`);
  requireStringArgument(options.holder, call, "options.holder", "who takes such a lock, for messages");
  if (options.timeoutMs === undefined) throw new OciError("OCI_ARGUMENT_INVALID", `${call}: options.timeoutMs must be a number of milliseconds of at least 0, found nothing`);
  requireOptionalNumber(options.timeoutMs, call, "options.timeoutMs", "milliseconds");
  if (typeof options.refuse !== "function") throw new OciError("OCI_ARGUMENT_INVALID", `${call}: options.refuse must be a function (message) => Error, found ${describeValue(options.refuse)}`);
  requireOptionalFunction(options.beforeAttempt, call, "options.beforeAttempt", "() => void");
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    options.beforeAttempt?.();
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
    const found = await inspectLockFile(path);
    if (found.kind === "absent") continue;
    if (found.kind === "dead") {
      await unlink(path).catch(() => undefined);
      continue;
    }
    if (found.kind === "foreign" || found.kind === "reused" || found.kind === "other-program" || Date.now() > deadline) throw options.refuse(lockRefusal(found, path, options.holder, options.timeoutMs));
    await new Promise((r) => setTimeout(r, 25));
  }
}
