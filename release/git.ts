/**
 * The git adapter of the release pipeline, and the release steps' face of the
 * one bounded subprocess runner (`src/oci/subprocess.ts`: git, npm, and
 * declared gate commands, each with an allow-listed environment).
 *
 * Every git invocation runs isolated from the machine's configuration
 * (docs/release-build.md, "Subprocesses"):
 * `GIT_CONFIG_NOSYSTEM=1`, `GIT_CONFIG_GLOBAL=/dev/null`, `-c core.hooksPath=/dev/null`,
 * no terminal prompts, `LC_ALL=C`, and without inherited `GIT_DIR`-style
 * variables. Processes are spawned with argument arrays (never a shell
 * string), with a timeout and an output ceiling. Failures raise
 * `ReleaseStepError` whose message names the command and exit status but
 * never echoes the tool's output verbatim (it may carry credentials); a short,
 * URL-credential-redacted excerpt of stderr is kept for diagnosis.
 */
import { closeSync, existsSync, openSync } from "node:fs";
import { lstat, rm } from "node:fs/promises";
import { resolve as resolvePath } from "node:path";
import { InterruptedError, interruption } from "../src/contract/errors.js";
import { BASE_ENV_NAMES, childEnvironment, NETWORK_ENV_NAMES, runBounded, type ChildEnvironment } from "../src/oci/subprocess.js";
import { PipelineError, ReleaseStepError } from "./errors.js";

/** Default timeout of one git invocation, in milliseconds. */
export const GIT_TIMEOUT_MS = 120_000;
/** Ceiling of captured stdout/stderr per subprocess, in bytes. */
export const MAX_CAPTURE_BYTES = 64 * 1024 * 1024;

/** Options of {@link runProcess}. */
export interface RunProcessOptions {
  /** Working directory. */
  cwd: string;
  /** The child's whole environment, from an explicit allow-list (`childEnvironment`). */
  env: ChildEnvironment;
  /** Kill the process (SIGKILL) after this many milliseconds. */
  timeoutMs: number;
  /** Bytes written to stdin, then stdin is closed; stdin is empty when absent. */
  input?: string | Uint8Array;
  /** When true, a non-zero exit is returned instead of thrown. */
  allowFailure?: boolean;
  /**
   * Where the child's stdout and stderr go. `"capture"` (default) collects both
   * (bounded by {@link MAX_CAPTURE_BYTES}); `"stderr"` forwards both to this
   * process's stderr (gate commands, so our stdout stays one JSON object).
   */
  output?: "capture" | "stderr" | { file: string };
  /** Label used in error messages instead of the program name (e.g. `git fetch`). */
  label?: string;
  /**
   * Run in a process group of its own (install and gate command lines): a
   * timeout or an abort stops everything the command started (`runBounded`).
   */
  processGroup?: boolean;
  /** Aborting stops the child (its whole process group with `processGroup`) and throws `InterruptedError`. */
  signal?: AbortSignal;
}

/** Result of {@link runProcess}: exit status and captured output (UTF-8). */
export interface ProcessResult {
  /** Exit code; `null` only when killed by a signal. */
  code: number | null;
  /** Captured stdout (empty with `output: "stderr"`). */
  stdout: string;
  /** Captured stderr (empty with `output: "stderr"`). */
  stderr: string;
  /** Captured stdout as bytes. */
  stdoutBytes: Buffer;
}

/** How to install the programs the release steps start, for the message of one that is missing. */
const INSTALL_HINTS: Readonly<Record<string, string>> = {
  git: "install git (Debian/Ubuntu: apt-get install git; macOS: xcode-select --install; else https://git-scm.com/downloads)",
  npm: "install Node.js with npm (https://nodejs.org/en/download; Debian/Ubuntu: apt-get install nodejs npm)",
  bash: "install bash (Debian/Ubuntu: apt-get install bash)",
  htpasswd: "install apache2-utils (Debian/Ubuntu: apt-get install apache2-utils)",
};

/** The message of a program that could not start: not found on PATH (ENOENT with an existing cwd), or why not. */
function startFailure(program: string, label: string, errno: string, cwd: string): string {
  if (errno === "ENOENT" && !existsSync(cwd)) return `${label} could not start: its working directory ${cwd} does not exist (ENOENT); fix: rerun from a directory that exists`;
  if (errno === "ENOENT") return `${label} could not start: ${program} was not found on PATH (ENOENT); fix: ${INSTALL_HINTS[program] ?? `install ${program}`}, or put the directory holding it on PATH`;
  if (errno === "EACCES") return `${label} could not start: ${program} on PATH is not executable by you (EACCES); fix: make it executable (chmod +x) or put a working ${program} first on PATH`;
  return `${label} could not start: ${errno}; fix: check that ${program} runs (${program} --version) and that ${cwd} is a directory you can read`;
}

/** Replace `scheme://user:secret@` credentials in text with `scheme://***@`. */
export function redactUrlCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, "$1***@");
}

function excerpt(stderr: string): string {
  const lines = redactUrlCredentials(stderr)
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const last = lines[lines.length - 1];
  if (last === undefined) return "";
  return `: ${last.length > 200 ? last.slice(0, 197) + "..." : last}`;
}

/**
 * Run `program args...` without a shell through the one bounded runner
 * (`src/oci/subprocess.ts`): timeout, output ceiling, allow-listed environment.
 *
 * @returns exit status and output; a non-zero exit is returned only with `allowFailure`.
 * @throws InterruptedError `INTERRUPTED` when `options.signal` aborted it (the child was stopped);
 *   ReleaseStepError `SUBPROCESS_FAILED` (or `GIT_FAILED` when `program` is git)
 *   when the program cannot start, times out, exceeds {@link MAX_CAPTURE_BYTES}
 *   of output, or exits non-zero without `allowFailure`.
 */
export async function runProcess(program: string, args: readonly string[], options: RunProcessOptions): Promise<ProcessResult> {
  const code = program === "git" ? "GIT_FAILED" : "SUBPROCESS_FAILED";
  const label = options.label ?? program;
  // Forwarded output goes to our fd 2 (both streams; our stdout carries one JSON
  // object) or is appended to a log file (mode 0600).
  const sink = typeof options.output === "object" ? openSync(options.output.file, "a", 0o600) : options.output === "stderr" ? 2 : undefined;
  let run;
  try {
    run = await runBounded(program, args, {
      cwd: options.cwd,
      env: options.env,
      timeoutMs: options.timeoutMs,
      maxOutputBytes: MAX_CAPTURE_BYTES,
      ...(options.input !== undefined ? { input: options.input } : {}),
      ...(sink !== undefined ? { output: sink } : {}),
      ...(options.processGroup === true ? { processGroup: true } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
  } finally {
    if (sink !== undefined && sink !== 2) closeSync(sink);
  }
  const outcome = run.outcome;
  if (outcome.kind === "aborted") throw interruption(options.signal) ?? new InterruptedError(undefined, `${label} was stopped`);
  if (outcome.kind === "start-failed") throw new ReleaseStepError(code, startFailure(program, label, outcome.errno, options.cwd));
  if (outcome.kind === "timeout") throw new ReleaseStepError(code, `${label} timed out after ${options.timeoutMs} ms`);
  if (outcome.kind === "output-limit") throw new ReleaseStepError(code, `${label} produced more than ${MAX_CAPTURE_BYTES} bytes of output`);
  const result: ProcessResult = { code: outcome.code, stdout: run.stdout.toString("utf8"), stderr: run.stderr.toString("utf8"), stdoutBytes: run.stdout };
  if (outcome.code !== 0 && options.allowFailure !== true) {
    const status = outcome.code === null ? `signal ${outcome.signal ?? "unknown"}` : `exit ${outcome.code}`;
    throw new ReleaseStepError(code, `${label} failed (${status})${excerpt(result.stderr)}`);
  }
  return result;
}

/**
 * The environment every git child gets (an allow-list, docs/release-build.md, "Subprocesses"):
 * what any child needs and what git needs on the network (proxies,
 * certificate authorities), then `GIT_CONFIG_NOSYSTEM=1`,
 * `GIT_CONFIG_GLOBAL=/dev/null`, `GIT_TERMINAL_PROMPT=0`, `LC_ALL=C`, and
 * `core.hooksPath=/dev/null` through `GIT_CONFIG_COUNT` (so git processes
 * started by other tools, such as semantic-release, are isolated too). No
 * inherited `GIT_DIR`-style variable and no credential reaches git; `extra`
 * is applied last (author identity, dates, and for `release promote` only the
 * promotion token its credential helper reads).
 */
export function gitEnvironment(extra: Record<string, string> = {}, source: Readonly<Record<string, string | undefined>> = process.env): ChildEnvironment {
  return childEnvironment(
    [...BASE_ENV_NAMES, ...NETWORK_ENV_NAMES],
    {
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "core.hooksPath",
      GIT_CONFIG_VALUE_0: "/dev/null",
      GIT_TERMINAL_PROMPT: "0",
      LC_ALL: "C",
      ...extra,
    },
    source,
  );
}

/** Options of {@link git}. */
export interface GitOptions {
  /** Repository working directory (or any directory for `init`). */
  cwd: string;
  /** Timeout in milliseconds (default {@link GIT_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** Extra environment variables (author identity, dates). */
  env?: Record<string, string>;
  /** Bytes for stdin. */
  input?: string | Uint8Array;
  /** Return a non-zero exit instead of throwing. */
  allowFailure?: boolean;
}

/**
 * Run `git -c core.hooksPath=/dev/null <args>` in `cwd` with the isolated
 * {@link gitEnvironment}.
 *
 * @throws ReleaseStepError `GIT_FAILED` (`git <subcommand> failed (exit N)`).
 */
export function git(args: readonly string[], options: GitOptions): Promise<ProcessResult> {
  const sub = args.find((a) => !a.startsWith("-")) ?? "";
  return runProcess("git", ["-c", "core.hooksPath=/dev/null", ...args], {
    cwd: options.cwd,
    env: gitEnvironment(options.env),
    timeoutMs: options.timeoutMs ?? GIT_TIMEOUT_MS,
    ...(options.input !== undefined ? { input: options.input } : {}),
    allowFailure: options.allowFailure ?? false,
    label: `git ${sub}`,
  });
}

/** Run git and return stdout without the trailing newline. @throws ReleaseStepError `GIT_FAILED`. */
export async function gitText(args: readonly string[], options: GitOptions): Promise<string> {
  return (await git(args, options)).stdout.replace(/\n$/, "");
}

/** Full SHA of `rev` peeled to a commit, or `undefined` when it does not resolve. */
export async function resolveCommit(cwd: string, rev: string): Promise<string | undefined> {
  const r = await git(["rev-parse", "--verify", "--quiet", `${rev}^{commit}`], { cwd, allowFailure: true });
  if (r.code !== 0) return undefined;
  const sha = r.stdout.trim();
  return /^[0-9a-f]{40}$/.test(sha) ? sha : undefined;
}

/** SHA of HEAD. @throws ReleaseStepError `GIT_FAILED` when HEAD does not resolve. */
export async function headCommit(cwd: string): Promise<string> {
  const sha = await resolveCommit(cwd, "HEAD");
  if (sha === undefined) throw new ReleaseStepError("GIT_FAILED", await noCommitReason(cwd));
  return sha;
}

/**
 * Why HEAD of `cwd` does not resolve, with the fix: `cwd` is not a git checkout at all,
 * or a checkout without a commit yet.
 */
export async function noCommitReason(cwd: string): Promise<string> {
  const inside = await git(["rev-parse", "--is-inside-work-tree"], { cwd, allowFailure: true }).catch(() => undefined);
  if (inside === undefined || inside.code !== 0 || inside.stdout.trim() !== "true") {
    return `${cwd} is not a git checkout: run it in your plugin's repository (or pass --source <checkout>), or make this directory one: git init -b main && git add -A && git commit -m "chore: initial commit"`;
  }
  return `${cwd} is a git checkout without a commit yet (HEAD does not resolve): commit first, e.g. git add -A && git commit -m "chore: initial commit"`;
}

/** True when `ancestor` is an ancestor of (or equal to) `descendant`. */
export async function isAncestor(cwd: string, ancestor: string, descendant: string): Promise<boolean> {
  const r = await git(["merge-base", "--is-ancestor", ancestor, descendant], { cwd, allowFailure: true });
  if (r.code === 0) return true;
  if (r.code === 1) return false;
  throw new ReleaseStepError("GIT_FAILED", `git merge-base failed (exit ${r.code ?? "signal"})`);
}

/** Name of the checked-out branch, or `undefined` for a detached HEAD. */
export async function currentBranch(cwd: string): Promise<string | undefined> {
  const r = await git(["symbolic-ref", "--quiet", "--short", "HEAD"], { cwd, allowFailure: true });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/** `git status --porcelain` lines; `untracked: false` adds `--untracked-files=no`. */
export async function statusPorcelain(cwd: string, untracked: boolean): Promise<string[]> {
  const args = ["status", "--porcelain"];
  args.push(untracked ? "--untracked-files=all" : "--untracked-files=no");
  const out = await gitText(args, { cwd });
  return out.split("\n").filter((l) => l.length > 0);
}

/** Options of {@link lsRemote}. */
export interface LsRemoteOptions {
  /** Extra environment of this git process only (e.g. the credential helper's variables for `release promote`). */
  env?: Record<string, string>;
  /** Timeout in milliseconds (default {@link GIT_TIMEOUT_MS}). */
  timeoutMs?: number;
}

/**
 * The one reader of `git ls-remote <remote> <refs...>`: full ref name ->
 * object SHA, peeled lines kept as `<ref>^{}`. Only exact names count: git
 * matches the patterns by their tail, so `refs/heads/main` also lists a
 * branch `x/refs/heads/main`, which a caller must never take for `main`.
 * @throws ReleaseStepError `GIT_FAILED`.
 */
export async function lsRemote(cwd: string, remote: string, refs: readonly string[], options: LsRemoteOptions = {}): Promise<ReadonlyMap<string, string>> {
  const out = await gitText(["ls-remote", remote, ...refs], { cwd, ...options });
  const listed = new Map<string, string>();
  for (const line of out.split("\n")) {
    const tab = line.indexOf("\t");
    const sha = line.slice(0, tab);
    if (tab > 0 && /^[0-9a-f]{40}$/.test(sha)) listed.set(line.slice(tab + 1), sha);
  }
  return listed;
}

/** A tag as {@link lsRemote} lists it: `object` its own object, `commit` the peeled `^{}` line for an annotated tag, else the object. */
export function listedTag(listed: ReadonlyMap<string, string>, tag: string): { commit: string | undefined; object: string | undefined } {
  const object = listed.get(`refs/tags/${tag}`);
  return { commit: listed.get(`refs/tags/${tag}^{}`) ?? object, object };
}

/** Commit a remote branch points at (exact `refs/heads/<branch>`), or `undefined` when absent. @throws ReleaseStepError `GIT_FAILED`. */
export async function remoteBranchCommit(cwd: string, remote: string, branch: string, timeoutMs = GIT_TIMEOUT_MS): Promise<string | undefined> {
  return (await lsRemote(cwd, remote, [`refs/heads/${branch}`], { timeoutMs })).get(`refs/heads/${branch}`);
}

/**
 * Commit a remote tag points at, from `git ls-remote <remote> refs/tags/<tag>`
 * (the peeled `^{}` line wins for annotated tags), or `undefined` when absent.
 * @throws ReleaseStepError `GIT_FAILED`.
 */
export async function remoteTagCommit(cwd: string, remote: string, tag: string, timeoutMs = GIT_TIMEOUT_MS): Promise<string | undefined> {
  return listedTag(await lsRemote(cwd, remote, [`refs/tags/${tag}`, `refs/tags/${tag}^{}`], { timeoutMs }), tag).commit;
}

/** Names of the files changed between two commits (`git diff --name-only -z`). */
export async function changedFiles(cwd: string, from: string, to: string): Promise<string[]> {
  const out = (await git(["diff", "--name-only", "-z", "--no-renames", from, to], { cwd })).stdout;
  return out.split("\0").filter((p) => p.length > 0);
}

/** Names of the configured remotes. */
export async function remotes(cwd: string): Promise<string[]> {
  return (await gitText(["remote"], { cwd })).split("\n").filter((r) => r.length > 0);
}

/** The fix when origin's main is not the trigger commit: push, or pull first when origin is ahead. */
export async function remoteMainAdvice(source: string, remoteMain: string | undefined, trigger: string): Promise<string> {
  const found = remoteMain === "" || remoteMain === undefined ? "absent" : remoteMain;
  const head = `origin's main is ${found}, expected the trigger commit ${trigger} (HEAD of ${source})`;
  if (found === "absent") return `${head}: push it first (git push origin HEAD:main)`;
  const known = (await git(["cat-file", "-e", `${remoteMain as string}^{commit}`], { cwd: source, allowFailure: true })).code === 0;
  if (!known) return `${head}: origin has commits you do not have; run git pull (or git fetch origin and rebase), then push and rerun`;
  const behind = (await git(["merge-base", "--is-ancestor", remoteMain as string, trigger], { cwd: source, allowFailure: true })).code === 0;
  return behind
    ? `${head}: push it first (git push origin HEAD:main)`
    : `${head}: origin's main is ahead of or diverged from your HEAD; run git pull, then push and rerun`;
}

/**
 * Replace `dir` with a fresh clone of `source` checked out on branch `main`
 * at `trigger`, whose `origin` is the source checkout's `origin` (resolved
 * to an absolute path when local): where `release run` makes the release.
 * @throws PipelineError `RUN_WORKSPACE_INVALID` when the source has no origin; ReleaseStepError `GIT_FAILED`.
 */
export async function cloneAtTrigger(source: string, dir: string, trigger: string): Promise<void> {
  const originUrl = (await git(["config", "--get", "remote.origin.url"], { cwd: source, allowFailure: true })).stdout.trim();
  if (originUrl.length === 0) {
    throw new PipelineError(
      "RUN_WORKSPACE_INVALID",
      `the source checkout ${source} has no origin remote to promote to: release run clones the checkout and pushes the release to its origin; fix: add one (git remote add origin <url>), push main to it (git push -u origin main), then rerun`,
    );
  }
  const isPath = !/^[a-z][a-z0-9+.-]*:\/\//i.test(originUrl) && !/^[^/]+:/.test(originUrl);
  const absoluteOrigin = isPath ? resolvePath(source, originUrl) : originUrl;
  if ((await lstat(dir).catch(() => null)) !== null) await rm(dir, { recursive: true, force: true });
  await git(["clone", "--quiet", "--no-checkout", source, dir], { cwd: resolvePath(dir, ".."), timeoutMs: 600_000 });
  await git(["checkout", "--quiet", "-B", "main", trigger], { cwd: dir });
  await git(["remote", "set-url", "origin", absoluteOrigin], { cwd: dir });
}
