/**
 * Step `attest` of `release run` (docs/provenance.md; docs/architecture.md,
 * "Provenance"): the staged bundle's provenance signed with the local P-256
 * key and stored as an OCI referrer of the bundle (`../attest.ts`, whose
 * `attestStep` this adapts to the run's context). Skipped without a key
 * unless the release policy names one (`../attest-key.ts`: then `release run`
 * refused to start without the matching private key, so it always runs).
 * Resume re-discovers the recorded attestation and verifies it, like a
 * consumer would, with the policy's public key read from the release commit
 * (else the signing key's public half).
 */
import { z } from "zod";
import { policySigningKey, requireMatchingKey } from "../attest-key.js";
import { gitText } from "../git.js";
import type { PipelineStep } from "../pipeline.js";
import type { RunContext } from "../run-context.js";
import type { AttestStepContext } from "../attest.js";
import { bundleReference, PinnedReferenceSchema } from "./stage.js";

/** Record of the attest step: the attestation (referrer manifest) reference and the statement's SHA-256 (hex). */
export const AttestRecordSchema = z.object({ attestation_reference: PinnedReferenceSchema, statement_sha256: z.string().regex(/^[0-9a-f]{64}$/) }).strict();

/** See {@link AttestRecordSchema}. */
export type AttestRecord = z.infer<typeof AttestRecordSchema>;

/** The attest module and the options of `release attest` for this run (loaded only when a run attests: it pulls @sigstore/*). */
async function attestInputs(ctx: RunContext): Promise<{ attest: typeof import("../attest.js"); options: AttestStepContext }> {
  const attest = await import("../attest.js");
  const { readSigningKeyFile } = await import("../provenance-sign.js");
  const { accessOptions, policy } = await ctx.registry();
  const keyFile = ctx.options.attestKey as string;
  // A key the release commit's policy names is what the attestation must verify with (proved again here, on resume too).
  const policyKey = policy.provenanceKey === undefined ? undefined : await policySigningKey(ctx.paths.restore, "HEAD");
  if (policyKey !== undefined) await requireMatchingKey(policyKey, keyFile, "the run's attestation key");
  const origin = (await gitText(["config", "--get", "remote.origin.url"], { cwd: ctx.paths.source })).trim();
  const options: AttestStepContext = {
    ...accessOptions,
    policy,
    reference: bundleReference(ctx),
    signer: { kind: "key", privateKey: await readSigningKeyFile(keyFile) },
    sourceRepository: attest.sourceRepositoryUri(origin, ctx.paths.source),
    workflowRef: "refs/heads/main",
    runAttempt: ctx.state.run_attempt,
    ...(policyKey === undefined ? {} : { verifyPolicy: { key: policyKey.publicKeyPem } }),
  };
  return { attest, options };
}

/** @throws ProvenanceError `PROVENANCE_*` (every code of `attestRelease`); PrivacyError; OciError. */
export const attestRunStep: PipelineStep<RunContext, AttestRecord, "attest"> = Object.freeze({
  name: "attest" as const,
  record: AttestRecordSchema,
  skip: (ctx: RunContext) => (ctx.options.attestKey === undefined ? "skipped: no attestation key (pass --attest-key)" : undefined),
  async run(ctx: RunContext): Promise<AttestRecord> {
    const { attest, options } = await attestInputs(ctx);
    // The runner checks the result against AttestRecordSchema before recording it.
    return (await attest.attestStep.run(options)) as AttestRecord;
  },
  async verify(ctx: RunContext, recorded: AttestRecord): Promise<void> {
    const { attest, options } = await attestInputs(ctx);
    await attest.attestStep.verify(options, recorded);
  },
});
