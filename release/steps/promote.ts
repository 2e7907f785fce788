/**
 * Step `promote` of `release run` (docs/release-publish.md): the staged
 * bundle fetched by digest and verified, then `git push --atomic` of the
 * release commit to `main` and the tag (`../promote.ts`). Resume runs the
 * resumable promotion again, which only reads when already promoted, and
 * requires that outcome.
 */
import { z } from "zod";
import { isGitSha } from "../../src/contract/grammar.js";
import { stepDiverged, type PipelineStep } from "../pipeline.js";
import { promoteRelease } from "../promote.js";
import type { RunContext } from "../run-context.js";
import { bundleReference } from "./stage.js";

/** Record of the promote step: pushed now or found promoted, and the release commit. */
export const PromoteRecordSchema = z.object({ outcome: z.enum(["pushed", "already-promoted"]), release_sha: z.string().refine(isGitSha, "not a git commit SHA") }).strict();

/** See {@link PromoteRecordSchema}. */
export type PromoteRecord = z.infer<typeof PromoteRecordSchema>;

async function promote(ctx: RunContext): Promise<Awaited<ReturnType<typeof promoteRelease>>> {
  const { accessOptions, policy } = await ctx.registry();
  return promoteRelease({ ...accessOptions, policy, reference: bundleReference(ctx), repoDir: ctx.paths.source });
}

/** @throws PipelineError `PROMOTE_*`, `RUN_STEP_DIVERGED`; the codes of the verifying download. */
export const promoteStep: PipelineStep<RunContext, PromoteRecord, "promote"> = Object.freeze({
  name: "promote" as const,
  record: PromoteRecordSchema,
  async run(ctx: RunContext): Promise<PromoteRecord> {
    const promoted = await promote(ctx);
    return { outcome: promoted.outcome, release_sha: promoted.release_sha };
  },
  async verify(ctx: RunContext): Promise<void> {
    if ((await promote(ctx)).outcome !== "already-promoted") stepDiverged("promote", "the remote was not promoted any more");
  },
});
