/**
 * The options of the library entry points of `src/fetch` (`fetchRelease`, `downloadRelease`,
 * `inspectRelease`, `resolveTagReference`, the fleet verbs), checked before any network or disk work
 * (docs/fetch.md "Library options"). A call from plain JavaScript that passes no object, a misspelt
 * `expect` or a `provenance` without its policy is refused with a code and what was found, never with a
 * TypeError from deep inside, nor after a download. One function per rule, each throwing its own code.
 */
import { ReleaseContractError } from "../contract/errors.js";
import { describeValue, isNpmPackageName } from "../contract/grammar.js";
import { ProvenanceError } from "../contract/provenance-error.js";
import { resolveProvenancePolicy } from "../contract/provenance-policy.js";
import type { ArtifactKind } from "./manifest-checks.js";
import type { ProvenanceCheckOptions } from "./provenance.js";

/** The artifact kinds `expect` takes. */
export const ARTIFACT_KINDS: readonly ArtifactKind[] = Object.freeze(["bundle", "receipt"]);

function invalid(message: string): never {
  throw new ReleaseContractError("POLICY_INVALID", message);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * `options` is an object (not `undefined`, `null`, an array or a primitive).
 * @param call names the entry point, e.g. `fetchRelease`.
 * @param shape the options it takes, e.g. `{ reference, outputDir, repository?, ... }`.
 * @throws ReleaseContractError `POLICY_INVALID` naming the call, the shape and what was found.
 */
export function requireOptionsObject(options: unknown, call: string, shape: string): asserts options is Record<string, unknown> {
  if (!isRecord(options)) invalid(`${call} needs its options as an object ${shape}, found ${describeValue(options)}`);
}

/**
 * `options[name]` is a non-empty string, or absent when `optional`.
 * @param what says what the value is, e.g. `the output directory`.
 * @throws ReleaseContractError `POLICY_INVALID` naming the option and what was found.
 */
export function requireStringOption(options: object, name: string, call: string, what: string, optional = false): void {
  const value = (options as Record<string, unknown>)[name];
  if (optional && value === undefined) return;
  if (typeof value !== "string" || value === "") invalid(`${call} option ${name} must be ${what} (a non-empty string), found ${value === "" ? "an empty string" : describeValue(value)}`);
}

/**
 * `expect` is absent or one of {@link ARTIFACT_KINDS}: a misspelt kind would otherwise reach the manifest
 * check and be echoed as a kind of release.
 * @throws ReleaseContractError `POLICY_INVALID` naming the allowed values.
 */
export function requireArtifactKind(value: unknown, call: string): asserts value is ArtifactKind | undefined {
  if (value === undefined || (ARTIFACT_KINDS as readonly unknown[]).includes(value)) return;
  invalid(`${call} option expect must be ${ARTIFACT_KINDS.map((k) => JSON.stringify(k)).join(" or ")} (the artifact kind to accept; omit it to accept either), found ${describeValue(value)}`);
}

/**
 * `policy` is absent or an object whose `package` is absent or an npm package name and whose `sources` is
 * absent or an object (its `gates` are checked where the release document is verified).
 * @throws ReleaseContractError `POLICY_INVALID` naming the field.
 */
export function requireDownloadPolicy(value: unknown, call: string): void {
  if (value === undefined) return;
  if (!isRecord(value)) invalid(`${call} option policy must be an object { package?, gates?, sources? }, found ${describeValue(value)}`);
  if (value["package"] !== undefined && !isNpmPackageName(value["package"])) invalid(`${call} option policy.package must be an npm package name, found ${describeValue(value["package"])}`);
  if (value["sources"] !== undefined && !isRecord(value["sources"])) invalid(`${call} option policy.sources must be an object { package?, repository?, gates? }, found ${describeValue(value["sources"])}`);
}

/**
 * `provenance` is absent or `{ policy, trustedRoot? }` whose policy is complete and well-formed
 * (`resolveProvenancePolicy`), checked before anything is downloaded.
 * @throws ProvenanceError `PROVENANCE_POLICY_INVALID` (not that shape, or a field of the policy), the key codes
 *   of `resolveProvenancePolicy` (`PROVENANCE_KEY_NOT_PUBLIC`, `PROVENANCE_KEY_INVALID`, `PROVENANCE_KEY_UNSUPPORTED`).
 */
export function requireProvenanceCheck(value: unknown, call: string): asserts value is ProvenanceCheckOptions | undefined {
  if (value === undefined) return;
  const shape = "{ policy: { key } or { owner?, repo?, signerWorkflow?, sourceRef?, certOidcIssuer? }, trustedRoot? }";
  if (!isRecord(value)) throw new ProvenanceError("PROVENANCE_POLICY_INVALID", `${call} option provenance must be ${shape}, found ${describeValue(value)}`);
  const policy = value["policy"];
  if (!isRecord(policy)) {
    throw new ProvenanceError("PROVENANCE_POLICY_INVALID", `${call} option provenance.policy must be an object (who may have signed: a key, or --owner/--repo ...), found ${describeValue(policy)}; expected provenance ${shape}`);
  }
  resolveProvenancePolicy(policy);
}
