/**
 * The runner of the release pipeline's steps (docs/release-run.md, `release
 * run`; docs/architecture.md, "Release: steps and data flow"): a step is a
 * value `{ name, record, run(ctx), verify(ctx, recorded) }`; the runner
 * executes it over the run state, which records each step's result.
 *
 * - A step that does not apply (`skip(ctx)` gives a reason) is reported
 *   `skipped` with that reason.
 * - A step with a recorded result is not run again: the record is parsed with
 *   the step's schema (`record`), then `verify(ctx, recorded)` re-checks its
 *   outputs (status `verified`).
 * - Otherwise `run(ctx)` executes it; its result is checked against the same
 *   schema; crash point `<name>:done`, the result is written to the state file
 *   atomically, crash point `<name>:recorded` (status `ran`).
 * - A step may end the run early (`halt(recorded)` gives a reason: intent
 *   found nothing to release).
 * Every step is reported on the progress stream (start, end, elapsed time, a
 * heartbeat while it runs). A step or part stopped by the run's signal (or
 * failing with `INTERRUPTED`) ends with `✗ <task> (1.2 s): interrupted
 * (<signal>)` only: what was under way and how to resume are the run's
 * answer's to say (release/run.ts), which knows the stage and the recorded
 * run id; the abort reason's own message was written before either was known.
 */
import type { z } from "zod";
import { InterruptedError, interruption } from "../src/contract/errors.js";
import { PipelineError } from "./errors.js";
import { outputJsonBytes, writeOutputFile } from "./output.js";
import type { Progress } from "./progress.js";

/** A step's recorded result: a JSON object kept in the run state. */
export type StepRecord = Record<string, unknown>;

/** What identifies a step's record: its name and the schema its recorded result must satisfy. */
export interface RecordedStep<Rec extends StepRecord = StepRecord, Name extends string = string> {
  readonly name: Name;
  /** Schema of the recorded result (zod); a record read back from the state file is parsed with it. */
  readonly record: z.ZodType<Rec>;
}

/** One step of the pipeline. */
export interface PipelineStep<Ctx, Rec extends StepRecord = StepRecord, Name extends string = string> extends RecordedStep<Rec, Name> {
  /** Why the step does not apply to this run (reported `skipped`), or `undefined` to run or verify it. */
  skip?(ctx: Ctx): string | undefined;
  /** Do the step; the returned object is recorded. */
  run(ctx: Ctx): Promise<Rec>;
  /** Re-verify the outputs of an earlier run from what it recorded. @throws when they no longer hold (usually `RUN_STEP_DIVERGED`). */
  verify(ctx: Ctx, recorded: Rec): Promise<void>;
  /** Why the run ends after this step (nothing more to do), or `undefined` to go on. */
  halt?(recorded: Rec): string | undefined;
}

/** The part of the run state the runner reads and writes. */
export interface RecordedSteps {
  steps: Record<string, StepRecord>;
}

/** One step as the run reports it. */
export interface StepReport<Name extends string> {
  step: Name;
  /** `ran` (executed now), `verified` (recorded earlier, outputs re-verified, skipped), `skipped` (not applicable). */
  status: "ran" | "verified" | "skipped";
  /** Wall time in ms. */
  ms: number;
  /** Why a step was skipped. */
  reason?: string;
}

/** What a step's run or verification reports back to the runner. */
export type StepOutcome<Rec> = { status: "ran" | "verified"; recorded: Rec } | { status: "skipped"; reason: string };

/** What the runner needs: the state (written whole to `statePath` after each step), progress, the crash-point hook. */
export interface PipelineRunnerOptions<State extends RecordedSteps> {
  state: State;
  statePath: string;
  progress: Progress;
  mark: (point: string) => void | Promise<void>;
  /** The run's signal: a step or part that fails once it is aborted is reported as interrupted (see the module comment). */
  signal?: AbortSignal;
}

/**
 * A recorded step no longer verifies on resume.
 * @throws PipelineError `RUN_STEP_DIVERGED` naming the step and what changed.
 */
export function stepDiverged(step: string, what: string): never {
  throw new PipelineError("RUN_STEP_DIVERGED", `recorded step ${step} no longer verifies: ${what}; fix: start over with a fresh --workspace (or remove this one), since a recorded step is never redone in place`);
}

/**
 * `raw`, parsed with the step's record schema.
 * @throws PipelineError `RUN_STATE_INVALID` naming the step and the first field that does not fit.
 */
export function parseStepRecord<Rec extends StepRecord>(step: RecordedStep<Rec>, raw: unknown): Rec {
  const parsed = step.record.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
  throw new PipelineError("RUN_STATE_INVALID", `the run state's record of step ${step.name} is malformed${where}: ${issue?.message ?? "invalid"}; fix: start over with a fresh --workspace (or remove this one)`);
}

/** Runs steps over one run state and collects their reports, in order. */
export class PipelineRunner<State extends RecordedSteps, Name extends string = string> {
  readonly reports: StepReport<Name>[] = [];

  constructor(private readonly options: PipelineRunnerOptions<State>) {}

  /** The recorded result of `step`, parsed with its schema, or `undefined` when it has not run. @throws PipelineError `RUN_STATE_INVALID`. */
  recorded<Rec extends StepRecord>(step: RecordedStep<Rec>): Rec | undefined {
    const raw = this.options.state.steps[step.name];
    return raw === undefined ? undefined : parseStepRecord(step, raw);
  }

  /** Skip, verify or run `step` with `ctx` and report it. */
  async step<Ctx, Rec extends StepRecord>(step: PipelineStep<Ctx, Rec, Name>, ctx: Ctx): Promise<StepOutcome<Rec>> {
    const reason = step.skip?.(ctx);
    if (reason !== undefined) {
      this.skip(step.name, reason);
      return { status: "skipped", reason };
    }
    const recorded = this.recorded(step);
    const task = this.options.progress.start(step.name);
    let outcome: StepOutcome<Rec>;
    try {
      if (recorded !== undefined) {
        await step.verify(ctx, recorded);
        outcome = { status: "verified", recorded };
      } else {
        const result = parseStepRecord(step, await step.run(ctx));
        await this.record(step.name, result);
        outcome = { status: "ran", recorded: result };
      }
    } catch (error) {
      task.failed(this.failure(error));
      throw error;
    }
    this.reports.push({ step: step.name, status: outcome.status, ms: task.done(outcome.status) });
    return outcome;
  }

  /** Report a step that does not apply. */
  skip(name: Name, reason: string): void {
    this.reports.push({ step: name, status: "skipped", ms: 0, reason });
    this.options.progress.skipped(name, reason);
  }

  /** One part of a step (an install command, one gate) reported on its own line with its own heartbeat. */
  async part<T>(label: string, fn: () => Promise<T>): Promise<T> {
    const task = this.options.progress.start(label);
    try {
      const value = await fn();
      task.done();
      return value;
    } catch (error) {
      task.failed(this.failure(error));
      throw error;
    }
  }

  /** The reason on a failed task's line: `interrupted (<signal>)` for an interruption, else the error's message. */
  private failure(error: unknown): string {
    const stopped = interruption(this.options.signal) ?? (error instanceof InterruptedError ? error : undefined);
    if (stopped !== undefined) return `interrupted${stopped.signal === undefined ? "" : ` (${stopped.signal})`}: what was under way and how to resume are in the run's answer (its last line)`;
    return error instanceof Error ? error.message : String(error);
  }

  /** Crash point `<name>:done`, the result into the state file (atomic), crash point `<name>:recorded`. */
  private async record(name: Name, result: StepRecord): Promise<void> {
    const { state, statePath, mark } = this.options;
    await mark(`${name}:done`);
    state.steps[name] = result;
    await writeOutputFile(statePath, outputJsonBytes(state));
    await mark(`${name}:recorded`);
  }
}
