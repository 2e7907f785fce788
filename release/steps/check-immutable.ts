/**
 * Step `check-immutable` of `release run` (docs/release-publish.md): immutable
 * GitHub releases must be on before anything leaves the machine
 * (`../check-immutable.ts`); only with `--github-release`. Proved again on
 * resume: a setting is a fact of now.
 */
import { z } from "zod";
import { checkImmutableReleases } from "../check-immutable.js";
import type { PipelineStep } from "../pipeline.js";
import type { RunContext } from "../run-context.js";

/** Why the GitHub steps are skipped without `--github-release`. */
export const NO_GITHUB_REASON = "skipped: no GitHub repository configured (pass --github-release with GH_TOKEN, GITHUB_API_URL, GITHUB_REPOSITORY)";

/** Record of the check-immutable step: the repository and the setting found. */
export const CheckImmutableRecordSchema = z.object({ repository: z.string(), enabled: z.literal(true), enforced_by_owner: z.boolean() }).strict();

/** See {@link CheckImmutableRecordSchema}. */
export type CheckImmutableRecord = z.infer<typeof CheckImmutableRecordSchema>;

/** @throws GitHubReleaseError `IMMUTABLE_RELEASES_DISABLED` and the GitHub API codes of `checkImmutableReleases`. */
export const checkImmutableStep: PipelineStep<RunContext, CheckImmutableRecord, "check-immutable"> = Object.freeze({
  name: "check-immutable" as const,
  record: CheckImmutableRecordSchema,
  skip: (ctx: RunContext) => (ctx.options.githubRelease === true ? undefined : NO_GITHUB_REASON),
  async run(ctx: RunContext): Promise<CheckImmutableRecord> {
    return { ...(await checkImmutableReleases({ env: ctx.env })) };
  },
  async verify(ctx: RunContext): Promise<void> {
    await checkImmutableReleases({ env: ctx.env });
  },
});
