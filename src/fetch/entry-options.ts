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
  requireKnownOptions(value, ["package", "gates", "sources"], call, "policy key");
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
  const unknown = Object.keys(value).filter((key) => key !== "policy" && key !== "trustedRoot");
  if (unknown.length > 0) throw new ProvenanceError("PROVENANCE_POLICY_INVALID", `${call} option provenance has ${unknown.map((k) => JSON.stringify(k)).join(", ")}, which it does not read; expected provenance ${shape}`);
  const policy = value["policy"];
  if (!isRecord(policy)) {
    throw new ProvenanceError("PROVENANCE_POLICY_INVALID", `${call} option provenance.policy must be an object (who may have signed: a key, or --owner/--repo ...), found ${describeValue(policy)}; expected provenance ${shape}`);
  }
  resolveProvenancePolicy(policy);
}

/** The options of `downloadRelease` / `inspectRelease` (`DownloadOptions`), by name. */
export const DOWNLOAD_OPTION_KEYS: readonly string[] = ["reference", "repository", "plainHttp", "credentials", "expect", "policy", "progress", "progressDelayMs", "progressLines", "tmpDir", "signal", "env", "openTarget", "requirePrivate", "onManifest"];
/** The options `fetchRelease` adds (`FetchReleaseOptions`). */
export const FETCH_OPTION_KEYS: readonly string[] = [...DOWNLOAD_OPTION_KEYS, "outputDir", "provenance", "replace", "onCommit"];
/**
 * What `downloadRelease` and `inspectRelease` accept: their own options and those of the entry points that pass
 * theirs through (`fetchRelease`, `verifyFleetLock`, the provenance check's `receipt`). A key outside this set is
 * a misspelling, refused; one inside it that a call does not use is ignored, as a pass-through must.
 */
export const PASS_THROUGH_OPTION_KEYS: readonly string[] = [...DOWNLOAD_OPTION_KEYS, "outputDir", "provenance", "replace", "onCommit", "lockPath", "installedDir", "trustedRoot", "credentialsFor", "receipt"];
/** The options of `verifyFleetLock` (`FleetVerifyOptions`). */
export const FLEET_VERIFY_OPTION_KEYS: readonly string[] = [...DOWNLOAD_OPTION_KEYS.filter((k) => !["reference", "repository", "expect"].includes(k)), "lockPath", "installedDir", "trustedRoot", "credentialsFor"];

/**
 * Every own key of `options` is one `call` reads: a misspelt option (`provenanse`, `installDir`) would
 * otherwise be ignored and check less than asked, silently.
 * @throws ReleaseContractError `POLICY_INVALID` naming the key, the nearest known one and the known keys.
 */
export function requireKnownOptions(options: object, known: readonly string[], call: string, what = "option"): void {
  const unknown = Object.keys(options).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  const first = unknown[0] as string;
  const near = known.find((key) => key.toLowerCase() === first.toLowerCase() || closeSpelling(key, first));
  invalid(
    `${call} ${what}${unknown.length === 1 ? "" : "s"} ${unknown.map((k) => JSON.stringify(k)).join(", ")} ${unknown.length === 1 ? "is" : "are"} not one it reads (it reads ${known.join(", ")})${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}; an ignored option would check less than you asked`,
  );
}

/** True when `a` and `b` differ by at most two single-character edits (a misspelling). */
function closeSpelling(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 2) return false;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1) row.push(Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1)));
    previous = row;
  }
  return (previous[b.length] as number) <= 2;
}
