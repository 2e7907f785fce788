/**
 * zod schemas, with exact key sets, of the release documents: tested manifest
 * and published receipt (schema 2), stage output and references output. The
 * fleet lock's are in `schemas.ts`, the public module that re-exports these:
 * verifying a receipt (the CLI's `verify-final-receipt`) builds only these.
 * `receipts-schema/*.schema.json` are generated from both (`npm run schemas`)
 * and checked in.
 *
 * Field sets are those of docs/contract.md and `receipts-schema/`, for one npm
 * tarball: `artifacts` has one entry and `payload`
 * four records; evidence gates are `unit`, `public_contract`, `host_contract`
 * (records `mcp_sdk_version`), `build_metadata`, `workflow`.
 */
// zod/mini (functional checks; the same validation and JSON Schema as zod classic): building these schemas is about half the cost in zod classic, and a verify command builds them on every run. Namespace import: bundlers drop the parts of zod not used here (the CLI bundle, scripts/bundle-cli.mjs).
import * as z from "zod/mini";
import en from "zod/v4/locales/en.js";
import { INSTALL_TIME_ENTRY_RE } from "./install-time.js";

// zod classic sets zod's English messages when a process has none; zod/mini does not, and its issues
// would read "Invalid input". The same rule here, so a SCHEMA_INVALID message says what was wrong.
if (z.config().localeError === undefined) z.config(en());

/** Shared with the fleet lock's schemas (`schemas.ts`). */
export const sha256Hex = z.string().check(z.regex(/^[0-9a-f]{64}$/, "64 lowercase hex"));
const digest = z.string().check(z.regex(/^sha256:[0-9a-f]{64}$/, "sha256:<64 lowercase hex>"));
/** Shared with the fleet lock's schemas (`schemas.ts`). */
export const gitSha = z.string().check(z.regex(/^[0-9a-f]{40}$/, "40 lowercase hex Git SHA"));
/** Shared with the fleet lock's schemas (`schemas.ts`). */
export const semver = z.string().check(z.regex(/^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/, "stable SemVer"));
const size = z.int().check(z.minimum(1));
/** Shared with the fleet lock's schemas (`schemas.ts`). */
export const reference = z.string().check(z.regex(/@sha256:[0-9a-f]{64}$/, "<repository>@sha256:<64 hex>"));

/** A passed test gate. */
export const TestGateEvidenceSchema = z.strictObject({
  status: z.literal("passed"),
  result: z.literal("passed"),
  source_sha: gitSha,
  command: z.string().check(z.minLength(1)),
});

/** The `host_contract` gate: also records the MCP SDK version exercised. */
export const HostContractEvidenceSchema = z.strictObject({
  status: z.literal("passed"),
  result: z.literal("passed"),
  source_sha: gitSha,
  command: z.string().check(z.minLength(1)),
  mcp_sdk_version: semver,
});

/** The `workflow` evidence. */
export const WorkflowEvidenceSchema = z.strictObject({
  name: z.literal("release.yml"),
  run_id: z.string().check(z.regex(/^[1-9][0-9]*$/)),
  run_attempt: z.int().check(z.minimum(1)),
  source_sha: gitSha,
});

/** The five evidence gates, exactly. */
export const EvidenceSchema = z.strictObject({
  unit: TestGateEvidenceSchema,
  public_contract: TestGateEvidenceSchema,
  host_contract: HostContractEvidenceSchema,
  build_metadata: TestGateEvidenceSchema,
  workflow: WorkflowEvidenceSchema,
});

/** Promotion state: majors need a manual migration. */
export const PromotionSchema = z.union([
  z.strictObject({ automatic_candidate: z.literal(false), state: z.literal("manual_migration_required") }),
  z.strictObject({ automatic_candidate: z.literal(true), state: z.literal("automatic_candidate") }),
]);

/** A tested artifact record `{filename, sha256, size}`. */
export const TestedArtifactSchema = z.strictObject({ filename: z.string().check(z.minLength(1)), sha256: sha256Hex, size });
/** A published artifact record: adds `blob_digest` = `sha256:` + sha256. */
export const PublishedArtifactSchema = z.strictObject({ filename: z.string().check(z.minLength(1)), sha256: sha256Hex, size, blob_digest: digest });
/** A payload record of a published receipt (one per bundle layer). */
export const PayloadRecordSchema = z.strictObject({ path: z.string().check(z.minLength(1)), sha256: sha256Hex, size, blob_digest: digest });

const identity = {
  schema_version: z.literal(2),
  package: z.string().check(z.minLength(1)),
  previous_version: semver,
  version: semver,
  tag: z.string().check(z.regex(/^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/)),
  source_sha: gitSha,
  release_class: z.enum(["major", "minor", "patch"]),
  promotion: PromotionSchema,
  registry_repository: z.string().check(z.minLength(1)),
  evidence: EvidenceSchema,
};

/**
 * Install-time behaviours the tarball has and its policy declared (`install-time.ts`),
 * sorted: `preinstall` ... `postuninstall`, `node-gyp`, `man`, or `node_modules/<name>:<behaviour>`.
 */
export const InstallTimeSchema = z.array(z.string().check(z.regex(INSTALL_TIME_ENTRY_RE))).check(z.minLength(1));

/** `release-manifest.json`: schema 2, state `tested`, exactly 12 keys (13 with `install_time`). */
export const TestedManifestSchema = z.strictObject({
  ...identity,
  receipt_state: z.literal("tested"),
  artifacts: z.array(TestedArtifactSchema).check(z.length(1)),
  install_time: z.optional(InstallTimeSchema),
});

/** `release-receipt.json`: schema 2, state `published`, exactly 14 keys (15 with `install_time`). */
export const PublishedReceiptSchema = z.strictObject({
  ...identity,
  receipt_state: z.literal("published"),
  artifacts: z.array(PublishedArtifactSchema).check(z.length(1)),
  registry_reference: reference,
  payload: z.array(PayloadRecordSchema).check(z.length(4)),
  install_time: z.optional(InstallTimeSchema),
});

/** Stage output `{"bundle_reference": ...}`. */
export const StageOutputSchema = z.strictObject({ bundle_reference: reference });

/** References output `{"bundle_reference", "receipt_reference"}`. */
export const ReferencesOutputSchema = z.strictObject({ bundle_reference: reference, receipt_reference: reference });

export type TestGateEvidence = z.infer<typeof TestGateEvidenceSchema>;
export type HostContractEvidence = z.infer<typeof HostContractEvidenceSchema>;
export type WorkflowEvidence = z.infer<typeof WorkflowEvidenceSchema>;
export type Evidence = z.infer<typeof EvidenceSchema>;
export type Promotion = z.infer<typeof PromotionSchema>;
export type TestedArtifact = z.infer<typeof TestedArtifactSchema>;
export type PublishedArtifact = z.infer<typeof PublishedArtifactSchema>;
export type PayloadRecord = z.infer<typeof PayloadRecordSchema>;
export type TestedManifest = z.infer<typeof TestedManifestSchema>;
export type PublishedReceipt = z.infer<typeof PublishedReceiptSchema>;
export type StageOutput = z.infer<typeof StageOutputSchema>;
export type ReferencesOutput = z.infer<typeof ReferencesOutputSchema>;
