/**
 * Install-time behaviour found in a verified tarball listing: every lifecycle
 * script npm runs, the implicit node-gyp build, man pages, bundled
 * dependencies; links that escape the package are refused whatever the
 * policy says; the record in the tested manifest is checked.
 */
import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkInstallTimeRecord,
  installTimeBehaviour,
  installTimeDeclaredBy,
  isRegistrySpecifier,
  requireInstallTimeAllowed,
  type InstallTimeInput,
} from "../../src/contract/install-time.js";
import { policyFromPackageJson } from "../../src/contract/policy.js";
import { verifyTestedManifest } from "../../src/contract/release-document.js";
import type { JsonObject } from "../../src/contract/canonical-json.js";
import { POLICY, SOURCE_SHA, passedGates } from "../support/contract-fixture.js";
import { createTestedManifest } from "../../src/contract/manifest.js";

function listing(pkg: Record<string, unknown>, files: string[] = [], bundled: Record<string, Record<string, unknown> | string> = {}): InstallTimeInput {
  const kept = new Map<string, Buffer>();
  const members = ["package.json", "index.js", ...files].map((path) => ({ path, size: 1, mode: 0o644 }));
  for (const [root, content] of Object.entries(bundled)) {
    members.push({ path: `${root}/package.json`, size: 1, mode: 0o644 });
    kept.set(`${root}/package.json`, Buffer.from(typeof content === "string" ? content : JSON.stringify(content)));
  }
  return { members, packageJson: { name: "demo-plugin", version: "1.0.0", ...pkg } as JsonObject, kept };
}

describe("installTimeBehaviour", () => {
  it("the handed input: preinstall, install and postinstall scripts are found", () => {
    expect(installTimeBehaviour(listing({ scripts: { preinstall: "node a.js", install: "node b.js", postinstall: "node c.js", test: "x" } }))).toEqual(["install", "postinstall", "preinstall"]);
  });
  it.each([
    ["prepare (git and directory installs)", { scripts: { prepare: "tsc" } }, [], ["prepare"]],
    ["preprepare and postprepare", { scripts: { preprepare: "a", postprepare: "b" } }, [], ["postprepare", "preprepare"]],
    ["uninstall scripts (npm 6)", { scripts: { preuninstall: "a", uninstall: "b", postuninstall: "c" } }, [], ["postuninstall", "preuninstall", "uninstall"]],
    ["an implicit node-gyp build (binding.gyp at the root)", {}, ["binding.gyp"], ["node-gyp"]],
    ["any *.gyp at the root", {}, ["addon.gyp"], ["node-gyp"]],
    ["man pages", { man: ["man/demo.1"] }, ["man/demo.1"], ["man"]],
    ["a man page as a string", { man: "./man/demo.1" }, ["man/demo.1"], ["man"]],
    ["nothing for other scripts, empty scripts and safe bins", { scripts: { test: "x", build: "y", postinstall: "" }, bin: { demo: "./bin.js" } }, ["bin.js"], []],
    ["nothing for a gyp file below the root", {}, ["src/binding.gyp"], []],
    ["nothing for gypfile: false", { gypfile: false }, ["binding.gyp"], []],
    ["only the install script when one replaces node-gyp", { scripts: { install: "node build.js" } }, ["binding.gyp"], ["install"]],
    ["a root gyp file in another case (case-insensitive file systems find binding.gyp)", {}, ["Binding.GYP"], ["node-gyp"]],
    ["nothing for registry dependencies (versions, ranges, tags, npm: aliases)", { dependencies: { a: "1.2.3", b: "^1.0.0 || >=2.1 <3", c: "latest", d: "*", e: "", f: "npm:@s/f@~1.2.0" }, optionalDependencies: { g: "1.x" }, peerDependencies: { h: ">=1" } }, [], []],
  ])("%s", (_label, pkg, files, expected) => {
    expect(installTimeBehaviour(listing(pkg, files))).toEqual(expected);
  });

  it("bundled dependencies run their own scripts: recorded under their node_modules path", () => {
    const found = installTimeBehaviour(
      listing({ bundleDependencies: ["a", "@s/b"] }, ["node_modules/a/binding.gyp", "node_modules/@s/b/node_modules/c/bin.js"], {
        "node_modules/a": { name: "a", version: "1.0.0" },
        "node_modules/@s/b": { name: "@s/b", version: "1.0.0", scripts: { postinstall: "node x.js" } },
        "node_modules/@s/b/node_modules/c": { name: "c", version: "1.0.0", scripts: { preinstall: "node y.js" }, bin: { c: "bin.js" } },
      }),
    );
    expect(found).toEqual(["node_modules/@s/b/node_modules/c:preinstall", "node_modules/@s/b:postinstall", "node_modules/a:node-gyp"]);
  });

  it.each([
    ["a bin name with a path", { bin: { "../../bin/evil": "./bin.js" } }, ["bin.js"]],
    ["a bin name with a colon", { bin: { "c:evil": "./bin.js" } }, ["bin.js"]],
    ["a bin name '..'", { bin: { "..": "./bin.js" } }, ["bin.js"]],
    ["a bin target escaping the package", { bin: { demo: "../../../etc/passwd" } }, []],
    ["an absolute bin target", { bin: { demo: "/usr/bin/env" } }, []],
    ["a bin target through '..'", { bin: { demo: "lib/../bin.js" } }, ["bin.js", "lib/x.js"]],
    ["a bin target with a backslash", { bin: { demo: "bin\\tool.js" } }, ["bin/tool.js"]],
    ["a bin target that is not in the tarball", { bin: { demo: "./missing.js" } }, []],
    ["a string bin that is not in the tarball", { bin: "./missing.js" }, []],
    ["a bin of another type", { bin: 42 }, []],
    ["directories.bin (implicit links)", { directories: { bin: "./bin" } }, ["bin/a.js"]],
    ["directories.man (implicit links)", { directories: { man: "./man" } }, ["man/a.1"]],
    ["a man page outside the package", { man: ["../../usr/share/man/man1/ls.1"] }, []],
    ["a git dependency (npm clones it and runs its prepare script)", { dependencies: { a: "git+https://example.invalid/a.git#v1" } }, []],
    ["a GitHub shorthand dependency", { dependencies: { a: "acme/a#semver:^1" } }, []],
    ["a github: dependency", { dependencies: { a: "github:acme/a" } }, []],
    ["a file: dependency outside the package", { dependencies: { a: "file:../../a" } }, []],
    ["a relative directory dependency", { dependencies: { a: "../a" } }, []],
    ["a home-relative dependency", { dependencies: { a: "~/a" } }, []],
    ["a tarball path dependency", { dependencies: { a: "a-1.0.0.tgz" } }, []],
    ["a URL dependency", { optionalDependencies: { a: "https://example.invalid/a-1.0.0.tgz" } }, []],
    ["a link: dependency", { dependencies: { a: "link:../a" } }, []],
    ["an npm: alias to a git dependency", { dependencies: { a: "npm:b@git+ssh://git@example.invalid/b.git" } }, []],
    ["a peer dependency from git (npm 7+ installs peers)", { peerDependencies: { a: "git://example.invalid/a.git" } }, []],
    ["a dependency spec of another type", { dependencies: { a: 1 } }, []],
    ["dependencies of another type", { dependencies: ["a"] }, []],
  ])("refuses %s whatever the policy says: INSTALL_TIME_UNSAFE", async (_label, pkg, files) => {
    await expect(() => installTimeBehaviour(listing(pkg, files))).toThrowWithCode("INSTALL_TIME_UNSAFE");
  });

  it("refuses a bundled package.json that cannot be read (what it runs cannot be checked)", async () => {
    await expect(() => installTimeBehaviour(listing({}, [], { "node_modules/a": "{not json" }))).toThrowWithCode("INSTALL_TIME_UNSAFE");
    await expect(() => installTimeBehaviour(listing({}, [], { "node_modules/a": { name: "a", bin: { x: "../../x" } } }))).toThrowWithCode("INSTALL_TIME_UNSAFE");
    await expect(() => installTimeBehaviour(listing({}, [], { "node_modules/a": { name: "a", dependencies: { b: "file:../../../b" } } }))).toThrowWithCode("INSTALL_TIME_UNSAFE");
  });
});

describe("the policy opt-in (hermesPluginKit.installTime)", () => {
  it("is read from package.json and validated", async () => {
    const pkg = { name: "demo-plugin", hermesPluginKit: { repository: "oci-layout:/srv/x", installTime: ["postinstall", "node-gyp", "postinstall"] } };
    expect(installTimeDeclaredBy(pkg)).toEqual(["node-gyp", "postinstall"]);
    expect(policyFromPackageJson(pkg).installTime).toEqual(["node-gyp", "postinstall"]);
    expect(policyFromPackageJson({ name: "demo-plugin", hermesPluginKit: { repository: "oci-layout:/srv/x" } }).installTime).toBeUndefined();
    for (const bad of ["postinstall", ["curl"], [1], {}]) {
      await expect(() => installTimeDeclaredBy({ hermesPluginKit: { installTime: bad } })).toThrowWithCode("POLICY_INVALID");
    }
  });
  it("allows exactly what is declared; a bundled dependency's behaviour is allowed by its kind", async () => {
    expect(() => requireInstallTimeAllowed(["node_modules/a:postinstall", "postinstall"], ["postinstall"], "x.tgz")).not.toThrow();
    expect(() => requireInstallTimeAllowed([], undefined, "x.tgz")).not.toThrow();
    let message = "";
    try {
      requireInstallTimeAllowed(["install", "postinstall"], ["postinstall"], "x.tgz");
    } catch (error) {
      expect((error as { code: string }).code).toBe("INSTALL_TIME_NOT_ALLOWED");
      message = (error as Error).message;
    }
    expect(message).toContain("install");
    expect(message).toContain("hermesPluginKit.installTime");
  });
});

describe("the install_time record of a tested manifest", () => {
  const base = () =>
    createTestedManifest({
      policy: { ...POLICY, installTime: ["postinstall"] },
      previousVersion: "0.7.0",
      version: "0.8.0",
      tag: "v0.8.0",
      sourceSha: SOURCE_SHA,
      runId: "1",
      runAttempt: 1,
      gates: passedGates(),
      artifacts: [{ filename: "demo-plugin-0.8.0.tgz", sha256: "c".repeat(64), size: 10 }],
      installTime: ["postinstall"],
    });
  it("is written when non-empty (13 keys) and absent otherwise (12 keys)", () => {
    expect(base().install_time).toEqual(["postinstall"]);
    expect(Object.keys(base())).toHaveLength(13);
  });
  it("createTestedManifest refuses behaviour the policy does not declare", async () => {
    expect(() =>
      createTestedManifest({
          policy: POLICY,
          previousVersion: "0.7.0",
          version: "0.8.0",
          tag: "v0.8.0",
          sourceSha: SOURCE_SHA,
          runId: "1",
          runAttempt: 1,
          gates: passedGates(),
          artifacts: [{ filename: "demo-plugin-0.8.0.tgz", sha256: "c".repeat(64), size: 10 }],
          installTime: ["postinstall"],
        }),
    ).toThrowWithCode("INSTALL_TIME_NOT_ALLOWED");
  });
  it.each([[[]], [["postinstall", "install"]], [["install", "install"]], [["curl"]], [["node_modules/../x:postinstall"]], ["postinstall"]])("refuses install_time %j: INSTALL_TIME_INVALID", async (value) => {
    const doc = { ...base(), install_time: value } as unknown as JsonObject;
    await expect(() => verifyTestedManifest(doc, POLICY)).toThrowWithCode("INSTALL_TIME_INVALID");
    await expect(() => checkInstallTimeRecord(value)).toThrowWithCode("INSTALL_TIME_INVALID");
  });
  it("a second optional key is still an unexpected field", async () => {
    await expect(() => verifyTestedManifest({ ...base(), install_scripts: ["x"] } as unknown as JsonObject, POLICY)).toThrowWithCode("RECEIPT_FIELDS_MISMATCH");
  });
});

/** npm's own specifier parser (npm-package-arg, as bundled with the npm the project depends on) as the oracle. */
const npa = createRequire(import.meta.url)("../../node_modules/npm/node_modules/npm-package-arg/lib/npa.js") as {
  resolve: (name: string, spec: string) => { type: string; subSpec?: { type: string } };
};
const REGISTRY_TYPES = ["version", "range", "tag"];

describe("isRegistrySpecifier against npm-package-arg", () => {
  const fragment = fc.constantFrom("1.2.3", "^1", "~1.2", ">=1 <2", "||", " ", "x", "*", "latest", "next", "npm:", "@s/", "a", "@", "#", ":", "/", "\\", ".", "..", "~/", "file:", "link:", "git+", "git:", "ssh:", "https:", "http:", "//", "github:", "gitlab:", "acme/a", "a.tgz", ".tar.gz", ".tar", "C:", "-", "+build", "(", ")", "!", "'");
  const spec = fc.oneof(fc.array(fragment, { maxLength: 6 }).map((parts) => parts.join("")), fc.string({ maxLength: 12 }));

  it("never accepts what npm would fetch from git, a URL, a file or a directory", () => {
    fc.assert(
      fc.property(spec, (s) => {
        if (!isRegistrySpecifier(s)) return;
        let parsed: { type: string; subSpec?: { type: string } } | undefined;
        try {
          parsed = npa.resolve("dep", s);
        } catch {
          return; // npm refuses it too: nothing is fetched.
        }
        const type = parsed.type === "alias" ? parsed.subSpec?.type : parsed.type;
        expect(REGISTRY_TYPES, `${JSON.stringify(s)} is ${parsed.type}`).toContain(type);
      }),
      { numRuns: 3000 },
    );
  });

  it("accepts the registry forms npm documents", () => {
    for (const s of ["1.2.3", "^1.0.0", "~1.2", ">=1 <2", "1.x", "*", "", "latest", "1.0.0 - 2.0.0", "npm:@s/f@^1", "npm:f"]) expect(isRegistrySpecifier(s), s).toBe(true);
  });
});
