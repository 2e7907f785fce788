/**
 * Step `build` of `release run` (docs/release-run.md, docs/release-build.md):
 * `npm pack` once on the restored release commit, check-dist, then the
 * build_metadata gate (`../build.ts`, `../gate.ts`). Resume re-checks the
 * tarball (check-dist) against the recorded SHA-256 and re-reads the gate's evidence.
 */
import { rm } from "node:fs/promises";
import { z } from "zod";
import { buildRelease, checkDist } from "../build.js";
import { readReleaseConfig } from "../config.js";
import { evidenceFile } from "../gate.js";
import { readGateEvidence } from "../manifest-steps.js";
import { stepDiverged, type PipelineStep } from "../pipeline.js";
import type { RunContext } from "../run-context.js";
import { commandSource, runRunGate } from "./gates.js";
import { releasedIntent } from "./intent.js";

/** Record of the build step: the npm tarball's file name, SHA-256 (hex) and size in bytes. */
export const BuildRecordSchema = z.object({ filename: z.string().min(1), sha256: z.string().regex(/^[0-9a-f]{64}$/), size: z.number().int().nonnegative() }).strict();

/** See {@link BuildRecordSchema}. */
export type BuildRecord = z.infer<typeof BuildRecordSchema>;

/** @throws PipelineError `RUN_STEP_DIVERGED`; every code of `buildRelease`, `checkDist` and the build_metadata gate. */
export const buildStep: PipelineStep<RunContext, BuildRecord, "build"> = Object.freeze({
  name: "build" as const,
  record: BuildRecordSchema,
  async run(ctx: RunContext): Promise<BuildRecord> {
    await rm(ctx.paths.dist, { recursive: true, force: true });
    // npm pack runs the package's scripts with the gates' --pass-env names and HOME arrangement (private unless --pass-env HOME).
    // With the run's signal npm pack runs in a process group of its own, which an interruption stops whole.
    const built = await ctx.part(
      "npm pack",
      () =>
        buildRelease({
          dir: ctx.paths.restore,
          artifactDir: ctx.paths.dist,
          version: releasedIntent(ctx).version,
          passEnv: ctx.options.gatePassEnv ?? [],
          env: commandSource(ctx),
          ...(ctx.options.signal !== undefined ? { signal: ctx.options.signal } : {}),
        }),
      { kind: "pack" },
    );
    await runRunGate(ctx, "build_metadata");
    return { filename: built.artifact.filename, sha256: built.artifact.sha256, size: built.artifact.size };
  },
  async verify(ctx: RunContext, recorded: BuildRecord): Promise<void> {
    const config = await readReleaseConfig(ctx.paths.restore);
    const checked = await checkDist(config, ctx.paths.dist, releasedIntent(ctx).version);
    if (checked.artifact.sha256 !== recorded.sha256) stepDiverged("build", `tarball SHA-256 ${checked.artifact.sha256}, recorded ${recorded.sha256}`);
    await readGateEvidence(evidenceFile(ctx.paths.evidence, "build_metadata"), "build_metadata");
  },
});
