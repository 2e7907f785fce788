/**
 * zod schemas, with exact key sets, of every document the release system
 * writes or reads: tested manifest and published receipt (schema 2), stage
 * output, references output, and the fleet lock. `receipts-schema/*.schema.json`
 * are generated from these (`npm run schemas`) and checked in.
 *
 * Field sets are those of docs/contract.md and `receipts-schema/`, for one npm
 * tarball: `artifacts` has one entry and `payload`
 * four records; evidence gates are `unit`, `public_contract`, `host_contract`
 * (records `mcp_sdk_version`), `build_metadata`, `workflow`.
 */
// Namespace import: bundlers drop the parts of zod not used here (the CLI bundle, scripts/bundle-cli.mjs).
import * as z from "zod";
import { INSTALL_TIME_ENTRY_RE } from "./install-time.js";

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "64 lowercase hex");
const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, "sha256:<64 lowercase hex>");
const gitSha = z.string().regex(/^[0-9a-f]{40}$/, "40 lowercase hex Git SHA");
const semver = z.string().regex(/^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/, "stable SemVer");
const size = z.number().int().min(1);
const reference = z.string().regex(/@sha256:[0-9a-f]{64}$/, "<repository>@sha256:<64 hex>");

/** A passed test gate. */
export const TestGateEvidenceSchema = z.strictObject({
  status: z.literal("passed"),
  result: z.literal("passed"),
  source_sha: gitSha,
  command: z.string().min(1),
});

/** The `host_contract` gate: also records the MCP SDK version exercised. */
export const HostContractEvidenceSchema = z.strictObject({
  status: z.literal("passed"),
  result: z.literal("passed"),
  source_sha: gitSha,
  command: z.string().min(1),
  mcp_sdk_version: semver,
});

/** The `workflow` evidence. */
export const WorkflowEvidenceSchema = z.strictObject({
  name: z.literal("release.yml"),
  run_id: z.string().regex(/^[1-9][0-9]*$/),
  run_attempt: z.number().int().min(1),
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
export const TestedArtifactSchema = z.strictObject({ filename: z.string().min(1), sha256: sha256Hex, size });
/** A published artifact record: adds `blob_digest` = `sha256:` + sha256. */
export const PublishedArtifactSchema = z.strictObject({ filename: z.string().min(1), sha256: sha256Hex, size, blob_digest: digest });
/** A payload record of a published receipt (one per bundle layer). */
export const PayloadRecordSchema = z.strictObject({ path: z.string().min(1), sha256: sha256Hex, size, blob_digest: digest });

const identity = {
  schema_version: z.literal(2),
  package: z.string().min(1),
  previous_version: semver,
  version: semver,
  tag: z.string().regex(/^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/),
  source_sha: gitSha,
  release_class: z.enum(["major", "minor", "patch"]),
  promotion: PromotionSchema,
  registry_repository: z.string().min(1),
  evidence: EvidenceSchema,
};

/**
 * Install-time behaviours the tarball has and its policy declared (`install-time.ts`),
 * sorted: `preinstall` ... `postuninstall`, `node-gyp`, `man`, or `node_modules/<name>:<behaviour>`.
 */
export const InstallTimeSchema = z.array(z.string().regex(INSTALL_TIME_ENTRY_RE)).min(1);

/** `release-manifest.json`: schema 2, state `tested`, exactly 12 keys (13 with `install_time`). */
export const TestedManifestSchema = z.strictObject({
  ...identity,
  receipt_state: z.literal("tested"),
  artifacts: z.array(TestedArtifactSchema).length(1),
  install_time: InstallTimeSchema.optional(),
});

/** `release-receipt.json`: schema 2, state `published`, exactly 14 keys (15 with `install_time`). */
export const PublishedReceiptSchema = z.strictObject({
  ...identity,
  receipt_state: z.literal("published"),
  artifacts: z.array(PublishedArtifactSchema).length(1),
  registry_reference: reference,
  payload: z.array(PayloadRecordSchema).length(4),
  install_time: InstallTimeSchema.optional(),
});

/** Stage output `{"bundle_reference": ...}`. */
export const StageOutputSchema = z.strictObject({ bundle_reference: reference });

/** References output `{"bundle_reference", "receipt_reference"}`. */
export const ReferencesOutputSchema = z.strictObject({ bundle_reference: reference, receipt_reference: reference });

/**
 * The provenance policy pinned with a plugin (`fleet add --provenance`):
 * a PEM public key, or the GitHub identity flags of `gh attestation verify`
 * (`owner`/`repo`, `signer_workflow`, `source_ref`, `cert_oidc_issuer`).
 */
export const ProvenancePolicySchema = z.strictObject({
  key: z.string().regex(/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----\n$/).optional(),
  owner: z.string().min(1).optional(),
  repo: z.string().min(1).optional(),
  signer_workflow: z.string().min(1).optional(),
  source_ref: z.string().min(1).optional(),
  cert_oidc_issuer: z.string().min(1).optional(),
});

const fleetTarball = z.strictObject({ filename: z.string().regex(/^[a-z0-9][a-z0-9._-]*-(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.tgz$/), sha256: sha256Hex });
const gateCommand = z.string().min(1).max(1000).regex(/^[^\0\r\n]+$/, "one line");

/** A previous pin of a plugin, kept in its `history` by `fleet upgrade`. */
export const FleetPinSchema = z.strictObject({
  version: semver,
  bundle_reference: reference,
  receipt_reference: reference,
  tarball: fleetTarball,
});

/**
 * One pinned plugin of a fleet lock. `gates` pins gate commands its releases
 * must have run (`fleet add --expect-gate`); `history` holds the pins it had
 * before each `fleet upgrade`, oldest first.
 */
export const FleetPluginSchema = z.strictObject({
  name: z.string().min(1),
  version: semver,
  bundle_reference: reference,
  receipt_reference: reference,
  tarball: fleetTarball,
  /** Present when the plugin's provenance must verify (`fleet verify` enforces it). */
  provenance: ProvenancePolicySchema.optional(),
  gates: z
    .strictObject({ unit: gateCommand.optional(), public_contract: gateCommand.optional(), host_contract: gateCommand.optional(), build_metadata: gateCommand.optional() })
    .optional(),
  history: z.array(FleetPinSchema).optional(),
});

/** `fleet.lock.json`: `schema_version` 1 and the pinned plugins. */
export const FleetLockSchema = z.strictObject({
  schema_version: z.literal(1),
  plugins: z.array(FleetPluginSchema),
});

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
export type FleetPlugin = z.infer<typeof FleetPluginSchema>;
export type LockedProvenancePolicy = z.infer<typeof ProvenancePolicySchema>;
export type FleetPin = z.infer<typeof FleetPinSchema>;
export type FleetLock = z.infer<typeof FleetLockSchema>;

/** Every schema that is published as JSON Schema, by file stem. */
export const DOCUMENT_SCHEMAS = {
  "tested-manifest": TestedManifestSchema,
  "published-receipt": PublishedReceiptSchema,
  "stage-output": StageOutputSchema,
  "references-output": ReferencesOutputSchema,
  "fleet-lock": FleetLockSchema,
} as const;
