/**
 * Owners of PID lock files (the layout store's `index.json.lock`, the install
 * lock of `fetch`, the workspace lock of `release run`): a lock whose owner
 * process is gone may be broken.
 */

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
