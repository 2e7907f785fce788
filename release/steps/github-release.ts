/**
 * Step `github-release` of `release run` (docs/release-publish.md): the
 * immutable, asset-free GitHub Release whose body holds the two digest
 * references (`../github-release.ts`); only with `--github-release`. Resume
 * runs it again, which only verifies a published release, and requires that outcome.
 */
import { z } from "zod";
import { createGitHubRelease, type GitHubReleaseResult } from "../github-release.js";
import { remoteTagCommit } from "../git.js";
import { stepDiverged, type PipelineStep } from "../pipeline.js";
import type { RunContext } from "../run-context.js";
import { NO_GITHUB_REASON } from "./check-immutable.js";
import { releasedIntent } from "./intent.js";
import { releaseSha } from "./materialize.js";
import { publishStep } from "./publish.js";
import { bundleReference } from "./stage.js";

/** Record of the github-release step: the release id and what was done. */
export const GitHubReleaseRecordSchema = z.object({ release_id: z.number().int().positive(), outcome: z.enum(["created", "published-draft", "verified"]) }).strict();

/** See {@link GitHubReleaseRecordSchema}. */
export type GitHubReleaseRecord = z.infer<typeof GitHubReleaseRecordSchema>;

async function githubRelease(ctx: RunContext): Promise<GitHubReleaseResult> {
  const { version, tag } = releasedIntent(ctx);
  const { policy } = await ctx.registry();
  return createGitHubRelease(
    {
      version,
      releaseSha: releaseSha(ctx),
      bundleReference: bundleReference(ctx),
      receiptReference: ctx.recorded(publishStep).receipt_reference,
      packageName: policy.package,
      remoteTagCommit: () => remoteTagCommit(ctx.paths.source, "origin", tag),
    },
    { env: ctx.env },
  );
}

/** @throws GitHubReleaseError (every code of `createGitHubRelease`); PipelineError `RUN_STEP_DIVERGED`. */
export const githubReleaseStep: PipelineStep<RunContext, GitHubReleaseRecord, "github-release"> = Object.freeze({
  name: "github-release" as const,
  record: GitHubReleaseRecordSchema,
  skip: (ctx: RunContext) => (ctx.options.githubRelease === true ? undefined : NO_GITHUB_REASON),
  async run(ctx: RunContext): Promise<GitHubReleaseRecord> {
    const result = await githubRelease(ctx);
    return { release_id: result.release_id, outcome: result.outcome };
  },
  async verify(ctx: RunContext): Promise<void> {
    const result = await githubRelease(ctx);
    if (result.outcome !== "verified") stepDiverged("github-release", `the release was ${result.outcome} instead of verified`);
  },
});
