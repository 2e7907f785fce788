/**
 * One reading of the tarball on every path: the handed smuggling tarball
 * (global pax header hiding a second package.json) is refused by
 * `release check-dist`, `verify-manifest` (CLI and library) and `fetch`
 * (CLI and library), with the same code, writing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkDist } from "../../release/build.js";
import { testedManifestBytes, verifyManifest } from "../../src/contract/manifest.js";
import type { JsonObject } from "../../src/contract/canonical-json.js";
import { fetchRelease, type OpenReadTarget } from "../../src/fetch/fetch.js";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { runCli } from "../support/cli.js";
import { createReleaseFixture, stageFixture, variantWithTarball, type ReleaseFixture } from "../support/release-fixture.js";
import { smugglingTarball } from "../support/tar-craft.js";

let root: string;
let storeDir: string;
let repository: string;
let fixture: ReleaseFixture;
let evil: ReleaseFixture;
let reference: string;
const openLayout: OpenReadTarget = async (repo) => {
  if (repo.kind !== "layout") throw new Error("layout only");
  return LayoutTarget.open(repo.dir);
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-tarball-paths-"));
  storeDir = join(root, "store");
  repository = `oci-layout:${storeDir}`;
  fixture = await createReleaseFixture({ registryRepository: repository });
  evil = await variantWithTarball(fixture, smugglingTarball(fixture.packageName, fixture.version));
  const staged = await stageFixture(evil, await LayoutTarget.open(storeDir, { create: true }), repository);
  await chmod(storeDir, 0o700);
  reference = `${repository}@${staged.bundle.digest}`;
});

afterAll(async () => {
  await evil?.cleanup();
  await fixture?.cleanup();
  await rm(root, { recursive: true, force: true });
});

function distOf(f: ReleaseFixture): string {
  return join(f.files.get(`dist/${f.tarballName}`)!, "..");
}

describe("the smuggling tarball is refused on every path with TARBALL_ENTRY_TYPE", () => {
  it("release check-dist (library and CLI)", async () => {
    await expect(() => checkDist({ policy: evil.policy }, distOf(evil), evil.version)).toThrowWithCode("TARBALL_ENTRY_TYPE");
    const checkout = join(root, "checkout");
    await mkdir(checkout, { recursive: true });
    await writeFile(join(checkout, "package.json"), JSON.stringify({ name: evil.packageName, version: evil.version, hermesPluginKit: { repository } }));
    const r = await runCli(["release", "check-dist", "--dir", checkout, "--artifact-dir", distOf(evil)], { cwd: root });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "TARBALL_ENTRY_TYPE", message: expect.stringContaining("global pax header") });
  });

  it("verify-manifest (library and CLI)", async () => {
    await expect(() => verifyManifest(evil.manifest as unknown as JsonObject, distOf(evil), evil.policy)).toThrowWithCode("TARBALL_ENTRY_TYPE");
    const manifestFile = join(root, "evil-manifest.json");
    await writeFile(manifestFile, testedManifestBytes(evil.manifest));
    const r = await runCli(["verify-manifest", "--manifest", manifestFile, "--artifact-dir", distOf(evil), "--repository", repository, "--package", evil.packageName, "--json"], { cwd: root });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "TARBALL_ENTRY_TYPE" });
  });

  it("fetch (library and CLI): nothing is installed, the output directory is not created", async () => {
    const out = join(root, "out-lib");
    await expect(() => fetchRelease({ reference, repository, outputDir: out, openTarget: openLayout, progress: null })).toThrowWithCode("TARBALL_ENTRY_TYPE");
    expect(await readdir(out).catch(() => "absent")).toBe("absent");
    const cliOut = join(root, "out-cli");
    const r = await runCli(["fetch", "--reference", reference, "--repository", repository, "--output-dir", cliOut, "--json"], { cwd: root });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "TARBALL_ENTRY_TYPE" });
    expect(await readdir(cliOut).catch(() => "absent")).toBe("absent");
  });

  it("control: the honest fixture passes the strict reader on the same paths (check-dist then stops at publint's verdict on the tiny package)", async () => {
    await expect(() => checkDist({ policy: fixture.policy }, distOf(fixture), fixture.version)).toThrowWithCode("RELEASE_DIST_LINT");
    await expect(verifyManifest(fixture.manifest as unknown as JsonObject, distOf(fixture), fixture.policy)).resolves.toMatchObject({ version: fixture.version });
  });
});
