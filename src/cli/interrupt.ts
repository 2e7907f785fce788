/**
 * SIGINT, SIGTERM and SIGHUP during a long command (`fetch`, `fleet verify`, `release run`):
 * the first signal aborts the command's work, which removes what it created
 * (its temp directory with any `.partial` file, an install under way and its
 * lock; `release run` stops its install or gate command's process group and
 * releases the workspace lock) and rejects with `InterruptedError`; `runAction` then exits 130
 * (SIGINT), 143 (SIGTERM) or 129 (SIGHUP: the terminal went away). A second signal, or work that has not stopped
 * within {@link GRACE_MS}, exits at once with the same status.
 *
 * Start-up rule: only the error model is loaded here (no area modules).
 */
import { INTERRUPT_EXIT_CODES, InterruptedError, type InterruptSignal } from "../contract/errors.js";

/** How long the aborted work may take to remove what it created before the process exits anyway (ms). */
export const GRACE_MS = 10_000;

/** A watch on SIGINT/SIGTERM for one command run. */
export interface InterruptWatch {
  /** Aborted (reason: an `InterruptedError` naming the signal) on the first signal. */
  signal: AbortSignal;
  /** The signal received, if any. */
  received(): InterruptSignal | undefined;
  /** Stop watching; the default signal behaviour returns. */
  dispose(): void;
}

/**
 * Watch SIGINT and SIGTERM until `dispose()`; see the module comment.
 * @param what names the command in the interruption message, e.g. `fetch`.
 * @param message the interruption message instead of the default (which says temporary files were removed).
 */
export function watchInterrupts(what: string, message?: (signal: InterruptSignal) => string): InterruptWatch {
  const controller = new AbortController();
  let received: InterruptSignal | undefined;
  let timer: NodeJS.Timeout | undefined;
  const onSignal = (name: InterruptSignal) => {
    if (received !== undefined) process.exit(INTERRUPT_EXIT_CODES[received]);
    received = name;
    controller.abort(new InterruptedError(name, message?.(name) ?? `${what} interrupted (${name}): its temporary files were removed and nothing was installed or left behind`));
    timer = setTimeout(() => process.exit(INTERRUPT_EXIT_CODES[name]), GRACE_MS);
    timer.unref();
  };
  const handlers = (Object.keys(INTERRUPT_EXIT_CODES) as InterruptSignal[]).map((name) => [name, () => onSignal(name)] as const);
  for (const [name, handler] of handlers) process.on(name, handler);
  return {
    signal: controller.signal,
    received: () => received,
    dispose() {
      for (const [name, handler] of handlers) process.off(name, handler);
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/**
 * Run `action` under {@link watchInterrupts}; when a signal stopped it, exit
 * with `exitCode` at once (abandoned transfers may still hold sockets open).
 *
 * Once `action` has returned, its exit code is the command's result: the work
 * it did is committed (a fetch's install renamed into place) and its output
 * printed. A SIGINT or SIGTERM that lands after that, while the process is
 * still shutting down, must not turn a success into 130/143 (the default
 * signal behaviour would kill the process with that status), so the result
 * keeps its own handlers until the process exits: they exit with `code` at once.
 */
export async function withInterrupts(what: string, action: (signal: AbortSignal) => Promise<number>, message?: (signal: InterruptSignal) => string): Promise<number> {
  const watch = watchInterrupts(what, message);
  let code: number;
  try {
    code = await action(watch.signal);
  } catch (error) {
    watch.dispose();
    throw error;
  }
  const signal = watch.received();
  const result = signal !== undefined && code !== 0 ? INTERRUPT_EXIT_CODES[signal] : code;
  // Installed before the watch goes, so there is no moment with the default (killing) behaviour.
  const settled = () => process.exit(result);
  for (const name of Object.keys(INTERRUPT_EXIT_CODES) as InterruptSignal[]) process.on(name, settled);
  watch.dispose();
  if (signal !== undefined) process.exit(result);
  return result;
}
