/**
 * Step `intent` of `release run` (docs/release-run.md; docs/architecture.md,
 * "Release: steps and data flow"): a fresh clone at the trigger; origin's
 * `main` must be the trigger (promotion will require it, so this is said
 * before anything is built); then the release intent (`../intent.ts`). Ends
 * the run when there is nothing to release; nothing to re-verify on resume
 * (the decision is the record, and the later steps prove their outputs against it).
 */
import { z } from "zod";
import { isStableSemver } from "../../src/contract/grammar.js";
import { PipelineError } from "../errors.js";
import { cloneAtTrigger, remoteBranchCommit, remoteMainAdvice } from "../git.js";
import { disarmedReason, releaseIntent } from "../intent.js";
import type { PipelineStep } from "../pipeline.js";
import type { RunContext } from "../run-context.js";

const semver = z.string().refine(isStableSemver, "not a stable SemVer");

/** Record of the intent step: the version to release, or why there is none. */
export const IntentRecordSchema = z.discriminatedUnion("released", [
  z.object({ released: z.literal(true), version: semver, previous_version: semver, tag: z.string().regex(/^v[0-9]/), release_class: z.enum(["major", "minor", "patch"]) }).strict(),
  z.object({ released: z.literal(false), reason: z.string() }).strict(),
]);

/** See {@link IntentRecordSchema}. */
export type IntentRecord = z.infer<typeof IntentRecordSchema>;

/** @throws PipelineError `PROMOTE_REMOTE_STATE` (with the fix: push, or pull first); every code of `releaseIntent`. */
export const intentStep: PipelineStep<RunContext, IntentRecord, "intent"> = Object.freeze({
  name: "intent" as const,
  record: IntentRecordSchema,
  async run(ctx: RunContext): Promise<IntentRecord> {
    const trigger = ctx.state.trigger_sha;
    await cloneAtTrigger(ctx.source, ctx.paths.source, trigger);
    const remoteMain = await remoteBranchCommit(ctx.paths.source, "origin", "main");
    if (remoteMain !== trigger) throw new PipelineError("PROMOTE_REMOTE_STATE", await remoteMainAdvice(ctx.source, remoteMain, trigger));
    const intent = await releaseIntent({ dir: ctx.paths.source, environment: ctx.intentEnv, remote: "origin" });
    if (!("previous_version" in intent)) return { released: false, reason: disarmedReason(ctx.intentEnv["SEMANTIC_RELEASE_ENABLED"]) };
    if (!intent.released || intent.version === null || intent.tag === null || intent.release_class === null) return { released: false, reason: `nothing to release since v${intent.previous_version}` };
    return { released: true, version: intent.version, previous_version: intent.previous_version, tag: intent.tag, release_class: intent.release_class };
  },
  async verify(): Promise<void> {},
  halt: (recorded: IntentRecord) => (recorded.released ? undefined : recorded.reason),
});

/** The release the intent step decided (version, previous version, tag). @throws PipelineError `RUN_STATE_INVALID` when it decided none. */
export function releasedIntent(ctx: RunContext): Extract<IntentRecord, { released: true }> {
  const intent = ctx.recorded(intentStep);
  if (!intent.released) throw new PipelineError("RUN_STATE_INVALID", `the run state records nothing to release (${intent.reason}), yet a later step ran; fix: start over with a fresh --workspace (or remove this one)`);
  return intent;
}
