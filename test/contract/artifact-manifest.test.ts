import { describe as group, expect, it } from "vitest";
import { artifactManifestProblems, problemAt, type ArtifactManifestPart } from "../../src/contract/artifact-manifest.js";
import type { JsonObject } from "../../src/contract/canonical-json.js";
import { EMPTY_CONFIG_DESCRIPTOR, OCI_MANIFEST_MEDIA_TYPE, RELEASE_ARTIFACT_TYPE, TITLE_ANNOTATION } from "../../src/contract/constants.js";

const digest = (fill: string) => "sha256:" + fill.repeat(64);

function payload(): JsonObject {
  return {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST_MEDIA_TYPE,
    artifactType: RELEASE_ARTIFACT_TYPE,
    config: { ...EMPTY_CONFIG_DESCRIPTOR },
    layers: [{ mediaType: "application/octet-stream", digest: digest("1"), size: 10, annotations: { [TITLE_ANNOTATION]: "release-manifest.json" } }],
  };
}

function referrer(): JsonObject {
  return {
    ...payload(),
    artifactType: "application/vnd.dev.sigstore.bundle.v0.3+json",
    layers: [{ mediaType: "application/vnd.dev.sigstore.bundle.v0.3+json", digest: digest("2"), size: 100 }],
    subject: { mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: digest("3"), size: 500 },
    annotations: { "org.opencontainers.image.created": "2026-01-01T00:00:00Z" },
  };
}

function firstPart(json: JsonObject, profile: "payload" | "referrer"): ArtifactManifestPart | undefined {
  return artifactManifestProblems(json, profile)[0]?.part;
}

group("artifactManifestProblems", () => {
  it("accepts the payload and the referrer shape this project writes", () => {
    expect(artifactManifestProblems(payload(), "payload")).toEqual([]);
    expect(artifactManifestProblems(referrer(), "referrer")).toEqual([]);
  });

  it.each<[string, (m: any) => void, "payload" | "referrer", ArtifactManifestPart]>([
    ["a subject on a payload artifact", (m) => (m.subject = { mediaType: OCI_MANIFEST_MEDIA_TYPE, digest: digest("3"), size: 5 }), "payload", "document"],
    ["annotations on a payload artifact", (m) => (m.annotations = {}), "payload", "document"],
    ["a referrer without subject", (m) => delete m.subject, "referrer", "document"],
    ["an unknown key", (m) => (m.extra = 1), "referrer", "document"],
    ["schemaVersion 1", (m) => (m.schemaVersion = 1), "payload", "document"],
    ["an index media type", (m) => (m.mediaType = "application/vnd.oci.image.index.v1+json"), "payload", "document"],
    ["an empty artifactType", (m) => (m.artifactType = ""), "payload", "artifactType"],
    ["a non-empty config", (m) => (m.config.size = 3), "payload", "config"],
    ["a subject without digest", (m) => delete m.subject.digest, "referrer", "subject"],
    ["a non-string annotation", (m) => (m.annotations.x = 1), "referrer", "annotations"],
    ["layers not an array", (m) => (m.layers = {}), "payload", "layers"],
    ["a layer of size 0", (m) => (m.layers[0].size = 0), "payload", "layer"],
    ["a payload layer of another media type", (m) => (m.layers[0].mediaType = "text/plain"), "payload", "layer"],
    ["a payload layer without annotations", (m) => delete m.layers[0].annotations, "payload", "layer"],
    ["a payload layer with a second annotation", (m) => (m.layers[0].annotations.x = "y"), "payload", "layer-annotations"],
    ["a referrer layer with a non-string annotation", (m) => (m.layers[0].annotations = { x: 1 }), "referrer", "layer-annotations"],
  ])("refuses %s", (_label, mutate, profile, part) => {
    const m = profile === "payload" ? payload() : referrer();
    mutate(m);
    expect(firstPart(m, profile)).toBe(part);
  });

  it("names the layer a problem is in", () => {
    const m = payload() as any;
    m.layers.push({ ...m.layers[0], digest: "sha256:short" });
    const problems = artifactManifestProblems(m, "payload");
    expect(problemAt(problems, "layer", 0)).toBeUndefined();
    expect(problemAt(problems, "layer", 1)?.index).toBe(1);
  });
});
