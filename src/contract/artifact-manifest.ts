/**
 * The one artifact-manifest schema: the OCI image manifest as this project
 * writes and accepts it (OCI image-spec `manifest.md` "Image Manifest
 * Property Descriptions", `descriptor.md`; docs/architecture.md, "OCI transport").
 *
 * Exact keys `schemaVersion` (2), `mediaType` (the OCI image manifest type),
 * `artifactType`, `config` (the empty config, exactly), `layers`, and the
 * optional `subject` and `annotations`. Two profiles narrow it:
 * - `payload`: a release bundle, receipt or bootstrap artifact: no `subject`,
 *   no `annotations`, every layer `application/octet-stream` with exactly one
 *   string `org.opencontainers.image.title` annotation;
 * - `referrer`: an attestation stored as an OCI referrer: `subject` required.
 *
 * Pure: {@link artifactManifestProblems} says which part of a parsed document
 * breaks the schema, so each area raises its own code for that part.
 */
import * as z from "zod";
import type { JsonObject, JsonValue } from "./canonical-json.js";
import { EMPTY_CONFIG_DIGEST, OCI_EMPTY_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE, OCTET_STREAM_MEDIA_TYPE, TITLE_ANNOTATION } from "./constants.js";
import { ReleaseContractError } from "./errors.js";
import { describeValue } from "./grammar.js";

const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, "sha256:<64 lowercase hex>");
const annotations = z.record(z.string(), z.string());

/** The empty config descriptor, exactly (image-spec "Guidance for an Empty Descriptor"). */
export const EmptyConfigDescriptorSchema = z.strictObject({
  mediaType: z.literal(OCI_EMPTY_MEDIA_TYPE),
  digest: z.literal(EMPTY_CONFIG_DIGEST),
  size: z.literal(2),
});

/** A layer descriptor: `size` in bytes, at least 1; optional string annotations. */
export const LayerDescriptorSchema = z.strictObject({
  mediaType: z.string().min(1),
  digest,
  size: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  annotations: annotations.optional(),
});

/** The `subject` descriptor of a referrer (image-spec `manifest.md` "subject"). */
export const SubjectDescriptorSchema = z.strictObject({
  mediaType: z.string().min(1),
  digest,
  size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  annotations: annotations.optional(),
  artifactType: z.string().min(1).optional(),
});

/** The artifact manifest, exact keys. */
export const ArtifactManifestSchema = z.strictObject({
  schemaVersion: z.literal(2),
  mediaType: z.literal(OCI_MANIFEST_MEDIA_TYPE),
  artifactType: z.string().min(1),
  config: EmptyConfigDescriptorSchema,
  layers: z.array(LayerDescriptorSchema),
  subject: SubjectDescriptorSchema.optional(),
  annotations: annotations.optional(),
});

/** A manifest that passed {@link ArtifactManifestSchema}. */
export type ArtifactManifest = z.infer<typeof ArtifactManifestSchema>;

/** Which narrowing of the schema applies (see the module comment). */
export type ArtifactManifestProfile = "payload" | "referrer";

/**
 * Where a problem is, in the order the parts are checked: `document` (key set,
 * `schemaVersion`, `mediaType`), `artifactType`, `config`, `subject`,
 * `annotations`, `layers` (not an array), `layer` (a layer's descriptor),
 * `layer-annotations` (a present layer `annotations` value).
 */
export type ArtifactManifestPart = "document" | "artifactType" | "config" | "subject" | "annotations" | "layers" | "layer" | "layer-annotations";

/** One way a document breaks the schema; `index` is the layer's, for `layer` and `layer-annotations`. */
export interface ArtifactManifestProblem {
  part: ArtifactManifestPart;
  index?: number;
  message: string;
}

const PART_ORDER: readonly ArtifactManifestPart[] = ["document", "artifactType", "config", "subject", "annotations", "layers", "layer", "layer-annotations"];
const PROFILES: readonly ArtifactManifestProfile[] = ["payload", "referrer"];

/** A call of this module's exports with arguments of another shape: a coded refusal, never a TypeError from inside. */
function invalidArgument(call: string, message: string): never {
  throw new ReleaseContractError("POLICY_INVALID", `${call}: ${message}`);
}
const REQUIRED_KEYS = ["schemaVersion", "mediaType", "artifactType", "config", "layers"];

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The key set a profile allows: required keys present, nothing else. */
function keyProblem(json: JsonObject, profile: ArtifactManifestProfile): ArtifactManifestProblem | undefined {
  const required = profile === "referrer" ? [...REQUIRED_KEYS, "subject"] : REQUIRED_KEYS;
  const allowed = profile === "referrer" ? [...required, "annotations"] : required;
  const keys = Object.keys(json);
  if (required.every((k) => keys.includes(k)) && keys.every((k) => allowed.includes(k))) return undefined;
  const optional = allowed.filter((k) => !required.includes(k));
  return {
    part: "document",
    message: `expected exactly the keys ${[...required].sort().join(", ")}${optional.length === 0 ? "" : ` (and optionally ${optional.join(", ")})`}; found ${keys.sort().join(", ")}`,
  };
}

function partOf(path: readonly PropertyKey[], json: JsonObject): ArtifactManifestProblem["part"] {
  const [top, index, field] = path;
  if (top === undefined || top === "schemaVersion" || top === "mediaType") return "document";
  if (top !== "layers") return top as ArtifactManifestPart;
  if (index === undefined) return "layers";
  const layer = (json["layers"] as JsonValue[])[index as number];
  return field === "annotations" && isObject(layer) && layer["annotations"] !== undefined ? "layer-annotations" : "layer";
}

/** The `payload` profile's layer rules: octet-stream, exactly one string title annotation. */
function payloadLayerProblems(layers: JsonValue[]): ArtifactManifestProblem[] {
  const problems: ArtifactManifestProblem[] = [];
  for (const [index, layer] of layers.entries()) {
    if (!isObject(layer)) continue;
    if (layer["mediaType"] !== OCTET_STREAM_MEDIA_TYPE || layer["annotations"] === undefined) {
      problems.push({ part: "layer", index, message: `layer ${index} must be ${OCTET_STREAM_MEDIA_TYPE} with annotations` });
      continue;
    }
    const notes = layer["annotations"];
    if (!isObject(notes) || Object.keys(notes).length !== 1 || typeof notes[TITLE_ANNOTATION] !== "string") {
      problems.push({ part: "layer-annotations", index, message: `layer ${index} must carry exactly one string ${TITLE_ANNOTATION} annotation` });
    }
  }
  return problems;
}

/**
 * Every way `json` breaks {@link ArtifactManifestSchema} under `profile`,
 * ordered by part (see {@link ArtifactManifestPart}), then by layer index.
 * @param json the parsed document (a JSON object, as `parseStrictJson` returns it).
 * @returns `[]` when the document is an artifact manifest of the profile.
 * @throws ReleaseContractError `POLICY_INVALID` when `json` is not an object (`null`, an array, a string: parse the
 *   bytes first) or `profile` is neither `"payload"` nor `"referrer"` (a misspelt profile would check less).
 */
export function artifactManifestProblems(json: JsonObject, profile: ArtifactManifestProfile): ArtifactManifestProblem[] {
  const call = "artifactManifestProblems(json, profile)";
  if (!isObject(json)) invalidArgument(call, `json must be the parsed manifest (a JSON object, as parseStrictJson returns it), found ${Array.isArray(json) ? "an array" : describeValue(json)}`);
  if (!(PROFILES as readonly unknown[]).includes(profile)) invalidArgument(call, `profile must be ${PROFILES.map((p) => JSON.stringify(p)).join(" or ")}, found ${describeValue(profile)}`);
  const problems: ArtifactManifestProblem[] = [];
  const keys = keyProblem(json, profile);
  if (keys !== undefined) problems.push(keys);
  const parsed = ArtifactManifestSchema.safeParse(json);
  for (const issue of parsed.success ? [] : parsed.error.issues) {
    const part = partOf(issue.path, json);
    if (part === "document" && issue.code === "unrecognized_keys") continue;
    const index = part === "layer" || part === "layer-annotations" ? (issue.path[1] as number) : undefined;
    problems.push({ part, ...(index === undefined ? {} : { index }), message: `${issue.path.join(".") || "manifest"}: ${issue.message}` });
  }
  if (profile === "payload" && Array.isArray(json["layers"])) problems.push(...payloadLayerProblems(json["layers"]));
  const rank = (p: ArtifactManifestProblem): number => PART_ORDER.indexOf(p.part) * 1e6 + (p.index ?? 0);
  return problems.sort((a, b) => rank(a) - rank(b));
}

/**
 * The first of `problems` at `part` (and layer `index`), if any: callers walk
 * the parts in their own check order and raise their own code for each.
 * @throws ReleaseContractError `POLICY_INVALID` when `problems` is not an array (pass what
 *   {@link artifactManifestProblems} returned), `part` is not an {@link ArtifactManifestPart} or `index` is not a
 *   whole number >= 0: each would answer "no problem" and pass what was not checked.
 */
export function problemAt(problems: readonly ArtifactManifestProblem[], part: ArtifactManifestPart, index?: number): ArtifactManifestProblem | undefined {
  const call = "problemAt(problems, part, index)";
  if (!Array.isArray(problems)) invalidArgument(call, `problems must be the array artifactManifestProblems returned, found ${describeValue(problems)}`);
  if (!(PART_ORDER as readonly unknown[]).includes(part)) invalidArgument(call, `part must be one of ${PART_ORDER.map((p) => JSON.stringify(p)).join(", ")}, found ${describeValue(part)}`);
  if (index !== undefined && (!Number.isSafeInteger(index) || index < 0)) invalidArgument(call, `index must be a layer's index (a whole number >= 0) or absent, found ${describeValue(index)}`);
  return problems.find((p) => p?.part === part && (index === undefined || p.index === index));
}
