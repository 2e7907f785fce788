/**
 * The one home of policy resolution (docs/architecture.md, "Policy: where expectations come from"):
 * consumer expectations come from pins and an explicit policy file only,
 * each named as the source of its expectation; gate pins are optional; the
 * release's own tarball declares the gates its evidence must name.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_GATE_COMMANDS,
  checkDeclaredGates,
  gatesDeclaredBy,
  parseGatePin,
  policyForDocument,
  policyFromPackageJson,
  resolveConsumerExpectations,
  verifyFinalReceipt,
  verifyReleaseIdentity,
} from "../../src/contract/index.js";
import type { JsonObject } from "../../src/contract/canonical-json.js";
import { provenanceKeyDeclaredBy, requireGatePins } from "../../src/contract/policy.js";
import { BUNDLE_REFERENCE, POLICY, packTinyPackage, receiptFor, tempDir, testedManifestFor } from "../support/contract-fixture.js";

const REF = `ghcr.io/acme/demo-plugin@sha256:${"c".repeat(64)}`;

describe("resolveConsumerExpectations", () => {
  it("defaults the repository to the pinned reference's and pins nothing else", () => {
    expect(resolveConsumerExpectations({ reference: REF })).toEqual({ repository: "ghcr.io/acme/demo-plugin", gates: {}, sources: { repository: "the pinned reference" } });
  });

  it("flags win over the policy file, the policy file over the reference; each names its source", () => {
    const policyFile = { path: "pkg/package.json", json: { name: "mine", hermesPluginKit: { repository: "ghcr.io/me/mine", gates: { unit: "just unit" } } } };
    const fromFile = resolveConsumerExpectations({ reference: REF, policyFile });
    expect(fromFile.repository).toBe("ghcr.io/me/mine");
    expect(fromFile.package).toBe("mine");
    expect(fromFile.gates).toEqual({ ...DEFAULT_GATE_COMMANDS, unit: "just unit" });
    expect(fromFile.sources).toEqual({
      repository: "pkg/package.json (--policy) hermesPluginKit.repository",
      package: "pkg/package.json (--policy) name",
      gates: "pkg/package.json (--policy) hermesPluginKit.gates",
    });
    const flags = resolveConsumerExpectations({ reference: REF, policyFile, repository: "ghcr.io/x/y", package: "y", gates: { host_contract: "npm run doctor" } });
    expect(flags).toMatchObject({ repository: "ghcr.io/x/y", package: "y", sources: { repository: "--repository", package: "--package", gates: "--expect-gate" } });
    expect(flags.gates.host_contract).toBe("npm run doctor");
  });

  it("refuses when nothing names a repository, and malformed pins", async () => {
    await expect(() => resolveConsumerExpectations({})).toThrowWithCode("POLICY_REPOSITORY_UNPINNED");
    await expect(() => resolveConsumerExpectations({ repository: "owner/name" })).toThrowWithCode("REPOSITORY_INVALID");
    await expect(() => resolveConsumerExpectations({ reference: REF, package: "Not A Name" })).toThrowWithCode("POLICY_INVALID");
    await expect(() => resolveConsumerExpectations({ reference: "ghcr.io/acme/demo:v1" })).toThrowWithCode("REFERENCE_NOT_PINNED");
  });

  it("a --policy file pins what it names and refuses, never skips, a field in another shape (POLICY_INVALID); one naming nothing is refused", async () => {
    const file = (json: Record<string, unknown>) => ({ reference: REF, policyFile: { path: "p.json", json } });
    expect(resolveConsumerExpectations(file({ name: "mine" }))).toMatchObject({ repository: "ghcr.io/acme/demo-plugin", package: "mine", sources: { package: "p.json (--policy) name" } });
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'p.json (--policy) pins nothing: expected a package.json with "name" (the package) and "hermesPluginKit" (repository, gates), found an empty object; fix: name the package.json of the plugin you trust, or drop --policy'],
      [{ description: "x", private: true }, 'p.json (--policy) pins nothing: expected a package.json with "name" (the package) and "hermesPluginKit" (repository, gates), found only "description", "private"; fix:'],
      [{ name: "Not A Name" }, 'p.json (--policy) name must be an npm package name, found "Not A Name"'],
      [{ name: 5, hermesPluginKit: {} }, "p.json (--policy) name must be an npm package name, found number 5"],
      [{ name: "mine", hermesPluginKit: "ghcr.io/me/mine" }, 'p.json (--policy) hermesPluginKit must be an object ({ repository, gates, ... }), found "ghcr.io/me/mine"; fix: write the section as an object in p.json (--policy)'],
      [{ name: "mine", hermesPluginKit: { repository: ["ghcr.io/me/mine"] } }, "p.json (--policy) hermesPluginKit.repository must name the registry repository (a string), found an array"],
      // A misspelled key would pin nothing, silently: refused, with the nearest key the kit reads.
      [{ name: "mine", hermesPluginKit: { gate: { unit: "evil" } } }, 'p.json (--policy) hermesPluginKit has a key the kit does not read: "gate" (it reads repository, install, gates, installTime, provenance); did you mean "gates"?'],
      [{ hermesPluginKit: { foo: 1 } }, 'p.json (--policy) hermesPluginKit has a key the kit does not read: "foo" (it reads repository, install, gates, installTime, provenance)'],
    ];
    for (const [json, message] of cases) {
      await expect(() => resolveConsumerExpectations(file(json))).toThrowWithCode("POLICY_INVALID");
      expect(() => resolveConsumerExpectations(file(json))).toThrow(message);
    }
  });

  it("a releasing package's hermesPluginKit with a key the kit does not read is refused (POLICY_INVALID), not ignored", async () => {
    const pkg = { name: "demo", version: "1.0.0", hermesPluginKit: { repository: "ghcr.io/a/demo", Gates: { unit: "just test" } } };
    await expect(() => policyFromPackageJson(pkg)).toThrowWithCode("POLICY_INVALID");
    expect(() => policyFromPackageJson(pkg)).toThrow('package.json hermesPluginKit has a key the kit does not read: "Gates" (it reads repository, install, gates, installTime, provenance); did you mean "gates"?');
    expect(() => policyFromPackageJson({ ...pkg, hermesPluginKit: { repository: "ghcr.io/a/demo", instal: "npm ci" } })).toThrow('did you mean "install"?');
    expect(() => policyFromPackageJson({ ...pkg, hermesPluginKit: { repository: "ghcr.io/a/demo", zzzzzzzz: 1 } })).not.toThrow(/did you mean/);
  });

  it("policyForDocument takes the pinned package, else the release's own", () => {
    const open = resolveConsumerExpectations({ reference: REF });
    expect(policyForDocument(open, { package: "demo-plugin" })).toMatchObject({ package: "demo-plugin", sources: { package: "the release's own package name" } });
    expect(policyForDocument(resolveConsumerExpectations({ reference: REF, package: "other" }), { package: "demo-plugin" }).package).toBe("other");
  });
});

describe("parseGatePin", () => {
  it("splits at the first =", () => {
    expect(parseGatePin("unit=npm test -- --reporter=dot")).toEqual(["unit", "npm test -- --reporter=dot"]);
  });
  it("ignores the spaces around = (the gate name, the command's leading whitespace); the rest of the command is kept as given", () => {
    expect(parseGatePin("unit = npm test")).toEqual(["unit", "npm test"]);
    expect(parseGatePin(" unit\t=\t npm test")).toEqual(["unit", "npm test"]);
    expect(parseGatePin("unit= npm  test ")).toEqual(["unit", "npm  test "]);
  });
  it.each(["unit", "=npm test", "lint=npm run lint", "unit=", "unit=a\nb", "unit =   ", " = npm test"])("refuses %j with POLICY_INVALID", async (value) => {
    await expect(() => parseGatePin(value)).toThrowWithCode("POLICY_INVALID");
  });
  it("refuses a value that is not a string (a library call from plain JavaScript) with POLICY_INVALID, never a TypeError", async () => {
    await expect(() => parseGatePin(5 as never)).toThrowWithCode("POLICY_INVALID");
    expect(() => parseGatePin(5 as never)).toThrow('--expect-gate must be <gate>=<command> (e.g. unit="npm test"), found number 5');
  });
  it("property: any known gate and one-line command round-trips", () => {
    fc.assert(
      fc.property(fc.constantFrom("unit", "public_contract", "host_contract", "build_metadata"), fc.string({ minLength: 1, maxLength: 80 }).filter((s) => s.trim().length > 0 && !/[\0\r\n]/.test(s)), (gate, command) => {
        expect(parseGatePin(`${gate}=${command}`)).toEqual([gate, command.replace(/^\s+/, "")]);
      }),
    );
  });
});

describe("gate pins in receipt verification", () => {
  it("an unpinned gate accepts the command the release ran; a pinned one must match, and the mismatch names the pin's source", async () => {
    const dir = await tempDir();
    const receipt = receiptFor(await testedManifestFor(await packTinyPackage(dir, "demo-plugin", "0.8.0")));
    const doc = JSON.parse(JSON.stringify(receipt)) as JsonObject;
    const open = { package: POLICY.package, registryRepository: POLICY.registryRepository, gates: {} };
    expect(verifyFinalReceipt(doc, open, { bundleReference: BUNDLE_REFERENCE }).version).toBe("0.8.0");
    const pinned = { ...open, gates: { unit: "just unit" }, sources: { gates: "--expect-gate" } };
    let message = "";
    try {
      verifyFinalReceipt(doc, pinned);
    } catch (error) {
      message = (error as Error).message;
      expect((error as { code: string }).code).toBe("GATE_COMMAND_MISMATCH");
    }
    expect(message).toContain('ran "npm test", not the pinned command "just unit" (from --expect-gate); fix: do not use this release, or, only if you accept that command as the unit gate, pin it instead (unit="npm test" in --expect-gate)');
    expect(message).toContain("release receipt (release-receipt.json) gate unit ran");
    expect(message).not.toContain("did not pass");
    // A tested manifest (verify-manifest, a bundle fetch) names itself, not a receipt.
    const tested = JSON.parse(JSON.stringify(await testedManifestFor(await packTinyPackage(await tempDir(), "demo-plugin", "0.8.0")))) as JsonObject;
    expect(() => verifyReleaseIdentity(tested, "tested", pinned)).toThrow(/^tested manifest \(release-manifest\.json\) gate unit ran "npm test", not the pinned command "just unit"/);
    const noCommand = JSON.parse(JSON.stringify(doc)) as { evidence: { unit: { command: string } } };
    noCommand.evidence.unit.command = " ";
    await expect(() => verifyFinalReceipt(noCommand as unknown as JsonObject, open)).toThrowWithCode("GATE_NOT_PASSED");
  });
});

describe("checkDeclaredGates", () => {
  const evidence = Object.fromEntries(Object.entries(DEFAULT_GATE_COMMANDS).map(([g, command]) => [g, { command }]));
  it("passes when the evidence names the declared gates", () => {
    expect(() => checkDeclaredGates(evidence, gatesDeclaredBy({ name: "x" }), "package/package.json")).not.toThrow();
  });
  it("fails with GATE_COMMAND_MISMATCH naming the declaring file when the tarball declares another command", async () => {
    const declared = gatesDeclaredBy({ name: "x", hermesPluginKit: { gates: { unit: "npm run test:all" } } });
    await expect(() => checkDeclaredGates(evidence, declared, "package/package.json of x-1.0.0.tgz")).toThrowWithCode("GATE_COMMAND_MISMATCH");
    expect(() => checkDeclaredGates(evidence, declared, "package/package.json of x-1.0.0.tgz")).toThrow(/x-1\.0\.0\.tgz declares "npm run test:all"/);
  });
  it("gatesDeclaredBy refuses unknown gates and empty commands", async () => {
    await expect(() => gatesDeclaredBy({ hermesPluginKit: { gates: { lint: "x" } } })).toThrowWithCode("POLICY_INVALID");
    await expect(() => gatesDeclaredBy({ hermesPluginKit: { gates: { unit: "" } } })).toThrowWithCode("POLICY_INVALID");
    await expect(() => gatesDeclaredBy({ hermesPluginKit: { gates: [] } })).toThrowWithCode("POLICY_INVALID");
  });
});

describe("requireGatePins: gate pins are plain data, checked as every option is (plainObjectProblem)", () => {
  it("passing: an object literal of gate commands", () => {
    expect(requireGatePins({ unit: "npm test" }, "policy.gates")).toEqual({ unit: "npm test" });
  });

  it.each<[string, unknown, RegExp]>([
    ["a Map", new Map([["unit", "evil"]]), /^policy\.gates must be a plain object \(an object literal or parsed JSON\), found an instance of Map; expected the gate commands to pin as an object literal \{ unit\?, public_contract\?, host_contract\?, build_metadata\? \}$/],
    ["gates through a prototype", Object.create({ unit: "evil" }), /^policy\.gates must be a plain object .*, found an object with another prototype \(an inherited value is not read\); expected/],
    ["a getter", { get unit() { return "npm test"; } }, /^policy\.gates\.unit is a getter or setter: give the value itself/],
    ["a hidden gate", Object.defineProperty({}, "unit", { value: "evil", enumerable: false }), /^policy\.gates\.unit is not enumerable: give it as an ordinary property/],
    ["an own __proto__ (JSON-parsed)", JSON.parse('{"__proto__":{"unit":"evil"}}'), /^policy\.gates has an own "__proto__" key, which no option is/],
    ["a string", "unit=npm test", /^policy\.gates must be a plain object .*, found a string; expected/],
  ])("%s is POLICY_INVALID", (_name, gates, message) => {
    expect(() => requireGatePins(gates, "policy.gates")).toThrowWithCode("POLICY_INVALID");
    expect(() => requireGatePins(gates, "policy.gates")).toThrow(message);
  });
});

describe("provenanceKeyDeclaredBy: a field it does not read", () => {
  it("is POLICY_INVALID naming the field it meant (keys for key)", async () => {
    expect(provenanceKeyDeclaredBy({ provenance: { key: "keys/release.pub" } })).toBe("keys/release.pub");
    await expect(() => provenanceKeyDeclaredBy({ provenance: { keys: "keys/release.pub" } })).toThrowWithCode("POLICY_INVALID");
    expect(() => provenanceKeyDeclaredBy({ provenance: { keys: "keys/release.pub" } })).toThrow('package.json hermesPluginKit.provenance has unknown field "keys" (expected key; did you mean "key"?)');
    expect(() => provenanceKeyDeclaredBy({ provenance: { publicKeyFile: "k.pub" } })).toThrow('package.json hermesPluginKit.provenance has unknown field "publicKeyFile" (expected key)');
  });
});

describe("gatesDeclaredBy: a hermesPluginKit section of another shape", () => {
  it("is POLICY_INVALID, never read as no section (which would give the default gates)", async () => {
    // Passing: no section gives the defaults; an object section gives its gates over them.
    expect(gatesDeclaredBy({ name: "demo" })).toEqual(DEFAULT_GATE_COMMANDS);
    expect(gatesDeclaredBy({ name: "demo", hermesPluginKit: { gates: { unit: "just test" } } }).unit).toBe("just test");
    for (const section of [5, "ghcr.io/a/demo", ["gates"], null, true]) {
      await expect(() => gatesDeclaredBy({ name: "demo", hermesPluginKit: section })).toThrowWithCode("POLICY_INVALID");
      await expect(() => policyFromPackageJson({ name: "demo", hermesPluginKit: section })).toThrowWithCode("POLICY_INVALID");
    }
    expect(() => gatesDeclaredBy({ name: "demo", hermesPluginKit: 5 })).toThrow("package.json hermesPluginKit must be an object ({ repository, gates, ... }), found number 5; fix: write the section as an object in package.json");
    expect(() => gatesDeclaredBy({ hermesPluginKit: { gates: 5 } })).toThrow("package.json hermesPluginKit.gates must be an object of gate commands ({ unit, public_contract, host_contract, build_metadata }), found number 5");
    expect(() => gatesDeclaredBy({ hermesPluginKit: { gates: { unti: "x" } } })).toThrow('package.json hermesPluginKit.gates has unknown gate "unti" (expected one of unit, public_contract, host_contract, build_metadata); did you mean "unit"?');
  });
});
