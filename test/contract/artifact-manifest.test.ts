import { describe as group, expect, it } from "vitest";
import { artifactManifestProblems, problemAt, type ArtifactManifestPart } from "../../src/contract/artifact-manifest.js";
import type { JsonObject } from "../../src/contract/canonical-json.js";
import { EMPTY_CONFIG_DESCRIPTOR, OCI_MANIFEST_MEDIA_TYPE, RELEASE_ARTIFACT_TYPE, TITLE_ANNOTATION } from "../../src/contract/constants.js";
import * as contract from "../../src/contract/index.js";

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

group("arguments of another shape are POLICY_INVALID, never a TypeError (hermes-plugin-kit/contract)", () => {
  const layer = { path: "release-manifest.json", descriptor: { digest: digest("1"), size: 10 } };

  it("passing: artifactManifestObject builds the payload manifest; problems and problemAt answer", () => {
    expect(contract.artifactManifestProblems(contract.artifactManifestObject(RELEASE_ARTIFACT_TYPE, [layer]) as JsonObject, "payload")).toEqual([]);
    expect(contract.problemAt([], "layer", 0)).toBeUndefined();
  });

  it.each<[string, () => unknown, string]>([
    // It threw a bare TypeError (layers.map is not a function).
    ["artifactManifestObject(t, 5)", () => contract.artifactManifestObject("a/b", 5 as never), "artifactManifestObject(artifactType, layers): layers must be an array of { path, descriptor }, found number 5"],
    ["artifactManifestObject(t, { layers })", () => contract.artifactManifestObject("a/b", { 0: layer } as never), "artifactManifestObject(artifactType, layers): layers must be an array of { path, descriptor }, found "],
    ["artifactManifestObject(t, [null])", () => contract.artifactManifestObject("a/b", [null] as never), "artifactManifestObject(artifactType, layers): layers[0] must be { path, descriptor: { digest, size } } (a non-empty path, a sha256:<64 hex> digest, a size in bytes), found null"],
    ["artifactManifestObject(t, [{ path }])", () => contract.artifactManifestObject("a/b", [{ path: "p" }] as never), "layers[0] must be { path, descriptor: { digest, size } } (a non-empty path, a sha256:<64 hex> digest, a size in bytes), found descriptor nothing"],
    ["artifactManifestObject(t, [size -1])", () => contract.artifactManifestObject("a/b", [{ ...layer, descriptor: { ...layer.descriptor, size: -1 } }]), "found size number -1"],
    ["artifactManifestObject(5, [])", () => contract.artifactManifestObject(5 as never, []), "artifactManifestObject(artifactType, layers): artifactType must be a media type (a non-empty string), found number 5"],
    ["artifactManifestProblems(null, payload)", () => contract.artifactManifestProblems(null as never, "payload"), "artifactManifestProblems(json, profile): json must be the parsed manifest (a JSON object, as parseStrictJson returns it), found null"],
    ["artifactManifestProblems([], payload)", () => contract.artifactManifestProblems([] as never, "payload"), "json must be the parsed manifest (a JSON object, as parseStrictJson returns it), found an array"],
    // A misspelt profile checked a payload manifest without the payload's layer rules.
    ["artifactManifestProblems(json, 'referer')", () => contract.artifactManifestProblems(payload(), "referer" as never), 'artifactManifestProblems(json, profile): profile must be "payload" or "referrer", found "referer"'],
    ["problemAt(5, document)", () => contract.problemAt(5 as never, "document"), "problemAt(problems, part, index): problems must be the array artifactManifestProblems returned, found number 5"],
    // An unknown part answered "no problem".
    ["problemAt(problems, 'layers ')", () => contract.problemAt([], "layers " as never), 'problemAt(problems, part, index): part must be one of "document", "artifactType", "config", "subject", "annotations", "layers", "layer", "layer-annotations", found "layers "'],
    ["problemAt(problems, layer, -1)", () => contract.problemAt([], "layer", -1), "problemAt(problems, part, index): index must be a layer's index (a whole number >= 0) or absent, found number -1"],
  ])("%s", (_name, call, message) => {
    expect(call).toThrowWithCode("POLICY_INVALID");
    expect(call).toThrow(message);
    expect(call).not.toThrow(TypeError);
  });
});
