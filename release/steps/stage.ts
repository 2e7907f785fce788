/**
 * Step `stage` of `release run` (docs/release-publish.md): the deterministic
 * layout of the tested payload pushed to `candidate-<run_id>-<source_sha>`,
 * re-downloaded and compared (`../stage.ts`). Resume checks
 * `staged-release.json`, that the candidate tag still names the recorded
 * bundle, and downloads it again through the verifying path.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { parseStrictJson } from "../../src/contract/canonical-json.js";
import { describeValue } from "../../src/contract/grammar.js";
import { stepDiverged, type PipelineStep } from "../pipeline.js";
import { openWriteTarget, resolveTag, verifiedDownload } from "../registry-access.js";
import type { RunContext } from "../run-context.js";
import { stageRelease } from "../stage.js";
import { releaseSha } from "./materialize.js";

/** A digest-pinned reference `<repository>@sha256:<64 hex>`. */
export const PinnedReferenceSchema = z.string().regex(/^[^@\s]+@sha256:[0-9a-f]{64}$/, "not a digest-pinned reference");

/** Record of the stage step: the staged bundle reference. */
export const StageRecordSchema = z.object({ bundle_reference: PinnedReferenceSchema }).strict();

/** See {@link StageRecordSchema}. */
export type StageRecord = z.infer<typeof StageRecordSchema>;

/** The candidate tag of this run: `candidate-<run_id>-<source_sha>`. */
export function candidateTagOf(ctx: RunContext): string {
  return `candidate-${ctx.state.run_id}-${releaseSha(ctx)}`;
}

/** @throws PipelineError `RUN_STEP_DIVERGED`, `STAGE_*`, `RELEASE_TAG_*`; PrivacyError; OciError. */
export const stageStep: PipelineStep<RunContext, StageRecord, "stage"> = Object.freeze({
  name: "stage" as const,
  record: StageRecordSchema,
  async run(ctx: RunContext): Promise<StageRecord> {
    const { paths } = ctx;
    const { accessOptions, policy } = await ctx.registry();
    const staged = await stageRelease({
      ...accessOptions,
      policy,
      tag: candidateTagOf(ctx),
      manifest: paths.manifest,
      artifactDir: paths.dist,
      sourceBundle: paths.bundle,
      payloadChecksums: paths.checksums,
      output: paths.staged,
    });
    return { bundle_reference: staged.bundle_reference };
  },
  async verify(ctx: RunContext, recorded: StageRecord): Promise<void> {
    const { access, policy } = await ctx.registry();
    const reference = recorded.bundle_reference;
    const candidate = candidateTagOf(ctx);
    const staged = parseStrictJson(await readFile(ctx.paths.staged));
    if (staged["bundle_reference"] !== reference) stepDiverged("stage", `${ctx.paths.staged} names ${describeValue(staged["bundle_reference"])}`);
    const target = await openWriteTarget(access);
    if ((await resolveTag(target, candidate)) !== reference.split("@")[1]) stepDiverged("stage", `tag ${candidate} does not name ${reference}`);
    const download = await verifiedDownload(access, reference, policy, { expect: "bundle" });
    await download.cleanup();
  },
});

/** The staged bundle reference. @throws PipelineError `RUN_STATE_INVALID` when stage has not run. */
export function bundleReference(ctx: RunContext): string {
  return ctx.recorded(stageStep).bundle_reference;
}
