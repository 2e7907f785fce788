/**
 * Step `check-private` of `release run` (docs/release-publish.md; docs/architecture.md,
 * "Release: steps and data flow"): the privacy gate with bootstrap
 * (`../check-private.ts`); resume proves it again without bootstrap: privacy
 * is a fact of now.
 */
import { z } from "zod";
import { checkPrivate } from "../check-private.js";
import type { PipelineStep } from "../pipeline.js";
import type { RunContext } from "../run-context.js";

/** Record of the check-private step: which evidence proved privacy, and whether the repository was created. */
export const CheckPrivateRecordSchema = z.object({ kind: z.enum(["github-packages", "registry", "layout"]), bootstrapped: z.boolean() }).strict();

/** See {@link CheckPrivateRecordSchema}. */
export type CheckPrivateRecord = z.infer<typeof CheckPrivateRecordSchema>;

/** @throws PrivacyError `PRIVACY_*`. */
export const checkPrivateStep: PipelineStep<RunContext, CheckPrivateRecord, "check-private"> = Object.freeze({
  name: "check-private" as const,
  record: CheckPrivateRecordSchema,
  async run(ctx: RunContext): Promise<CheckPrivateRecord> {
    const { accessOptions, policy } = await ctx.registry();
    const evidence = await checkPrivate({ ...accessOptions, policy, bootstrap: true });
    return { kind: evidence.kind, bootstrapped: evidence.bootstrapped };
  },
  async verify(ctx: RunContext): Promise<void> {
    const { accessOptions, policy } = await ctx.registry();
    await checkPrivate({ ...accessOptions, policy, bootstrap: false });
  },
});
