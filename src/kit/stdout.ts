/**
 * stdout of a stdio MCP server is the JSON-RPC channel (Hermes MCP client "stdout
 * is the protocol channel", C.4 risk 7): one stray line before `initialize`
 * answers breaks the connection. {@link guardStdout} routes every
 * non-protocol write to stderr and hands the protocol a private writer:
 *
 * - `process.stdout.write` / `.end` (and so every `console` method that
 *   prints to stdout: `log`, `info`, `debug`, `dir`, `dirxml`, `table`,
 *   `group`, `count`, `timeLog`, ...);
 * - `fs.write`, `fs.writeSync`, `fs.writev`, `fs.writevSync`,
 *   `fs.writeFileSync`, `fs.appendFileSync` on file descriptor 1, and opening
 *   `/dev/stdout` or `/proc/self/fd/1` (`fs.open`, `fs.openSync`,
 *   `fs.createWriteStream`, `fs.writeFileSync`, `fs.appendFileSync`);
 * - child processes that would inherit stdout (`spawn`, `spawnSync`, `fork`,
 *   `execSync`, `execFileSync` with `stdio: "inherit"`, `[.., "inherit" | 1 |
 *   process.stdout, ..]`, or `fork`'s default) get stderr in that slot.
 *
 * The built `dist/server.js` installs the guard in its first module, before
 * any plugin code is evaluated; `serve()` installs it too. This module
 * imports only Node built-ins, so the bundle can evaluate it first. State is
 * kept on `globalThis` so two copies of the kit in one process share one
 * guard.
 */
import childProcess from "node:child_process";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import type { Writable } from "node:stream";

const STATE = Symbol.for("hermes-plugin-kit.stdout-guard.v1");

type WriteFn = (chunk: unknown, encoding?: unknown, callback?: unknown) => boolean;

interface GuardState {
  /** The original `process.stdout.write`, bound: the only path to the protocol channel. */
  write: WriteFn;
}

const STDOUT_PATHS = new Set(["/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"]);

function toStderrFd(fd: unknown): unknown {
  return fd === 1 ? 2 : fd;
}

function isStdoutPath(file: unknown): boolean {
  return (typeof file === "string" && STDOUT_PATHS.has(file)) || (file instanceof URL && file.protocol === "file:" && STDOUT_PATHS.has(file.pathname));
}

/** For whole-file writes: fd 1 or a stdout path -> fd 2 (a descriptor argument is never closed by Node). */
function toStderrTarget(file: unknown): unknown {
  return file === 1 || isStdoutPath(file) ? 2 : file;
}

/** For opens: a stdout path -> `/dev/stderr` (the caller owns and closes the new descriptor). */
function toStderrPath(file: unknown): unknown {
  return isStdoutPath(file) ? "/dev/stderr" : file;
}

/** stdio slot 1 of a child: anything that is our stdout becomes stderr. */
function stdioWithoutStdout(stdio: unknown): unknown {
  if (stdio === "inherit") return ["inherit", 2, "inherit"];
  if (Array.isArray(stdio) && (stdio[1] === "inherit" || stdio[1] === 1 || stdio[1] === process.stdout)) {
    const copy = [...stdio];
    copy[1] = 2;
    return copy;
  }
  return stdio;
}

/** Rewrite the options argument (the last plain object after `skip` positional arguments). */
function withChildOptions(args: unknown[], skip: number, forkDefault: boolean): unknown[] {
  const out = [...args];
  let index = -1;
  for (let i = skip; i < out.length; i += 1) {
    const value = out[i];
    if (value !== null && typeof value === "object" && !Array.isArray(value)) index = i;
  }
  if (index < 0) {
    if (!forkDefault) return out;
    // fork(modulePath[, args]) without options inherits stdout.
    const at = Array.isArray(out[skip]) ? skip + 1 : skip;
    out.splice(at, 0, { stdio: [0, 2, 2, "ipc"] });
    return out;
  }
  const options = { ...(out[index] as Record<string, unknown>) };
  if (options["stdio"] !== undefined) options["stdio"] = stdioWithoutStdout(options["stdio"]);
  else if (forkDefault && options["silent"] !== true) options["stdio"] = [0, 2, 2, "ipc"];
  out[index] = options;
  return out;
}

function patch<T extends object>(target: T, name: string, wrap: (original: (...args: unknown[]) => unknown) => (...args: unknown[]) => unknown): void {
  const record = target as Record<string, unknown>;
  const original = record[name];
  if (typeof original !== "function") return;
  record[name] = wrap(original as (...args: unknown[]) => unknown);
}

function guardFs(): void {
  for (const name of ["write", "writeSync", "writev", "writevSync"]) {
    patch(fs, name, (original) => function (this: unknown, fd: unknown, ...rest: unknown[]) {
      return original.call(this, toStderrFd(fd), ...rest);
    });
  }
  for (const name of ["writeFileSync", "appendFileSync"]) {
    patch(fs, name, (original) => function (this: unknown, file: unknown, ...rest: unknown[]) {
      return original.call(this, toStderrTarget(file), ...rest);
    });
  }
  for (const name of ["open", "openSync", "createWriteStream"]) {
    patch(fs, name, (original) => function (this: unknown, file: unknown, ...rest: unknown[]) {
      return original.call(this, toStderrPath(file), ...rest);
    });
  }
}

function guardChildProcesses(): void {
  patch(childProcess, "spawn", (original) => (...args) => original(...withChildOptions(args, 1, false)));
  patch(childProcess, "spawnSync", (original) => (...args) => original(...withChildOptions(args, 1, false)));
  patch(childProcess, "execSync", (original) => (...args) => original(...withChildOptions(args, 1, false)));
  patch(childProcess, "execFileSync", (original) => (...args) => original(...withChildOptions(args, 1, false)));
  patch(childProcess, "fork", (original) => (...args) => original(...withChildOptions(args, 1, true)));
}

function installedState(): GuardState | undefined {
  return (globalThis as Record<symbol, GuardState | undefined>)[STATE];
}

/**
 * Route every non-protocol stdout write of this process to stderr (see the
 * module comment). Idempotent; safe to call before anything else.
 *
 * @returns the protocol writer (see {@link protocolStdout}).
 */
export function guardStdout(): Writable {
  if (!installedState()) {
    const stdout = process.stdout;
    const stderr = process.stderr;
    const state: GuardState = { write: stdout.write.bind(stdout) as WriteFn };
    (globalThis as Record<symbol, GuardState>)[STATE] = state;
    stdout.write = ((chunk: unknown, encoding?: unknown, callback?: unknown) => (stderr.write as WriteFn)(chunk, encoding, callback)) as typeof stdout.write;
    stdout.end = ((chunk?: unknown, encoding?: unknown, callback?: unknown) => {
      const done = [chunk, encoding, callback].find((value) => typeof value === "function") as (() => void) | undefined;
      if (chunk !== undefined && chunk !== null && typeof chunk !== "function") (stderr.write as WriteFn)(chunk, typeof encoding === "string" ? encoding : undefined);
      if (done) process.nextTick(done);
      return stdout;
    }) as typeof stdout.end;
    guardFs();
    guardChildProcesses();
    syncBuiltinESMExports();
  }
  return protocolStdout();
}

/**
 * Run `fn` with `process.stdout.write` (and so `console`) sent to stderr,
 * then restore it: for tools that import plugin code in their own process
 * (`plugin build` reads the entry's definition) and print results on stdout.
 * A no-op wrapper once {@link guardStdout} is installed.
 */
export async function withStdoutOnStderr<T>(fn: () => Promise<T>): Promise<T> {
  if (installedState()) return fn();
  const stdout = process.stdout;
  const previous = stdout.write;
  stdout.write = ((chunk: unknown, encoding?: unknown, callback?: unknown) => (process.stderr.write as WriteFn)(chunk, encoding, callback)) as typeof stdout.write;
  try {
    return await fn();
  } finally {
    stdout.write = previous;
  }
}

/** True once {@link guardStdout} ran in this process. */
export function isStdoutGuarded(): boolean {
  return installedState() !== undefined;
}

/**
 * The protocol writer: a `Writable`-shaped facade whose `write` reaches the
 * real stdout (through the original `process.stdout.write`) and whose
 * `drain` events are stdout's. Give it to `StdioServerTransport` as its
 * stdout. Without the guard, plain `process.stdout`.
 */
export function protocolStdout(): Writable {
  const state = installedState();
  const stdout = process.stdout;
  if (!state) return stdout;
  const facade = {
    write: (chunk: unknown, encoding?: unknown, callback?: unknown) => state.write(chunk, encoding, callback),
    once: (event: string, listener: (...args: unknown[]) => void) => {
      stdout.once(event, listener);
      return facade;
    },
    on: (event: string, listener: (...args: unknown[]) => void) => {
      stdout.on(event, listener);
      return facade;
    },
    off: (event: string, listener: (...args: unknown[]) => void) => {
      stdout.off(event, listener);
      return facade;
    },
  };
  return facade as unknown as Writable;
}
