/**
 * The strict artifact-manifest check of the layout reader: the `payload`
 * profile of the one schema (src/contract/artifact-manifest.ts, zod). Kept out
 * of `manifest.ts` and the `src/oci` barrel so that the registry transport
 * (resolve, fetch, copy) loads no zod (docs/oci.md "Benchmark"; docs/architecture.md, "Areas");
 * `readLayout` imports it when it runs.
 */
import { artifactManifestProblems, type ArtifactManifest } from "../contract/artifact-manifest.js";
import { EMPTY_CONFIG_DESCRIPTOR, TITLE_ANNOTATION } from "../contract/constants.js";
import { OciError } from "./errors.js";
import { parseJsonObject, type TitledLayer } from "./manifest.js";
import type { Descriptor } from "./target.js";

/**
 * Strict check of an artifact manifest as this kit writes it: the `payload`
 * profile of the one schema (`artifactManifestProblems`, src/contract/artifact-manifest.ts):
 * exact top-level keys, OCI media type, string `artifactType`, the empty config exactly,
 * every layer exactly `{mediaType: application/octet-stream, digest, size >= 1, annotations: {title}}`.
 * @returns `artifactType`, the config descriptor and the titled layers in order.
 * @throws OciError `OCI_MANIFEST_INVALID`.
 */
export function checkArtifactManifest(bytes: Uint8Array): { artifactType: string; config: Descriptor; layers: TitledLayer[] } {
  const json = parseJsonObject(bytes, "OCI manifest");
  const [problem] = artifactManifestProblems(json, "payload");
  if (problem !== undefined) throw new OciError("OCI_MANIFEST_INVALID", `OCI manifest: ${problem.message}`);
  const manifest = json as unknown as ArtifactManifest;
  const layers = manifest.layers.map((l): TitledLayer => {
    const title = l.annotations?.[TITLE_ANNOTATION] as string;
    return { path: title, descriptor: { mediaType: l.mediaType, digest: l.digest, size: l.size, annotations: { [TITLE_ANNOTATION]: title } } };
  });
  return { artifactType: manifest.artifactType, config: { ...EMPTY_CONFIG_DESCRIPTOR }, layers };
}
