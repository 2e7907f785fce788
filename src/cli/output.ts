/**
 * Output and exit-code conventions of the `hermes-plugin-kit` CLI.
 *
 * JSON answers: every object a command prints on stdout carries `ok` (`true` on success, {@link printJson}).
 *
 * Exit codes: 0 success, 1 the operation failed (contract, verification,
 * registry, git or privacy failure; one line `hermes-plugin-kit: <message>`
 * on stderr), 2 usage error (bad or missing flags). A command whose output is
 * JSON (every `release` step except `demo`; any command with `--json`) also
 * prints `{"ok":false,"code":"<CODE>","message":"..."}` on stdout; with
 * `--json` given, that object is the only output. Usage errors (exit 2) do the
 * same with code `USAGE`, those commander finds itself included (`program.ts`);
 * a consumer command given no repository to verify against exits 2 with code
 * `POLICY_REPOSITORY_UNPINNED`. A command stopped by SIGINT or SIGTERM
 * (`src/cli/interrupt.ts`) exits 130 or 143 (128 + the signal number) with code `INTERRUPTED`.
 *
 * Streams: stdout carries the command's result only (text, or one JSON
 * object); progress, notes and next steps go to stderr. `--quiet` drops
 * progress and notes (errors still print); `--verbose` adds detail (progress
 * even when stderr is not a terminal, stack traces of internal errors, tool logs).
 */
import { fstatSync, statSync, writeSync } from "node:fs";
import { stdoutFailureLine } from "./stdout-failure.js";
import { HermesPluginKitError, INTERRUPT_EXIT_CODES, InterruptedError } from "../contract/errors.js";

/** Exit code of a successful command. */
export const EXIT_OK = 0;
/** Exit code of a failed operation. */
export const EXIT_FAILURE = 1;
/** Exit code of a usage error. */
export const EXIT_USAGE = 2;

/** A usage error raised by a command action (exit 2). */
export class UsageError extends HermesPluginKitError<"USAGE"> {
  constructor(message: string) {
    super("USAGE", message);
  }
}

/** How much a command says on stderr besides errors (`--quiet`, default, `--verbose`). */
export type Verbosity = "quiet" | "normal" | "verbose";

let verbosity: Verbosity = "normal";
let jsonRequested = false;
let commandPathOfRun = "hermes-plugin-kit";

/** Set by the program before an action runs: the command's full name (`hermes-plugin-kit fleet add`), for the help pointer of usage errors. */
export function setCommandPath(path: string): void {
  commandPathOfRun = path;
}

/** ` (see '<command> --help')`: the tail of every usage error line (src/cli/usage.ts). */
export function helpPointer(): string {
  return ` (see '${commandPathOfRun} --help')`;
}

/** Set by the program before an action runs: the user passed `--json` (everything goes into the one JSON object). */
export function setJsonRequested(value: boolean): void {
  jsonRequested = value;
}

/** Set by the program from `--quiet` / `--verbose` before an action runs. */
export function setVerbosity(value: Verbosity): void {
  verbosity = value;
}

/** The current verbosity. */
export function currentVerbosity(): Verbosity {
  return verbosity;
}

/**
 * The stream for progress lines: stderr, or `null` under `--quiet`. With
 * `ttyOnly` (transfer progress) stderr only when it is a terminal, unless `--verbose`.
 */
export function progressStream(ttyOnly = false): NodeJS.WritableStream | null {
  if (verbosity === "quiet") return null;
  if (ttyOnly && verbosity !== "verbose" && process.stderr.isTTY !== true) return null;
  return process.stderr;
}

/**
 * Options of a transfer's progress bar (fetch, stage and publish uploads): a
 * bar on a terminal, plain lines on a pipe under `--verbose`, nothing under `--quiet`.
 * Without `--verbose` the bar waits a second, so a quick transfer prints nothing; `--verbose` asks for
 * progress, so it starts at once (`progressDelayMs: 0`): at least one progress line and the summary.
 */
export function transferProgress(): { progress: NodeJS.WritableStream | null; progressLines: boolean; progressDelayMs?: number } {
  return { progress: progressStream(true), progressLines: verbosity === "verbose", ...(verbosity === "verbose" ? { progressDelayMs: 0 } : {}) };
}

/**
 * `text` with the characters that can drive a terminal or reorder what it shows (C0 and C1 controls
 * but newline and tab, the line and paragraph separators, bidirectional overrides and isolates)
 * written as `\uXXXX`: a path or value someone typed or planted reaches stderr as data. With
 * `newlines`, line breaks too (a text line on stdout that must stay one line per item).
 */
export function terminalSafe(text: string, options: { newlines?: boolean } = {}): string {
  const unsafe = options.newlines === true ? /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g : /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
  return text.replace(unsafe, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * A message of several lines (one problem per line, e.g. `PLUGIN_DEFINITION_INVALID`) as one line: the lines
 * joined by "; ", or by a space where a line already ends in punctuation that leads on (`:`, `;`, `,`, an
 * opening bracket), so the problems stay apart on the one error line.
 */
export function foldLines(text: string): string {
  const lines = text.split(/\s*\n\s*/).filter((line) => line.length > 0);
  let folded = lines[0] ?? "";
  for (const line of lines.slice(1)) folded += (/[:;,([{]$/.test(folded) ? " " : "; ") + line;
  return folded;
}

/** Longest error message written on an error line (characters); the JSON answer keeps the whole message. */
export const MAX_ERROR_LINE = 1200;

/**
 * `text` as at most {@link MAX_ERROR_LINE} characters: a longer message (a path of thousands of
 * characters, a listing) keeps its start and its end, where the code's context and the fix are, around
 * "… (N characters left out) …".
 */
export function boundedLine(text: string): string {
  if (text.length <= MAX_ERROR_LINE) return text;
  const head = text.slice(0, 700);
  const tail = text.slice(-400);
  return `${head} … (${text.length - head.length - tail.length} characters left out) … ${tail}`;
}

/**
 * Write `hermes-plugin-kit: warning: <text>` to stderr, also under `--quiet`: a warning says what a command that succeeded did not
 * verify (an unpinned receipt reference, a fleet lock that pins nothing) or what installing will do (npm
 * lifecycle scripts), which a script that asked for quiet output must still see.
 */
export function printWarning(text: string): void {
  process.stderr.write(terminalSafe(`hermes-plugin-kit: warning: ${text}`) + "\n");
}

/** Write a note line to stderr (silent under `--quiet`). */
export function printNote(line: string): void {
  if (verbosity !== "quiet") process.stderr.write(terminalSafe(line) + "\n");
}

/** After a release: the consumer's next commands on stderr (silent under `--quiet`). */
export function printNextSteps(lines: readonly string[]): void {
  if (lines.length === 0) return;
  printNote("");
  printNote("Next, a consumer fetches, verifies, pins and installs this release:");
  for (const line of lines) printNote(`  ${line}`);
}

/** Set by the first write of the command's answer to stdout (src/cli/interrupt.ts: the answer then stands). */
let answerBegun = false;

/** True once anything was written to stdout (or its sink): the command's answer has begun. */
export function stdoutAnswerBegun(): boolean {
  return answerBegun;
}

/**
 * Answer an interruption that no command handled (src/cli/interrupt.ts): the error line
 * `hermes-plugin-kit: <message> [INTERRUPTED]` on stderr unless `--json` was given, and
 * `{"ok":false,"code":"INTERRUPTED","message"}` on stdout when the answer is JSON.
 */
export function answerInterrupted(message: string, answer: { json: boolean; only: boolean }): void {
  if (!(answer.json && answer.only)) process.stderr.write(`hermes-plugin-kit: ${terminalSafe(message)} [INTERRUPTED]\n`);
  if (answer.json) printJson({ ok: false, code: "INTERRUPTED", message });
}

/** Set once a write to stdout went through `process.stdout`: every later one does too, so output keeps its order. */
let stdoutStreamed = false;
/** Set when the reader of stdout went away (`EPIPE`) or stdout failed: later output is dropped. */
let stdoutClosed = false;
/** Set when a write to stdout failed for another reason than a closed reader (`ENOSPC`, `EIO`, ...). */
let stdoutFailed = false;

/**
 * A write to stdout failed (not `EPIPE`): say so in one line on stderr, drop later output, and make
 * the run fail ({@link stdoutWriteFailed}): the command's answer did not reach its reader.
 */
function failStdout(error: NodeJS.ErrnoException): void {
  if (stdoutFailed) return;
  stdoutFailed = true;
  stdoutClosed = true;
  process.stderr.write(stdoutFailureLine(typeof error.code === "string" ? error.code : undefined, error.syscall));
}

/** True when a write to stdout failed (not a closed reader): the run exits 1 at best (src/cli/program.ts). */
export function stdoutWriteFailed(): boolean {
  return stdoutFailed;
}
/** Where stdout text goes instead of descriptor 1 ({@link redirectStdout}). */
let stdoutSink: ((text: string) => void) | undefined;

/**
 * Send what commands write to stdout to `sink` instead of descriptor 1 (a command run in-process,
 * as tests do, collects its answer this way: the CLI does not write through `process.stdout`);
 * `undefined` restores descriptor 1.
 */
export function redirectStdout(sink: ((text: string) => void) | undefined): void {
  stdoutSink = sink;
}

/**
 * Write `text` to stdout. A command's result is written with `write(2)` on descriptor 1 directly:
 * creating `process.stdout` loads Node's stream modules, a few milliseconds of every short command
 * (`npm run bench:cli`). When descriptor 1 cannot take the bytes now (`EAGAIN`: a non-blocking pipe
 * that is full) or refuses them otherwise, the rest (and every later write) goes through
 * `process.stdout`, which waits for the reader. A closed stdout (`EPIPE`: `... | head -1`) drops
 * this and every later write quietly; the command ends with its own exit code.
 */
export function writeStdout(text: string): void {
  answerBegun = true;
  if (stdoutSink !== undefined) {
    stdoutSink(text);
    return;
  }
  if (stdoutClosed) return;
  if (stdoutStreamed) {
    process.stdout.write(text);
    return;
  }
  const bytes = Buffer.from(text, "utf8");
  let offset = 0;
  try {
    // Bounded: every pass writes at least one byte or leaves the loop.
    while (offset < bytes.length) {
      const n = writeSync(1, bytes, offset, bytes.length - offset);
      if (n <= 0) break;
      offset += n;
    }
    if (offset === bytes.length) return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EPIPE") {
      stdoutClosed = true;
      return;
    }
    if (code !== "EAGAIN") {
      failStdout(error as NodeJS.ErrnoException);
      return;
    }
  }
  stdoutStreamed = true;
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    // A write racing the first EPIPE finds the stream destroyed: the same closed reader.
    if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") stdoutClosed = true;
    else failStdout(error);
  });
  process.stdout.write(bytes.subarray(offset));
}

/**
 * True when stdout is a terminal. A pipe, a file, a socket or `/dev/null` on descriptor 1 is
 * known not to be one without creating `process.stdout` (or loading `node:tty`, which loads the
 * stream and net modules); any other character device is asked through `process.stdout.isTTY`.
 */
export function stdoutIsTerminal(): boolean {
  if (!stdoutStreamed) {
    try {
      const st = fstatSync(1);
      if (!st.isCharacterDevice() || st.rdev === statSync("/dev/null").rdev) return false;
    } catch {
      // no descriptor 1, or no /dev/null: process.stdout answers
    }
  }
  return process.stdout.isTTY === true;
}

/**
 * Write one line of text to stdout, with {@link terminalSafe}'s escapes and line breaks as `\u000a`: a
 * path or name in a success line reaches the terminal as data and keeps the result one line per item.
 * (`--json` output is JSON-escaped already.)
 */
export function printLine(line: string): void {
  writeStdout(terminalSafe(line, { newlines: true }) + "\n");
}

/** Write text that may span lines (a tool's answer) to stdout, escaped as {@link terminalSafe} does but for its line breaks. */
export function printText(text: string): void {
  writeStdout(terminalSafe(text) + "\n");
}

/**
 * Write a command's JSON answer, one object on one line, to stdout. Every JSON answer carries `ok`
 * (README "Output convention"): an object that has none is a success and gets `"ok": true` as its
 * first key (the release steps' results, `release/`, are written through here and get it too); a
 * failure's answer is `{"ok": false, "code", "message"}` ({@link runAction}), and a report that can
 * fail (`plugin doctor`, `plugin call`) sets `ok` itself.
 */
export function printJson(value: object): void {
  const answer = Object.prototype.hasOwnProperty.call(value, "ok") ? value : { ok: true, ...value };
  writeStdout(JSON.stringify(answer) + "\n");
}

/**
 * Run a command action: on success return its exit code (default 0); on
 * failure print `hermes-plugin-kit: <message> [<CODE>]` on stderr and, when
 * `json` is set, `{"ok":false,"code","message"}` on stdout (with `--json`
 * given, only the JSON object), and return 1 (2 for {@link UsageError} and for
 * `POLICY_REPOSITORY_UNPINNED`: nothing pinned to verify against; 130 or 143
 * for `INTERRUPTED`, a command stopped by SIGINT or SIGTERM after removing what it created).
 */
export async function runAction(json: boolean, action: () => Promise<number | void>): Promise<number> {
  try {
    const code = await action();
    return code ?? EXIT_OK;
  } catch (error) {
    const usage = error instanceof UsageError;
    // A consumer command given nothing to verify against is a usage error too (exit 2), with its own code.
    const unpinned = error instanceof HermesPluginKitError && error.code === "POLICY_REPOSITORY_UNPINNED";
    const errno = (error as NodeJS.ErrnoException | undefined)?.code;
    // File-system errors from Node carry an errno code (ENOENT, EEXIST, ...): report them as IO_<CODE>.
    const code = error instanceof HermesPluginKitError ? error.code : typeof errno === "string" && /^E[A-Z]+$/.test(errno) ? `IO_${errno}` : "INTERNAL";
    const message = error instanceof Error ? error.message : String(error);
    // A command whose output is JSON answers on stdout; the error line goes to stderr unless the
    // user asked for --json (then the JSON object is the whole answer).
    const errorLine = `hermes-plugin-kit: ${terminalSafe(boundedLine(foldLines(message)))}${usage ? helpPointer() : code !== "INTERNAL" ? ` [${code}]` : ""}\n`;
    if (!(json && jsonRequested)) process.stderr.write(errorLine);
    if (json) printJson({ ok: false, code, message });
    // The JSON answer was the whole answer and stdout refused it (a full disk): the failure goes to stderr after all.
    if (json && jsonRequested && stdoutWriteFailed()) process.stderr.write(errorLine);
    if (!(error instanceof HermesPluginKitError) && (process.env["HERMES_PLUGIN_KIT_DEBUG"] === "1" || verbosity === "verbose") && error instanceof Error) {
      process.stderr.write(`${error.stack ?? ""}\n`);
    }
    if (error instanceof InterruptedError) return INTERRUPT_EXIT_CODES[error.signal ?? "SIGINT"];
    return usage || unpinned ? EXIT_USAGE : EXIT_FAILURE;
  }
}

/** The help text of `--chunk-size` (release steps that upload). */
export const CHUNK_SIZE_HELP =
  "largest upload request body, for registries with a request-size cap: bytes, or <n>KiB / <n>MiB (at least 64KiB; default 64MiB; blobs above it go up in chunks)";

/**
 * Parse a `--chunk-size` value: bytes, or `<n>KiB` / `<n>MiB`, at least 64 KiB.
 * @returns the size in bytes; undefined when the flag was not given.
 * @throws UsageError (exit 2) for anything else.
 */
export function parseChunkSizeFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^([1-9][0-9]{0,12})(KiB|MiB)?$/.exec(value);
  const bytes = m === null ? NaN : Number(m[1]) * (m[2] === "MiB" ? 1024 * 1024 : m[2] === "KiB" ? 1024 : 1);
  if (!Number.isSafeInteger(bytes) || bytes < 64 * 1024) {
    throw new UsageError(`--chunk-size must be a byte count of at least 64KiB (e.g. 65536, 512KiB, 4MiB), found ${JSON.stringify(value)}`);
  }
  return bytes;
}
