/**
 * The progress bar of long transfers (docs/fetch.md; shown on stderr when it
 * is a TTY, quiet otherwise): one line,
 * redrawn in place at most 10 times a second, first drawn once the transfer
 * has run `delayMs` (default 1 s), so short transfers print nothing. On a
 * stream that is not a TTY nothing is written (piped output stays clean),
 * unless `plainLines` asks for a log-friendly form (the CLI's `--verbose`):
 * the same line without redraw codes, at most every 5 s. When the bar was
 * shown, `finish` writes one summary line (replacing the bar on a TTY).
 *
 *   fetch  [##########..........]  51%  130.5/256.0 MiB  212.4 MB/s
 */

/** Options of {@link TransferProgress}. */
export interface TransferProgressOptions {
  /** Time before the bar first appears (ms). Default 1000. */
  delayMs?: number;
  /** Clock (ms); tests pass their own. */
  now?: () => number;
  /** On a stream that is not a TTY, write plain lines (at most every 5 s) instead of nothing. Default false. */
  plainLines?: boolean;
}

const MiB = 1024 * 1024;
const BAR_WIDTH = 20;
const REDRAW_MS = 100;
const PLAIN_LINE_MS = 5000;

/** A terminal progress bar over `totalBytes`; see the module comment. */
export class TransferProgress {
  private readonly started: number;
  private readonly delayMs: number;
  private readonly now: () => number;
  private readonly tty: boolean;
  private readonly plain: boolean;
  private done = 0;
  private lastDraw = -Infinity;
  private shown = false;
  private finished = false;

  /**
   * @param stream where the bar goes (`null`: nowhere); drawn only when `stream.isTTY` is true
   *   (or as plain lines with `options.plainLines`).
   * @param label a short word before the bar, e.g. `fetch` or `upload`.
   * @param totalBytes the transfer's size in bytes.
   */
  constructor(
    private readonly stream: NodeJS.WritableStream | null,
    private readonly label: string,
    private readonly totalBytes: number,
    options: TransferProgressOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.delayMs = options.delayMs ?? 1000;
    this.tty = stream !== null && (stream as { isTTY?: boolean }).isTTY === true;
    this.plain = stream !== null && !this.tty && options.plainLines === true;
  }

  /** Add `bytes` transferred (any part of the transfer). */
  add(bytes: number): void {
    this.done = Math.min(this.totalBytes, this.done + bytes);
    this.maybeDraw();
  }

  /** Set the bytes transferred so far (cumulative over the whole transfer). */
  set(bytes: number): void {
    this.done = Math.max(0, Math.min(this.totalBytes, bytes));
    this.maybeDraw();
  }

  /** A per-part reporter: call it with that part's cumulative bytes (as `fetchBlobToFile`'s `onProgress` does). */
  part(): (cumulative: number) => void {
    let seen = 0;
    return (cumulative: number) => {
      if (cumulative > seen) {
        this.add(cumulative - seen);
        seen = cumulative;
      }
    };
  }

  private maybeDraw(): void {
    if (!(this.tty || this.plain) || this.finished) return;
    const t = this.now();
    if (t - this.started < this.delayMs || t - this.lastDraw < (this.tty ? REDRAW_MS : PLAIN_LINE_MS)) return;
    this.lastDraw = t;
    this.shown = true;
    this.stream?.write(this.tty ? `\r${this.line(t)}\x1b[K` : `${this.line(t)}\n`);
  }

  private line(t: number): string {
    const fraction = this.totalBytes === 0 ? 1 : this.done / this.totalBytes;
    const filled = Math.round(fraction * BAR_WIDTH);
    const seconds = Math.max(0.001, (t - this.started) / 1000);
    const rate = this.done / 1e6 / seconds;
    return `${this.label.padEnd(6)} [${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%  ${(this.done / MiB).toFixed(1)}/${(this.totalBytes / MiB).toFixed(1)} MiB  ${rate.toFixed(1)} MB/s`;
  }

  /** End the bar: when it was shown, replace it with a summary line; otherwise write nothing. */
  finish(ok = true): void {
    if (this.finished) return;
    this.finished = true;
    if (!this.shown) return;
    const seconds = Math.max(0.001, (this.now() - this.started) / 1000);
    const summary = ok
      ? `${this.label} ${(this.totalBytes / MiB).toFixed(1)} MiB in ${seconds.toFixed(1)} s (${(this.totalBytes / 1e6 / seconds).toFixed(1)} MB/s)`
      : `${this.label} stopped after ${(this.done / MiB).toFixed(1)} of ${(this.totalBytes / MiB).toFixed(1)} MiB`;
    this.stream?.write(this.tty ? `\r${summary}\x1b[K\n` : `${summary}\n`);
  }
}
