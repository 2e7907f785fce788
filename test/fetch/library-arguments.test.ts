/**
 * The public functions of `hermes-plugin-kit/fetch` refuse a wrong argument with a code before they read or
 * write anything: a misspelt option (it would be ignored and check less), an option of the wrong kind (a raw
 * TypeError from deep inside, or a value read as false), a hand-built repository whose fields disagree.
 * Each rule: a passing case and a failing case with its exact code; nothing is written on a refusal.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseRepository } from "../../src/contract/reference.js";
import { credentialsFromEnv, credentialsFromEnvOrConfig, downloadRelease, environmentCredentialSource, fetchRelease, inspectRelease, registryConfigNote, resolveRegistryCredentials } from "../../src/fetch/fetch.js";
import { verifyReferenceProvenance } from "../../src/fetch/verify-reference.js";
import { policyForDocument, resolveConsumerExpectations } from "../../src/contract/policy.js";
import { verifyFinalReceiptBytes } from "../../src/contract/release-document.js";
import { addPluginToLock, emptyFleetLock, readFleetLockFile, verifyFleetLock, writeFleetLockFile } from "../../src/fetch/fleet.js";
import { listFleetLock, removePluginFromLock, upgradePluginInLock } from "../../src/fetch/fleet-edit.js";
import { checkInstallTarget, installPayload, replaceInstall } from "../../src/fetch/install.js";
import { verifyBundleFile } from "../../src/fetch/verify-bundle-file.js";
import { verifyReleaseProvenance } from "../../src/fetch/provenance.js";
import { requireOptionalSignal } from "../../src/oci/arguments.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-library-arguments-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("installPayload / replaceInstall / checkInstallTarget arguments", () => {
  async function payload(): Promise<{ path: string; source: string; sha256: string }> {
    const source = join(root, "verified-file");
    await writeFile(source, "bytes\n");
    return { path: "release-manifest.json", source, sha256: createHash("sha256").update("bytes\n").digest("hex") };
  }

  it("passing: a well-formed call installs", async () => {
    const out = join(root, "out");
    const result = await installPayload(out, [await payload()], { lockTimeoutMs: 1000, signal: new AbortController().signal, onCommit: () => undefined });
    expect(result).toBeDefined();
    expect(await readdir(out)).toEqual(["release-manifest.json"]);
  });

  it("passing: a signal of another realm or library (a boolean aborted, addEventListener, removeEventListener) installs, as the transport takes it", async () => {
    const out = join(root, "out");
    const likeSignal = { aborted: false, addEventListener: () => undefined, removeEventListener: () => undefined };
    await installPayload(out, [await payload()], { signal: likeSignal as never });
    expect(await readdir(out)).toEqual(["release-manifest.json"]);
  });

  it.each([
    ["installPayload()", /^installPayload argument outputDir must be the output directory to install into \(a non-empty string\), found nothing$/, () => installPayload(undefined as never, [])],
    ["installPayload(dir, \"x\")", /^installPayload argument files must be an array of \{ path, source, sha256 \}, found "x"$/, () => installPayload(join(root, "out"), "x" as never)],
    ["installPayload(dir, [5])", /^installPayload argument files\[0\] must be \{ path, source, sha256 \} .*, found number 5$/, () => installPayload(join(root, "out"), [5] as never)],
    ["installPayload(dir, [{ path }])", /^installPayload argument files\[0\] must be .*, found \{ path \}$/, () => installPayload(join(root, "out"), [{ path: "release-manifest.json" }] as never)],
    ["installPayload(dir, [], null)", /^installPayload needs its options as an object/, () => installPayload(join(root, "out"), [], null as never)],
    ["installPayload signal: 5", /^installPayload option signal must be an AbortSignal .*, found number 5$/, () => installPayload(join(root, "out"), [], { signal: 5 as never })],
    // Passed by duck typing on `"aborted" in value` while the transport under it refused it.
    ["installPayload signal: { aborted: \"no\" }", /^installPayload option signal must be an AbortSignal \(e\.g\. new AbortController\(\)\.signal: a boolean aborted, addEventListener and removeEventListener\), found /, () => installPayload(join(root, "out"), [], { signal: { aborted: "no" } as never })],
    ["installPayload lockTimeout (misspelt)", /^installPayload option "lockTimeout" is not one it reads .*did you mean "lockTimeoutMs"\?/, () => installPayload(join(root, "out"), [], { lockTimeout: 5 } as never)],
    ["replaceInstall onCommit: true", /^replaceInstall option onCommit must be a function, found boolean true$/, () => replaceInstall(join(root, "out"), [], { onCommit: true as never })],
    ["checkInstallTarget(42)", /^checkInstallTarget argument outputDir must be .*, found number 42$/, () => checkInstallTarget(42 as never)],
  ] as Array<[string, RegExp, () => Promise<unknown>]>)("%s -> POLICY_INVALID, nothing written", async (_name, message, call) => {
    const run = call();
    await expect(() => run).toThrowWithCode("POLICY_INVALID");
    await expect(run).rejects.toThrow(message);
    expect(await readdir(root)).toEqual([]);
  });
});

describe("credential lookups: a parsed repository, an environment of strings, known options", () => {
  const repository = parseRepository("127.0.0.1:5000/acme/plugin");

  it("passing: the parsed repository and an environment give the environment's credentials", async () => {
    const env = { REGISTRY_USERNAME: "alice", REGISTRY_PASSWORD: "s3cret" };
    expect(credentialsFromEnv(repository, env)).toEqual({ username: "alice", password: "s3cret" });
    expect(environmentCredentialSource(repository, env)).toBe("REGISTRY_USERNAME/REGISTRY_PASSWORD");
    expect(await credentialsFromEnvOrConfig(repository, env, { onNote: () => undefined })).toEqual({ username: "alice", password: "s3cret" });
    expect(await resolveRegistryCredentials(repository, env, {})).toEqual({ username: "alice", password: "s3cret" });
    expect(registryConfigNote(repository, env, join(root, "config.json"))).toMatch(/^note: using REGISTRY_USERNAME\/REGISTRY_PASSWORD from the environment/);
  });

  it.each([
    // A repository string was read as "not a registry": no credentials, silently.
    ["credentialsFromEnv(a string)", /^credentialsFromEnv needs the repository as parseRepository returns it .*found the string "127\.0\.0\.1:5000\/acme\/plugin"; fix: pass parseRepository\("127\.0\.0\.1:5000\/acme\/plugin"\)$/, () => credentialsFromEnv("127.0.0.1:5000/acme/plugin" as never, {})],
    // A hand-built repository whose registry is another host than its repository names.
    ["a repository whose registry disagrees", /^environmentCredentialSource was given a repository whose registry is "evil\.example" while its repository "127\.0\.0\.1:5000\/acme\/plugin" says "127\.0\.0\.1:5000"/, () => environmentCredentialSource({ ...repository, registry: "evil.example" } as never, {})],
    ["an environment value that is no string", /^credentialsFromEnv env variable "REGISTRY_TOKEN" must be a string, found a number$/, () => credentialsFromEnv(repository, { REGISTRY_TOKEN: 5 } as never)],
    ["env: a string", /^registryConfigNote needs env as an object of environment variables \(like process\.env\), found a string$/, () => registryConfigNote(repository, "REGISTRY_TOKEN=x" as never, undefined)],
    // A misspelt registryConfig would read the default Docker config instead of the file named.
    ["registryConfg (misspelt)", /^resolveRegistryCredentials option "registryConfg" is not one it reads \(it reads registryConfig, onNote\); did you mean "registryConfig"\?/, () => resolveRegistryCredentials(repository, {}, { registryConfg: "x" } as never)],
    ["registryConfig: 5", /^credentialsFromEnvOrConfig option registryConfig must be a non-empty string, found number 5$/, () => credentialsFromEnvOrConfig(repository, {}, { registryConfig: 5 } as never)],
  ] as Array<[string, RegExp, () => unknown]>)("%s -> POLICY_INVALID", async (_name, message, call) => {
    const run = (async () => call())();
    await expect(() => run).toThrowWithCode("POLICY_INVALID");
    await expect(run).rejects.toThrow(message);
  });

  it("a secret in a wrongly typed environment is never echoed", async () => {
    const run = (async () => credentialsFromEnv(repository, { REGISTRY_PASSWORD: { value: "s3cret-token" } } as never))();
    await expect(() => run).toThrowWithCode("POLICY_INVALID");
    await expect(run).rejects.not.toThrow(/s3cret/);
  });
});

describe("fleet lock functions: arguments and registry options", () => {
  it("passing: list, write and read a lock; verify an empty lock", async () => {
    const lock = join(root, "fleet.lock.json");
    await writeFleetLockFile(lock, emptyFleetLock());
    expect(await listFleetLock(lock)).toEqual([]);
    expect((await readFleetLockFile(lock)).plugins).toEqual([]);
    expect(await verifyFleetLock({ lockPath: lock, plainHttp: false, signal: new AbortController().signal, credentialsFor: () => undefined })).toEqual([]);
  });

  it.each([
    ["listFleetLock(5)", /^listFleetLock argument lockPath must be the fleet lock file \(a non-empty string\), found number 5$/, () => listFleetLock(5 as never)],
    ["removePluginFromLock(lock, 5)", /^removePluginFromLock argument name must be the name of a pinned plugin \(a non-empty string\), found number 5$/, (lock: string) => removePluginFromLock(lock, 5 as never)],
    ["readFleetLockFile(lock, \"yes\")", /^readFleetLockFile option allowMissing must be true or false, found "yes"$/, (lock: string) => readFleetLockFile(lock, "yes" as never)],
    ["writeFleetLockFile readAs: {}", /^writeFleetLockFile argument readAs must be the snapshot readFleetLockSnapshot returned/, (lock: string) => writeFleetLockFile(lock, emptyFleetLock(), {} as never)],
    ["verifyFleetLock plainHttp: \"yes\"", /^verifyFleetLock option plainHttp must be true or false, found "yes"$/, (lock: string) => verifyFleetLock({ lockPath: lock, plainHttp: "yes" as never })],
    ["verifyFleetLock credentialsFor: 5", /^verifyFleetLock option credentialsFor must be a function, found number 5$/, (lock: string) => verifyFleetLock({ lockPath: lock, credentialsFor: 5 as never })],
    ["verifyFleetLock trustedRoot: { x: 1 }", /^verifyFleetLock option trustedRoot must be a checked trusted root/, (lock: string) => verifyFleetLock({ lockPath: lock, trustedRoot: { x: 1 } as never })],
    ["verifyFleetLock signal: { aborted: \"no\" }", /^verifyFleetLock option signal must be an AbortSignal .*, found /, (lock: string) => verifyFleetLock({ lockPath: lock, signal: { aborted: "no" } as never })],
    ["verifyFleetLock signal: { aborted: false } (no listeners)", /^verifyFleetLock option signal must be an AbortSignal .*, found /, (lock: string) => verifyFleetLock({ lockPath: lock, signal: { aborted: false } as never })],
    // An uppercase package was blamed on the receipt (FLEET_RECEIPT_UNREADABLE); r.json does not exist: nothing is read.
    ["addPluginToLock package: \"Evil\"", /^package \(--package\) must be an npm package name \(lowercase letters, digits, .*, at most 214 characters\), found "Evil"; fix: give "evil" \(npm names are lowercase\)$/, (lock: string) => addPluginToLock({ lockPath: lock, receiptPath: join(root, "r.json"), repository: "127.0.0.1:5000/a/b", package: "Evil" })],
    ["addPluginToLock package: 5", /^package \(--package\) must be an npm package name \(.*\), found number 5$/, (lock: string) => addPluginToLock({ lockPath: lock, receiptPath: join(root, "r.json"), repository: "127.0.0.1:5000/a/b", package: 5 as never })],
    ["addPluginToLock repository: 5", /^addPluginToLock option repository must be the registry repository you trust, .*found number 5$/, (lock: string) => addPluginToLock({ lockPath: lock, receiptPath: join(root, "r.json"), repository: 5 as never })],
    ["verifyReferenceProvenance package: \"Evil\"", /^verifyReferenceProvenance option package must be an npm package name \(.*\), found "Evil"; fix: give "evil"/, () => verifyReferenceProvenance({ reference: `127.0.0.1:5000/a/b@sha256:${"a".repeat(64)}`, provenance: { policy: { owner: "acme" } }, package: "Evil" })],
    // Checked after the lock and the receipt were read (the receipt is missing here: FLEET_PLUGIN_NOT_PINNED).
    ["upgradePluginInLock gates: { unti }", /^gates \(--expect-gate\) names unknown gate "unti"/, (lock: string) => upgradePluginInLock({ lockPath: lock, receiptPath: join(root, "r.json"), gates: { unti: "npm test" } as never })],
    // A registry option given as a string was walked character by character ("0", "1", ...).
    ["addPluginToLock registry: a string", /^addPluginToLock registry option must be an object \{ plainHttp\?, .*\}, found "127\.0\.0\.1:5000"$/, (lock: string) => addPluginToLock({ lockPath: lock, receiptPath: join(root, "r.json"), repository: "127.0.0.1:5000/a/b", registry: "127.0.0.1:5000" as never })],
    ["addPluginToLock offline: \"yes\"", /^addPluginToLock option offline must be true or false, found "yes"$/, (lock: string) => addPluginToLock({ lockPath: lock, receiptPath: join(root, "r.json"), repository: "127.0.0.1:5000/a/b", offline: "yes" as never })],
    ["upgradePluginInLock registry.plainHtp (misspelt)", /^upgradePluginInLock registry option "plainHtp" is not one it reads .*did you mean "plainHttp"\?/, (lock: string) => upgradePluginInLock({ lockPath: lock, receiptPath: join(root, "r.json"), registry: { plainHtp: true } as never })],
  ] as Array<[string, RegExp, (lock: string) => Promise<unknown>]>)("%s -> POLICY_INVALID, the lock unchanged", async (_name, message, call) => {
    const lock = join(root, "fleet.lock.json");
    await writeFleetLockFile(lock, emptyFleetLock());
    const before = await readdir(root);
    const run = call(lock);
    await expect(() => run).toThrowWithCode("POLICY_INVALID");
    await expect(run).rejects.toThrow(message);
    expect(await readdir(root)).toEqual(before);
  });
});

describe("a signal option: src/fetch refuses what the transport (src/oci/arguments.ts) refuses", () => {
  const listener = () => undefined;
  it.each([
    ["an AbortController's signal", new AbortController().signal],
    ["a signal-like object", { aborted: true, addEventListener: listener, removeEventListener: listener }],
    ["{ aborted: \"no\" }", { aborted: "no" }],
    ["{ aborted: false }", { aborted: false }],
    ["{ aborted: false, addEventListener }", { aborted: false, addEventListener: listener }],
    ["an EventTarget", new EventTarget()],
    ["5", 5],
    ["null", null],
  ])("%s: verifyFleetLock and runBounded agree", async (_name, signal) => {
    const transport = (() => {
      try {
        requireOptionalSignal(signal, "test");
        return "accepted";
      } catch (error) {
        expect(error).toMatchObject({ code: "OCI_ARGUMENT_INVALID" });
        return "refused";
      }
    })();
    const lock = join(root, "fleet.lock.json");
    await writeFleetLockFile(lock, emptyFleetLock());
    const fetchAnswer = await verifyFleetLock({ lockPath: lock, signal: signal as never }).then(
      () => "accepted",
      (error: { code?: string }) => {
        expect(error.code).toBe("POLICY_INVALID");
        return "refused";
      },
    );
    expect(fetchAnswer).toBe(transport);
  });
});

describe("verifyBundleFile and verifyReleaseProvenance options", () => {
  it.each([
    // A misspelt trustedRoot would verify against the public-good root instead of the one named.
    ["trustRoot (misspelt)", /^verifyBundleFile option "trustRoot" is not one it reads \(it reads bundle, artifact, signer, trustedRoot\); did you mean "trustedRoot"\?/, { bundle: "b.json", artifact: "a", signer: { keyFile: "k.pem" }, trustRoot: "root.json" }],
    ["signer { keyfile }", /^verifyBundleFile option signer must be \{ keyFile \} .* or \{ identity, issuer \} \(strings\), found \{ keyfile \}; did you mean "keyFile" for "keyfile"\?$/, { bundle: "b.json", artifact: "a", signer: { keyfile: "k.pem" } }],
    ["signer { identity, isuer }", /^verifyBundleFile option signer must be .*, found \{ identity, isuer \}; did you mean "issuer" for "isuer"\?$/, { bundle: "b.json", artifact: "a", signer: { identity: "i", isuer: "https://x" } }],
    ["signer with both forms", /^verifyBundleFile option signer must be .*, found \{ keyFile, identity, issuer \}$/, { bundle: "b.json", artifact: "a", signer: { keyFile: "k.pem", identity: "i", issuer: "https://x" } }],
    ["bundle: 5", /^verifyBundleFile option bundle must be a non-empty string, found number 5$/, { bundle: 5, artifact: "a", signer: { keyFile: "k.pem" } }],
    ["no options", /^verifyBundleFile needs its options as an object/, undefined],
  ])("verifyBundleFile %s -> PROVENANCE_POLICY_INVALID before any read", async (_name, message, options) => {
    const run = verifyBundleFile(options as never);
    await expect(() => run).toThrowWithCode("PROVENANCE_POLICY_INVALID");
    await expect(run).rejects.toThrow(message);
  });

  it("passing shape, failing file: a well-formed call reads the named files (a missing bundle file is its own code)", async () => {
    const run = verifyBundleFile({ bundle: join(root, "missing.json"), artifact: "sha256:" + "a".repeat(64), signer: { identity: "i", issuer: "https://x" } });
    await expect(() => run).toThrowWithCode("PROVENANCE_BUNDLE_INVALID");
    await expect(run).rejects.toThrow(/missing\.json: expected a regular file, found/);
  });

  it.each([
    ["no options", /^verifyReleaseProvenance needs its options \{ policy, trustedRoot\? \}/, undefined],
    ["trustRoot (misspelt)", /^verifyReleaseProvenance option provenance has "trustRoot", which it does not read/, { policy: { owner: "acme" }, trustRoot: {} }],
    ["trustedRoot: a path", /^verifyReleaseProvenance option provenance\.trustedRoot must be a checked trusted root/, { policy: { owner: "acme" }, trustedRoot: "root.json" }],
  ])("verifyReleaseProvenance %s -> PROVENANCE_POLICY_INVALID before any read", async (_name, message, options) => {
    let read = 0;
    const target = new Proxy({}, { get: () => { read += 1; return () => undefined; } });
    const run = verifyReleaseProvenance(target as never, "127.0.0.1:5000/a/b", { mediaType: "x", digest: "sha256:" + "a".repeat(64), size: 1 }, {} as never, options as never);
    await expect(() => run).toThrowWithCode("PROVENANCE_POLICY_INVALID");
    await expect(run).rejects.toThrow(message);
    expect(read).toBe(0);
  });
});

describe("options are plain data, read once: a value given through a prototype, a getter, a hidden property or a Map is refused before any read", () => {
  const reference = `127.0.0.1:5000/acme/plugin@sha256:${"a".repeat(64)}`;
  const key = { policy: { owner: "acme" } };
  class Opts {
    reference = reference;
    outputDir = "/nonexistent-never-written";
    get provenance() {
      return key;
    }
  }
  const hidden = Object.defineProperty({ reference, outputDir: "/nonexistent-never-written" }, "provenance", { value: key, enumerable: false });
  it.each([
    // The trial's fail-open: each of these installed the release without its provenance check.
    ["provenance through a prototype", () => fetchRelease(Object.assign(Object.create({ provenance: key }), { reference, outputDir: "/nonexistent-never-written" })), /^fetchRelease options must be a plain object \(an object literal or parsed JSON\), found an object with another prototype \(an inherited value is not read\)$/],
    ["provenance as a class getter", () => fetchRelease(new Opts() as never), /^fetchRelease needs its options as an object|^fetchRelease options must be a plain object .*, found an instance of Opts$/],
    ["provenance as a hidden property", () => fetchRelease(hidden as never), /^fetchRelease options\.provenance is not enumerable: give it as an ordinary property$/],
    ["a getter that changes its answer", () => fetchRelease({ reference, outputDir: "/nonexistent-never-written", get repository() { return "127.0.0.1:5000/acme/plugin"; } } as never), /^fetchRelease options\.repository is a getter or setter: give the value itself/],
    ["nested: provenance.policy.repo as a getter", () => fetchRelease({ reference, outputDir: "/nonexistent-never-written", provenance: { policy: { owner: "acme", get repo() { return "acme/x"; } } } } as never), /^fetchRelease options\.provenance\.policy\.repo is a getter or setter/],
    // Gate and package pins that no key check saw.
    ["policy.gates as a Map", () => downloadRelease({ reference, policy: { gates: new Map([["unit", "evil"]]) as never } }), /^downloadRelease option policy\.gates must be a plain object \(an object literal or parsed JSON\), found an instance of Map; expected the gate commands to pin as an object literal \{ unit\?, /],
    ["policy.gates through a prototype", () => fetchRelease({ reference, outputDir: "/nonexistent-never-written", policy: { gates: Object.create({ unit: "evil" }) } }), /^fetchRelease option policy\.gates must be a plain object .*, found an object with another prototype \(an inherited value is not read\); expected the gate commands/],
    ["policy through a prototype", () => inspectRelease({ reference, policy: Object.create({ package: "evil" }) }), /^inspectRelease option policy must be an object \{ package\?, gates\?, sources\? \}, found an object with another prototype/],
    ["verifyReferenceProvenance repository through a prototype", () => verifyReferenceProvenance(Object.assign(Object.create({ repository: "evil.example/a/b" }), { reference, provenance: key })), /^verifyReferenceProvenance options must be a plain object/],
    ["addPluginToLock gates through a prototype", () => addPluginToLock({ lockPath: "/nonexistent-never-written/l.json", receiptPath: "/nonexistent/r.json", repository: "127.0.0.1:5000/acme/plugin", gates: Object.create({ unit: "evil" }) }), /^gates \(--expect-gate\) must be a plain object .*; expected the gate commands to pin/],
    ["a revoked Proxy", () => { const { proxy, revoke } = Proxy.revocable({ reference }, {}); revoke(); return fetchRelease(proxy as never); }, /^fetchRelease (needs its options|options could not be read as data)/],
  ] as Array<[string, () => Promise<unknown>, RegExp]>)("%s -> POLICY_INVALID", async (_name, call, message) => {
    const run = (async () => call())();
    await expect(() => run).toThrowWithCode("POLICY_INVALID");
    await expect(run).rejects.toThrow(message);
  });

  it("verifyFinalReceiptBytes, resolveConsumerExpectations, policyForDocument: a Map of gates, a misspelt pin, null are refused (POLICY_INVALID)", async () => {
    const bytes = Buffer.from("{}\n");
    const base = { package: "demo-plugin", registryRepository: "127.0.0.1:5000/acme/plugin" };
    await expect(() => verifyFinalReceiptBytes(bytes, { ...base, gates: new Map([["unit", "evil"]]) } as never)).toThrowWithCode("POLICY_INVALID");
    await expect(() => resolveConsumerExpectations({ repositry: "evil.example/a/b", reference } as never)).toThrowWithCode("POLICY_INVALID");
    expect(() => resolveConsumerExpectations({ repositry: "evil.example/a/b", reference } as never)).toThrow(/did you mean "repository"\?/);
    await expect(() => resolveConsumerExpectations(null as never)).toThrowWithCode("POLICY_INVALID");
    await expect(() => resolveConsumerExpectations({ reference, gates: new Map([["unit", "evil"]]) } as never)).toThrowWithCode("POLICY_INVALID");
    const expectations = resolveConsumerExpectations({ reference });
    await expect(() => policyForDocument({ ...expectations, pakage: "evil" } as never, { package: "demo-plugin" })).toThrowWithCode("POLICY_INVALID");
    // Passing: the expectations as resolved.
    expect(policyForDocument(expectations, { package: "demo-plugin" })).toMatchObject({ package: "demo-plugin", registryRepository: "127.0.0.1:5000/acme/plugin" });
  });
});
