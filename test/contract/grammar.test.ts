import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  bumpVersion,
  isDiscoveryTag,
  isLoopbackHost,
  parseReference,
  parseRepository,
  parseStableSemver,
  policyFromPackageJson,
  releaseClassOf,
  requireDigest,
  requireDiscoveryTag,
  requireGitSha,
  tarballFileName,
} from "../../src/contract/index.js";
import { editDistance, nearestName, tagShapeProblem } from "../../src/contract/grammar.js";

const HEX = "0123456789abcdef";
const digestArb = fc.string({ unit: fc.constantFrom(...HEX), minLength: 64, maxLength: 64 }).map((h) => `sha256:${h}`);
const component = fc.stringMatching(/^[a-z0-9]+(?:[._-][a-z0-9]+)*$/).filter((s) => s.length > 0 && s.length < 30);
const repoArb = fc
  .tuple(fc.constantFrom("ghcr.io", "127.0.0.1:5000", "registry.example:443", "localhost"), fc.array(component, { minLength: 1, maxLength: 3 }))
  .map(([host, parts]) => `${host}/${parts.join("/")}`);

describe("stable SemVer (S1)", () => {
  it.each(["0.0.0", "1.2.3", "10.20.30"])("accepts %s", (v) => {
    expect(parseStableSemver(v)).toBeTruthy();
  });
  it.each(["01.2.3", "1.02.3", "1.2.03", "1.2.3-rc.1", "1.2.3+b", "v1.2.3", "1.2", "1.2.3.4", "", " 1.2.3", "１.2.3", "1.2.3\n"])("refuses %j with SEMVER_INVALID", async (v) => {
    await expect(() => parseStableSemver(v)).toThrowWithCode("SEMVER_INVALID");
  });
});

describe("release class (S2)", () => {
  it.each([
    ["0.7.0", "1.0.0", "major"],
    ["0.7.0", "0.8.0", "minor"],
    ["0.7.0", "0.7.1", "patch"],
    ["1.9.9", "2.0.0", "major"],
  ])("%s -> %s is %s", (a, b, cls) => {
    expect(releaseClassOf(a, b)).toBe(cls);
  });
  it.each([
    ["0.7.0", "0.7.0"],
    ["0.7.0", "0.9.0"],
    ["0.7.0", "0.6.0"],
    ["0.7.0", "1.1.0"],
    ["0.7.0", "0.8.1"],
    ["0.7.3", "1.0.1"],
  ])("%s -> %s is not one bump", async (a, b) => {
    await expect(() => releaseClassOf(a, b)).toThrowWithCode("RELEASE_NOT_ONE_BUMP");
  });
  it("bumpVersion and releaseClassOf agree for every class", () => {
    fc.assert(
      fc.property(fc.nat(1000), fc.nat(1000), fc.nat(1000), fc.constantFrom("major", "minor", "patch") as fc.Arbitrary<"major" | "minor" | "patch">, (a, b, c, cls) => {
        const v = `${a}.${b}.${c}`;
        expect(releaseClassOf(v, bumpVersion(v, cls))).toBe(cls);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("scalar grammars (S3, S5, digest)", () => {
  it("Git SHA: 40 lowercase hex only", async () => {
    expect(requireGitSha("a".repeat(40), "source_sha")).toBe("a".repeat(40));
    await expect(() => requireGitSha("A".repeat(40), "source_sha")).toThrowWithCode("GIT_SHA_INVALID");
    await expect(() => requireGitSha("a".repeat(39), "source_sha")).toThrowWithCode("GIT_SHA_INVALID");
  });
  it("digest: sha256 with 64 lowercase hex", async () => {
    expect(requireDigest("sha256:" + "f".repeat(64))).toMatch(/^sha256:/);
    await expect(() => requireDigest("sha512:" + "f".repeat(128))).toThrowWithCode("DIGEST_INVALID");
    await expect(() => requireDigest("sha256:" + "F".repeat(64))).toThrowWithCode("DIGEST_INVALID");
  });
  it("discovery tag grammar", async () => {
    expect(isDiscoveryTag("v1.2.3-receipt")).toBe(true);
    expect(isDiscoveryTag("candidate-1-" + "a".repeat(40))).toBe(true);
    expect(isDiscoveryTag("_x")).toBe(true);
    expect(isDiscoveryTag("a".repeat(128))).toBe(true);
    for (const bad of ["", "-x", ".x", "a".repeat(129), "a/b", "a:b", "a b"]) {
      await expect(() => requireDiscoveryTag(bad)).toThrowWithCode("TAG_INVALID");
    }
  });
  it("a refused tag is told which rule of the grammar it breaks, and where", () => {
    const rule = "a tag is 1-128 characters of A-Z a-z 0-9 _ . -, the first not . or -";
    expect(() => requireDiscoveryTag("bad tag")).toThrow(`invalid OCI tag "bad tag": ${rule}; this one has a space at character 4`);
    expect(() => requireDiscoveryTag("-x")).toThrow(`${rule}; this one starts with "-"`);
    expect(() => requireDiscoveryTag("")).toThrow(`${rule}; this one is empty`);
    expect(() => requireDiscoveryTag("a".repeat(129))).toThrow(`${rule}; this one has 129`);
    expect(() => requireDiscoveryTag("v\u{1F600}/1")).toThrow(`${rule}; this one has "\u{1F600}" at character 2`);
    expect(() => requireDiscoveryTag("v1\t")).toThrow(`${rule}; this one has whitespace "\\t" at character 3`);
    expect(tagShapeProblem("v1")).toBe(rule);
  });
  it("property: tagShapeProblem names a rule for every string the grammar refuses", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 140 }), (value) => {
        fc.pre(!isDiscoveryTag(value));
        expect(tagShapeProblem(value)).toMatch(/; this one (is empty|has [0-9]+$|starts with |has .+ at character [0-9]+$)/);
      }),
      { numRuns: 2000 },
    );
  });
  it("tarball names follow npm pack", async () => {
    expect(tarballFileName("demo-plugin", "1.0.0")).toBe("demo-plugin-1.0.0.tgz");
    expect(tarballFileName("@acme/demo", "1.0.0")).toBe("acme-demo-1.0.0.tgz");
    await expect(() => tarballFileName("Bad Name", "1.0.0")).toThrowWithCode("PACKAGE_NAME_INVALID");
    await expect(() => tarballFileName("demo", "1.0")).toThrowWithCode("SEMVER_INVALID");
  });
  it("loopback hosts", () => {
    expect(["localhost", "127.0.0.1", "127.1.2.3", "[::1]", "::1"].every(isLoopbackHost)).toBe(true);
    expect(["10.0.0.1", "ghcr.io", "127.0.0.1.example", "localhost.evil"].some(isLoopbackHost)).toBe(false);
  });
});

describe("repositories and references (S4)", () => {
  const pinned = "ghcr.io/acme/demo-plugin";
  const digest = "sha256:" + "a".repeat(64);
  it("parses registry and layout repositories", () => {
    expect(parseRepository("127.0.0.1:5000/ns/name")).toMatchObject({ kind: "registry", host: "127.0.0.1", port: 5000, path: "ns/name" });
    expect(parseRepository("oci-layout:/srv/store")).toMatchObject({ kind: "layout", dir: "/srv/store" });
  });
  it("a layout repository ending in :<tag> is refused with the store directory as the fix; a ':' elsewhere in the path is a directory name", async () => {
    await expect(() => parseRepository("oci-layout:/srv/store:v1.2.0")).toThrowWithCode("REPOSITORY_INVALID");
    expect(() => parseRepository("oci-layout:/srv/store:v1.2.0")).toThrow(
      'invalid oci-layout repository: "oci-layout:/srv/store:v1.2.0" ends in a tag (:v1.2.0); a repository names the store directory alone; fix: pass oci-layout:/srv/store (hermes-plugin-kit resolve --reference oci-layout:/srv/store:v1.2.0 prints',
    );
    expect(() => parseRepository("oci-layout:store:latest")).toThrow("fix: pass oci-layout:store ");
    expect(parseRepository("oci-layout:/srv/a:b/store")).toMatchObject({ kind: "layout", dir: "/srv/a:b/store" });
    expect(parseRepository("oci-layout:/srv/store:")).toMatchObject({ kind: "layout", dir: "/srv/store:" });
    expect(parseRepository("oci-layout:/srv/store:-x")).toMatchObject({ kind: "layout", dir: "/srv/store:-x" });
  });
  it.each(["acme/demo", "ghcr.io/", "ghcr.io/Acme/demo", "ghcr.io/acme//demo", "oci-layout:", "", "ghcr.io/acme/demo:tag", "oci-layout:/srv/s:v1", "oci-layout:rel:latest"])("refuses repository %j", async (r) => {
    await expect(() => parseRepository(r)).toThrowWithCode("REPOSITORY_INVALID");
  });
  it("accepts a digest reference in the pinned repository", () => {
    expect(parseReference(`${pinned}@${digest}`, pinned)).toMatchObject({ digest, reference: `${pinned}@${digest}` });
    expect(parseReference(`oci-layout:/srv/s@${digest}`, "oci-layout:/srv/s").repository.kind).toBe("layout");
  });
  it.each([
    [`${pinned}:v1.0.0`, "REFERENCE_NOT_PINNED"],
    [`${pinned}:v1.0.0@${digest}`, "REFERENCE_NOT_PINNED"],
    [`${pinned}@sha256:${"A".repeat(64)}`, "REFERENCE_NOT_PINNED"],
    [`${pinned}@sha256:${"a".repeat(63)}`, "REFERENCE_NOT_PINNED"],
    [`${pinned}`, "REFERENCE_NOT_PINNED"],
    [`ghcr.io/acme/other@${digest}`, "REFERENCE_REPOSITORY_MISMATCH"],
    [`ghcr.io/acme/demo-plugin/sub@${digest}`, "REFERENCE_REPOSITORY_MISMATCH"],
  ])("refuses %s with %s", async (ref, code) => {
    await expect(() => parseReference(ref, pinned)).toThrowWithCode(code);
  });
  it("a tag reference names the fix: hermes-plugin-kit resolve (and the digest alone for repo:tag@digest)", () => {
    expect(() => parseReference(`${pinned}:v1.0.0`, pinned)).toThrow(`a tag (tags move; a release is pinned by digest); fix: run hermes-plugin-kit resolve --reference ${pinned}:v1.0.0 to print the digest reference`);
    expect(() => parseReference(`${pinned}:v1.0.0@${digest}`, pinned)).toThrow(`fix: pass ${pinned}@${digest} (the digest alone pins the release; hermes-plugin-kit resolve --reference ${pinned}:v1.0.0`);
    // A bare repository names no artifact: append a digest, or resolve one of its tags.
    expect(() => parseReference(pinned, pinned)).toThrow(`found "${pinned}", a repository with neither tag nor digest; fix: append the digest (${pinned}@sha256:<64 hex>), or run hermes-plugin-kit resolve --reference ${pinned}:<tag> to print`);
    expect(() => parseReference("oci-layout:/srv/store", pinned)).toThrow("a repository with neither tag nor digest; fix: append the digest (oci-layout:/srv/store@sha256:<64 hex>)");
    // Neither a tag nor a repository: no fix that would not work.
    expect(() => parseReference("Not A Repo", pinned)).not.toThrow(/fix:/);
  });
  it("a digest without its repository is named as such (not a tag), with the pinned repository in the fix", async () => {
    expect(() => parseReference(digest, pinned)).toThrow(`found "${digest}", a digest without its repository; fix: pass ${pinned}@${digest}`);
    expect(() => parseReference(digest)).toThrow(`a digest without its repository; fix: pass <repository>@${digest}`);
    expect(() => parseReference(digest)).not.toThrow(/a tag/);
    await expect(() => parseReference(digest, pinned)).toThrowWithCode("REFERENCE_NOT_PINNED");
    expect(() => parseReference("sha256:" + "A".repeat(64))).toThrow("a digest without its repository (hex must be lowercase); fix: pass <repository>@sha256:<64 hex>");
    // '@' with nothing before it: no repository, not an "invalid repository: \"\"".
    await expect(() => parseReference(`@${digest}`, pinned)).toThrowWithCode("REPOSITORY_INVALID");
    expect(() => parseReference(`@${digest}`, pinned)).toThrow(`names no repository before '@sha256:`);
    expect(() => parseReference(`@${digest}`, pinned)).toThrow(`fix: pass ${pinned}@${digest}`);
    expect(() => parseReference(`oci-layout:@${digest}`)).toThrow(`names no repository before '@sha256:`);
  });
  it("a tag before the digest of a layout store is named as a tag (as resolve reads oci-layout:<dir>:<tag>); uppercase hex gets the lowercase fix", async () => {
    await expect(() => parseReference(`oci-layout:/srv/store:v1.0.0@${digest}`)).toThrowWithCode("REFERENCE_NOT_PINNED");
    expect(() => parseReference(`oci-layout:/srv/store:v1.0.0@${digest}`)).toThrow(`registry reference must not carry a tag: "oci-layout:/srv/store:v1.0.0@sha256:`);
    expect(() => parseReference(`oci-layout:/srv/store:v1.0.0@${digest}`)).toThrow(`fix: pass oci-layout:/srv/store@${digest}`);
    expect(parseReference(`oci-layout:/srv/store@${digest}`).repository.repository).toBe("oci-layout:/srv/store");
    const upper = `${pinned}@sha256:${"AB".repeat(32)}`;
    expect(() => parseReference(upper, pinned)).toThrow(`(hex must be lowercase); fix: pass ${pinned}@sha256:${"ab".repeat(32)}`);
  });
  it("property: never accepts a tag reference, whatever the repository and tag", () => {
    fc.assert(
      fc.property(repoArb, fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}$/), fc.boolean(), digestArb, (repo, tag, withDigest, d) => {
        const ref = withDigest ? `${repo}:${tag}@${d}` : `${repo}:${tag}`;
        let accepted = true;
        try {
          parseReference(ref, repo);
        } catch {
          accepted = false;
        }
        expect(accepted).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });
  it("property: never accepts a repository other than the pinned one", () => {
    fc.assert(
      fc.property(repoArb, repoArb, digestArb, (pinnedRepo, other, d) => {
        fc.pre(pinnedRepo !== other);
        let accepted = true;
        try {
          parseReference(`${other}@${d}`, pinnedRepo);
        } catch (error) {
          expect((error as { code: string }).code).toBe("REFERENCE_REPOSITORY_MISMATCH");
          accepted = false;
        }
        expect(accepted).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });
  it("property: accepts every digest reference in the pinned repository", () => {
    fc.assert(
      fc.property(repoArb, digestArb, (repo, d) => {
        expect(parseReference(`${repo}@${d}`, repo).digest).toBe(d);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("policy from package.json", () => {
  it("uses defaults and overrides", () => {
    const p = policyFromPackageJson({ name: "demo", hermesPluginKit: { repository: "ghcr.io/a/demo", gates: { unit: "npm test" } } });
    expect(p).toMatchObject({
      package: "demo",
      registryRepository: "ghcr.io/a/demo",
      gates: { unit: "npm test", public_contract: "npm run doctor -- --no-call", host_contract: "npm run doctor", build_metadata: "npm run build" },
      install: "npm ci",
    });
    const custom = policyFromPackageJson({ name: "demo", hermesPluginKit: { repository: "ghcr.io/a/demo", gates: { unit: "just test" }, install: "npm ci --offline" } }, "oci-layout:/srv/x");
    expect(custom).toMatchObject({ registryRepository: "oci-layout:/srv/x", gates: { unit: "just test" }, install: "npm ci --offline", sources: { repository: "--repository" } });
  });
  it.each([
    [{ name: "demo" }],
    [{ name: "Demo", hermesPluginKit: { repository: "ghcr.io/a/demo" } }],
    [{ name: "demo", hermesPluginKit: { repository: "ghcr.io/a/demo", gates: { lint: "x" } } }],
    [{ name: "demo", hermesPluginKit: { repository: "ghcr.io/a/demo", gates: { unit: "" } } }],
    [{ name: "demo", hermesPluginKit: { repository: "ghcr.io/a/demo", install: "npm ci\nrm -rf /" } }],
    [{ name: "demo", hermesPluginKit: { repository: "ghcr.io/a/demo", install: 7 } }],
    [{ name: "demo", hermesPluginKit: "ghcr.io/a/demo" }],
  ])("refuses %j with POLICY_INVALID", async (pkg) => {
    await expect(() => policyFromPackageJson(pkg)).toThrowWithCode("POLICY_INVALID");
  });
});

describe("nearestName and editDistance (every 'did you mean')", () => {
  it("suggests the nearest known name within two edits, a case-only difference first, and nothing further away", () => {
    expect(nearestName("provenanse", ["policy", "provenance", "replace"])).toBe("provenance");
    expect(nearestName("RECEIPT", ["reference", "receipt"])).toBe("receipt");
    // The nearest, not the first within two edits: "--jsn" is one edit from --json, two from --jq.
    expect(nearestName("--jsn", ["--jq", "--json"])).toBe("--json");
    expect(nearestName("tarballs", ["reference", "receipt"])).toBeUndefined();
    expect(nearestName("gate", ["repository", "gates"], true)).toBe("gates");
    expect(nearestName("", ["repository"], true)).toBeUndefined();
    // Named by its last words: a key or flag that drops a qualifier, or adds one.
    expect(nearestName("repository", ["package", "registryRepository", "gates"])).toBe("registryRepository");
    expect(nearestName("--bundle-reference", ["--expect-bundle-reference", "--receipt"])).toBe("--expect-bundle-reference");
    expect(nearestName("expectedRegistryRepository", ["package", "registryRepository"])).toBe("registryRepository");
    // Not for a short last word (a qualifier-only match of "key" or "id" says little), nor for a word that is no last word.
    expect(nearestName("key", ["provenanceKey"])).toBeUndefined();
    expect(nearestName("registry", ["registryRepository"])).toBeUndefined();
  });

  it("editDistance is the Levenshtein distance: symmetric, zero only for equal strings, at most the longer length", () => {
    const word = fc.string({ maxLength: 12 });
    fc.assert(
      fc.property(word, word, (a, b) => {
        const d = editDistance(a, b);
        expect(editDistance(b, a)).toBe(d);
        expect(d === 0).toBe(a === b);
        expect(d).toBeLessThanOrEqual(Math.max(a.length, b.length));
        expect(d).toBeGreaterThanOrEqual(Math.abs(a.length - b.length));
        // With a bound, the distance is exact up to it and max + 1 past it.
        expect(editDistance(a, b, 2)).toBe(d <= 2 ? d : 3);
      }),
    );
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("a".repeat(70), "a".repeat(70) + "b", 2)).toBe(3);
  });
});

describe("bumpVersion refuses a release class it does not know (it bumped the patch of anything)", () => {
  it("major, minor, patch bump; \"huge\" is SEMVER_INVALID", async () => {
    expect([bumpVersion("1.2.3", "major"), bumpVersion("1.2.3", "minor"), bumpVersion("1.2.3", "patch")]).toEqual(["2.0.0", "1.3.0", "1.2.4"]);
    await expect(() => bumpVersion("1.0.0", "huge" as never)).toThrowWithCode("SEMVER_INVALID");
    expect(() => bumpVersion("1.0.0", "huge" as never)).toThrow('a release class is "major", "minor" or "patch", found "huge"');
  });
});
