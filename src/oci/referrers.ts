/**
 * OCI referrers: artifacts that point at another manifest through their
 * `subject` (image-spec v1.1 `manifest.md`, "subject"), and their discovery
 * (distribution-spec v1.1, "Listing Referrers" and "Referrers Tag Schema"):
 *
 * - {@link referrerManifest}: the deterministic referrer manifest (empty
 *   config, one layer, `subject`, `artifactType`, annotations).
 * - {@link pushReferrer}: push blobs and manifest; when the target has no
 *   referrers API (`Target.referrers` absent or answering "unsupported"),
 *   maintain the tag schema: the OCI index tagged `sha256-<hex>` of the
 *   subject gets the referrer's descriptor (with `artifactType` and
 *   annotations) unless it is already listed. The `oci-layout:` store keeps
 *   referrers the same way (a ref name in `index.json`).
 * - {@link listReferrers}: the referrers API when the target has one, else
 *   the tag-schema index; filtered by `artifactType` on our side.
 *
 * The tag-schema update is read-modify-write: two writers racing on one
 * subject can drop one entry (the distribution spec accepts this; a rerun
 * of the writer restores it, since pushing is idempotent).
 */
import { canonicalJsonBytes } from "../contract/canonical-json.js";
import { EMPTY_CONFIG_BYTES, EMPTY_CONFIG_DESCRIPTOR, OCI_INDEX_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE } from "../contract/constants.js";
import { describeValue, isDigest } from "../contract/grammar.js";
import { bufferStream, checkDescriptor, descriptorOf } from "./descriptor.js";
import { requireObjectWith, requireOptions, requireStringArgument } from "./arguments.js";
import { OciError, isOciError } from "./errors.js";
import { parseManifest } from "./manifest.js";
import type { Descriptor, ReadOnlyTarget, Target } from "./target.js";
import { fetchManifest } from "./transfer.js";

/** How referrers were found or recorded: the registry's referrers API, or the tag schema. */
export type ReferrersSource = "api" | "tag-schema";

/** The artifact a referrer carries: its type, one layer's media type and bytes, manifest annotations. */
export interface ReferrerArtifact {
  artifactType: string;
  layerMediaType: string;
  bytes: Uint8Array;
  annotations?: Record<string, string>;
}

/**
 * The referrers tag of a subject digest (distribution-spec "Referrers Tag
 * Schema"): `<alg>-<ref>`, e.g. `sha256-<64 hex>`.
 * @throws OciError `OCI_DESCRIPTOR_INVALID` for a malformed digest.
 */
export function referrersTag(subjectDigest: string): string {
  if (!isDigest(subjectDigest)) throw new OciError("OCI_DESCRIPTOR_INVALID", `invalid subject digest ${describeValue(subjectDigest)}`);
  return subjectDigest.replace(":", "-");
}

/** Only `{mediaType, digest, size}` of a descriptor (what `subject` and `layers` carry). */
function plain(desc: Descriptor): Descriptor {
  return { mediaType: desc.mediaType, digest: desc.digest, size: desc.size };
}

/**
 * The referrer manifest of `artifact` for `subject`: canonical JSON bytes and
 * its descriptor (with `artifactType` and the annotations, as an index lists it).
 */
export function referrerManifest(subject: Descriptor, artifact: ReferrerArtifact): { bytes: Buffer; descriptor: Descriptor; layer: Descriptor } {
  checkDescriptor(subject);
  const layer = descriptorOf(artifact.layerMediaType, artifact.bytes);
  const manifest: Record<string, unknown> = {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST_MEDIA_TYPE,
    artifactType: artifact.artifactType,
    config: { ...EMPTY_CONFIG_DESCRIPTOR },
    layers: [plain(layer)],
    subject: plain(subject),
  };
  if (artifact.annotations !== undefined && Object.keys(artifact.annotations).length > 0) manifest["annotations"] = { ...artifact.annotations };
  const bytes = canonicalJsonBytes(manifest);
  const descriptor: Descriptor = { ...descriptorOf(OCI_MANIFEST_MEDIA_TYPE, bytes), artifactType: artifact.artifactType };
  if (manifest["annotations"] !== undefined) descriptor.annotations = { ...artifact.annotations };
  return { bytes, descriptor, layer };
}

async function pushIfAbsent(target: Target, desc: Descriptor, bytes: Uint8Array): Promise<void> {
  if (!(await target.exists(desc))) await target.push(desc, bufferStream(bytes));
}

/** The tag-schema index of `subject` and its descriptors (empty when the tag is absent). */
async function readTagSchemaIndex(target: ReadOnlyTarget, subjectDigest: string): Promise<Descriptor[]> {
  let resolved: Descriptor;
  try {
    resolved = await target.resolve(referrersTag(subjectDigest));
  } catch (error) {
    if (isOciError(error, "OCI_NOT_FOUND")) return [];
    throw error;
  }
  if (resolved.mediaType !== OCI_INDEX_MEDIA_TYPE) {
    throw new OciError("OCI_MANIFEST_INVALID", `referrers tag ${referrersTag(subjectDigest)} names a ${resolved.mediaType}, not an OCI image index`);
  }
  const parsed = parseManifest(await fetchManifest(target, resolved), OCI_INDEX_MEDIA_TYPE);
  return parsed.manifests;
}

/**
 * Push `artifact` as a referrer of `subject` (see the module comment).
 * Idempotent: the manifest is deterministic, blobs and manifest already
 * present are not pushed again, an index that lists the referrer is not rewritten.
 * @returns the referrer manifest's descriptor and how it is discoverable.
 * @throws OciError from the target (`OCI_NOT_FOUND` when the subject is absent, `OCI_MANIFEST_INVALID`
 *   when the referrers tag names something that is not an index, HTTP and auth codes); `OCI_ARGUMENT_INVALID`
 *   before anything is pushed when `target` is not a Target; `referrerManifest`'s codes for `subject` and `artifact`.
 */
export async function pushReferrer(target: Target, subject: Descriptor, artifact: ReferrerArtifact): Promise<{ descriptor: Descriptor; source: ReferrersSource }> {
  requireObjectWith(target, "pushReferrer(target, subject, artifact)", "target", "a Target to push to (resolve, fetch, exists, push, tag)", ["resolve", "fetch", "exists", "push", "tag"]);
  checkDescriptor(subject);
  if (!(await target.exists(plain(subject)))) throw new OciError("OCI_NOT_FOUND", `referrer subject ${subject.digest} is not in the repository`);
  const { bytes, descriptor, layer } = referrerManifest(subject, artifact);
  await pushIfAbsent(target, EMPTY_CONFIG_DESCRIPTOR, Buffer.from(EMPTY_CONFIG_BYTES));
  await pushIfAbsent(target, layer, artifact.bytes);
  await pushIfAbsent(target, plain(descriptor), bytes);
  if ((await target.referrers?.(plain(subject))) !== undefined) return { descriptor, source: "api" };
  const listed = await readTagSchemaIndex(target, subject.digest);
  if (!listed.some((d) => d.digest === descriptor.digest)) {
    const index = canonicalJsonBytes({ schemaVersion: 2, mediaType: OCI_INDEX_MEDIA_TYPE, manifests: [...listed, descriptor] });
    const indexDesc = descriptorOf(OCI_INDEX_MEDIA_TYPE, index);
    await pushIfAbsent(target, indexDesc, index);
    await target.tag(indexDesc, referrersTag(subject.digest));
  }
  return { descriptor, source: "tag-schema" };
}

/**
 * The referrers of `subject`, optionally only those of `artifactType`: from
 * the referrers API when the target has one, else from the tag-schema index.
 * `otherTypes` are the listed referrers of another `artifactType`, set aside.
 * @throws OciError `OCI_MANIFEST_INVALID` (a referrers tag that is not an index), HTTP and auth codes;
 *   `OCI_ARGUMENT_INVALID` (`options` with a key other than `artifactType`, or `artifactType` not a non-empty string).
 */
export async function listReferrers(
  target: ReadOnlyTarget,
  subject: Descriptor,
  options: { artifactType?: string } = {},
): Promise<{ descriptors: Descriptor[]; source: ReferrersSource; otherTypes: Descriptor[] }> {
  const call = "listReferrers(target, subject, options)";
  requireOptions(options, call, ["artifactType"]);
  if (options.artifactType !== undefined) requireStringArgument(options.artifactType, call, "options.artifactType", "a media type to keep (or absent for all)");
  checkDescriptor(subject);
  const fromApi = await target.referrers?.(plain(subject));
  const source: ReferrersSource = fromApi === undefined ? "tag-schema" : "api";
  const all = fromApi ?? (await readTagSchemaIndex(target, subject.digest));
  const seen = new Set<string>();
  const otherTypes: Descriptor[] = [];
  const descriptors = all.filter((d) => {
    if (seen.has(d.digest)) return false;
    seen.add(d.digest);
    if (options.artifactType !== undefined && d.artifactType !== options.artifactType) {
      otherTypes.push(d);
      return false;
    }
    return true;
  });
  return { descriptors, source, otherTypes };
}

/**
 * The entries of the referrers tag of `subject` (distribution-spec "Referrers Tag Schema") even when the
 * target answers the referrers API, or undefined when there is no such tag: for explaining what a
 * lookup did not consult. Never used to find referrers.
 * @throws OciError `OCI_MANIFEST_INVALID` (the tag names something that is not an index), HTTP and auth codes.
 */
export async function referrersTagEntries(target: ReadOnlyTarget, subject: Descriptor): Promise<Descriptor[] | undefined> {
  try {
    await target.resolve(referrersTag(subject.digest));
  } catch (error) {
    if (isOciError(error, "OCI_NOT_FOUND")) return undefined;
    throw error;
  }
  return readTagSchemaIndex(target, subject.digest);
}
