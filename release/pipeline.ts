/**
 * The runner of the release pipeline's steps (docs/release-run.md, `release
 * run`): a step is a value `{ name, run(ctx), verify(ctx, recorded) }`; the
 * runner executes it over the run state, which records each step's result.
 *
 * - A step with a recorded result is not run again: `verify(ctx, recorded)`
 *   re-checks its outputs (status `verified`).
 * - Otherwise `run(ctx)` executes it; crash point `<name>:done`, the result
 *   is written to the state file atomically, crash point `<name>:recorded`
 *   (status `ran`).
 * - A step that does not apply is reported `skipped` with its reason.
 * Every step is reported on the progress stream (start, end, elapsed time, a
 * heartbeat while it runs).
 */
import { outputJsonBytes, writeOutputFile } from "./output.js";
import type { Progress } from "./progress.js";

/** A step's recorded result: a JSON object kept in the run state. */
export type StepRecord = Record<string, unknown>;

/** One step of the pipeline. */
export interface PipelineStep<Name extends string, Ctx> {
  readonly name: Name;
  /** Do the step; the returned object is recorded. */
  run(ctx: Ctx): Promise<StepRecord>;
  /** Re-verify the outputs of an earlier run from what it recorded. @throws when they no longer hold. */
  verify(ctx: Ctx, recorded: StepRecord): Promise<void>;
}

/** The part of the run state the runner reads and writes. */
export interface RecordedSteps<Name extends string> {
  steps: Partial<Record<Name, StepRecord>>;
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

/** What the runner needs: the state (written whole to `statePath` after each step), progress, the crash-point hook. */
export interface PipelineRunnerOptions<State extends RecordedSteps<Name>, Name extends string> {
  state: State;
  statePath: string;
  progress: Progress;
  mark: (point: string) => void | Promise<void>;
}

/** Runs steps over one run state and collects their reports, in order. */
export class PipelineRunner<State extends RecordedSteps<Name>, Name extends string> {
  readonly reports: StepReport<Name>[] = [];

  constructor(private readonly options: PipelineRunnerOptions<State, Name>) {}

  /** The recorded result of `name`, if it ran. */
  recorded(name: Name): StepRecord | undefined {
    return this.options.state.steps[name];
  }

  /** Run or verify `step` with `ctx` and report it. */
  async step<Ctx>(step: PipelineStep<Name, Ctx>, ctx: Ctx): Promise<StepRecord> {
    const recorded = this.options.state.steps[step.name];
    const task = this.options.progress.start(step.name);
    let status: StepReport<Name>["status"];
    let result: StepRecord;
    try {
      if (recorded !== undefined) {
        await step.verify(ctx, recorded);
        status = "verified";
        result = recorded;
      } else {
        result = await step.run(ctx);
        await this.record(step.name, result);
        status = "ran";
      }
    } catch (error) {
      task.failed(error instanceof Error ? error.message : String(error));
      throw error;
    }
    this.reports.push({ step: step.name, status, ms: task.done(status) });
    return result;
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
      task.failed(error instanceof Error ? error.message : String(error));
      throw error;
    }
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
