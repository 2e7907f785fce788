/**
 * Progress lines of long maintainer work (`release run`, `release demo`): each
 * task says when it starts and when it ends, with its elapsed time, and a task
 * still running after every `heartbeatMs` says so, so a 9-minute gate never
 * looks like a hang. Lines go to a stream the caller chooses (stderr in the
 * CLI, so stdout keeps only the result); `null` silences them.
 *
 * Line shapes (one per event, `<indent>` from the options):
 * `▸ <task>` at the start, `✓ <task> (<status>, 1.2 s)` or `✗ <task> (1.2 s): <why>`
 * at the end, `… <task> still running (20 s)` while running, `- <task> (<reason>)` for a skip.
 */

/** Options of {@link createProgress}. */
export interface ProgressOptions {
  /** Prefix of every line (the demo indents the pipeline's lines under its own). */
  indent?: string;
  /** Interval of the "still running" lines in ms (default 10 000). */
  heartbeatMs?: number;
  /** Clock in ms (tests); default `performance.now()`. */
  now?: () => number;
}

/** A started task. */
export interface ProgressTask {
  /** Milliseconds since the task started. */
  elapsedMs(): number;
  /** End it successfully; `status` and `detail` are shown in the line; returns the elapsed ms. */
  done(status?: string, detail?: string): number;
  /** End it as failed with a one-line reason; returns the elapsed ms. */
  failed(reason: string): number;
}

/** Reports tasks on a stream. */
export interface Progress {
  /** Announce a task and keep reporting it every heartbeat until it ends. */
  start(task: string): ProgressTask;
  /** Report a task that does not apply, with the reason. */
  skipped(task: string, reason: string): void;
  /** One free-form line (e.g. where a log file is). */
  note(text: string): void;
}

/** Seconds with one decimal, the unit the lines use. */
export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A progress reporter writing to `stream` (`null`: silent, tasks are still timed). */
export function createProgress(stream: NodeJS.WritableStream | null | undefined, options: ProgressOptions = {}): Progress {
  const indent = options.indent ?? "";
  const heartbeat = options.heartbeatMs ?? 10_000;
  const now = options.now ?? (() => performance.now());
  const write = (line: string) => {
    stream?.write(`${indent}${line.replace(/\s*\n\s*/g, " ")}\n`);
  };
  return {
    start(task) {
      const started = now();
      write(`▸ ${task}`);
      const timer = stream == null ? undefined : setInterval(() => write(`… ${task} still running (${Math.round((now() - started) / 1000)} s)`), heartbeat);
      // The heartbeat never keeps the process alive on its own.
      timer?.unref();
      let ended = false;
      const end = (line: (ms: number) => string): number => {
        const ms = Math.round(now() - started);
        if (!ended) {
          ended = true;
          if (timer !== undefined) clearInterval(timer);
          write(line(ms));
        }
        return ms;
      };
      return {
        elapsedMs: () => Math.round(now() - started),
        done: (status, detail) => end((ms) => `✓ ${task} (${status === undefined ? "" : `${status}, `}${formatSeconds(ms)})${detail === undefined ? "" : ` — ${detail}`}`),
        failed: (reason) => end((ms) => `✗ ${task} (${formatSeconds(ms)}): ${reason}`),
      };
    },
    skipped(task, reason) {
      write(`- ${task} (${reason})`);
    },
    note(text) {
      write(text);
    },
  };
}
