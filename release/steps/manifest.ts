/**
 * Step `manifest` of `release run` (docs/release-run.md, docs/release-build.md):
 * create-manifest, verify-manifest and the payload checksums
 * (`../manifest-steps.ts`). Resume re-verifies the tested manifest and checks
 * both files' SHA-256 against the record.
 */
import { rm } from "node:fs/promises";
import { z } from "zod";
import { hashFile } from "../../src/contract/file-hash.js";
import { checksumsStep, createManifestStep, verifyManifestStep } from "../manifest-steps.js";
import { stepDiverged, type PipelineStep } from "../pipeline.js";
import type { RunContext } from "../run-context.js";
import { releasedIntent } from "./intent.js";
import { releaseSha } from "./materialize.js";
import { makeDirectory } from "../../src/contract/directory.js";

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

/** Record of the manifest step: SHA-256 (hex) of `release-manifest.json` and `release-payload.sha256`. */
export const ManifestRecordSchema = z.object({ manifest_sha256: sha256Hex, checksums_sha256: sha256Hex }).strict();

/** See {@link ManifestRecordSchema}. */
export type ManifestRecord = z.infer<typeof ManifestRecordSchema>;

/** @throws PipelineError `RUN_STEP_DIVERGED`; every code of create-manifest, verify-manifest and checksums. */
export const manifestStep: PipelineStep<RunContext, ManifestRecord, "manifest"> = Object.freeze({
  name: "manifest" as const,
  record: ManifestRecordSchema,
  async run(ctx: RunContext): Promise<ManifestRecord> {
    const { paths, state, options } = ctx;
    const intent = releasedIntent(ctx);
    await rm(paths.payload, { recursive: true, force: true });
    await makeDirectory(paths.payload, { mode: 0o700, purpose: "release workspace (--workspace)" });
    await createManifestStep({
      dir: paths.restore,
      previousVersion: intent.previous_version,
      version: intent.version,
      tag: intent.tag,
      sourceSha: releaseSha(ctx),
      runId: state.run_id,
      runAttempt: state.run_attempt,
      artifactDir: paths.dist,
      evidenceDir: paths.evidence,
      output: paths.manifest,
      ...(options.mcpSdkVersion === undefined ? {} : { mcpSdkVersion: options.mcpSdkVersion }),
    });
    await verifyManifestStep({ dir: paths.restore, manifest: paths.manifest, artifactDir: paths.dist });
    await checksumsStep({ dir: paths.restore, bundle: paths.bundle, manifest: paths.manifest, artifactDir: paths.dist, output: paths.checksums });
    return { manifest_sha256: (await hashFile(paths.manifest)).sha256, checksums_sha256: (await hashFile(paths.checksums)).sha256 };
  },
  async verify(ctx: RunContext, recorded: ManifestRecord): Promise<void> {
    const { paths } = ctx;
    await verifyManifestStep({ dir: paths.restore, manifest: paths.manifest, artifactDir: paths.dist });
    if ((await hashFile(paths.manifest)).sha256 !== recorded.manifest_sha256) stepDiverged("manifest", "release-manifest.json changed");
    if ((await hashFile(paths.checksums)).sha256 !== recorded.checksums_sha256) stepDiverged("manifest", "release-payload.sha256 changed");
  },
});
