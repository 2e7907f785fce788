/**
 * Every function export of `hermes-plugin-kit/contract` keeps the CLI's promise for a wrong-shaped argument: a
 * coded refusal (a HermesPluginKitError with its documented code, saying what was expected and what was found),
 * never a bare TypeError or a silent wrong answer. One table: for each export a passing call, failing calls with
 * the exact code, and a sweep that puts each of undefined, null, 5, "x", [], {} in each argument position of the
 * passing call and requires a return or a coded error. A new function export without a row fails the last test.
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as contract from "../../src/contract/index.js";
import {
  DEFAULT_GATE_COMMANDS,
  FULCIO_OID,
  HermesPluginKitError,
  testedManifestBytes,
  receiptBytes,
  type ProvenanceFacts,
  type PublishedReceipt,
  type TestedManifest,
} from "../../src/contract/index.js";
import { BUNDLE_DIGEST, BUNDLE_REFERENCE, POLICY, SOURCE_SHA, packTinyPackage, passedGates, receiptFor, tempDir, testedManifestFor } from "../support/contract-fixture.js";

interface Fixture {
  dir: string;
  dist: string;
  tarball: string;
  manifest: TestedManifest;
  receipt: PublishedReceipt;
  manifestFile: string;
  packageDir: string;
  publicPem: string;
  publicKeyFile: string;
  privatePem: string;
  trustedRoot: Buffer;
  facts: ProvenanceFacts;
}

let fx: Fixture;

const MANIFEST_DIGEST = "sha256:" + "1".repeat(64);
const HEX = "c".repeat(64);
const TRUSTED_ROOTS = fileURLToPath(new URL("../fixtures/sigstore-conformance/cases", import.meta.url));

beforeAll(async () => {
  const dir = await tempDir("hpk-export-arguments-");
  const dist = await packTinyPackage(dir, "demo-plugin", "0.8.0");
  const manifest = await testedManifestFor(dist);
  const manifestFile = join(dir, "release-manifest.json");
  await writeFile(manifestFile, testedManifestBytes(manifest));
  const packageDir = join(dir, "pkg");
  await mkdir(packageDir);
  await writeFile(join(packageDir, "package.json"), JSON.stringify({ name: "demo-plugin", version: "0.8.0", hermesPluginKit: { repository: POLICY.registryRepository } }));
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  let trustedRoot: Buffer | undefined;
  for (const name of await readdir(TRUSTED_ROOTS)) {
    trustedRoot = await readFile(join(TRUSTED_ROOTS, name, "trusted_root.json")).catch(() => undefined);
    if (trustedRoot !== undefined && !name.endsWith("_fail")) break;
  }
  const publicPem = publicKey.export({ type: "spki", format: "pem" }) as string;
  await writeFile(join(dir, "release.pub"), publicPem);
  fx = {
    dir,
    publicKeyFile: join(dir, "release.pub"),
    dist,
    tarball: join(dist, "demo-plugin-0.8.0.tgz"),
    manifest,
    receipt: receiptFor(manifest),
    manifestFile,
    packageDir,
    publicPem,
    privatePem: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
    trustedRoot: trustedRoot as Buffer,
    facts: {
      registryRepository: POLICY.registryRepository,
      bundleDigest: BUNDLE_DIGEST,
      sourceRepository: "https://github.com/acme/demo-plugin",
      sourceSha: SOURCE_SHA,
      tag: "v0.8.0",
      workflow: { path: ".github/workflows/release.yml", ref: "refs/heads/main" },
      runId: "12345",
      runAttempt: 1,
      testedManifestDigest: MANIFEST_DIGEST,
    },
  };
});

afterAll(async () => {
  await rm(fx.dir, { recursive: true, force: true });
});

const layers = (): Array<{ path: string; digest: string; size: number }> => {
  const artifact = fx.manifest.artifacts[0]!;
  return [
    { path: `dist/${artifact.filename}`, digest: `sha256:${artifact.sha256}`, size: artifact.size },
    { path: "release-manifest.json", digest: "sha256:" + "1".repeat(64), size: 1200 },
    { path: "release-payload.sha256", digest: "sha256:" + "2".repeat(64), size: 250 },
    { path: "release-source.bundle", digest: "sha256:" + "3".repeat(64), size: 4096 },
  ];
};

const keylessPolicy = () => ({ kind: "keyless" as const, host: "github.com", owner: "acme", repo: "acme/demo-plugin", sourceRef: "refs/heads/main", issuer: contract.GITHUB_ACTIONS_ISSUER });
const keyPolicy = () => ({ kind: "key" as const, key: fx.publicPem, host: "github.com", repo: "acme/demo-plugin", sourceRef: "refs/heads/main" });
const identity = () => ({
  subjectAlternativeName: "https://github.com/acme/demo-plugin/.github/workflows/release.yml@refs/heads/main",
  issuer: contract.GITHUB_ACTIONS_ISSUER,
  extensions: new Map([
    [FULCIO_OID.sourceRepositoryUri, "https://github.com/acme/demo-plugin"],
    [FULCIO_OID.sourceRepositoryOwnerUri, "https://github.com/acme"],
    [FULCIO_OID.sourceRepositoryRef, "refs/heads/main"],
    [FULCIO_OID.runInvocationUri, "https://github.com/acme/demo-plugin/actions/runs/12345/attempts/1"],
  ]),
});
const signer = () => ({ sourceRepository: "https://github.com/acme/demo-plugin", workflowPath: ".github/workflows/release.yml", ref: "refs/heads/main", runId: "12345", runAttempt: 1 });
const manifestInput = () => ({
  policy: POLICY,
  previousVersion: "0.7.0",
  version: "0.8.0",
  tag: "v0.8.0",
  sourceSha: SOURCE_SHA,
  runId: "12345",
  runAttempt: 1,
  gates: passedGates(),
  artifacts: fx.manifest.artifacts,
});

/** A failing call: what it shows, the arguments, the exact code. */
type Bad = [label: string, args: () => unknown[], code: string];

interface Row {
  /** Valid arguments (the passing call). */
  args: () => unknown[];
  /** `new` the export (a class). */
  construct?: boolean;
  /** Wrong-shaped calls and their codes; empty only with `acceptsAnything`. */
  bad: Bad[];
  /** Why every value is a valid argument (a predicate of `unknown`, an error constructor). */
  acceptsAnything?: string;
  /** Positions the sweep leaves out, with why (an optional argument of type unknown). */
  sweepSkip?: number[];
}

const P = "POLICY_INVALID";

const TABLE: Record<string, Row> = {
  // errors.ts
  hasCode: { args: () => [new contract.ReleaseContractError("JSON_SYNTAX", "x"), "JSON_SYNTAX"], bad: [["a code that is no string", () => [new Error("x"), 5], P]], sweepSkip: [0] },
  HermesPluginKitError: { construct: true, args: () => ["CODE", "message"], bad: [], acceptsAnything: "an error constructor: the code and message are the raiser's own" },
  ReleaseContractError: { construct: true, args: () => ["JSON_SYNTAX", "message"], bad: [], acceptsAnything: "an error constructor" },
  ProvenanceError: { construct: true, args: () => ["PROVENANCE_KEY_INVALID", "message"], bad: [], acceptsAnything: "an error constructor" },
  // artifact-manifest.ts, artifact-document.ts
  artifactManifestProblems: { args: () => [JSON.parse(contract.canonicalJson(contract.artifactManifestObject(contract.RELEASE_ARTIFACT_TYPE, []))), "payload"], bad: [["a number for the document", () => [5, "payload"], P]] },
  problemAt: { args: () => [[], "layers"], bad: [["a string for the problems", () => ["x", "layers"], P]] },
  artifactManifestObject: { args: () => [contract.RELEASE_ARTIFACT_TYPE, []], bad: [["null layers", () => [contract.RELEASE_ARTIFACT_TYPE, null], P]] },
  receiptReferenceOf: { args: () => [POLICY.registryRepository, Buffer.from("{}")], bad: [["a string for the bytes", () => [POLICY.registryRepository, "x"], P]] },
  // canonical-json.ts
  canonicalJson: { args: () => [{ a: 1 }], bad: [["undefined", () => [undefined], "JSON_UNSUPPORTED_VALUE"]] },
  canonicalJsonBytes: { args: () => [{ a: 1 }], bad: [["a function", () => [() => 1], "JSON_UNSUPPORTED_VALUE"]] },
  canonicalJsonPretty: { args: () => [{ a: 1 }], bad: [["undefined", () => [undefined], "JSON_UNSUPPORTED_VALUE"]] },
  compareCodePoints: {
    args: () => ["a", "b"],
    bad: [
      ["a number", () => [5, "b"], P],
      ["null second", () => ["a", null], P],
      ["an object", () => [{}, {}], P],
    ],
  },
  parseStrictJson: {
    args: () => [Buffer.from("{}"), {}],
    bad: [
      ["null options", () => [Buffer.from("{}"), null], P],
      ["a number for options", () => ["{}", 5], P],
      ["a misspelt option", () => ["{}", { requireObjekt: false }], P],
      ["a string maxDepth", () => ["{}", { maxDepth: "3" }], P],
      ["a number for the input", () => [5], "JSON_SYNTAX"],
    ],
  },
  // grammar.ts
  bumpVersion: { args: () => ["1.2.3", "minor"], bad: [["a number version", () => [5, "minor"], "SEMVER_INVALID"], ["an unknown class", () => ["1.2.3", "x"], "SEMVER_INVALID"]] },
  describeCharacter: {
    args: () => ["a"],
    bad: [
      ["undefined", () => [undefined], P],
      ["null", () => [null], P],
      ["an object", () => [{}], P],
      ["two characters", () => ["ab"], P],
      ["an empty string", () => [""], P],
    ],
  },
  describeValue: { args: () => [5], bad: [], acceptsAnything: "describes any value for a message" },
  isDigest: { args: () => ["sha256:" + HEX], bad: [], acceptsAnything: "a predicate of unknown: false for any other value (documented by its type)" },
  isDiscoveryTag: { args: () => ["v1.0.0"], bad: [], acceptsAnything: "a predicate of unknown" },
  isGitSha: { args: () => [SOURCE_SHA], bad: [], acceptsAnything: "a predicate of unknown" },
  isNpmPackageName: { args: () => ["demo-plugin"], bad: [], acceptsAnything: "a predicate of unknown" },
  isSha256Hex: { args: () => [HEX], bad: [], acceptsAnything: "a predicate of unknown" },
  isStableSemver: { args: () => ["1.0.0"], bad: [], acceptsAnything: "a predicate of unknown" },
  parseStableSemver: { args: () => ["1.0.0"], bad: [["a number", () => [5], "SEMVER_INVALID"]] },
  releaseClassOf: { args: () => ["1.0.0", "1.0.1"], bad: [["null", () => [null, "1.0.1"], "SEMVER_INVALID"]] },
  requireDigest: { args: () => ["sha256:" + HEX], bad: [["an array", () => [[]], "DIGEST_INVALID"]] },
  requireDiscoveryTag: { args: () => ["v1.0.0"], bad: [["an object", () => [{}], "TAG_INVALID"]] },
  requireGitSha: { args: () => [SOURCE_SHA, "source_sha"], bad: [["a number", () => [5, "source_sha"], "GIT_SHA_INVALID"]] },
  tagShapeProblem: { args: () => ["v1.0.0"], bad: [], acceptsAnything: "describes what is wrong with any value" },
  tarballFileName: { args: () => ["demo-plugin", "0.8.0"], bad: [["a number name", () => [5, "0.8.0"], "PACKAGE_NAME_INVALID"]] },
  // reference.ts
  formatReference: { args: () => [POLICY.registryRepository, BUNDLE_DIGEST], bad: [["a number repository", () => [5, BUNDLE_DIGEST], P], ["null digest", () => [POLICY.registryRepository, null], P]] },
  isLoopbackHost: {
    args: () => ["127.0.0.1"],
    bad: [
      ["undefined", () => [undefined], P],
      ["null", () => [null], P],
      ["a number", () => [5], P],
      ["an array", () => [[]], P],
    ],
  },
  parseReference: { args: () => [BUNDLE_REFERENCE], bad: [["null", () => [null], "REFERENCE_NOT_PINNED"]] },
  parseRepository: { args: () => [POLICY.registryRepository], bad: [["a number", () => [5], "REPOSITORY_INVALID"]] },
  plainHttpRefusal: {
    args: () => ["localhost", true],
    bad: [
      ["a number repository", () => [5, true], P],
      ["an object repository", () => [{}, true], P],
      ["a string for plainHttp", () => ["localhost", "yes"], P],
    ],
  },
  // policy.ts
  checkDeclaredGates: {
    args: () => [fx.manifest.evidence, { ...POLICY.gates }, "package.json"],
    bad: [
      ["null evidence", () => [null, { ...POLICY.gates }, "package.json"], P],
      ["undefined declared", () => [fx.manifest.evidence, undefined, "package.json"], P],
      ["a number origin", () => [fx.manifest.evidence, { ...POLICY.gates }, 5], P],
    ],
  },
  gatesDeclaredBy: { args: () => [{ name: "demo-plugin" }], bad: [["a number package.json", () => [5], P], ["null", () => [null], P], ["a number origin", () => [{ name: "demo-plugin" }, 5], P], ["a gates string", () => [{ hermesPluginKit: { gates: "x" } }], P]] },
  parseGatePin: { args: () => ["unit=npm test"], bad: [["a number", () => [5], P]] },
  policyForDocument: {
    args: () => [contract.resolveConsumerExpectations({ repository: POLICY.registryRepository, package: "demo-plugin" }), fx.manifest],
    bad: [["null expectations", () => [null, fx.manifest], P], ["a number for the document", () => [contract.resolveConsumerExpectations({ repository: POLICY.registryRepository, package: "demo-plugin" }), 5], P]],
  },
  policyFromPackageJson: { args: () => [{ name: "demo-plugin", hermesPluginKit: { repository: POLICY.registryRepository } }], bad: [["a number", () => [5], P]] },
  readPackageJsonFile: { args: () => [fx.packageDir], bad: [["a number", () => [5], P]] },
  readPolicyFile: { args: () => [join(fx.packageDir, "package.json")], bad: [["a number", () => [5], P]] },
  resolveConsumerExpectations: { args: () => [{ repository: POLICY.registryRepository }], bad: [["null", () => [null], P]] },
  // release-document.ts
  bundlePayloadPaths: { args: () => ["demo-plugin", "0.8.0"], bad: [["a number version", () => ["demo-plugin", 5], "SEMVER_INVALID"]] },
  checkFileRecord: {
    args: () => [{ filename: "a.tgz", sha256: HEX, size: 1 }, "filename", false, "artifacts[0]"],
    bad: [
      ["an unknown name key", () => [{ filename: "a.tgz", sha256: HEX, size: 1 }, "name", false, "artifacts[0]"], P],
      ["undefined for published", () => [{ filename: "a.tgz", sha256: HEX, size: 1 }, "filename", undefined, "artifacts[0]"], P],
      ["a number label", () => [{ filename: "a.tgz", sha256: HEX, size: 1 }, "filename", false, 5], P],
      ["null record", () => [null, "filename", false, "artifacts[0]"], "FILE_RECORD_INVALID"],
    ],
  },
  parseReleaseJson: { args: () => [testedManifestBytes(fx.manifest)], bad: [["a number", () => [5], "JSON_SYNTAX"]] },
  promotionFor: { args: () => ["minor"], bad: [["a number", () => [5], P], ["an unknown class", () => ["huge"], P]] },
  receiptUnboundFields: { args: () => [{}], bad: [["a string", () => ["x"], P]] },
  verifyFinalReceipt: { args: () => [JSON.parse(JSON.stringify(fx.receipt)), POLICY], bad: [["null policy", () => [JSON.parse(JSON.stringify(fx.receipt)), null], P]] },
  verifyFinalReceiptBytes: { args: () => [receiptBytes(fx.receipt), POLICY], bad: [["a string for the bytes", () => ["{}", POLICY], "JSON_SYNTAX"]] },
  verifyParsedFinalReceiptBytes: { args: () => [receiptBytes(fx.receipt), JSON.parse(JSON.stringify(fx.receipt)), POLICY], bad: [["null bytes", () => [null, JSON.parse(JSON.stringify(fx.receipt)), POLICY], "JSON_SYNTAX"], ["a number policy", () => [receiptBytes(fx.receipt), JSON.parse(JSON.stringify(fx.receipt)), 5], P]] },
  verifyReceiptReference: {
    args: () => [receiptBytes(fx.receipt), POLICY.registryRepository, contract.receiptReferenceOf(POLICY.registryRepository, receiptBytes(fx.receipt))],
    bad: [
      ["a string for the bytes", () => ["{}", POLICY.registryRepository, `${POLICY.registryRepository}@sha256:${HEX}`], P],
      ["a number repository", () => [receiptBytes(fx.receipt), 5, `${POLICY.registryRepository}@sha256:${HEX}`], P],
      ["a tag for the reference", () => [receiptBytes(fx.receipt), POLICY.registryRepository, `${POLICY.registryRepository}:v1`], "REFERENCE_NOT_PINNED"],
    ],
  },
  verifyReleaseIdentity: { args: () => [JSON.parse(JSON.stringify(fx.manifest)), "tested", POLICY], bad: [["null policy", () => [JSON.parse(JSON.stringify(fx.manifest)), "tested", null], P]] },
  verifyTestedManifest: { args: () => [JSON.parse(JSON.stringify(fx.manifest)), POLICY], bad: [["a string policy", () => [JSON.parse(JSON.stringify(fx.manifest)), "x"], P]] },
  // manifest.ts
  buildPublishedReceipt: {
    args: () => [fx.manifest, BUNDLE_REFERENCE, layers(), POLICY],
    bad: [
      ["undefined manifest", () => [undefined, BUNDLE_REFERENCE, layers(), POLICY], P],
      ["null manifest", () => [null, BUNDLE_REFERENCE, layers(), POLICY], P],
      ["a number reference", () => [fx.manifest, 5, layers(), POLICY], P],
      ["a string for layers", () => [fx.manifest, BUNDLE_REFERENCE, "x", POLICY], P],
      ["a null layer", () => [fx.manifest, BUNDLE_REFERENCE, [null], POLICY], P],
      ["null policy", () => [fx.manifest, BUNDLE_REFERENCE, layers(), null], P],
    ],
  },
  checkReceiptOfBundle: {
    args: () => [fx.receipt, fx.manifest, BUNDLE_REFERENCE, layers()],
    bad: [
      ["a number receipt", () => [5, fx.manifest, BUNDLE_REFERENCE, layers()], P],
      ["null tested", () => [fx.receipt, null, BUNDLE_REFERENCE, layers()], P],
      ["an empty object tested", () => [fx.receipt, {}, BUNDLE_REFERENCE, layers()], P],
      ["undefined reference", () => [fx.receipt, fx.manifest, undefined, layers()], P],
      ["an object for layers", () => [fx.receipt, fx.manifest, BUNDLE_REFERENCE, {}], P],
      ["a number receipt source", () => [fx.receipt, fx.manifest, BUNDLE_REFERENCE, layers(), 5], P],
    ],
  },
  createTestedManifest: {
    args: () => [manifestInput()],
    bad: [
      ["undefined", () => [undefined], P],
      ["null", () => [null], P],
      ["an array", () => [[]], P],
      ["no policy", () => [{ ...manifestInput(), policy: undefined }], P],
      ["a string for gates", () => [{ ...manifestInput(), gates: "x" }], P],
      ["a number for artifacts", () => [{ ...manifestInput(), artifacts: 5 }], P],
    ],
  },
  // The path is not swept: "x" is a valid relative path, and a missing file is the system's ENOENT (this row's passing call reads a real file).
  hashFile: { args: () => [fx.tarball], bad: [["a number path", () => [5], P], ["null options", () => [fx.tarball, null], P]], sweepSkip: [0] },
  inspectDistDir: { args: () => [fx.dist, POLICY, "0.8.0"], bad: [["null policy", () => [fx.dist, null, "0.8.0"], P], ["a number dir", () => [5, POLICY, "0.8.0"], P]] },
  inspectDistTarball: { args: () => [fx.dist, POLICY, "0.8.0"], bad: [["undefined policy", () => [fx.dist, undefined, "0.8.0"], P], ["a number for options", () => [fx.dist, POLICY, "0.8.0", 5], P]] },
  readReleaseJsonBytesFile: { args: () => [fx.manifestFile], bad: [["a number path", () => [5], "RELEASE_JSON_UNREADABLE"]] },
  readReleaseJsonFile: { args: () => [fx.manifestFile], bad: [["a number path", () => [5], "RELEASE_JSON_UNREADABLE"]] },
  readTarballPackageJsonFile: { args: () => [fx.tarball], bad: [["a number path", () => [5], "TARBALL_UNREADABLE"]] },
  receiptBytes: { args: () => [fx.receipt], bad: [["undefined", () => [undefined], P], ["null (no receipt, not the bytes \"null\")", () => [null], P], ["a string", () => ["x"], P]] },
  testedManifestBytes: { args: () => [fx.manifest], bad: [["undefined", () => [undefined], P], ["a number", () => [5], P], ["an empty object", () => [{}], P]] },
  verifyManifest: { args: () => [JSON.parse(JSON.stringify(fx.manifest)), fx.dist, POLICY], bad: [["null policy", () => [JSON.parse(JSON.stringify(fx.manifest)), fx.dist, null], P]] },
  verifyManifestDist: { args: () => [JSON.parse(JSON.stringify(fx.manifest)), fx.dist, POLICY], bad: [["a number policy", () => [JSON.parse(JSON.stringify(fx.manifest)), fx.dist, 5], P]] },
  // The path is not swept: "x" is a valid relative path, and the sweep would write a file named x into the working directory.
  writeTestedManifestFile: { args: () => [join(fx.dir, "written.json"), fx.manifest], bad: [["a number path", () => [5, fx.manifest], P]], sweepSkip: [0] },
  // json-schema.ts
  documentJsonSchemas: { args: () => [], bad: [], acceptsAnything: "takes no argument" },
  documentJsonSchemaText: { args: () => ["tested-manifest"], bad: [["an unknown stem", () => ["x"], P]] },
  // payload.ts
  bundleChecksumPaths: { args: () => ["demo-plugin", "0.8.0"], bad: [["a number name", () => [5, "0.8.0"], "PACKAGE_NAME_INVALID"]] },
  bundleLayerTitles: { args: () => ["demo-plugin", "0.8.0"], bad: [["null version", () => ["demo-plugin", null], "SEMVER_INVALID"]] },
  formatPayloadChecksums: {
    args: () => [[{ path: "release-manifest.json", sha256: HEX }]],
    bad: [
      ["undefined", () => [undefined], P],
      ["null", () => [null], P],
      ["a number", () => [5], P],
      ["an object", () => [{}], P],
      ["a null entry", () => [[null]], P],
    ],
  },
  isAllowedPayloadTitle: { args: () => ["release-manifest.json", "demo-plugin"], bad: [["a number package name", () => ["release-manifest.json", 5], P]], sweepSkip: [0] },
  parsePayloadChecksums: {
    args: () => [`${HEX}  release-manifest.json\n`, ["release-manifest.json"]],
    bad: [
      ["undefined input", () => [undefined, ["release-manifest.json"]], P],
      ["null input", () => [null, ["release-manifest.json"]], P],
      ["a string for the paths", () => [`${HEX}  release-manifest.json\n`, "release-manifest.json"], P],
      ["a number among the paths", () => [`${HEX}  release-manifest.json\n`, [5]], P],
    ],
  },
  // provenance.ts
  bindingFromReceipt: {
    args: () => [fx.receipt],
    bad: [
      ["undefined", () => [undefined], P],
      ["null", () => [null], P],
      ["a number", () => [5], P],
      ["an empty object", () => [{}], P],
      ["a payload that is no array", () => [{ ...fx.receipt, payload: "x" }], P],
    ],
  },
  bindingFromTestedManifest: {
    args: () => [fx.manifest, MANIFEST_DIGEST, BUNDLE_DIGEST],
    bad: [
      ["undefined manifest", () => [undefined, MANIFEST_DIGEST, BUNDLE_DIGEST], P],
      ["an empty object", () => [{}, MANIFEST_DIGEST, BUNDLE_DIGEST], P],
      ["a number digest", () => [fx.manifest, 5, BUNDLE_DIGEST], P],
      ["a bundle digest that is no digest", () => [fx.manifest, MANIFEST_DIGEST, "x"], P],
    ],
  },
  checkReleaseBinding: {
    args: () => [fx.facts, { ...contract.bindingFromTestedManifest(fx.manifest, MANIFEST_DIGEST, BUNDLE_DIGEST), registryRepository: POLICY.registryRepository }],
    bad: [
      ["undefined facts", () => [undefined, contract.bindingFromTestedManifest(fx.manifest, MANIFEST_DIGEST, BUNDLE_DIGEST)], "PROVENANCE_STATEMENT_INVALID"],
      ["facts without a workflow", () => [{ ...fx.facts, workflow: 5 }, contract.bindingFromTestedManifest(fx.manifest, MANIFEST_DIGEST, BUNDLE_DIGEST)], "PROVENANCE_STATEMENT_INVALID"],
      ["null release", () => [fx.facts, null], P],
      ["an empty release", () => [fx.facts, {}], P],
    ],
  },
  parseProvenanceStatement: { args: () => [contract.provenanceStatement(fx.facts)], bad: [["a number", () => [5], "PROVENANCE_STATEMENT_INVALID"]] },
  provenanceStatement: {
    args: () => [fx.facts],
    bad: [
      ["undefined", () => [undefined], "PROVENANCE_STATEMENT_INVALID"],
      ["null", () => [null], "PROVENANCE_STATEMENT_INVALID"],
      ["an array", () => [[]], "PROVENANCE_STATEMENT_INVALID"],
      ["no workflow", () => [{ ...fx.facts, workflow: undefined }], "PROVENANCE_STATEMENT_INVALID"],
    ],
  },
  // provenance-policy.ts
  checkSignerIdentity: {
    args: () => [identity(), keylessPolicy()],
    bad: [
      ["undefined identity", () => [undefined, keylessPolicy()], "PROVENANCE_POLICY_INVALID"],
      ["an identity without extensions", () => [{ issuer: contract.GITHUB_ACTIONS_ISSUER }, keylessPolicy()], "PROVENANCE_POLICY_INVALID"],
      ["extensions as an object", () => [{ ...identity(), extensions: {} }, keylessPolicy()], "PROVENANCE_POLICY_INVALID"],
      ["null policy", () => [identity(), null], "PROVENANCE_POLICY_INVALID"],
      ["a key-mode policy", () => [identity(), keyPolicy()], "PROVENANCE_POLICY_INVALID"],
    ],
  },
  checkStatementAgainstPolicy: {
    args: () => [fx.facts, keyPolicy()],
    bad: [
      ["null facts", () => [null, keyPolicy()], "PROVENANCE_POLICY_INVALID"],
      ["a number for facts", () => [5, keyPolicy()], "PROVENANCE_POLICY_INVALID"],
      ["undefined policy", () => [fx.facts, undefined], "PROVENANCE_POLICY_INVALID"],
      ["an empty policy", () => [fx.facts, {}], "PROVENANCE_POLICY_INVALID"],
    ],
  },
  checkStatementAgainstSigner: {
    args: () => [fx.facts, signer()],
    bad: [
      ["undefined facts", () => [undefined, signer()], "PROVENANCE_POLICY_INVALID"],
      ["an empty facts object", () => [{}, signer()], "PROVENANCE_POLICY_INVALID"],
      ["null signer", () => [fx.facts, null], "PROVENANCE_POLICY_INVALID"],
      ["a string signer", () => [fx.facts, "x"], "PROVENANCE_POLICY_INVALID"],
    ],
  },
  resolveProvenancePolicy: { args: () => [{ owner: "acme" }], bad: [["null", () => [null], "PROVENANCE_POLICY_INVALID"]] },
  // key-pem.ts
  isP256Key: {
    args: () => [contract.parseP256PublicKeyPem(fx.publicPem)],
    bad: [
      ["undefined", () => [undefined], "PROVENANCE_KEY_INVALID"],
      ["null", () => [null], "PROVENANCE_KEY_INVALID"],
      ["a PEM string", () => [fx.publicPem], "PROVENANCE_KEY_INVALID"],
    ],
  },
  keyFileKind: {
    args: () => [fx.publicPem],
    bad: [
      ["undefined", () => [undefined], "PROVENANCE_KEY_INVALID"],
      ["null", () => [null], "PROVENANCE_KEY_INVALID"],
      ["a number", () => [5], "PROVENANCE_KEY_INVALID"],
    ],
  },
  parseP256PrivateKeyPem: {
    args: () => [fx.privatePem, "signing key"],
    bad: [
      ["null", () => [null], "PROVENANCE_KEY_INVALID"],
      ["a number", () => [5], "PROVENANCE_KEY_INVALID"],
      ["a number label", () => [fx.privatePem, 5], "PROVENANCE_KEY_INVALID"],
    ],
  },
  parseP256PublicKeyPem: {
    args: () => [Buffer.from(fx.publicPem), "--key"],
    bad: [
      ["undefined", () => [undefined], "PROVENANCE_KEY_INVALID"],
      ["a number", () => [5], "PROVENANCE_KEY_INVALID"],
      ["an object label", () => [fx.publicPem, {}], "PROVENANCE_KEY_INVALID"],
    ],
  },
  readP256PublicKeyFile: { args: () => [fx.publicKeyFile], bad: [["a number path", () => [5], "PROVENANCE_KEY_INVALID"]] },
  // trusted-root.ts, npm-tarball.ts, tar-ustar.ts
  parseTrustedRoot: { args: () => [fx.trustedRoot], bad: [["a string", () => ["x"], "PROVENANCE_TRUSTED_ROOT_INVALID"]] },
  readNpmTarballFile: { args: () => [fx.tarball], bad: [["a number path", () => [5], "TARBALL_UNREADABLE"]] },
  resolveTarLimits: { args: () => [{}], bad: [["a number", () => [5], "TARBALL_LIMITS_INVALID"]] },
  StrictTarParser: { construct: true, args: () => [() => undefined, {}], bad: [["a number for onData", () => [5, {}], P], ["a number for the limits", () => [() => undefined, 5], "TARBALL_LIMITS_INVALID"]] },
  parsePaxRecords: {
    args: () => [Buffer.from("12 path=abc\n"), 0],
    bad: [
      ["undefined data", () => [undefined, 0], P],
      ["null data", () => [null, 0], P],
      ["a string for the data", () => ["12 path=abc\n", 0], P],
      ["a string offset", () => [Buffer.from("12 path=abc\n"), "0"], P],
    ],
  },
};

const WRONG: Array<[string, unknown]> = [
  ["undefined", undefined],
  ["null", null],
  ["5", 5],
  ['"x"', "x"],
  ["[]", []],
  ["{}", {}],
];

function call(name: string, args: unknown[]): unknown {
  const fn = (contract as Record<string, unknown>)[name] as (...a: unknown[]) => unknown;
  return TABLE[name]!.construct === true ? new (fn as unknown as new (...a: unknown[]) => unknown)(...args) : fn(...args);
}

/** Calls `name` and returns what it threw (or undefined), awaiting a promise. */
async function outcome(name: string, args: unknown[]): Promise<unknown> {
  try {
    await call(name, args);
    return undefined;
  } catch (error) {
    return error ?? new Error("threw a nullish value");
  }
}

const functionExports = Object.entries(contract)
  .filter(([, value]) => typeof value === "function")
  .map(([name]) => name)
  .sort();

describe("contract exports refuse wrong-shaped arguments with a coded error", () => {
  it.each(Object.keys(TABLE).sort())("%s: the passing call passes", async (name) => {
    await expect(outcome(name, TABLE[name]!.args())).resolves.toBeUndefined();
  });

  const badRows = Object.entries(TABLE).flatMap(([name, row]) => row.bad.map(([label, args, code]) => ({ name, label, args, code })));
  it.each(badRows)("$name: $label -> $code", async ({ name, args, code }) => {
    const run = (): unknown => call(name, args());
    let result: unknown;
    try {
      result = run();
    } catch {
      expect(run).toThrowWithCode(code);
      return;
    }
    await expect(result).toThrowWithCode(code);
  });

  it.each(Object.keys(TABLE).sort())("%s: undefined, null, 5, \"x\", [] or {} in any argument is a coded error or accepted, never a TypeError", async (name) => {
    const row = TABLE[name]!;
    const valid = row.args();
    const arity = Math.max(valid.length, 1);
    const uncoded: string[] = [];
    for (let position = 0; position < arity; position += 1) {
      if (row.sweepSkip?.includes(position)) continue;
      for (const [shown, value] of WRONG) {
        const args = row.args();
        args[position] = value;
        const error = await outcome(name, args);
        if (error !== undefined && !(error instanceof HermesPluginKitError && typeof error.code === "string")) {
          uncoded.push(`argument ${position} = ${shown}: ${(error as Error)?.constructor?.name}: ${(error as Error)?.message}`);
        }
      }
    }
    expect(uncoded).toEqual([]);
  });

  it("every function export has a row, and every row a failing call or a reason it accepts anything", () => {
    expect(functionExports.length).toBeGreaterThan(80);
    expect(functionExports.filter((name) => TABLE[name] === undefined)).toEqual([]);
    expect(Object.keys(TABLE).filter((name) => !functionExports.includes(name))).toEqual([]);
    expect(Object.entries(TABLE).filter(([, row]) => row.bad.length === 0 && row.acceptsAnything === undefined).map(([name]) => name)).toEqual([]);
  });

  it("the defaults the table leans on are what it says", () => {
    expect(Object.keys(DEFAULT_GATE_COMMANDS).sort()).toEqual([...contract.TEST_GATES].sort());
  });
});
