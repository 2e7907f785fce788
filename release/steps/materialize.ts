/**
 * Step `materialize` of `release run` (docs/release-run.md): in a fresh clone
 * at the trigger, the release commit and tag, then `release-source.bundle`
 * and its checksum (`../materialize.ts`). The release commit takes the
 * trigger's date, so a redo after a crash gives the same SHA. Resume
 * re-verifies the bundle against its checksum and the record, and the
 * release identity of the clone.
 */
import { rm } from "node:fs/promises";
import { z } from "zod";
import { isGitSha } from "../../src/contract/grammar.js";
import { PipelineError } from "../errors.js";
import { cloneAtTrigger } from "../git.js";
import { materializeRelease, proveReleaseIdentity } from "../materialize.js";
import { stepDiverged, type PipelineStep } from "../pipeline.js";
import { checkBundleChecksum } from "../restore.js";
import type { RunContext } from "../run-context.js";
import { releasedIntent } from "./intent.js";
import { makeDirectory } from "../../src/contract/directory.js";

/** Record of the materialize step: the release commit and the bundle's SHA-256 (hex). */
export const MaterializeRecordSchema = z.object({ source_sha: z.string().refine(isGitSha, "not a git commit SHA"), bundle_sha256: z.string().regex(/^[0-9a-f]{64}$/) }).strict();

/** See {@link MaterializeRecordSchema}. */
export type MaterializeRecord = z.infer<typeof MaterializeRecordSchema>;

/** @throws PipelineError `RUN_STEP_DIVERGED` (materialize disagrees with intent); every code of `materializeRelease`. */
export const materializeStep: PipelineStep<RunContext, MaterializeRecord, "materialize"> = Object.freeze({
  name: "materialize" as const,
  record: MaterializeRecordSchema,
  async run(ctx: RunContext): Promise<MaterializeRecord> {
    const { version } = releasedIntent(ctx);
    const { paths, state } = ctx;
    await cloneAtTrigger(ctx.source, paths.source, state.trigger_sha);
    await rm(paths.bundleDir, { recursive: true, force: true });
    await makeDirectory(paths.bundleDir, { mode: 0o700, purpose: "release workspace (--workspace)" });
    const m = await materializeRelease({ dir: paths.source, outputDir: paths.bundleDir, expectedSha: state.trigger_sha, environment: ctx.intentEnv, remote: "origin", dateSeconds: state.trigger_date });
    if (!m.released) throw new PipelineError("RUN_STEP_DIVERGED", "materialize found nothing to release although intent did");
    if (m.version !== version) stepDiverged("intent", `materialize computed v${m.version}, intent v${version}`);
    return { source_sha: m.source_sha, bundle_sha256: m.bundle_sha256 };
  },
  async verify(ctx: RunContext, recorded: MaterializeRecord): Promise<void> {
    const sha = await checkBundleChecksum(ctx.paths.bundle, ctx.paths.bundleChecksum);
    if (sha !== recorded.bundle_sha256) stepDiverged("materialize", `source bundle SHA-256 ${sha}, recorded ${recorded.bundle_sha256}`);
    await proveReleaseIdentity(ctx.paths.source, { triggerSha: ctx.state.trigger_sha, version: releasedIntent(ctx).version, releaseSha: recorded.source_sha });
  },
});

/** The release commit the materialize step made. @throws PipelineError `RUN_STATE_INVALID` when it has not run. */
export function releaseSha(ctx: RunContext): string {
  return ctx.recorded(materializeStep).source_sha;
}
