/**
 * The one bounded subprocess runner of the product (`oras` here; git, npm and
 * gate commands in `release/`; isolated git in `src/fetch`): an argument
 * array and never a shell string, a timeout, an output ceiling, and an
 * environment built only from an explicit allow-list (secrets live only in the child process that uses them; one
 * bounded runner for every subprocess).
 *
 * {@link childEnvironment} is the only way to make a {@link ChildEnvironment},
 * and {@link runBounded} accepts nothing else, so a caller cannot hand a child
 * a copy of our whole environment (with `REGISTRY_PASSWORD`, `GH_TOKEN`,
 * `ACTIONS_ID_TOKEN_REQUEST_TOKEN`, ...): each child gets the names it needs
 * and the values its caller sets on purpose. Outcomes (exit, timeout, output
 * over the ceiling, start failure) are returned, not thrown, so each area maps
 * them to its own error codes.
 */
import type childProcess from "node:child_process";
import { createRequire } from "node:module";
import { requireObjectWith, requireOptionalBoolean, requireOptionalNumber, requireOptionalSignal, requireOptions, requireStringArgument, requireStringArray, requireStringRecord } from "./arguments.js";
import { OciError } from "./errors.js";

// `node:child_process` loads with the first child: the registry transport's
// fetch path starts none (docs/oci.md "Benchmark"; docs/architecture.md, "Areas").
const requireBuiltin = createRequire(import.meta.url);

declare const childEnvironmentBrand: unique symbol;

/** A child's complete environment, made by {@link childEnvironment} only. */
export type ChildEnvironment = Readonly<Record<string, string>> & { readonly [childEnvironmentBrand]: true };

// The brand at run time: every environment childEnvironment returned (frozen, so what it holds is what was checked).
// runBounded refuses any other object, a spread copy of one included, as the type does for TypeScript callers.
const madeByChildEnvironment = new WeakSet<object>();

/** What any child needs to run at all: program lookup, home, temporary files, locale, time zone (and Windows' system paths). */
export const BASE_ENV_NAMES: readonly string[] = Object.freeze(["PATH", "HOME", "TMPDIR", "TMP", "TEMP", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT", "SystemRoot", "WINDIR", "COMSPEC", "PATHEXT"]);
/** What a child that talks to the network needs: proxies and certificate authorities. */
export const NETWORK_ENV_NAMES: readonly string[] = Object.freeze([
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "GIT_SSL_CAINFO",
  "GIT_SSL_CAPATH",
]);

/**
 * A child environment: the `allow`-listed names copied from `source` (when
 * set), then `set` applied on top (values the caller passes on purpose, e.g.
 * a token to the one git process that pushes).
 * @throws OciError `OCI_ARGUMENT_INVALID` (`allow` not an array of names, `set` not an object of strings,
 *   `source` not an object whose values are strings or undefined).
 */
export function childEnvironment(allow: readonly string[], set: Readonly<Record<string, string>> = {}, source: Readonly<Record<string, string | undefined>> = process.env): ChildEnvironment {
  const call = "childEnvironment(allow, set, source)";
  requireStringArray(allow, call, "allow", "the names of the variables to copy from source");
  requireStringRecord(set, call, "set", "the variables to set on purpose");
  requireStringRecord(source, call, "source", "the environment to copy from (default process.env)", true);
  const env: Record<string, string> = {};
  for (const name of allow) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries(set)) env[name] = value;
  const made = Object.freeze(env) as ChildEnvironment;
  madeByChildEnvironment.add(made);
  return made;
}

/** Options of {@link runBounded}. */
export interface BoundedRunOptions {
  /** The child's whole environment. */
  env: ChildEnvironment;
  /** Working directory (default ours). */
  cwd?: string;
  /** Kill the child (SIGKILL) after this many milliseconds. */
  timeoutMs: number;
  /** Most bytes of stdout plus stderr captured; more kills the child. */
  maxOutputBytes: number;
  /** Bytes written to stdin, then stdin is closed (empty when absent). */
  input?: string | Uint8Array;
  /**
   * `"capture"` (default) collects stdout and stderr; `"stdout"` collects
   * stdout and discards stderr (tool messages may carry secrets); a number is
   * a file descriptor both streams are written to (nothing is captured).
   */
  output?: "capture" | "stdout" | number;
  /**
   * Run the child in a process group of its own (a shell command line and
   * everything it starts, e.g. `bash -c "npm ci"`): a timeout or an abort then
   * stops the whole group (SIGTERM, then SIGKILL to whatever is left after the
   * child exits or after {@link GROUP_KILL_GRACE_MS}), so no grandchild is orphaned.
   * Use it with a `signal` wired to our own SIGINT/SIGTERM: a terminal's Ctrl-C
   * no longer reaches a child in its own group. If our process exits while the
   * child runs (a forced exit: a second signal, a grace period past), the group
   * gets SIGKILL first (every child still running does: its group, or itself).
   */
  processGroup?: boolean;
  /** Aborting stops the child (its process group with `processGroup`); the outcome is `aborted`. */
  signal?: AbortSignal;
}

/** How long a process group stopped with SIGTERM may take before it gets SIGKILL (ms). */
export const GROUP_KILL_GRACE_MS = 2_000;

/** How long a stopped run waits, after its last SIGKILL, for the kernel to end the process group (ms). */
export const GROUP_END_WAIT_MS = 5_000;

/**
 * True while a process of group `pgid` still runs. A zombie (dead, waiting for its
 * reaper) does not count; on Linux members are read from `/proc/<pid>/stat`
 * (field 5, the process group), elsewhere any member that `kill(-pgid, 0)` finds counts.
 */
function groupRuns(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    // ESRCH: no member left; EPERM: the members left are not ours to signal (nor to wait for).
    return false;
  }
  if (process.platform !== "linux") return true;
  const { readdirSync, readFileSync } = requireBuiltin("node:fs") as typeof import("node:fs");
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // ended while we read
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}

/** Resolve once no process of group `pgid` runs, or after `ms` (bounded: 20 ms polls). */
async function waitForGroupEnd(pgid: number, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (groupRuns(pgid) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

/** Children of {@link runBounded} still running: pid -> whether it leads a process group of its own. */
const liveChildren = new Map<number, boolean>();
let exitHookInstalled = false;

/**
 * On process exit, SIGKILL every child {@link runBounded} started that still runs (a child with
 * `processGroup`: its whole group). A process that exits at once (a second signal, a grace period
 * past, `process.exit` anywhere) thereby leaves no install, gate, git or npm command behind; synchronous,
 * as `exit` listeners must be.
 */
function killLiveChildren(): void {
  for (const [pid, group] of liveChildren) {
    try {
      process.kill(group ? -pid : pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  liveChildren.clear();
}

function trackChild(pid: number | undefined, group: boolean): void {
  if (pid === undefined) return;
  liveChildren.set(pid, group);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", killLiveChildren);
  }
}

/** How a bounded run ended. */
export type RunOutcome =
  | { kind: "exited"; code: number | null; signal: NodeJS.Signals | null }
  | { kind: "timeout" }
  | { kind: "output-limit" }
  | { kind: "aborted" }
  | { kind: "start-failed"; errno: string };

/** Result of {@link runBounded}. */
export interface BoundedRun {
  outcome: RunOutcome;
  stdout: Buffer;
  stderr: Buffer;
}

/** The keys of {@link BoundedRunOptions}. */
const BOUNDED_RUN_OPTION_KEYS: readonly string[] = ["env", "cwd", "timeoutMs", "maxOutputBytes", "input", "output", "processGroup", "signal"];

/**
 * The arguments of {@link runBounded}, checked before anything starts.
 * @throws OciError `OCI_ARGUMENT_INVALID` naming the argument.
 */
function checkRunArguments(program: unknown, args: unknown, options: unknown): void {
  const call = "runBounded(program, args, options)";
  requireStringArgument(program, call, "program", "the program to run");
  requireStringArray(args, call, "args", "the program's arguments");
  if (options === undefined) throw new OciError("OCI_ARGUMENT_INVALID", `${call}: options must be an object { env, timeoutMs, maxOutputBytes, ... }, found nothing`);
  requireOptions(options, call, BOUNDED_RUN_OPTION_KEYS);
  const o = options as Record<string, unknown>;
  requireObjectWith(o["env"], call, "options.env", "a child environment made by childEnvironment()", []);
  requireStringRecord(o["env"], call, "options.env", "a child environment made by childEnvironment()");
  if (!madeByChildEnvironment.has(o["env"] as object)) {
    throw new OciError("OCI_ARGUMENT_INVALID", `${call}: options.env must be a child environment made by childEnvironment(allow, set) (an allow-list, so no secret of ours reaches the child by accident), found an object childEnvironment did not return (a plain object or a copy); fix: pass childEnvironment([...names], {...values}) instead`);
  }
  if (o["cwd"] !== undefined) requireStringArgument(o["cwd"], call, "options.cwd", "the working directory");
  if (o["timeoutMs"] === undefined) throw new OciError("OCI_ARGUMENT_INVALID", `${call}: options.timeoutMs must be a number of milliseconds of at least 0, found nothing`);
  requireOptionalNumber(o["timeoutMs"], call, "options.timeoutMs", "milliseconds");
  if (o["maxOutputBytes"] === undefined) throw new OciError("OCI_ARGUMENT_INVALID", `${call}: options.maxOutputBytes must be a number of bytes of at least 0, found nothing`);
  requireOptionalNumber(o["maxOutputBytes"], call, "options.maxOutputBytes", "bytes");
  const input = o["input"];
  if (input !== undefined && typeof input !== "string" && !(input instanceof Uint8Array)) throw new OciError("OCI_ARGUMENT_INVALID", `${call}: options.input must be a string or bytes (or absent), found ${typeof input}`);
  const output = o["output"];
  if (output !== undefined && output !== "capture" && output !== "stdout" && !(typeof output === "number" && Number.isSafeInteger(output) && output >= 0)) {
    throw new OciError("OCI_ARGUMENT_INVALID", `${call}: options.output must be "capture", "stdout" or a file descriptor (or absent), found ${typeof output === "string" ? JSON.stringify(output) : typeof output}`);
  }
  requireOptionalBoolean(o["processGroup"], call, "options.processGroup");
  requireOptionalSignal(o["signal"], call);
}

/**
 * Run `program args...` without a shell, with the bounds of `options`.
 * Never throws for the child's behaviour: see {@link RunOutcome}. A child still
 * running when our process exits gets SIGKILL (its whole group with `processGroup`).
 * @throws OciError `OCI_ARGUMENT_INVALID` (the promise rejects before any child starts) for a `program` that is not a
 *   non-empty string, `args` not an array of strings, `options` not an object of {@link BoundedRunOptions} (a key
 *   it does not read, a missing `env`/`timeoutMs`/`maxOutputBytes`, an `env` not returned by {@link childEnvironment} (a
 *   plain object or a copy of one), a `signal` that is not an AbortSignal).
 */
export function runBounded(program: string, args: readonly string[], options: BoundedRunOptions): Promise<BoundedRun> {
  try {
    checkRunArguments(program, args, options);
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise<BoundedRun>((resolve) => {
    if (options.signal?.aborted === true) {
      resolve({ outcome: { kind: "aborted" }, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) });
      return;
    }
    const sink = typeof options.output === "number" ? options.output : undefined;
    const group = options.processGroup === true && process.platform !== "win32";
    const { spawn } = requireBuiltin("node:child_process") as typeof childProcess;
    const child = spawn(program, [...args], {
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      env: options.env,
      stdio: sink !== undefined ? ["pipe", sink, sink] : ["pipe", "pipe", "pipe"],
      shell: false,
      windowsHide: true,
      // setsid(): the child leads a new process group, which a stop signals as a whole.
      detached: group,
    });
    // Killed with its group when our process exits while it runs (killLiveChildren).
    trackChild(child.pid, group);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let captured = 0;
    let stopped: RunOutcome | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    /** Signal the child, or its whole process group; false when nothing was there to signal. */
    const signalChild = (name: NodeJS.Signals): boolean => {
      if (!group || child.pid === undefined) return child.kill(name);
      try {
        process.kill(-child.pid, name);
        return true;
      } catch {
        return false;
      }
    };
    const stop = (outcome: RunOutcome, first: NodeJS.Signals) => {
      if (stopped !== undefined) return;
      stopped = outcome;
      signalChild(first);
      if (first !== "SIGKILL") {
        graceTimer = setTimeout(() => signalChild("SIGKILL"), GROUP_KILL_GRACE_MS);
        graceTimer.unref();
      }
    };
    const onAbort = () => stop({ kind: "aborted" }, group ? "SIGTERM" : "SIGKILL");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    let finished = false;
    const finish = (outcome: RunOutcome) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (graceTimer !== undefined) clearTimeout(graceTimer);
      options.signal?.removeEventListener("abort", onAbort);
      const result: BoundedRun = { outcome: stopped ?? outcome, stdout: Buffer.concat(out), stderr: Buffer.concat(err) };
      // The group's leader is gone; whatever it started and left behind after a stop goes too, and the
      // run resolves only once the kernel has ended them (a SIGKILL is delivered, not yet acted on, when
      // kill() returns), so "stopped" means nothing of the command still runs.
      const pid = child.pid;
      if (stopped !== undefined && group && pid !== undefined && signalChild("SIGKILL")) {
        void waitForGroupEnd(pid, GROUP_END_WAIT_MS).then(() => {
          liveChildren.delete(pid);
          resolve(result);
        });
        return;
      }
      if (pid !== undefined) liveChildren.delete(pid);
      resolve(result);
    };
    const timer = setTimeout(() => stop({ kind: "timeout" }, "SIGKILL"), options.timeoutMs);
    const collect = (into: Buffer[] | undefined) => (chunk: Buffer) => {
      captured += chunk.length;
      if (captured > options.maxOutputBytes) {
        stop({ kind: "output-limit" }, "SIGKILL");
        return;
      }
      into?.push(chunk);
    };
    child.stdout?.on("data", collect(out));
    child.stderr?.on("data", collect(options.output === "stdout" ? undefined : err));
    child.on("error", (error: NodeJS.ErrnoException) => finish({ kind: "start-failed", errno: error.code ?? "error" }));
    child.on("close", (code, signal) => finish({ kind: "exited", code, signal }));
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(options.input ?? "");
  });
}
