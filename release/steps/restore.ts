/**
 * Step `restore` of `release run` (docs/release-run.md): the release commit
 * restored from the source bundle into a clean directory (`../restore.ts`),
 * where the gates, the build and the policy are read. Resume re-proves the
 * release identity of the restored tree.
 */
import { rm } from "node:fs/promises";
import { z } from "zod";
import { isGitSha } from "../../src/contract/grammar.js";
import { proveReleaseIdentity } from "../materialize.js";
import { stepDiverged, type PipelineStep } from "../pipeline.js";
import { restoreSource } from "../restore.js";
import type { RunContext } from "../run-context.js";
import { releasedIntent } from "./intent.js";
import { releaseSha } from "./materialize.js";

/** Record of the restore step: the restored commit (the release commit). */
export const RestoreRecordSchema = z.object({ source_sha: z.string().refine(isGitSha, "not a git commit SHA") }).strict();

/** See {@link RestoreRecordSchema}. */
export type RestoreRecord = z.infer<typeof RestoreRecordSchema>;

/** @throws PipelineError `RUN_STEP_DIVERGED`; every code of `restoreSource`, `proveReleaseIdentity`. */
export const restoreStep: PipelineStep<RunContext, RestoreRecord, "restore"> = Object.freeze({
  name: "restore" as const,
  record: RestoreRecordSchema,
  async run(ctx: RunContext): Promise<RestoreRecord> {
    const { paths } = ctx;
    const released = releaseSha(ctx);
    await rm(paths.restore, { recursive: true, force: true });
    const r = await restoreSource({ bundle: paths.bundle, checksumFile: paths.bundleChecksum, expectedSha: ctx.state.trigger_sha, dir: paths.restore });
    if (r.source_sha !== released) stepDiverged("materialize", `restored ${r.source_sha}, materialized ${released}`);
    return { source_sha: r.source_sha };
  },
  async verify(ctx: RunContext): Promise<void> {
    await proveReleaseIdentity(ctx.paths.restore, { triggerSha: ctx.state.trigger_sha, version: releasedIntent(ctx).version, releaseSha: releaseSha(ctx) });
  },
});
