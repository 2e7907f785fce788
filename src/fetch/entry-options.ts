/**
 * The options of the library entry points of `src/fetch` (`fetchRelease`, `downloadRelease`,
 * `inspectRelease`, `resolveTagReference`, the fleet verbs), checked before any network or disk work
 * (docs/fetch.md "Library options"). A call from plain JavaScript that passes no object, a misspelt
 * `expect` or a `provenance` without its policy is refused with a code and what was found, never with a
 * TypeError from deep inside, nor after a download. One function per rule, each throwing its own code.
 */
import { ReleaseContractError } from "../contract/errors.js";
import { describeValue, isNpmPackageName, nearestName, NPM_PACKAGE_NAME_RULE } from "../contract/grammar.js";
import { parseRepository, type Repository } from "../contract/reference.js";
import { describeNonPlainObject, isAbortSignal, isPlainObject, snapshotOptions } from "../contract/plain-options.js";
import { ProvenanceError } from "../contract/provenance-error.js";
import { resolveProvenancePolicy } from "../contract/provenance-policy.js";
import { requireGatePins } from "../contract/policy.js";
import type { ArtifactKind } from "./manifest-checks.js";
import type { ProvenanceCheckOptions } from "./provenance.js";

/** The artifact kinds `expect` takes. */
export const ARTIFACT_KINDS: readonly ArtifactKind[] = Object.freeze(["bundle", "receipt"]);

function invalid(message: string): never {
  throw new ReleaseContractError("POLICY_INVALID", message);
}

/** `describeValue`, saying what a non-plain object is as `describeNonPlainObject` does (src/contract/plain-options.ts). */
export function describeOption(value: unknown): string {
  if (value !== null && typeof value === "object" && !Array.isArray(value) && !isPlainObject(value)) return describeNonPlainObject(value);
  return describeValue(value);
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
  let record: boolean;
  try {
    record = isRecord(options);
  } catch (error) {
    // A revoked Proxy throws on any look at it (Array.isArray): a coded refusal, never the engine's TypeError.
    return invalid(`${call} options could not be read as data (${(error as Error)?.message ?? String(error)}); give them as an object ${shape}`);
  }
  if (!record) invalid(`${call} needs its options as an object ${shape}, found ${describeValue(options)}`);
}

/**
 * The options a library call reads, as a copy made once of the own enumerable data properties of the plain
 * object given (src/contract/plain-options.ts): a getter, a value inherited through a prototype, a non-enumerable
 * or symbol key, an own `__proto__`, a class instance are refused, so that what is checked is what is used.
 * @throws ReleaseContractError `POLICY_INVALID` naming the option and what it is.
 */
export function snapshotEntryOptions<T extends object>(options: T, call: string): T {
  return snapshotOptions(options, `${call} options`, invalid);
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
 * `value` is an npm package name ({@link NPM_PACKAGE_NAME_RULE}): a package the caller pins (`package` of
 * `addPluginToLock` and `verifyReferenceProvenance`, `policy.package`), checked before anything is read, so that a
 * wrong pin is refused as the caller's, never blamed on the document read later.
 * @param label names the option, e.g. `addPluginToLock option package`.
 * @throws ReleaseContractError `POLICY_INVALID` naming the option, the value, the rule and, when lowercasing is
 *   the fix, the name to give.
 */
export function requirePackageName(value: unknown, label: string): asserts value is string {
  if (isNpmPackageName(value)) return;
  const lower = typeof value === "string" ? value.toLowerCase() : undefined;
  const fix = lower !== undefined && isNpmPackageName(lower) ? `; fix: give ${JSON.stringify(lower)} (npm names are lowercase)` : "";
  invalid(`${label} must be an npm package name (${NPM_PACKAGE_NAME_RULE}), found ${value === "" ? "an empty string" : describeValue(value)}${fix}`);
}

/**
 * A `Repository` argument (the result of `parseRepository`) is one: read again from its `repository` string, so
 * that a hand-built object whose fields disagree (a `registry` that is not the one its `repository` names) is
 * refused rather than sending anything to another host.
 * @returns the repository as `parseRepository` reads it.
 * @throws ReleaseContractError `POLICY_INVALID` (not a parsed repository, or fields that disagree), the codes
 *   of `parseRepository` (`REPOSITORY_INVALID`, ...).
 */
export function requireRepositoryArgument(value: unknown, call: string): Repository {
  if (!isRecord(value) || typeof value["repository"] !== "string") {
    invalid(`${call} needs the repository as parseRepository returns it (an object { kind, repository, ... }), found ${typeof value === "string" ? `the string ${describeValue(value)}; fix: pass parseRepository(${describeValue(value)})` : describeValue(value)}`);
  }
  const parsed = parseRepository(value["repository"]);
  for (const [key, field] of Object.entries(parsed)) {
    if (value[key] !== field) invalid(`${call} was given a repository whose ${key} is ${describeValue(value[key])} while its repository ${describeValue(parsed.repository)} says ${describeValue(field)}; fix: pass parseRepository(${describeValue(parsed.repository)})`);
  }
  return parsed;
}

/**
 * An environment argument (`env`, default `process.env`) is an object of strings (or `undefined` values).
 * Values are never echoed: an environment holds secrets.
 * @throws ReleaseContractError `POLICY_INVALID` naming the first variable that is not a string.
 */
export function requireEnvironmentArgument(value: unknown, call: string): asserts value is Readonly<Record<string, string | undefined>> {
  if (!isRecord(value)) invalid(`${call} needs env as an object of environment variables (like process.env), found ${value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`}`);
  for (const [name, entry] of Object.entries(value)) {
    if (entry !== undefined && typeof entry !== "string") invalid(`${call} env variable ${describeValue(name)} must be a string, found a ${entry === null ? "null" : typeof entry}`);
  }
}

/**
 * `CredentialSourceOptions`: `{ registryConfig?: non-empty string, onNote?: function }`, nothing else (a
 * misspelt `registryConfig` would read the default Docker config instead of the file named).
 * @throws ReleaseContractError `POLICY_INVALID`.
 */
export function requireCredentialSourceOptions(value: unknown, call: string): void {
  if (!isRecord(value)) invalid(`${call} options must be an object { registryConfig?, onNote? }, found ${describeValue(value)}`);
  requireKnownOptions(value, ["registryConfig", "onNote"], call);
  requireOptionKinds(value, { registryConfig: "string", onNote: "function" }, call);
}

/**
 * A positional argument `name` of `call` is a non-empty string.
 * @throws ReleaseContractError `POLICY_INVALID` naming the argument and what was found.
 */
export function requireStringArgument(value: unknown, call: string, name: string, what: string): asserts value is string {
  if (typeof value !== "string" || value === "") invalid(`${call} argument ${name} must be ${what} (a non-empty string), found ${value === "" ? "an empty string" : describeValue(value)}`);
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
  if (!isPlainObject(value)) invalid(`${call} option policy must be an object { package?, gates?, sources? }, found ${describeOption(value)}`);
  requireKnownOptions(value, ["package", "gates", "sources"], call, "policy key");
  if (value["package"] !== undefined) requirePackageName(value["package"], `${call} option policy.package`);
  if (value["gates"] !== undefined) requireGatePins(value["gates"], `${call} option policy.gates`);
  const sources = value["sources"];
  if (sources === undefined) return;
  if (!isPlainObject(sources)) invalid(`${call} option policy.sources must be an object { package?, repository?, gates? }, found ${describeOption(sources)}`);
  requireKnownOptions(sources, ["package", "repository", "gates"], call, "policy.sources key");
  requireOptionKinds(sources, { package: "string", repository: "string", gates: "string" }, `${call} policy.sources`);
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
  if (!isPlainObject(value)) throw new ProvenanceError("PROVENANCE_POLICY_INVALID", `${call} option provenance must be ${shape}, found ${describeOption(value)}`);
  const unknown = Object.keys(value).filter((key) => key !== "policy" && key !== "trustedRoot");
  if (unknown.length > 0) {
    const near = nearestName(unknown[0] as string, ["policy", "trustedRoot"]);
    throw new ProvenanceError("PROVENANCE_POLICY_INVALID", `${call} option provenance has ${unknown.map((k) => JSON.stringify(k)).join(", ")}, which it does not read${near === undefined ? "" : ` (did you mean ${JSON.stringify(near)}?)`}; expected provenance ${shape}`);
  }
  const policy = value["policy"];
  if (!isPlainObject(policy)) {
    throw new ProvenanceError("PROVENANCE_POLICY_INVALID", `${call} option provenance.policy must be an object (who may have signed: a key, or --owner/--repo ...), found ${describeValue(policy)}; expected provenance ${shape}`);
  }
  resolveProvenancePolicy(policy);
  // The trusted root's kind is checked and worded where every option's is ({@link requireOptionKinds}), under this code.
  const root = kindProblem("provenance.trustedRoot", value["trustedRoot"], "trustedRoot");
  if (root !== undefined) throw new ProvenanceError("PROVENANCE_POLICY_INVALID", `${call} option ${root}`);
}

/**
 * The options of `downloadRelease` / `inspectRelease` (`DownloadOptions`), by name. An entry point that passes
 * its options on to them passes only these ({@link pickOptions}): each call checks exactly the keys it reads.
 */
export const DOWNLOAD_OPTION_KEYS: readonly string[] = ["reference", "repository", "plainHttp", "credentials", "expect", "policy", "progress", "progressDelayMs", "progressLines", "tmpDir", "signal", "env", "openTarget", "requirePrivate", "onManifest"];
/** The options `fetchRelease` adds (`FetchReleaseOptions`). */
export const FETCH_OPTION_KEYS: readonly string[] = [...DOWNLOAD_OPTION_KEYS, "outputDir", "provenance", "replace", "onCommit"];
/** The options of `resolveTagReference` (`ResolveOptions`). */
export const RESOLVE_OPTION_KEYS: readonly string[] = ["plainHttp", "credentials", "env", "openTarget", "requirePrivate"];
/** The options of `verifyReferenceProvenance` (`VerifyReferenceOptions`). */
export const VERIFY_REFERENCE_OPTION_KEYS: readonly string[] = ["reference", "repository", "plainHttp", "credentials", "env", "openTarget", "requirePrivate", "provenance", "receipt", "package", "gatesFor"];
/** The options of `verifyFleetLock` (`FleetVerifyOptions`). */
export const FLEET_VERIFY_OPTION_KEYS: readonly string[] = [...DOWNLOAD_OPTION_KEYS.filter((k) => !["reference", "repository", "expect"].includes(k)), "lockPath", "installedDir", "trustedRoot", "credentialsFor"];
/** The options of the registry check of a new pin (`FleetPinCheckOptions`: `registry` of `addPluginToLock` / `upgradePluginInLock`). */
export const PIN_CHECK_OPTION_KEYS: readonly string[] = FLEET_VERIFY_OPTION_KEYS.filter((key) => key !== "lockPath" && key !== "installedDir");

/**
 * Every own key of `options` is one `call` reads: a misspelt option (`provenanse`, `installDir`) would
 * otherwise be ignored and check less than asked, silently.
 * @throws ReleaseContractError `POLICY_INVALID` naming the key, the nearest known one and the known keys.
 */
export function requireKnownOptions(options: object, known: readonly string[], call: string, what = "option"): void {
  const unknown = Object.keys(options).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  const first = unknown[0] as string;
  const near = nearestName(first, known);
  invalid(
    `${call} ${what}${unknown.length === 1 ? "" : "s"} ${unknown.map((k) => JSON.stringify(k)).join(", ")} ${unknown.length === 1 ? "is" : "are"} not one it reads (it reads ${known.join(", ")})${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}; an ignored option would check less than you asked`,
  );
}

/**
 * The own options of `options` whose names are in `keys`: what a call passes on to a callee that reads only
 * those (the callee refuses any other key as a misspelling).
 */
export function pickOptions<T extends object>(options: T, keys: readonly string[]): Partial<T> {
  const picked: Record<string, unknown> = {};
  for (const key of keys) if (Object.prototype.hasOwnProperty.call(options, key)) picked[key] = (options as Record<string, unknown>)[key];
  return picked as Partial<T>;
}

/** What an option must be, for {@link requireOptionKinds}. */
export type OptionKind = "boolean" | "string" | "number" | "function" | "object" | "record" | "signal" | "stream" | "trustedRoot";

const KIND_WORDS: Record<OptionKind, string> = {
  boolean: "true or false",
  string: "a non-empty string",
  number: "a finite number >= 0",
  function: "a function",
  object: "an object",
  record: "an object (like process.env)",
  signal: "an AbortSignal (e.g. new AbortController().signal: a boolean aborted, addEventListener and removeEventListener)",
  stream: "a writable stream or null",
  trustedRoot: "a checked trusted root { json, counts } (parseTrustedRoot of the file's bytes)",
};

function hasKind(value: unknown, kind: OptionKind): boolean {
  switch (kind) {
    case "boolean":
      return typeof value === "boolean";
    case "string":
      return typeof value === "string" && value !== "";
    case "number":
      return typeof value === "number" && Number.isFinite(value) && value >= 0;
    case "function":
      return typeof value === "function";
    case "object":
      return isPlainObject(value);
    case "record":
      return isRecord(value);
    case "signal":
      // The transport's rule (src/oci/arguments.ts): a signal this call accepts is one every layer under it accepts.
      return isAbortSignal(value);
    case "stream":
      return value === null || (typeof value === "object" && typeof (value as { write?: unknown }).write === "function");
    case "trustedRoot":
      return isPlainObject(value) && isRecord(value["json"]) && isRecord(value["counts"]);
  }
}

/**
 * Each option of `kinds` that `options` gives (not `undefined`) has that kind: `plainHttp: "yes"` would
 * otherwise be read as false, a `signal` that is no AbortSignal would never stop the call, a `tmpDir` number
 * would fail deep inside with a TypeError.
 * @throws ReleaseContractError `POLICY_INVALID` naming the option, the kind expected and what was found.
 */
export function requireOptionKinds(options: object, kinds: Readonly<Record<string, OptionKind>>, call: string): void {
  for (const [name, kind] of Object.entries(kinds)) {
    const problem = kindProblem(name, (options as Record<string, unknown>)[name], kind);
    if (problem !== undefined) invalid(`${call} option ${problem}`);
  }
}

/** Why the option `name` given `value` is not of `kind` (`<name> must be ..., found ...`), or undefined (absent or of that kind). */
function kindProblem(name: string, value: unknown, kind: OptionKind): string | undefined {
  if (value === undefined || hasKind(value, kind)) return undefined;
  // A value that may hold a secret (credentials, an environment) is described by its type only.
  const found = SECRET_OPTIONS.has(name)
    ? value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? describeOption(value) : `a ${typeof value}`
    : value === "" ? "an empty string" : describeOption(value);
  return `${name} must be ${KIND_WORDS[kind]}, found ${found}`;
}

/**
 * The registry options of a fleet check (`verifyFleetLock`'s, or `registry` of `addPluginToLock` /
 * `upgradePluginInLock`, named `what`): known keys only, each of its kind, a well-formed `policy`.
 * @throws ReleaseContractError `POLICY_INVALID` naming the option.
 */
export function requireFleetRegistryOptions(options: unknown, known: readonly string[], call: string, what = "option"): void {
  if (!isPlainObject(options)) invalid(`${call} ${what} must be an object { plainHttp?, credentials?, credentialsFor?, trustedRoot?, signal?, ... }, found ${describeOption(options)}`);
  requireKnownOptions(options, known, call, what);
  requireOptionKinds(options, FLEET_REGISTRY_OPTION_KINDS, call);
  requireDownloadPolicy(options["policy"], call);
}

/** Options whose values are never echoed in a message. */
const SECRET_OPTIONS: ReadonlySet<string> = new Set(["credentials", "env"]);

/** The kinds of the `DownloadOptions` checked by {@link requireOptionKinds} (`reference`, `expect`, `policy` have their own checks). */
export const DOWNLOAD_OPTION_KINDS: Readonly<Record<string, OptionKind>> = Object.freeze({
  repository: "string",
  plainHttp: "boolean",
  credentials: "object",
  progress: "stream",
  progressDelayMs: "number",
  progressLines: "boolean",
  tmpDir: "string",
  signal: "signal",
  env: "record",
  openTarget: "function",
  requirePrivate: "function",
  onManifest: "function",
});

/** The kinds of a fleet check's registry options ({@link requireFleetRegistryOptions}). */
const FLEET_REGISTRY_OPTION_KINDS: Readonly<Record<string, OptionKind>> = Object.freeze({
  ...Object.fromEntries(Object.entries(DOWNLOAD_OPTION_KINDS).filter(([key]) => key !== "repository")),
  credentialsFor: "function",
  trustedRoot: "trustedRoot",
});
