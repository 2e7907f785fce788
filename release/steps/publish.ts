/**
 * Step `publish` of `release run` (docs/release-publish.md): `v<V>` bound to
 * the staged digest, the receipt written and pushed at `v<V>-receipt`,
 * re-downloaded and compared (`../publish.ts`). Resume checks the receipt
 * file and `publication.json` against the record, both tags, and that the
 * registry's receipt bytes equal the local ones.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { hashFile } from "../../src/contract/file-hash.js";
import { outputJsonBytes } from "../output.js";
import { stepDiverged, type PipelineStep } from "../pipeline.js";
import { publishRelease } from "../publish.js";
import { openWriteTarget, resolveTag, verifiedDownload } from "../registry-access.js";
import type { RunContext } from "../run-context.js";
import { releasedIntent } from "./intent.js";
import { bundleReference, PinnedReferenceSchema } from "./stage.js";

/** Record of the publish step: the receipt reference and the receipt file's SHA-256 (hex). */
export const PublishRecordSchema = z.object({ receipt_reference: PinnedReferenceSchema, receipt_sha256: z.string().regex(/^[0-9a-f]{64}$/) }).strict();

/** See {@link PublishRecordSchema}. */
export type PublishRecord = z.infer<typeof PublishRecordSchema>;

/** @throws PipelineError `PUBLISH_*`, `RELEASE_TAG_*`, `RUN_STEP_DIVERGED`; PrivacyError; OciError. */
export const publishStep: PipelineStep<RunContext, PublishRecord, "publish"> = Object.freeze({
  name: "publish" as const,
  record: PublishRecordSchema,
  async run(ctx: RunContext): Promise<PublishRecord> {
    const { accessOptions, policy } = await ctx.registry();
    const published = await publishRelease({ ...accessOptions, policy, reference: bundleReference(ctx), output: ctx.paths.receipt, references: ctx.paths.references });
    return { receipt_reference: published.receipt_reference, receipt_sha256: published.receipt_sha256 };
  },
  async verify(ctx: RunContext, recorded: PublishRecord): Promise<void> {
    const { paths } = ctx;
    const { access, policy } = await ctx.registry();
    const bundle = bundleReference(ctx);
    const { tag } = releasedIntent(ctx);
    const receiptReference = recorded.receipt_reference;
    if ((await hashFile(paths.receipt)).sha256 !== recorded.receipt_sha256) stepDiverged("publish", "release-receipt.json changed");
    const refs = await readFile(paths.references);
    if (!refs.equals(outputJsonBytes({ bundle_reference: bundle, receipt_reference: receiptReference }))) stepDiverged("publish", "publication.json changed");
    const target = await openWriteTarget(access);
    if ((await resolveTag(target, tag)) !== bundle.split("@")[1]) stepDiverged("publish", `tag ${tag} does not name the bundle`);
    if ((await resolveTag(target, `${tag}-receipt`)) !== receiptReference.split("@")[1]) stepDiverged("publish", `tag ${tag}-receipt does not name the receipt`);
    const download = await verifiedDownload(access, receiptReference, policy, { expect: "receipt" });
    try {
      const echoed = await readFile(download.localFiles.get("release-receipt.json") as string);
      if (!echoed.equals(await readFile(paths.receipt))) stepDiverged("publish", "the registry's receipt differs from release-receipt.json");
    } finally {
      await download.cleanup();
    }
  },
});
