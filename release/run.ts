/**
 * `release run`: every release step, part 1 and part 2, in order, over one
 * workspace directory, resumable after a crash at any point (local and demo
 * use; CI runs the steps as separate jobs). docs/release-run.md;
 * docs/architecture.md, "Release: steps and data flow".
 *
 * This module holds the lock, the state file and the order of the steps
 * ({@link RUN_ORDER}); each step is a value `{ name, record, run, verify }`
 * in `./steps/` (the attest step adapts `./attest.ts`) and `./pipeline.ts`
 * runs them. Adding a step is one module and one line in the order.
 *
 * Steps: `intent` -> `materialize` -> `restore` -> `gates` (install command,
 * unit, public_contract, host_contract) -> `build` (npm pack once, check-dist,
 * build_metadata gate) -> `manifest` (create-manifest, verify-manifest,
 * checksums) -> `check-immutable` (GitHub immutable releases on; only with
 * `githubRelease`) -> `check-private` (with bootstrap) -> `stage` -> `attest`
 * (signed provenance; with `attestKey`, and always when the release policy
 * names a key: `./attest-key.ts`) -> `promote` ->
 * `publish` -> `github-release` (only with `githubRelease`). A step that does
 * not apply is reported as skipped with the reason.
 *
 * Resumability: after each step its result is recorded in
 * `<workspace>/run-state.json` (written atomically). A rerun skips a recorded
 * step only after parsing its record with the step's schema and re-verifying
 * its outputs (bundle checksum and identity proofs, evidence files, tarball
 * and manifest hashes, the staged tag and a verified download, the
 * attestation, the remote refs, the receipt bytes and both tags); an
 * unrecorded step is redone from a clean directory. Part-1 steps are made
 * deterministic for the same trigger (the release commit takes the trigger
 * commit's date), and part-2 steps are idempotent, so any interrupted run
 * converges to the same digests and receipt bytes and never moves a tag.
 * The flags that change what a run does are recorded with its state when it
 * starts; a resume that leaves one out uses the recorded value, one that gives
 * another value is refused (`./run-flags.ts`).
 *
 * Test hook: `HERMES_PLUGIN_KIT_CRASH_AT=<point>` kills the process with
 * SIGKILL when the run reaches `<point>` (see {@link CRASH_POINTS}).
 */
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { realpathSync } from "node:fs";
import { parseStrictJson } from "../src/contract/canonical-json.js";
import { describeValue, shellWord } from "../src/contract/grammar.js";
import { acquirePidLock } from "../src/oci/lock-owner.js";
import { ATTEST_KEY_FILE_ENV, resolveRunSigningKey } from "./attest-key.js";
import type { PipelineHooks } from "./checkpoint.js";
import { requirePassableNames } from "./command-env.js";
import { recordRunFlags, resumeRunOptions } from "./run-flags.js";
import { PipelineError } from "./errors.js";
import { InterruptedError, interruption, throwIfInterrupted } from "../src/contract/errors.js";
import { gitText, headCommit, noCommitReason, resolveCommit } from "./git.js";
import { disarmedReason } from "./intent.js";
import { consumerCliCommand, kitCliCommand } from "./cli-command.js";
import { runCommandLine } from "./run-command.js";
import { consumerNextSteps } from "./next-steps.js";
import { outputJsonBytes, writeOutputFile } from "./output.js";
import { PipelineRunner, type PipelineStep, type StepReport } from "./pipeline.js";
import { createProgress, type Progress } from "./progress.js";
import { createRunContext, RunStateSchema, workspacePaths, type RunContext, type RunEnv, type RunOptions, type RunPart, type RunState, type WorkspacePaths } from "./run-context.js";
import { attestRunStep } from "./steps/attest.js";
import { buildStep } from "./steps/build.js";
import { checkImmutableStep, NO_GITHUB_REASON } from "./steps/check-immutable.js";
import { checkPrivateStep } from "./steps/check-private.js";
import { gatesStep } from "./steps/gates.js";
import { githubReleaseStep } from "./steps/github-release.js";
import { intentStep, releasedIntent } from "./steps/intent.js";
import { manifestStep } from "./steps/manifest.js";
import { materializeStep, releaseSha } from "./steps/materialize.js";
import { promoteStep } from "./steps/promote.js";
import { publishStep } from "./steps/publish.js";
import { restoreStep } from "./steps/restore.js";
import { bundleReference, stageStep } from "./steps/stage.js";
import { checkDirectoryWritable, makeDirectory } from "../src/contract/directory.js";

export type { RunOptions } from "./run-context.js";

/** Environment variable naming the crash point (test hook). */
export const CRASH_AT_ENV = "HERMES_PLUGIN_KIT_CRASH_AT";

/** The steps of `release run`, in order: the one place the order is written. */
export const RUN_ORDER = Object.freeze([
  intentStep,
  materializeStep,
  restoreStep,
  gatesStep,
  buildStep,
  manifestStep,
  checkImmutableStep,
  checkPrivateStep,
  stageStep,
  attestRunStep,
  promoteStep,
  publishStep,
  githubReleaseStep,
] as const);

/** One of the step names of {@link RUN_ORDER}. */
export type RunStep = (typeof RUN_ORDER)[number]["name"];

/** The step names of `release run`, in order. */
export const RUN_STEPS: readonly RunStep[] = Object.freeze(RUN_ORDER.map((s) => s.name));

/**
 * Named crash points: `<step>:done` (the step finished, its result is not
 * recorded yet) and `<step>:recorded` for every step, plus the points inside
 * the registry and git writes: `stage:verified`, `stage:private`,
 * `stage:upload:pushed:<n>` (after the n-th blob/manifest of the bundle
 * upload), `stage:upload:before-tag`, `stage:uploaded`, `stage:before-output`,
 * `attest:pushed` (the attestation is in the store, not yet re-verified or recorded),
 * `promote:before-push`, `promote:pushed`, `publish:before-bind`,
 * `publish:bound`, `publish:receipt-upload:pushed:<n>`,
 * `publish:receipt-upload:before-tag`, `publish:receipt-uploaded`,
 * `publish:before-output`, `publish:before-references`.
 */
export const CRASH_POINTS = Object.freeze([
  ...RUN_STEPS.flatMap((s) => [`${s}:done`, `${s}:recorded`]),
  "stage:verified",
  "stage:private",
  "stage:upload:pushed:1",
  "stage:upload:pushed:2",
  "stage:upload:pushed:3",
  "stage:upload:before-tag",
  "stage:uploaded",
  "stage:before-output",
  "attest:pushed",
  "promote:before-push",
  "promote:pushed",
  "publish:before-bind",
  "publish:bound",
  "publish:receipt-upload:pushed:1",
  "publish:receipt-upload:before-tag",
  "publish:receipt-uploaded",
  "publish:before-output",
  "publish:before-references",
]);

/** One step as reported by {@link runRelease} (`ran`, `verified` or `skipped`; `./pipeline.ts`). */
export type RunStepReport = StepReport<RunStep>;

/** What {@link runRelease} returns (and `release run` prints). */
export type RunResult =
  | { released: false; reason: string; workspace: string; steps: RunStepReport[] }
  | {
      released: true;
      workspace: string;
      version: string;
      tag: string;
      release_sha: string;
      trigger_sha: string;
      bundle_reference: string;
      receipt_reference: string;
      /** The npm tarball: file name, SHA-256 (hex), size in bytes. */
      tarball: { filename: string; sha256: string; size: number };
      /** `<workspace>/release-receipt.json`. */
      receipt_file: string;
      receipt_sha256: string;
      /** The attestation (`<repository>@sha256:<hex>` of its referrer manifest), when the run attested. */
      attestation_reference?: string;
      github_release: string;
      /** What a consumer runs next, one shell line each, with these references filled in (`./next-steps.ts`). */
      next_steps: string[];
      steps: RunStepReport[];
    };

/**
 * Read `<workspace>/run-state.json` (strict JSON, then {@link RunStateSchema}); `undefined` when absent.
 * A state without `flags` (written before they were recorded) is valid: `./run-flags.ts`.
 * @throws PipelineError `RUN_STATE_INVALID` (unreadable, not strict JSON, not a run state of schema 1).
 */
export async function readRunState(path: string): Promise<RunState | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new PipelineError("RUN_STATE_INVALID", `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}; fix: make it readable by you, or start over with a fresh --workspace`);
  }
  let doc: unknown;
  try {
    doc = parseStrictJson(bytes);
  } catch (error) {
    throw new PipelineError("RUN_STATE_INVALID", `${path} is not valid JSON: ${(error as Error).message}; fix: start over with a fresh --workspace (or remove this one), since release run writes this file itself`);
  }
  const parsed = RunStateSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PipelineError("RUN_STATE_INVALID", `${path} is not a release run state (schema 1): ${issue === undefined ? "invalid" : `${issue.path.join(".") || "(root)"} ${issue.message}`}; fix: start over with a fresh --workspace (or remove this one), since release run writes this file itself`);
  }
  return parsed.data;
}

/** What a locked run works with. */
interface RunSetup {
  options: RunOptions;
  env: RunEnv;
  ws: string;
  paths: WorkspacePaths;
  source: string;
  progress: Progress;
  hooks: PipelineHooks;
  /** Say what the run is doing now (what an interruption would stop: {@link RunStage}). */
  track: (stage: RunStage) => void;
}

/**
 * What a run is doing, as an interruption message names it ({@link runInterruptedMessage}): `start` (before its
 * first step: the lock, the state), a `step` (its own work, which the signal does not cut short), or the `install`
 * command or a `gate` command of a step (stopped mid-way with its whole process group).
 */
export type RunStage = { kind: "start" } | { kind: "step"; step: RunStep } | (RunPart & { step: RunStep });

/**
 * `release run`: see the module comment.
 * @returns the references, version, tarball and per-step report; `released: false` when there is nothing to release.
 * @throws every code of the steps it composes (ReleaseStepError, ReleaseContractError, FetchError,
 *   PrivacyError, OciError, ProvenanceError, PipelineError, GitHubReleaseError), and PipelineError
 *   `RUN_SOURCE_INVALID` (no source directory, not a git checkout, or no commit; nothing written), `RUN_ATTEST_KEY_REQUIRED` and
 *   `RUN_ATTEST_KEY_MISMATCH` (the release policy names a signing key; nothing written), `RUN_WORKSPACE_INVALID` (the
 *   workspace belongs to another source or run id), `RUN_FLAG_MISMATCH` (on resume, a given flag disagrees with the one
 *   the run recorded when it started; a flag left out takes the recorded value: `./run-flags.ts`; nothing written), InterruptedError `INTERRUPTED` (`options.signal` aborted: the command under way
 *   was stopped with its process group, the lock released; rerun with the same workspace), `RUN_WORKSPACE_LOCKED` (another live `release run` holds
 *   `<workspace>/run.lock`), `RUN_STATE_INVALID`, `RUN_STEP_DIVERGED` (a recorded step's outputs no longer verify).
 */
export async function runRelease(options: RunOptions): Promise<RunResult> {
  const env = options.env ?? process.env;
  const ws = resolve(options.workspace);
  const source = resolve(options.source);
  const progress = createProgress(options.progress === undefined ? process.stderr : options.progress);
  const crashAt = env[CRASH_AT_ENV];
  // A pipeline credential asked for by --pass-env is refused before anything is read or written.
  requirePassableNames(options.gatePassEnv ?? []);
  const hooks: PipelineHooks = {
    checkpoint: async (point) => {
      await options.hooks?.checkpoint?.(point);
      if (crashAt !== undefined && crashAt !== "" && point === crashAt) process.kill(process.pid, "SIGKILL");
    },
  };

  // The disarm switch governs every run, fresh or resumed (docs/release-run.md, "`release run`").
  if (env["SEMANTIC_RELEASE_ENABLED"] !== "true") {
    const reason = disarmedReason(env["SEMANTIC_RELEASE_ENABLED"]);
    progress.skipped("release run", reason);
    return { released: false, reason, workspace: ws, steps: [] };
  }
  // A source that is not there fails before anything is written (no workspace is created for it).
  if (!(await stat(source).then((st) => st.isDirectory(), () => false))) {
    throw new PipelineError("RUN_SOURCE_INVALID", `the source checkout ${source} is not a directory: pass --source <the release checkout, a git clone whose origin is the release remote>`);
  }
  // A source that is no git checkout (or has no commit) fails before anything is written, too.
  if ((await resolveCommit(source, "HEAD")) === undefined) throw new PipelineError("RUN_SOURCE_INVALID", `the source ${await noCommitReason(source)}`);
  // A workspace inside the checkout would fill it with the run's clones and files (untracked, or committed by a later `git add -A`).
  requireWorkspaceOutsideSource(ws, source);
  // A workspace that cannot be created or written fails first (IO_* codes; nothing is left behind).
  checkDirectoryWritable(ws, { purpose: "release workspace (--workspace)" });
  // A signing key the release policy names is required, and must match, before anything is written.
  const paths = workspacePaths(ws);
  // A resume does what its run started with: a flag left out takes the recorded value, a disagreeing
  // one is refused, before anything is written (read again under the lock: openState).
  const resumed = resumeOptions(options, await readRunState(paths.state), ws, source, paths.state, env);
  const signing = await resolveRunSigningKey({ source, statePath: paths.state, attestKey: resumed.attestKey, env });
  const runOptions: RunOptions = { ...resumed, ...(signing.keyFile === undefined ? {} : { attestKey: signing.keyFile }) };
  await makeDirectory(ws, { mode: 0o700, purpose: "release workspace (--workspace)" });
  // What the run was doing when the signal came: the interruption message names it.
  let stage: RunStage = { kind: "start" };
  let stageAtSignal: RunStage | undefined;
  const noteSignal = () => (stageAtSignal ??= stage);
  if (options.signal?.aborted === true) noteSignal();
  else options.signal?.addEventListener("abort", noteSignal, { once: true });
  const track = (next: RunStage) => {
    stage = next;
  };
  const interrupted = async (stopped: InterruptedError) => runInterrupted(stopped, await resumeCommandLine(runOptions), stageAtSignal ?? stage);
  let release: () => Promise<void>;
  try {
    release = await lockWorkspace(ws, options.signal);
  } catch (error) {
    options.signal?.removeEventListener("abort", noteSignal);
    const stopped = interruption(options.signal);
    if (stopped !== undefined) throw await interrupted(stopped);
    throw error;
  }
  try {
    throwIfInterrupted(options.signal);
    return await runLocked({ options: runOptions, env, ws, paths, source, progress, hooks, track });
  } catch (error) {
    const stopped = interruption(options.signal);
    // Stopped by the caller's signal (SIGINT/SIGTERM in the CLI): whatever the step under way threw
    // on its way out, the answer is INTERRUPTED, with what was stopped and how to resume.
    if (stopped !== undefined) throw await interrupted(stopped);
    throw error;
  } finally {
    options.signal?.removeEventListener("abort", noteSignal);
    await release();
  }
}

/** The `INTERRUPTED` error of a stopped run: what was stopped (`stage`) and how to resume (`resume`: {@link resumeCommandLine}). */
function runInterrupted(stopped: InterruptedError, resume: string, stage: RunStage): InterruptedError {
  return new InterruptedError(stopped.signal, runInterruptedMessage(stopped.signal, resume, { stage }));
}

/** How an interruption ended when the process exited before the run had finished stopping (the CLI's second signal or grace period). */
export type RunInterruptCut = { by: "signal"; signal: NonNullable<InterruptedError["signal"]> } | { by: "grace"; seconds: number };

/** What was under way, in words, and what became of it (see {@link runInterruptedMessage}). */
function stageWords(stage: RunStage): string {
  switch (stage.kind) {
    case "start":
      return "before its first step: no step was under way and none started";
    case "step":
      return (
        `during step ${stage.step}: that step's own work is not cut short (only install, gate and npm pack commands are stopped mid-way), ` +
        `so it went on to its end or to its next install, gate or npm pack command, and no later step started`
      );
    case "install":
      return `during the install command of step ${stage.step} (${JSON.stringify(stage.command)}, hermesPluginKit.install): it was stopped with everything it started, and no later step started`;
    case "gate":
      return `during gate ${stage.gate} of step ${stage.step}: its command was stopped with everything it started, and no later step started`;
    case "pack":
      return `during npm pack of step ${stage.step} (the package's pack scripts): it was stopped with everything it started, and no later step started`;
  }
}

/**
 * The message of an interrupted `release run` (also the CLI's, for a run stopped before or outside
 * {@link runRelease}'s own handling, e.g. `--dry-run`): what was under way and what became of it (`stage`,
 * default `start`: before the first step), and `resume`, the command line that resumes it
 * ({@link resumeCommandLine}). `cut`: the CLI exited at once, before the run had finished stopping (a second
 * signal, or stopping outlasted its grace period), after killing the process group of the command under way
 * (`runBounded`'s exit hook), so its private HOME and the workspace lock may be left.
 */
export function runInterruptedMessage(signal: InterruptedError["signal"], resume: string, options: { dryRun?: boolean; stage?: RunStage; cut?: RunInterruptCut } = {}): string {
  const by = signal === undefined ? "" : ` (${signal})`;
  const again = resume === "" ? "" : ` (${resume})`;
  if (options.cut !== undefined) {
    const how = options.cut.by === "signal" ? `${options.cut.signal} came again before it had finished stopping` : `it had not finished stopping after ${options.cut.seconds} s`;
    if (options.dryRun === true) return `release run --dry-run interrupted${by}, and ${how}: it exited at once, so its scratch clone (hpk-* under TMPDIR) may be left; nothing of the release was written; run it again${again}`;
    return (
      `release run interrupted${by}, and ${how}: it exited at once, after killing (SIGKILL) the process group of the install, gate or npm pack command it had started, ` +
      `so that command's private HOME (hpk-gate-home-* under TMPDIR) and the workspace lock may be left ` +
      `(the next run breaks the lock, its process being gone); resume with the same --workspace and flags${again}`
    );
  }
  if (options.dryRun === true) return `release run --dry-run interrupted${by}: nothing was written; run it again${again}`;
  return (
    `release run interrupted${by} ${stageWords(options.stage ?? { kind: "start" })}; the workspace lock is released; ` +
    `resume with the same --workspace and flags${again}: recorded steps are re-verified and an unrecorded one is redone from a clean directory`
  );
}

/**
 * The command line that resumes the run `options` start (`release run`, `--dry-run` with `dryRun`), with the
 * flags that run takes: those given, and for a workspace whose `run-state.json` recorded flags, the recorded
 * value of each one left out (release/run-flags.ts), the recorded run id and attempt included (a state of this
 * source), so that typing it as printed resumes the same run and is never refused with `RUN_FLAG_MISMATCH`.
 * A key file named only through `HERMES_PLUGIN_KIT_ATTEST_KEY_FILE` (no `--attest-key`) is carried as that
 * variable, `HERMES_PLUGIN_KIT_ATTEST_KEY_FILE=<absolute path> <command>` (the path, never the key), except for a
 * run that recorded it attested without a key (it never reads the variable).
 * {@link runRelease} prints the same line when it is interrupted (from the options it resumed with). Never
 * throws: a state it cannot read, or given flags the state refuses (the run itself reports
 * `RUN_FLAG_MISMATCH`), leave the flags as given.
 */
export async function resumeCommandLine(options: RunOptions & { dryRun?: boolean }): Promise<string> {
  const env = options.env ?? process.env;
  const statePath = workspacePaths(resolve(options.workspace)).state;
  let effective: RunOptions = options;
  let state: RunState | undefined;
  try {
    state = await readRunState(statePath);
    effective = resumeRunOptions(options, state, statePath, env);
    // The run id and attempt the run recorded, when left out: the line says them too (a resume compares them).
    if (state !== undefined && state.source === resolve(options.source)) {
      effective = { ...effective, runId: effective.runId ?? state.run_id, runAttempt: effective.runAttempt ?? state.run_attempt };
    }
  } catch {
    // the flags as given
  }
  const line = runCommandLine({ ...effective, ...(options.dryRun === true ? { dryRun: true } : {}) }, kitCliCommand(env));
  const prefix: string[] = [];
  // The arm switch (release/intent.ts): a run armed by it says so, or the line typed as printed would answer
  // "disarmed" and exit 0, releasing nothing.
  if (env["SEMANTIC_RELEASE_ENABLED"] === "true") prefix.push("SEMANTIC_RELEASE_ENABLED=true");
  // A key file named only through the variable (the run reads it when the release policy names a key): the line
  // sets the variable to the same file (its absolute path, never the key), so the resume has the same key source.
  // Not for a run that recorded it attested without a key: that run never reads the variable.
  const fromEnv = env[ATTEST_KEY_FILE_ENV];
  if (effective.attestKey === undefined && fromEnv !== undefined && fromEnv !== "" && state?.flags?.attest_key !== null) {
    prefix.push(`${ATTEST_KEY_FILE_ENV}=${shellWord(resolve(fromEnv))}`);
  }
  return [...prefix, line].join(" ");
}

/** How long a run waits for another live `release run` to release the workspace lock (ms) before refusing. */
export const RUN_LOCK_WAIT_MS = 1000;

/**
 * Take `<workspace>/run.lock` with the kit's shared PID lock ({@link acquirePidLock}, as the install
 * lock and the fleet edit guard): created exclusively, never through a symlink, holding our PID. A lock
 * whose process is gone (a crashed or killed run) is broken; a live holder is waited for up to
 * {@link RUN_LOCK_WAIT_MS}; a lock that is not what the kit writes (a symlink, a directory, other
 * content) or whose PID now names a process that is not the kit is refused at once.
 * @throws PipelineError `RUN_WORKSPACE_LOCKED` (the message says what holds the lock and the fix:
 *   wait for that run, or remove the stale lock); InterruptedError `INTERRUPTED` (`signal` aborted while waiting).
 */
async function lockWorkspace(ws: string, signal: AbortSignal | undefined): Promise<() => Promise<void>> {
  return acquirePidLock(join(ws, "run.lock"), {
    holder: `a release run of the workspace ${ws}`,
    timeoutMs: RUN_LOCK_WAIT_MS,
    refuse: (message) => new PipelineError("RUN_WORKSPACE_LOCKED", message),
    beforeAttempt: () => throwIfInterrupted(signal),
  });
}

/**
 * Refuse the state of another run: another source checkout, or another `--run-id`.
 * @throws PipelineError `RUN_WORKSPACE_INVALID` naming both.
 */
function requireSameRun(state: RunState, options: RunOptions, ws: string, source: string): void {
  if (state.source !== source) throw new PipelineError("RUN_WORKSPACE_INVALID", `workspace ${ws} belongs to a run of ${state.source}, not ${source}`);
  if (options.runId !== undefined && options.runId !== state.run_id) {
    throw new PipelineError("RUN_WORKSPACE_INVALID", `workspace ${ws} was started with run id ${state.run_id}, not ${options.runId}`);
  }
}

/**
 * The options a run of `state` (undefined: a fresh run) goes on with: `options`, each flag left out
 * taking the value the run recorded (`./run-flags.ts`); `--pass-env` names checked again (a state file
 * is never trusted to hand a package command a credential).
 * @throws PipelineError `RUN_WORKSPACE_INVALID` (another source or run id), `RUN_FLAG_MISMATCH` (a given flag
 *   disagrees with the recorded one); ReleaseStepError `RELEASE_CONFIG_INVALID` (a refused `--pass-env` name).
 */
export function resumeOptions(options: RunOptions, state: RunState | undefined, ws: string, source: string, statePath: string, env: RunEnv): RunOptions {
  if (state !== undefined) requireSameRun(state, options, ws, source);
  const resumed = resumeRunOptions(options, state, statePath, env);
  requirePassableNames(resumed.gatePassEnv ?? []);
  return resumed;
}

/**
 * The run state of this workspace: read back (its flags compared with the run's options again: a run
 * that started meanwhile is held to them too), or started (trigger = the source's HEAD, the flags of
 * `options` recorded) and written.
 * @throws PipelineError `RUN_STATE_INVALID` (malformed state, bad run id), `RUN_WORKSPACE_INVALID` (another
 *   source or run id), `RUN_FLAG_MISMATCH`.
 */
async function openState({ options, env, ws, paths, source }: RunSetup): Promise<RunState> {
  const state = await readRunState(paths.state);
  if (state === undefined) {
    const trigger = await headCommit(source);
    const date = Number(await gitText(["show", "-s", "--format=%ct", trigger], { cwd: source }));
    const runId = options.runId ?? String(Math.floor(Date.now() / 1000));
    if (!/^[1-9][0-9]*$/.test(runId)) throw new PipelineError("RUN_STATE_INVALID", `run id must be decimal digits without a leading zero, found ${describeValue(runId)}; fix: pass --run-id <digits>, e.g. --run-id 1, or leave it out (one is chosen)`);
    const fresh: RunState = { schema: 1, source, trigger_sha: trigger, trigger_date: date, run_id: runId, run_attempt: options.runAttempt ?? 1, flags: recordRunFlags(options), steps: {} };
    await writeOutputFile(paths.state, outputJsonBytes(fresh));
    return fresh;
  }
  resumeOptions(options, state, ws, source, paths.state, env);
  return state;
}

/** Open the state, then skip, verify or run every step of {@link RUN_ORDER} in order. */
async function runLocked(setup: RunSetup): Promise<RunResult> {
  const state = await openState(setup);
  const pipeline = new PipelineRunner<RunState, RunStep>({ state, statePath: setup.paths.state, progress: setup.progress, mark: (point) => setup.hooks.checkpoint!(point), ...(setup.options.signal === undefined ? {} : { signal: setup.options.signal }) });
  // The step under way, for the parts it runs.
  let current: RunStep = RUN_STEPS[0]!;
  const track = (stage: RunStage) => {
    if (stage.kind === "step") current = stage.step;
    setup.track(stage);
  };
  const ctx = createRunContext({
    ...setup,
    state,
    // A part that runs a package command is what an interruption stops mid-way: tracked while it runs.
    part: async (label, fn, what) => {
      if (what === undefined) return pipeline.part(label, fn);
      const running = current;
      track({ ...what, step: running });
      try {
        return await pipeline.part(label, fn);
      } finally {
        track({ kind: "step", step: running });
      }
    },
    recorded: (step) => pipeline.recorded(step),
  });
  for (const step of RUN_ORDER as readonly PipelineStep<RunContext, Record<string, unknown>, RunStep>[]) {
    // Stopped: no further step starts (the one that ended is recorded; a rerun goes on from here).
    throwIfInterrupted(setup.options.signal);
    track({ kind: "step", step: step.name });
    const outcome = await pipeline.step(step, ctx);
    const halt = outcome.status === "skipped" ? undefined : step.halt?.(outcome.recorded);
    if (halt !== undefined) return { released: false, reason: halt, workspace: setup.ws, steps: pipeline.reports };
  }
  return releasedResult(ctx, setup.ws, pipeline);
}

/**
 * The next steps' provenance pin: when the run attested and the policy names its key
 * (`hermesPluginKit.provenance.key`), the consumer's bundle fetch and `fleet add` require the
 * attestation signed by it. A key given only as `--attest-key` has no public file a consumer could
 * name, so nothing is added then.
 */
function provenanceNextSteps(attested: boolean, policyKey: string | undefined, tag: string): { provenanceKey?: string; provenanceKeyOrigin?: string } {
  if (!attested || policyKey === undefined) return {};
  return { provenanceKey: policyKey, provenanceKeyOrigin: `${policyKey} in the source repository at tag ${tag} (hermesPluginKit.provenance.key)` };
}

/** The result of a run that released, read from the steps' records. */
async function releasedResult(ctx: RunContext, ws: string, pipeline: PipelineRunner<RunState, RunStep>): Promise<RunResult> {
  const { version, tag } = releasedIntent(ctx);
  const { policy } = await ctx.registry();
  const tarball = ctx.recorded(buildStep);
  const published = ctx.recorded(publishStep);
  const attestation = pipeline.recorded(attestRunStep);
  const github = ctx.options.githubRelease === true ? `release ${ctx.recorded(githubReleaseStep).release_id}` : NO_GITHUB_REASON;
  const bundle = bundleReference(ctx);
  return {
    released: true,
    workspace: ws,
    version,
    tag,
    release_sha: releaseSha(ctx),
    trigger_sha: ctx.state.trigger_sha,
    bundle_reference: bundle,
    receipt_reference: published.receipt_reference,
    tarball: { filename: tarball.filename, sha256: tarball.sha256, size: tarball.size },
    receipt_file: ctx.paths.receipt,
    receipt_sha256: published.receipt_sha256,
    ...(attestation === undefined ? {} : { attestation_reference: attestation.attestation_reference }),
    github_release: github,
    next_steps: consumerNextSteps({ repository: policy.registryRepository, bundleReference: bundle, receiptReference: published.receipt_reference, packageName: policy.package, tarball: tarball.filename, plainHttp: ctx.options.plainHttp === true, gates: policy.gates, cli: consumerCliCommand(ctx.env), ...provenanceNextSteps(attestation !== undefined, policy.provenanceKey, tag) }),
    steps: pipeline.reports,
  };
}

/**
 * Refuse a workspace that is the source checkout or inside it (symbolic links resolved where the paths exist).
 * @throws PipelineError `RUN_WORKSPACE_INVALID` naming both paths and a workspace next to the checkout.
 */
export function requireWorkspaceOutsideSource(ws: string, source: string): void {
  const real = (path: string): string => {
    // The nearest existing ancestor's real path, plus the part that does not exist yet.
    let probe = resolve(path);
    const rest: string[] = [];
    for (let i = 0; i < 4096; i++) {
      try {
        return join(realpathSync(probe), ...rest.reverse());
      } catch {
        const parent = dirname(probe);
        if (parent === probe) break;
        rest.push(basename(probe));
        probe = parent;
      }
    }
    return resolve(path);
  };
  const w = real(ws);
  const s = real(source);
  if (w === s || w.startsWith(s.endsWith(sep) ? s : s + sep)) {
    throw new PipelineError(
      "RUN_WORKSPACE_INVALID",
      `the workspace ${ws} is ${w === s ? "the source checkout itself" : "inside the source checkout"} ${source}: a run's clones, evidence and state would land in the checkout it releases; fix: put the workspace outside it, e.g. --workspace ${join(dirname(s), `${basename(s)}-release`)}`,
    );
  }
}
