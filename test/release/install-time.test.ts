/**
 * Install-time behaviour end to end: npm really runs the lifecycle scripts of
 * a tarball (and `--ignore-scripts` really stops them); `release build` /
 * `check-dist` refuse them unless package.json declares them; the tested
 * manifest records what was declared and `verify-manifest` holds the tarball
 * to the record; `fetch` reports it and refuses a tarball the record does not
 * describe.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { buildRelease } from "../../release/build.js";
import { readReleaseConfig } from "../../release/config.js";
import { installTimeBehaviour } from "../../src/contract/install-time.js";
import { createTestedManifest, inspectDistTarball, verifyManifest } from "../../src/contract/manifest.js";
import type { JsonObject } from "../../src/contract/canonical-json.js";
import { fetchRelease, type OpenReadTarget } from "../../src/fetch/fetch.js";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { runCli } from "../support/cli.js";
import { passedGates } from "../support/contract-fixture.js";
import { createFixtureRepo, type FixtureRepo } from "../support/git-fixture.js";
import { createReleaseFixture, stageFixture, variantWithTarball, type ReleaseFixture } from "../support/release-fixture.js";
import { fileEntry, gzip, tarStream } from "../support/tar-craft.js";

const run = promisify(execFile);
const marker = (name: string) => `node -e "require('fs').writeFileSync(require('path').join(process.env.INIT_CWD, 'ran-${name}'), '')"`;
const SCRIPTS = { preinstall: marker("preinstall"), install: marker("install"), postinstall: marker("postinstall") };
const QUIET = { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" };

let root: string;
const repos: FixtureRepo[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-install-time-"));
});
afterAll(async () => {
  while (repos.length > 0) await repos.pop()?.cleanup();
  await rm(root, { recursive: true, force: true });
});

async function scriptedRepo(extra: Record<string, unknown> = {}): Promise<FixtureRepo> {
  const repo = await createFixtureRepo({ origin: false, packageJson: { scripts: SCRIPTS, ...extra } });
  repos.push(repo);
  return repo;
}

async function npmInstall(tarball: string, flags: string[]): Promise<string[]> {
  const app = await mkdtemp(join(root, "app-"));
  await writeFile(join(app, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", private: true }));
  await run("npm", ["install", "--offline", "--no-audit", "--no-fund", ...flags, tarball], { cwd: app, env: QUIET });
  return (await readdir(app)).filter((n) => n.startsWith("ran-")).sort();
}

describe("the handed input: a plugin package with preinstall, install and postinstall scripts", () => {
  it("npm runs all three on install, --ignore-scripts runs none: the kind is real", async () => {
    const repo = await scriptedRepo({ hermesPluginKit: { repository: "oci-layout:/tmp/fixture-plugin-store", installTime: ["install", "postinstall", "preinstall"] } });
    const built = await buildRelease({ dir: repo.dir, artifactDir: join(repo.root, "dist") });
    const tarball = join(repo.root, "dist", built.artifact.filename);
    expect(await npmInstall(tarball, [])).toEqual(["ran-install", "ran-postinstall", "ran-preinstall"]);
    expect(await npmInstall(tarball, ["--ignore-scripts"])).toEqual([]);
  });

  it("release build (check-dist) refuses them when package.json does not declare them, and check-dist on the CLI too", async () => {
    const repo = await scriptedRepo();
    const dist = join(repo.root, "dist");
    await expect(buildRelease({ dir: repo.dir, artifactDir: dist })).rejects.toMatchObject({ code: "INSTALL_TIME_NOT_ALLOWED", message: expect.stringContaining("install, postinstall, preinstall") });
    const r = await runCli(["release", "check-dist", "--dir", repo.dir, "--artifact-dir", dist], { cwd: repo.root });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "INSTALL_TIME_NOT_ALLOWED" });
  });

  it("declared behaviour passes, is recorded by the tested manifest, and verify-manifest holds the tarball to the record", async () => {
    const repo = await scriptedRepo({ hermesPluginKit: { repository: "oci-layout:/tmp/fixture-plugin-store", installTime: ["install", "postinstall", "preinstall"] } });
    const dist = join(repo.root, "dist");
    const built = await buildRelease({ dir: repo.dir, artifactDir: dist });
    expect(built.install_time).toEqual(["install", "postinstall", "preinstall"]);
    const config = await readReleaseConfig(repo.dir);
    const { artifact, tarball } = await inspectDistTarball(dist, config.policy, "0.7.0");
    const input = { policy: config.policy, previousVersion: "0.6.0", version: "0.7.0", tag: "v0.7.0", sourceSha: "a".repeat(40), runId: "7", runAttempt: 1, gates: passedGates("a".repeat(40), config.policy), artifacts: [artifact] };
    const recorded = createTestedManifest({ ...input, installTime: installTimeBehaviour(tarball) });
    expect(recorded.install_time).toEqual(["install", "postinstall", "preinstall"]);
    await expect(verifyManifest(recorded as unknown as JsonObject, dist, config.policy)).resolves.toMatchObject({ install_time: ["install", "postinstall", "preinstall"] });
    // A manifest that hides the behaviour (a forger omitting the record) does not describe this tarball.
    const hidden = createTestedManifest(input);
    await expect(() => verifyManifest(hidden as unknown as JsonObject, dist, config.policy)).toThrowWithCode("INSTALL_TIME_MISMATCH");
    const partial = { ...recorded, install_time: ["postinstall"] };
    await expect(() => verifyManifest(partial as unknown as JsonObject, dist, config.policy)).toThrowWithCode("INSTALL_TIME_MISMATCH");
  });
});

describe("fetch reports install-time behaviour", () => {
  let fixture: ReleaseFixture;
  let declared: ReleaseFixture;
  let forged: ReleaseFixture;
  let storeDir: string;
  let repository: string;
  const openLayout: OpenReadTarget = async (repo) => {
    if (repo.kind !== "layout") throw new Error("layout only");
    return LayoutTarget.open(repo.dir);
  };
  const references: Record<string, string> = {};

  beforeAll(async () => {
    storeDir = join(root, "store");
    repository = `oci-layout:${storeDir}`;
    fixture = await createReleaseFixture({ registryRepository: repository });
    const pkg = JSON.stringify({ name: fixture.packageName, version: fixture.version, files: ["index.js"], scripts: { postinstall: "node index.js" } });
    const tarball = gzip(tarStream([fileEntry("package/package.json", pkg), fileEntry("package/index.js", "export {};\n")]));
    declared = await variantWithTarball(fixture, tarball, ["postinstall"]);
    forged = await variantWithTarball(fixture, tarball);
    const store = await LayoutTarget.open(storeDir, { create: true });
    references["declared"] = `${repository}@${(await stageFixture(declared, store, repository)).bundle.digest}`;
    references["forged"] = `${repository}@${(await stageFixture(forged, store, repository)).bundle.digest}`;
    await chmod(storeDir, 0o700);
  });
  afterAll(async () => {
    await forged?.cleanup();
    await declared?.cleanup();
    await fixture?.cleanup();
  });

  it("library and CLI: install_time is in the result, and the CLI says to use --ignore-scripts", async () => {
    const result = await fetchRelease({ reference: references["declared"]!, repository, outputDir: join(root, "out-declared"), openTarget: openLayout, progress: null });
    expect(result.install_time).toEqual(["postinstall"]);
    const r = await runCli(["fetch", "--reference", references["declared"]!, "--repository", repository, "--output-dir", join(root, "out-cli"), "--json"], { cwd: root });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ install_time: ["postinstall"] });
    expect(r.stderr).toContain("postinstall");
    expect(r.stderr).toContain("--ignore-scripts");
    // A warning: it stays under --quiet.
    const quiet = await runCli(["--quiet", "fetch", "--reference", references["declared"]!, "--repository", repository, "--output-dir", join(root, "out-cli-quiet")], { cwd: root });
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe("hermes-plugin-kit: warning: installing this tarball makes npm run or link outside the package: postinstall (recorded in the tested manifest); install it with npm install --ignore-scripts unless you reviewed them\n");
  });

  it("a tarball whose behaviour the manifest does not record is refused; nothing is installed", async () => {
    const out = join(root, "out-forged");
    await expect(() => fetchRelease({ reference: references["forged"]!, repository, outputDir: out, openTarget: openLayout, progress: null })).toThrowWithCode("INSTALL_TIME_MISMATCH");
    expect(await readdir(out).catch(() => "absent")).toBe("absent");
  });

  it("a package without install-time behaviour reports none", async () => {
    const clean = await createReleaseFixture({ registryRepository: `oci-layout:${join(root, "clean-store")}` });
    try {
      const store = await LayoutTarget.open(join(root, "clean-store"), { create: true });
      const staged = await stageFixture(clean, store, `oci-layout:${join(root, "clean-store")}`);
      await chmod(join(root, "clean-store"), 0o700);
      await mkdir(join(root, "out-clean"), { recursive: true });
      const result = await fetchRelease({ reference: `oci-layout:${join(root, "clean-store")}@${staged.bundle.digest}`, repository: `oci-layout:${join(root, "clean-store")}`, outputDir: join(root, "out-clean"), openTarget: openLayout, progress: null });
      expect(result.install_time).toEqual([]);
    } finally {
      await clean.cleanup();
    }
  });
});
