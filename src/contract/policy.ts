/**
 * Release policy: what a tested manifest or receipt must match, passed in as
 * data (as sigstore-js passes a verification policy) instead of flags. This
 * module is the one place policy is resolved (docs/fetch.md, what a consumer pins;
 * docs/release-build.md "Gate commands"):
 *
 * - a **producer** (the release steps) reads its own checkout's package.json:
 *   {@link policyFromPackageJson} (`name`, `hermesPluginKit.repository`,
 *   `hermesPluginKit.gates`, `hermesPluginKit.install`);
 * - a **consumer** gets expectations only from what it pins (the reference,
 *   `--repository`, `--package`, `--expect-gate`, a fleet lock) or from a
 *   local policy file it names explicitly (`--policy package.json`):
 *   {@link resolveConsumerExpectations}, completed per document by
 *   {@link policyForDocument}; the release's own verified bytes declare the
 *   gates that ran ({@link gatesDeclaredBy} on the tarball's package.json,
 *   checked by {@link checkDeclaredGates}).
 *
 * Every expectation carries the place it came from, and errors name it.
 */
import { ReleaseContractError } from "./errors.js";
import { readRegularFile } from "./fs-async.js";
import { describeList, describeValue, isNpmPackageName, nearestName } from "./grammar.js";
import { isPlainObject, plainObjectProblem, snapshotOptions } from "./plain-options.js";
import { parseReference, parseRepository } from "./reference.js";
import { parseStrictJson } from "./canonical-json.js";
import { installTimeDeclaredBy } from "./install-time.js";

/** The four test gates whose command is recorded in evidence. */
export const TEST_GATES = ["unit", "public_contract", "host_contract", "build_metadata"] as const;
/** A test gate name. */
export type TestGate = (typeof TEST_GATES)[number];
/** All five evidence keys (the four test gates plus `workflow`). */
export const EVIDENCE_KEYS = [...TEST_GATES, "workflow"] as const;

/** The command each test gate must have run, exactly. */
export type GateCommands = Record<TestGate, string>;

/**
 * Default gate commands: npm scripts, so a plugin project needs no other
 * tool (`hermes-plugin-kit init` writes `test`, `build` and `doctor` scripts).
 */
export const DEFAULT_GATE_COMMANDS: Readonly<GateCommands> = Object.freeze({
  unit: "npm test",
  public_contract: "npm run doctor -- --no-call",
  host_contract: "npm run doctor",
  build_metadata: "npm run build",
});

/** Default install command: what makes a restored checkout runnable before its gates. */
export const DEFAULT_INSTALL_COMMAND = "npm ci";

/** Where each expectation of a policy came from (named in error messages). */
export interface PolicySources {
  /** e.g. `--package`, `the release's own package name`. */
  package?: string;
  /** e.g. `--repository`, `the pinned reference`, `package.json hermesPluginKit.repository (--policy)`. */
  repository?: string;
  /** e.g. `--expect-gate`, `the fleet lock`, `package.json hermesPluginKit.gates of the checkout`. */
  gates?: string;
}

/** What release documents are checked against. */
export interface ReleasePolicy {
  /** npm package name, e.g. `hermes-plugin-kit`. */
  package: string;
  /** The one registry repository allowed, e.g. `ghcr.io/owner/name` or `oci-layout:/srv/store`. */
  registryRepository: string;
  /**
   * Pinned gate commands: a gate listed here must have run exactly this
   * command; a gate not listed may have run any non-empty command (it must
   * still have passed on `source_sha`).
   */
  gates: Partial<GateCommands>;
  /** Where the expectations came from. */
  sources?: PolicySources;
  /**
   * Install-time behaviours the releasing package declares
   * (`hermesPluginKit.installTime`, see `install-time.ts`); absent = none.
   * Only the producer's release steps read it.
   */
  installTime?: readonly string[];
}

/** The policy a releasing package declares for itself (producer side): every gate and the install command. */
export interface PackagePolicy extends ReleasePolicy {
  gates: GateCommands;
  /** `hermesPluginKit.install` (default {@link DEFAULT_INSTALL_COMMAND}): run in the restored checkout before the gates. */
  install: string;
  /**
   * `hermesPluginKit.provenance.key`: repository-relative path of the PEM public key the release's
   * attestation must verify with (see {@link provenanceKeyDeclaredBy}); absent = the policy names no signing key.
   */
  provenanceKey?: string;
}

function invalid(message: string): never {
  throw new ReleaseContractError("POLICY_INVALID", message);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function requireCommand(value: unknown, field: string): string {
  if (typeof value !== "string" || value.trim().length === 0 || value.length > 1000 || /[\0\r\n]/.test(value)) {
    invalid(`${field} must be a non-empty one-line command string, found ${describeValue(value)}`);
  }
  return value;
}

/**
 * Gate pins given to the library (`ReleasePolicy.gates`, `ConsumerPins.gates`, `FleetAddOptions.gates`): an
 * object whose own keys are gate names ({@link TEST_GATES}) and whose values are one-line commands. A misspelt
 * gate would pin nothing, so it is refused with the nearest name, as `--expect-gate` refuses it.
 * It is plain data as every option is ({@link plainObjectProblem}: no Map, class instance, inherited entry, getter,
 * hidden or symbol key, own `__proto__`).
 * @param field names the argument in the message (e.g. `policy.gates`).
 * @throws ReleaseContractError `POLICY_INVALID` naming the key or value.
 */
export function requireGatePins(gates: unknown, field: string): Partial<GateCommands> {
  // A Map, a class instance or inherited entries would pin nothing the check sees; a getter could answer twice.
  const problem = plainObjectProblem(gates, field);
  if (problem !== undefined) invalid(`${problem}; expected the gate commands to pin as an object literal { ${TEST_GATES.map((g) => `${g}?`).join(", ")} }`);
  for (const [gate, command] of Object.entries(gates as Record<string, unknown>)) {
    if (!(TEST_GATES as readonly string[]).includes(gate)) {
      const near = nearestName(gate, TEST_GATES);
      invalid(`${field} names unknown gate ${describeValue(gate)} (expected one of ${TEST_GATES.join(", ")}${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}); a misspelt gate would pin nothing`);
    }
    requireCommand(command, `${field}.${gate}`);
  }
  return gates as Partial<GateCommands>;
}

/** The one message of a `hermesPluginKit` section that is not an object (a string, a number, an array, null). */
function kitSectionProblem(section: unknown, origin: string): string {
  return `${origin} hermesPluginKit must be an object ({ repository, gates, ... }), found ${describeValue(section)}; fix: write the section as an object in ${origin}`;
}

/**
 * The gate commands a package.json declares: `hermesPluginKit.gates` over
 * {@link DEFAULT_GATE_COMMANDS}.
 * @param origin names the file in error messages.
 * @throws ReleaseContractError `POLICY_INVALID` naming the field (a `hermesPluginKit` or `gates` that is no object,
 *   an unknown gate with the gate it meant); also when `pkg` is no object (a parsed package.json) or `origin` no string.
 */
export function gatesDeclaredBy(pkg: unknown, origin = "package.json"): GateCommands {
  if (!isRecord(pkg)) invalid(`gatesDeclaredBy(pkg, origin): pkg must be a parsed package.json (an object), found ${describeValue(pkg)}`);
  if (typeof origin !== "string") invalid(`gatesDeclaredBy(pkg, origin): origin must name the file (a string), found ${describeValue(origin)}`);
  const section = pkg["hermesPluginKit"];
  // A section of another shape is refused, never read as "no section" (that would give the default gates).
  if (section !== undefined && !isRecord(section)) invalid(kitSectionProblem(section, origin));
  const declared = isRecord(section) ? section["gates"] : undefined;
  const gates: GateCommands = { ...DEFAULT_GATE_COMMANDS };
  if (declared === undefined) return gates;
  if (!isRecord(declared)) invalid(`${origin} hermesPluginKit.gates must be an object of gate commands ({ ${TEST_GATES.join(", ")} }), found ${describeValue(declared)}`);
  for (const [key, value] of Object.entries(declared)) {
    if (!(TEST_GATES as readonly string[]).includes(key)) {
      const near = nearestName(key, TEST_GATES);
      invalid(`${origin} hermesPluginKit.gates has unknown gate ${describeValue(key)} (expected one of ${TEST_GATES.join(", ")})${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}`);
    }
    gates[key as TestGate] = requireCommand(value, `${origin} hermesPluginKit.gates.${key}`);
  }
  return gates;
}

/**
 * The signing key a package's release policy names: `hermesPluginKit.provenance.key`, the path of a
 * PEM public key inside the repository (relative, `/`-separated, no `.`/`..` segment, at most 512
 * characters), or `undefined` when there is no `provenance` section. `provenance` holds `key` only.
 * docs/provenance.md, "release run and the policy's key".
 * @throws ReleaseContractError `POLICY_INVALID` naming the field.
 */
export function provenanceKeyDeclaredBy(kit: Record<string, unknown>, origin = "package.json"): string | undefined {
  const section = kit["provenance"];
  if (section === undefined) return undefined;
  if (!isRecord(section)) invalid(`${origin} hermesPluginKit.provenance must be an object holding key, found ${describeValue(section)}`);
  for (const field of Object.keys(section)) {
    if (field !== "key") invalid(`${origin} hermesPluginKit.provenance has unknown field ${describeValue(field)} (expected key${nearestName(field, ["key"]) === undefined ? "" : `; did you mean "key"?`})`);
  }
  const key = section["key"];
  const segments = typeof key === "string" ? key.split("/") : [];
  if (typeof key !== "string" || key.length === 0 || key.length > 512 || /[\0\\]/.test(key) || segments.some((part) => part === "" || part === "." || part === "..")) {
    invalid(`${origin} hermesPluginKit.provenance.key must be the repository-relative path of the release's PEM public key (e.g. "keys/release.pub"), found ${describeValue(key)}`);
  }
  return key;
}

/**
 * Derive a releasing package's own policy from its parsed package.json:
 * `name`, `hermesPluginKit.repository` (or `repositoryOverride`, the
 * `--repository` flag), `hermesPluginKit.gates` merged over
 * {@link DEFAULT_GATE_COMMANDS}, `hermesPluginKit.install` (default `npm ci`),
 * `hermesPluginKit.provenance.key` ({@link provenanceKeyDeclaredBy}).
 * @param origin names the file in error messages and sources (default `package.json`).
 * @throws ReleaseContractError `POLICY_INVALID` naming the field.
 */
export function policyFromPackageJson(pkg: unknown, repositoryOverride?: string, origin = "package.json"): PackagePolicy {
  if (!isRecord(pkg)) invalid(`${origin} must be an object`);
  const name = pkg["name"];
  if (!isNpmPackageName(name)) invalid(`${origin} name must be an npm package name, found ${describeValue(name)}`);
  const section = pkg["hermesPluginKit"];
  if (section !== undefined && !isRecord(section)) invalid(kitSectionProblem(section, origin));
  if (section !== undefined) requireKnownKitKeys(section, origin);
  const kit = section ?? {};
  const repository = repositoryOverride ?? kit["repository"];
  if (typeof repository !== "string") {
    invalid(`${origin} hermesPluginKit.repository must name the registry repository, found ${describeValue(repository)} (or pass --repository)`);
  }
  const parsedRepository = parseRepository(repository);
  if (repositoryOverride === undefined && parsedRepository.kind === "layout" && !parsedRepository.dir.startsWith("/")) {
    // A path in a config file would resolve against each later command's working directory: refused.
    invalid(`${origin} hermesPluginKit.repository ${describeValue(repository)} names a relative oci-layout path: a store path in a plugin's config must not depend on the directory a later command runs in; fix: write the absolute path, e.g. oci-layout:/home/you/hermes-store/${name}`);
  }
  const install = kit["install"] === undefined ? DEFAULT_INSTALL_COMMAND : requireCommand(kit["install"], `${origin} hermesPluginKit.install`);
  const installTime = installTimeDeclaredBy(pkg);
  const provenanceKey = provenanceKeyDeclaredBy(kit, origin);
  return {
    package: name,
    registryRepository: repository,
    gates: gatesDeclaredBy(pkg, origin),
    install,
    ...(installTime.length > 0 ? { installTime } : {}),
    ...(provenanceKey === undefined ? {} : { provenanceKey }),
    sources: {
      package: `${origin} name`,
      repository: repositoryOverride !== undefined ? "--repository" : `${origin} hermesPluginKit.repository`,
      gates: `${origin} hermesPluginKit.gates`,
    },
  };
}

/** The keys of a package.json's `hermesPluginKit` section (docs/release-build.md, README "Maintainers"). */
export const HERMES_PLUGIN_KIT_KEYS = ["repository", "install", "gates", "installTime", "provenance"] as const;

/**
 * Refuse a key of the `hermesPluginKit` section that the kit does not read: a misspelling (`gate` for `gates`)
 * would otherwise pin or declare nothing, silently.
 * @throws ReleaseContractError `POLICY_INVALID` naming the key, the known keys and the nearest one.
 */
function requireKnownKitKeys(section: Record<string, unknown>, origin: string): void {
  const unknown = Object.keys(section).filter((key) => !(HERMES_PLUGIN_KIT_KEYS as readonly string[]).includes(key));
  if (unknown.length === 0) return;
  const first = unknown[0] as string;
  const near = nearestName(first, HERMES_PLUGIN_KIT_KEYS, true);
  invalid(
    `${origin} hermesPluginKit has ${unknown.length === 1 ? "a key" : "keys"} the kit does not read: ${describeList(unknown.map((k) => JSON.stringify(k)))} (it reads ${HERMES_PLUGIN_KIT_KEYS.join(", ")})${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}`,
  );
}

/** The keys of {@link ConsumerPins}. */
const CONSUMER_PIN_KEYS: readonly string[] = ["repository", "package", "gates", "gatesSource", "reference", "policyFile"];

/**
 * Every own key of `value` is one of `known`: a misspelt pin (`repositry`, `pakage`) would pin nothing.
 * @throws ReleaseContractError `POLICY_INVALID` naming the key and the nearest known one.
 */
function requireKnownArgumentKeys(value: object, known: readonly string[], what: string): void {
  const unknown = Object.keys(value).find((key) => !known.includes(key));
  if (unknown === undefined) return;
  const near = nearestName(unknown, known);
  invalid(`${what} have ${describeValue(unknown)}, which nothing reads (it reads ${known.join(", ")})${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}; a misspelt pin would pin nothing`);
}

/**
 * Read `<dir>/package.json` (strict JSON). Returns `undefined` when the file
 * does not exist.
 * @throws ReleaseContractError `POLICY_INVALID` when it exists but is not valid JSON, or `dir` is not a string.
 */
export async function readPackageJsonFile(dir: string): Promise<Record<string, unknown> | undefined> {
  if (typeof dir !== "string") invalid(`readPackageJsonFile(dir): dir must be a directory path (a string), found ${describeValue(dir)}`);
  const { join } = await import("node:path");
  return readPolicyFile(join(dir, "package.json"), true);
}

/**
 * Read a policy file (a package.json) named explicitly by the caller.
 * @param allowMissing return `undefined` instead of failing when the file does not exist.
 * @throws ReleaseContractError `POLICY_INVALID` (unreadable, larger than 1 MiB, not strict JSON, not an object).
 */
export async function readPolicyFile(path: string, allowMissing?: false): Promise<Record<string, unknown>>;
export async function readPolicyFile(path: string, allowMissing: true): Promise<Record<string, unknown> | undefined>;
export async function readPolicyFile(path: string, allowMissing = false): Promise<Record<string, unknown> | undefined> {
  const found = await readRegularFile(path, { maxBytes: 1024 * 1024, followLinks: true });
  if (found.kind === "failed") {
    if (found.code === "ENOENT" && allowMissing) return undefined;
    invalid(`cannot read policy file ${path}: ${found.code}`);
  }
  if (found.kind !== "read") invalid(`policy file ${path} must be a regular file of at most 1 MiB`);
  const bytes = found.bytes;
  let doc: unknown;
  try {
    doc = parseStrictJson(bytes, { rejectIntegralFloats: false });
  } catch (error) {
    invalid(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (!isRecord(doc)) invalid(`${path} must hold a JSON object`);
  return doc;
}

/**
 * Parse one `--expect-gate` value, `<gate>=<command>` (e.g. `unit=npm test`). Spaces around `=` are the
 * user's spacing, not part of the pin: the gate name is trimmed and so is the command's leading whitespace
 * (`"unit = npm test"` pins `unit` to `npm test`); the rest of the command is compared exactly as given.
 * @throws ReleaseContractError `POLICY_INVALID` (not a string, no `=`, unknown gate, empty or multi-line command).
 */
export function parseGatePin(value: string): [TestGate, string] {
  if (typeof value !== "string") invalid(`--expect-gate must be <gate>=<command> (e.g. unit="npm test"), found ${describeValue(value)}`);
  const at = value.indexOf("=");
  if (at <= 0) invalid(`--expect-gate must be <gate>=<command> (e.g. unit="npm test"), found ${describeValue(value)}`);
  const gate = value.slice(0, at).trim();
  if (!(TEST_GATES as readonly string[]).includes(gate)) {
    const near = nearestName(gate, TEST_GATES);
    invalid(`--expect-gate names unknown gate ${describeValue(gate)} (expected one of ${TEST_GATES.join(", ")}${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`})`);
  }
  return [gate as TestGate, requireCommand(value.slice(at + 1).replace(/^\s+/, ""), `--expect-gate ${gate}`)];
}

/** Where a consumer's expectations come from: what the consumer pins, never the document under check. */
export const CONSUMER_PIN_SOURCES = "--repository, a digest-pinned reference, a fleet lock, or --policy <package.json>";

/**
 * The refusal when a consumer pinned no repository: a release document never
 * sets its own expectations, so its own `registry_repository` is not a
 * fallback (docs/fetch.md "Whose policy"). One code and one wording for every
 * consumer command (`verify-final-receipt`, `verify-manifest`, `fleet add`) and
 * library entry point; the CLI answers it with exit 2, like a missing flag.
 * @param found.document names the document (e.g. `receipt vendor/x/release-receipt.json`).
 * @param found.repository the document's own `registry_repository` (reported, never used).
 * @param fix the flags that pin it for this command.
 * @param sources what this command can pin from, listed in the message (default: {@link CONSUMER_PIN_SOURCES}).
 * @returns ReleaseContractError `POLICY_REPOSITORY_UNPINNED`, for the caller to throw.
 */
export function unpinnedRepository(options: { document?: string; repository?: unknown; fix: string; sources?: string }): ReleaseContractError {
  const found =
    options.document === undefined
      ? "found none"
      : `found none (${options.document} names registry_repository ${describeValue(options.repository)}, but a document never sets its own expectations)`;
  return new ReleaseContractError(
    "POLICY_REPOSITORY_UNPINNED",
    `nothing pinned to verify against: expected the registry repository you trust, ${found}; expectations come only from what you pin (${options.sources ?? CONSUMER_PIN_SOURCES}); fix: ${options.fix}`,
  );
}

/** What a consumer pins (flags, a fleet lock entry) and an optional explicit policy file. */
export interface ConsumerPins {
  /** `--repository`. */
  repository?: string;
  /** `--package`. */
  package?: string;
  /** `--expect-gate` pins (or a fleet lock's `gates`). */
  gates?: Partial<GateCommands>;
  /** Where {@link gates} came from (default `--expect-gate`). */
  gatesSource?: string;
  /** The digest-pinned reference the consumer gave (its repository is the default pinned repository). */
  reference?: string;
  /** `--policy <file>`: a package.json the consumer names explicitly, with its parsed content. */
  policyFile?: { path: string; json: Record<string, unknown> };
}

/** A consumer's resolved expectations, before a document names its package. */
export interface ConsumerExpectations {
  /** The pinned repository. */
  repository: string;
  /** The pinned package name, when one was pinned. */
  package?: string;
  /** Pinned gate commands. */
  gates: Partial<GateCommands>;
  sources: PolicySources;
}

/**
 * Resolve a consumer's expectations, in this order: explicit flags
 * (`--repository`, `--package`, `--expect-gate`), then the policy file the
 * consumer named (`--policy`: its `hermesPluginKit.repository`, `name` and
 * declared gates), then the repository of the pinned reference. The current
 * directory is never read.
 * @throws ReleaseContractError `POLICY_REPOSITORY_UNPINNED` (no repository from any of them),
 *   `POLICY_INVALID` (a malformed policy file: a `name` that is no npm package name, a `hermesPluginKit` that is no
 *   object, a `repository` that is no string, malformed gates, or a file with neither `name` nor `hermesPluginKit`,
 *   which would pin nothing), `REPOSITORY_INVALID`, `REFERENCE_*` (a malformed reference).
 */
export function resolveConsumerExpectations(given: ConsumerPins): ConsumerExpectations {
  const pins = snapshotOptions(given, "resolveConsumerExpectations pins", invalid);
  requireKnownArgumentKeys(pins, CONSUMER_PIN_KEYS, "resolveConsumerExpectations pins");
  const sources: PolicySources = {};
  let filePolicy: { repository?: string; package?: string; gates?: GateCommands } = {};
  if (pins.policyFile !== undefined) {
    const origin = `${pins.policyFile.path} (--policy)`;
    const json = pins.policyFile.json;
    // What the file names is pinned; a field it has in another shape is refused, never skipped (that would pin less).
    const section = json["hermesPluginKit"];
    if (section !== undefined && !isRecord(section)) invalid(kitSectionProblem(section, origin));
    if (section !== undefined) requireKnownKitKeys(section, origin);
    const kit = section;
    const name = json["name"];
    if (name !== undefined && !isNpmPackageName(name)) invalid(`${origin} name must be an npm package name, found ${describeValue(name)}`);
    if (kit !== undefined && kit["repository"] !== undefined && typeof kit["repository"] !== "string") {
      invalid(`${origin} hermesPluginKit.repository must name the registry repository (a string), found ${describeValue(kit["repository"])}`);
    }
    if (name === undefined && kit === undefined) {
      invalid(
        `${origin} pins nothing: expected a package.json with "name" (the package) and "hermesPluginKit" (repository, gates), found ${Object.keys(json).length === 0 ? "an empty object" : `only ${describeList(Object.keys(json).map((k) => JSON.stringify(k)))}`}; fix: name the package.json of the plugin you trust, or drop --policy`,
      );
    }
    filePolicy = {
      ...(typeof kit?.["repository"] === "string" ? { repository: kit["repository"] } : {}),
      ...(isNpmPackageName(name) ? { package: name } : {}),
      ...(kit !== undefined ? { gates: gatesDeclaredBy(json, origin) } : {}),
    };
    if (filePolicy.repository !== undefined) sources.repository = `${origin} hermesPluginKit.repository`;
    if (filePolicy.package !== undefined) sources.package = `${origin} name`;
    if (filePolicy.gates !== undefined) sources.gates = `${origin} hermesPluginKit.gates`;
  }
  let repository = filePolicy.repository;
  if (pins.repository !== undefined) {
    repository = pins.repository;
    sources.repository = "--repository";
  }
  if (repository === undefined && pins.reference !== undefined) {
    repository = parseReference(pins.reference).repository.repository;
    sources.repository = "the pinned reference";
  }
  if (repository === undefined) throw unpinnedRepository({ fix: "pass --repository <registry repository>, a digest-pinned reference, or --policy <package.json> naming hermesPluginKit.repository" });
  parseRepository(repository);
  let pkg = filePolicy.package;
  if (pins.package !== undefined) {
    if (!isNpmPackageName(pins.package)) invalid(`--package must be an npm package name, found ${describeValue(pins.package)}`);
    pkg = pins.package;
    sources.package = "--package";
  }
  const gates: Partial<GateCommands> = { ...(filePolicy.gates ?? {}) };
  if (pins.gates !== undefined && Object.keys(requireGatePins(pins.gates, "gates")).length > 0) {
    Object.assign(gates, pins.gates);
    sources.gates = pins.gatesSource ?? "--expect-gate";
  }
  return { repository, ...(pkg === undefined ? {} : { package: pkg }), gates, sources };
}

/**
 * Complete consumer expectations for one release document: the package is
 * the pinned one, else the one the document names (`the release's own
 * package name`).
 * @throws ReleaseContractError `RECEIPT_SCHEMA_UNSUPPORTED` when the document is no release document (schema_version is not 2) and no package was pinned; `POLICY_INVALID` when it names no npm package and none was pinned, or `doc` is no object (a parsed document).
 */
export function policyForDocument(given: ConsumerExpectations, doc: Record<string, unknown>): ReleasePolicy {
  if (!isRecord(doc)) invalid(`policyForDocument(expectations, doc): doc must be a parsed release document (an object), found ${describeValue(doc)}`);
  const expect = snapshotOptions(given, "policyForDocument expectations", invalid);
  requireKnownArgumentKeys(expect, ["repository", "package", "gates", "sources"], "policyForDocument expectations");
  if (typeof expect.repository !== "string" || !isPlainObject(expect.sources as unknown)) invalid(`policyForDocument needs the expectations resolveConsumerExpectations returns ({ repository, package?, gates, sources }), found repository ${describeValue(expect.repository)} and sources ${describeValue(expect.sources)}`);
  requireGatePins(expect.gates, "expectations.gates");
  const pkg = expect.package ?? doc["package"];
  if (!isNpmPackageName(pkg)) {
    // Not a release document at all (e.g. `{}`): say that, not that its package name is odd.
    if (doc["schema_version"] !== 2) {
      throw new ReleaseContractError("RECEIPT_SCHEMA_UNSUPPORTED", `not a release document: a tested manifest or published receipt has schema_version 2, found ${describeValue(doc["schema_version"])} (and package ${describeValue(doc["package"])})`);
    }
    invalid(`the release names package ${describeValue(doc["package"])}, which is not an npm package name; pin the package you expect with --package <name>`);
  }
  return {
    package: pkg,
    registryRepository: expect.repository,
    gates: { ...expect.gates },
    sources: { ...expect.sources, package: expect.sources.package ?? "the release's own package name" },
  };
}

/**
 * Check that the gate commands recorded in a tested manifest's or receipt's
 * evidence are those the release's own package.json declares (read from the
 * verified tarball).
 * @param origin names the declaring file in the message (e.g. `package/package.json of hello-1.0.0.tgz`).
 * @throws ReleaseContractError `GATE_COMMAND_MISMATCH`; `POLICY_INVALID` when `evidence` or `declared` is not an
 *   object (`declared` of one command string per gate) or `origin` is not a string.
 */
export function checkDeclaredGates(evidence: Record<string, unknown>, declared: GateCommands, origin: string): void {
  const call = "checkDeclaredGates(evidence, declared, origin)";
  if (!isRecord(evidence)) throw new ReleaseContractError("POLICY_INVALID", `${call}: evidence must be the document's evidence object, found ${describeValue(evidence)}`);
  if (!isRecord(declared)) throw new ReleaseContractError("POLICY_INVALID", `${call}: declared must be the gate commands { ${TEST_GATES.join(", ")} } (gatesDeclaredBy), found ${describeValue(declared)}`);
  for (const gate of TEST_GATES) {
    if (typeof declared[gate] !== "string") throw new ReleaseContractError("POLICY_INVALID", `${call}: declared.${gate} must be a command string, found ${describeValue(declared[gate])}`);
  }
  if (typeof origin !== "string") throw new ReleaseContractError("POLICY_INVALID", `${call}: origin must name the declaring file (a string), found ${describeValue(origin)}`);
  for (const gate of TEST_GATES) {
    const entry = evidence[gate];
    const command = isRecord(entry) ? entry["command"] : undefined;
    if (command !== declared[gate]) {
      throw new ReleaseContractError(
        "GATE_COMMAND_MISMATCH",
        `gate ${gate} ran ${describeValue(command)}, but the release's own ${origin} declares ${JSON.stringify(declared[gate])} (hermesPluginKit.gates.${gate})`,
      );
    }
  }
}

/** ` (from <source>)`, or empty. */
export function sourceSuffix(source: string | undefined): string {
  return source === undefined ? "" : ` (from ${source})`;
}
