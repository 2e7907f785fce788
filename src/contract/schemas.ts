/**
 * zod schemas, with exact key sets, of every document the release system
 * writes or reads: the release documents (tested manifest and published
 * receipt, schema 2; stage output; references output), re-exported from
 * `release-document-schemas.ts`, and the fleet lock with its provenance
 * policy. `receipts-schema/*.schema.json` are generated from these
 * (`npm run schemas`) and checked in.
 */
// Namespace import: bundlers drop the parts of zod not used here (the CLI bundle, scripts/bundle-cli.mjs).
import * as z from "zod";
import { PublishedReceiptSchema, ReferencesOutputSchema, StageOutputSchema, TestedManifestSchema, reference, semver, sha256Hex } from "./release-document-schemas.js";

export {
  TestGateEvidenceSchema,
  HostContractEvidenceSchema,
  WorkflowEvidenceSchema,
  EvidenceSchema,
  PromotionSchema,
  TestedArtifactSchema,
  PublishedArtifactSchema,
  PayloadRecordSchema,
  InstallTimeSchema,
  TestedManifestSchema,
  PublishedReceiptSchema,
  StageOutputSchema,
  ReferencesOutputSchema,
  type TestGateEvidence,
  type HostContractEvidence,
  type WorkflowEvidence,
  type Evidence,
  type Promotion,
  type TestedArtifact,
  type PublishedArtifact,
  type PayloadRecord,
  type TestedManifest,
  type PublishedReceipt,
  type StageOutput,
  type ReferencesOutput,
} from "./release-document-schemas.js";

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
