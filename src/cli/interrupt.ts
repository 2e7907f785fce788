/**
 * SIGINT, SIGTERM and SIGHUP during a long command (`fetch`, `fleet verify`, `release run`):
 * the first signal aborts the command's work, which removes what it created
 * (its temp directory with any `.partial` file, an install under way and its
 * lock; `release run` stops its install or gate command's process group and
 * releases the workspace lock) and rejects with `InterruptedError`; `runAction` then exits 130
 * (SIGINT), 143 (SIGTERM) or 129 (SIGHUP: the terminal went away). A second signal (another one, or the same
 * one at least {@link DUPLICATE_MS} later: one delivered twice, as GNU timeout does, is one), or work that has
 * not stopped within {@link GRACE_MS}, exits at once with the same status, answering first as any
 * interruption is answered (unless the command's answer has begun on stdout): `--json` output is always
 * exactly one JSON object, `{"ok":false,"code":"INTERRUPTED",...}` here, whose message says the cleanup did
 * not finish.
 *
 * The whole run is watched too ({@link watchRunInterrupts}, installed by `runCli` before any command
 * module is set up; `main.cts` holds a placeholder handler while the bundle loads): a signal that lands
 * before a command's own watch, or during a command that has none (`verify-final-receipt`, the release
 * steps but `run`), is answered like any interruption: `{"ok":false,"code":"INTERRUPTED",...}` on stdout
 * for a JSON answer (`--json`, a release step), the error line on stderr otherwise, and exit 130/143/129.
 * Once the command's answer has begun on stdout it is the answer: a first signal then changes nothing
 * (a second exits at once); once its exit status is known, a signal exits with it.
 *
 * Start-up rule: only the error model and the output conventions are loaded here (no area modules).
 */
import { INTERRUPT_EXIT_CODES, InterruptedError, type InterruptSignal } from "../contract/errors.js";
import { answerInterrupted, stdoutAnswerBegun } from "./output.js";

/** How long the aborted work may take to remove what it created before the process exits anyway (ms). */
export const GRACE_MS = 10_000;
/** A repeat of the same signal sooner than this (ms) is one signal delivered twice (see watchInterrupts). */
export const DUPLICATE_MS = 500;

/** A watch on SIGINT/SIGTERM/SIGHUP for one command run. */
export interface InterruptWatch {
  /** Aborted (reason: an `InterruptedError` naming the signal) on the first signal before {@link InterruptWatch.commit}. */
  signal: AbortSignal;
  /** The signal received, if any. */
  received(): InterruptSignal | undefined;
  /**
   * The command's work is committed (a fetch's install: the last file linked, or the new directory
   * renamed into place): from now on a signal neither aborts it nor exits (no second-signal or
   * grace exit), so the command prints its result and the result decides the exit status.
   */
  commit(): void;
  /** Stop watching; the default signal behaviour returns. */
  dispose(): void;
}

/**
 * Why the process exits before the interrupted work finished stopping: another signal (`by: "signal"`, the
 * second one), or the work had not stopped after {@link GRACE_MS} (`by: "grace"`).
 */
export type InterruptCut = { by: "signal"; signal: InterruptSignal } | { by: "grace"; seconds: number };

/**
 * The message of an interruption cut short (`cut`): the cleanup did not finish, so temporary files may be left.
 * Commands the process started do not outlive it: on exit every child of `runBounded` still running gets SIGKILL
 * (its whole process group when it has one; src/oci/subprocess.ts), so the message says they were killed.
 */
export function cutInterruptMessage(what: string, signal: InterruptSignal, cut: InterruptCut): string {
  const how = cut.by === "signal" ? `${cut.signal} came before it had finished stopping` : `it had not finished stopping after ${cut.seconds} s`;
  return (
    `${what} interrupted (${signal}), and ${how}: it exited at once, before its cleanup finished, killing (SIGKILL) any command it had started that still ran; ` +
    `temporary files it made (hpk-* under TMPDIR) may be left, and what it was doing did not finish (run it again; remove the leftovers once no hermes-plugin-kit command runs)`
  );
}

/** Answer an interruption cut short, unless the command's answer has begun on stdout (it stands: one answer), then exit at once with `status`. */
function exitCut(message: string, status: number): never {
  if (!stdoutAnswerBegun()) answerInterrupted(message, run === undefined ? { json: false, only: false } : { json: run.answer.json, only: run.answer.only });
  process.exit(status);
}

/**
 * Watch SIGINT, SIGTERM and SIGHUP until `dispose()`; see the module comment.
 * @param what names the command in the interruption message, e.g. `fetch`.
 * @param message the interruption message instead of the default (which says temporary files were removed).
 * @param cutMessage the message when the process exits before the work finished stopping (a second signal, or
 *   {@link GRACE_MS} passed) instead of {@link cutInterruptMessage}'s; answered as the run's watch answers
 *   ({@link watchRunInterrupts}: one JSON object on stdout for a JSON answer, the error line on stderr otherwise).
 */
export function watchInterrupts(what: string, message?: (signal: InterruptSignal) => string, cutMessage?: (signal: InterruptSignal, cut: InterruptCut) => string): InterruptWatch {
  // This watch answers signals now; the run's watch stands aside (before our handlers exist, so that
  // it cannot answer a signal this watch also takes).
  const resumeRun = suspendRunInterrupts();
  const controller = new AbortController();
  let received: InterruptSignal | undefined;
  let committed = false;
  let timer: NodeJS.Timeout | undefined;
  let receivedAt = 0;
  const cutShort = (first: InterruptSignal, cut: InterruptCut): never => exitCut(cutMessage?.(first, cut) ?? cutInterruptMessage(what, first, cut), INTERRUPT_EXIT_CODES[first]);
  const onSignal = (name: InterruptSignal) => {
    if (committed) {
      received ??= name;
      return;
    }
    if (received !== undefined) {
      // The same signal again within DUPLICATE_MS is the first one delivered twice, not a second press: GNU
      // timeout signals the process and then its process group (two SIGINTs microseconds apart), and a
      // terminal may too. Counting it as "again" exited at once, with no answer and the temp directory left.
      if (name === received && performance.now() - receivedAt < DUPLICATE_MS) return;
      // Again: exit at once, with the one answer (--json: the INTERRUPTED object) unless the command's has begun.
      cutShort(received, { by: "signal", signal: name });
    }
    received = name;
    receivedAt = performance.now();
    controller.abort(new InterruptedError(name, message?.(name) ?? `${what} interrupted (${name}): its temporary files were removed and nothing was installed or left behind`));
    timer = setTimeout(() => cutShort(name, { by: "grace", seconds: GRACE_MS / 1000 }), GRACE_MS);
    timer.unref();
  };
  const handlers = (Object.keys(INTERRUPT_EXIT_CODES) as InterruptSignal[]).map((name) => [name, () => onSignal(name)] as const);
  for (const [name, handler] of handlers) process.on(name, handler);
  return {
    signal: controller.signal,
    received: () => received,
    commit() {
      committed = true;
      if (timer !== undefined) clearTimeout(timer);
    },
    dispose() {
      for (const [name, handler] of handlers) process.off(name, handler);
      if (timer !== undefined) clearTimeout(timer);
      resumeRun();
    },
  };
}

/**
 * Run `action` under {@link watchInterrupts}; when a signal stopped it, exit
 * with `exitCode` at once (abandoned transfers may still hold sockets open).
 * `action` gets the abort signal and `commit`, to call at the moment its work
 * is committed ({@link InterruptWatch.commit}; `fetch` passes it as the
 * library's `onCommit`).
 *
 * Once `action` has returned, its exit code is the command's result: the work
 * it did is committed (a fetch's install renamed into place) and its output
 * printed. A SIGINT, SIGTERM or SIGHUP that lands after that, while the process
 * is still shutting down, must not turn a success into 130/143/129, so:
 * - the result keeps its own handlers until the process exits: they exit with
 *   the result at once;
 * - the process ends through `process.exit` when its event loop is empty
 *   (`beforeExit`), not through Node's own shutdown: that closes every signal
 *   handle first (the signals' default, killing behaviour returns) and then
 *   spends tens of milliseconds tearing down (threads, heap) before the process
 *   ends, and a signal landing in that window killed a process that had printed
 *   its success (exit 130 with `{"ok":true,...}` on stdout). `process.exit`
 *   leaves the handlers installed to the end.
 */
export async function withInterrupts(
  what: string,
  action: (signal: AbortSignal, commit: () => void) => Promise<number>,
  message?: (signal: InterruptSignal) => string,
  cutMessage?: (signal: InterruptSignal, cut: InterruptCut) => string,
): Promise<number> {
  const watch = watchInterrupts(what, message, cutMessage);
  let code: number;
  try {
    code = await action(watch.signal, () => watch.commit());
  } catch (error) {
    watch.dispose();
    throw error;
  }
  const signal = watch.received();
  const result = signal !== undefined && code !== 0 ? INTERRUPT_EXIT_CODES[signal] : code;
  // The status the process ends with: the result, unless the caller made it a failure since (the CLI
  // makes a success whose answer stdout refused exit 1).
  const status = () => (typeof process.exitCode === "number" && process.exitCode !== 0 ? process.exitCode : result);
  // Installed before the watch goes, so there is no moment with the default (killing) behaviour.
  const settled = () => process.exit(status());
  for (const name of Object.keys(INTERRUPT_EXIT_CODES) as InterruptSignal[]) process.on(name, settled);
  process.once("beforeExit", settled);
  // The settled handlers answer from now on; the run's watch stays aside.
  suspendRunInterrupts();
  watch.dispose();
  if (signal !== undefined) process.exit(result);
  return result;
}

/** How the run answers an interruption: set from the command line at start, then by the program for its command. */
export interface RunAnswer {
  /** The command as typed, without the program's name (`fleet add`); empty before it is known. */
  what: string;
  /** The answer is a JSON object on stdout (`--json`, a release step but `demo`). */
  json: boolean;
  /** `--json` was given: the JSON object is the whole answer (no error line on stderr). */
  only: boolean;
  /** The command's action has begun (its own checks, reads or writes may have run). */
  started: boolean;
}

/** The run's watch (one per process): its answer, how many watches stand in for it, its exit status once known, a signal held. */
interface RunWatch {
  answer: RunAnswer;
  suspended: number;
  status: number | undefined;
  pending: boolean;
}

/** The run's watch, once installed. */
let run: RunWatch | undefined;

/** The run's watch stands aside until the returned function is called (once). */
function suspendRunInterrupts(): () => void {
  const watch = run;
  if (watch === undefined) return () => {};
  watch.suspended += 1;
  let resumed = false;
  return () => {
    if (resumed) return;
    resumed = true;
    watch.suspended -= 1;
  };
}

/**
 * Watch SIGINT, SIGTERM and SIGHUP for the whole run (see the module comment), from before any command
 * module is set up (`runCli`); `answer` is what the command line says (the program refines it with
 * {@link setRunAnswer}). A command's own watch ({@link watchInterrupts}) takes over while it runs. The
 * process also ends through `process.exit` when its event loop is empty (`beforeExit`), so a signal
 * landing while it shuts down never meets the default (killing) behaviour (see {@link withInterrupts}).
 * Idempotent: a second call only sets the answer.
 */
export function watchRunInterrupts(answer: RunAnswer): void {
  if (run !== undefined) {
    run.answer = answer;
    return;
  }
  const watch: RunWatch = { answer, suspended: 0, status: undefined, pending: false };
  run = watch;
  let pendingName: InterruptSignal | undefined;
  let pendingAt = 0;
  const onSignal = (name: InterruptSignal) => {
    if (watch.suspended > 0) return;
    const code = INTERRUPT_EXIT_CODES[name];
    if (watch.status !== undefined) process.exit(typeof process.exitCode === "number" && process.exitCode !== 0 ? process.exitCode : watch.status);
    // The answer is on its way out: it stands (a second signal exits at once).
    if (stdoutAnswerBegun()) {
      // The same signal delivered twice (GNU timeout: the process, then its group) is one signal.
      if (watch.pending && !(name === pendingName && performance.now() - pendingAt < DUPLICATE_MS)) process.exit(code);
      if (!watch.pending) {
        pendingName = name;
        pendingAt = performance.now();
      }
      watch.pending = true;
      return;
    }
    const { what, json, only, started } = watch.answer;
    const named = what === "" ? "hermes-plugin-kit" : what;
    const message = started
      ? `${named} interrupted (${name}) before it finished: it stopped where it was, without its result (what it had already done is not undone)`
      : `${named} interrupted (${name}) during start-up, before it did anything`;
    answerInterrupted(message, { json, only });
    process.exit(code);
  };
  for (const name of Object.keys(INTERRUPT_EXIT_CODES) as InterruptSignal[]) process.on(name, () => onSignal(name));
  process.once("beforeExit", () => process.exit());
}

/** The program's answer for the command it runs ({@link watchRunInterrupts}); nothing without a run watch. */
export function setRunAnswer(answer: Partial<RunAnswer>): void {
  if (run !== undefined) run.answer = { ...run.answer, ...answer };
}

/** The run's exit status is known (the command returned it): a signal from now on exits with it. */
export function settleRun(status: number): void {
  if (run !== undefined) run.status = status;
}
