/**
 * Round trip through the real registry with Bearer auth (Debian's
 * `docker-registry` + token server on loopback) and the GitHub Packages API
 * emulator driven through the real @octokit/rest (docs/release-publish.md,
 * "The privacy gate"; docs/architecture.md, "Release: steps and data flow"):
 * absent package -> bootstrap -> stage -> fetch reproduces every file ->
 * publish -> `verify-final-receipt` passes, `v<V>` resolves to the bundle
 * digest, the receipt fetch is byte-identical -> retry uploads nothing ->
 * a package that turns public stops the next publication before `v<V>`.
 */
import { readdir, readFile, utimes, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseStrictJson } from "../../src/contract/canonical-json.js";
import { verifyFinalReceipt } from "../../src/contract/release-document.js";
import { fetchRelease } from "../../src/fetch/fetch.js";
import { openTarget } from "../../src/oci/open.js";
import { publishRelease } from "../../release/publish.js";
import { stageRelease } from "../../release/stage.js";
import { runCli } from "../support/cli.js";
import { startGitHubEmulator, type GitHubEmulator } from "../support/github-emulator.js";
import { createReleaseFixture, type ReleaseFixture } from "../support/release-fixture.js";
import { stageInputs } from "../support/release-pipeline-fixture.js";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";

let registry: RunningRegistry;
let github: GitHubEmulator;
let fixture: ReleaseFixture;
let repository: string;
let env: Record<string, string>;
let credentials: { username: string; password: string };

/** Every blob data file and tag link in the registry's storage (what an upload would change). */
async function registryFootprint(): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path, `${rel}/${entry.name}`);
      else if (entry.name === "data" || entry.name === "link") out.push(`${rel}/${entry.name}=${entry.name === "link" ? await readFile(path, "utf8") : ""}`);
    }
  };
  await walk(registry.storageDir, "");
  return out.filter((l) => !l.includes("/_uploads/")).sort();
}

describeRegistry("release stage + publish through a Bearer-auth registry", () => {
  beforeAll(async () => {
    registry = await startRegistry({ auth: "bearer" });
    github = await startGitHubEmulator();
    repository = `${registry.host}/acme/demo-plugin`;
    credentials = { username: registry.username!, password: registry.password! };
    env = github.env({ HERMES_PLUGIN_KIT_GHCR_REGISTRY: registry.host });
    github.setOwner("acme", "Organization");
    const bootstrapTag = join(registry.storageDir, "docker/registry/v2/repositories/acme/demo-plugin/_manifests/tags/private-bootstrap");
    github.setPackage("acme", "demo-plugin", () => (existsSync(bootstrapTag) ? "private" : "absent"));
    fixture = await createReleaseFixture({ registryRepository: repository });
  });

  afterAll(async () => {
    await fixture?.cleanup();
    await github?.close();
    await registry?.stop();
  });

  const access = () => ({ repository, plainHttp: true, credentials, env });
  const tag = () => `candidate-12345-${fixture.sourceSha}`;
  let bundleReference = "";
  let receiptReference = "";

  it("stage fails closed with zero uploads for a public package, and with only the bootstrap for one still absent after it (scenarios 29, 30, 41, 42)", async () => {
    const deniedRepository = `${registry.host}/acme/denied-plugin`;
    const denied = await createReleaseFixture({ registryRepository: deniedRepository });
    try {
      const inputs = { ...stageInputs(denied), repository: deniedRepository, plainHttp: true, credentials, env, tag: `candidate-12345-${denied.sourceSha}` };
      github.setPackage("acme", "denied-plugin", "absent");
      // Scenarios 41, 42: API failures and a dropped connection fail closed before any bootstrap push.
      for (const [mode, code] of [
        [401, "PRIVACY_API_FAILED"],
        [403, "PRIVACY_API_FAILED"],
        [429, "PRIVACY_RATE_LIMITED"],
        [500, "PRIVACY_API_FAILED"],
        ["drop", "PRIVACY_NO_STATUS"],
      ] as const) {
        github.fail("/orgs/acme/packages/container/denied-plugin", mode);
        await expect(stageRelease(inputs), String(mode)).rejects.toMatchObject({ code });
        github.clearFailures();
      }
      github.setPackage("acme", "denied-plugin", "public");
      await expect(stageRelease(inputs)).rejects.toMatchObject({ code: "PRIVACY_PUBLIC" });
      const target = await openTarget(deniedRepository, { plainHttp: true, credentials });
      await expect(target.tags()).rejects.toMatchObject({ code: "OCI_NOT_FOUND" });
      github.setPackage("acme", "denied-plugin", "absent");
      await expect(stageRelease(inputs)).rejects.toMatchObject({ code: "PRIVACY_ABSENT" });
      expect(await target.tags()).toEqual(["private-bootstrap"]);
      expect((await target.resolve("private-bootstrap")).digest).toBe("sha256:2c83e94c3884c6aea03e57999e7833e8444d8ea6860a5df81a8af216e9ec884e");
    } finally {
      await denied.cleanup();
    }
  });

  it("stages after bootstrapping the absent package, and a consumer fetch reproduces every file", async () => {
    const output = join(fixture.root, "staged-release.json");
    const staged = await stageRelease({ ...stageInputs(fixture), ...access(), tag: tag(), output });
    expect(staged.bootstrapped).toBe(true);
    expect(staged.upload).toBe("tagged");
    bundleReference = staged.bundle_reference;
    expect(await readFile(output, "utf8")).toBe(`{"bundle_reference":"${bundleReference}"}\n`);
    const target = await openTarget(repository, { plainHttp: true, credentials });
    expect((await target.tags()).sort()).toEqual([tag(), "private-bootstrap"].sort());
    const consumer = join(fixture.root, "consumer");
    await fetchRelease({ reference: bundleReference, repository, plainHttp: true, credentials, env, outputDir: consumer, progress: null });
    for (const [path, local] of fixture.files) expect((await readFile(join(consumer, path))).equals(await readFile(local)), path).toBe(true);
  });

  it("publishes: verify-final-receipt passes, v<V> names the bundle digest, the receipt fetch is byte-identical", async () => {
    const output = join(fixture.root, "release-receipt.json");
    const references = join(fixture.root, "publication.json");
    const result = await publishRelease({ policy: fixture.policy, ...access(), reference: bundleReference, output, references });
    receiptReference = result.receipt_reference;
    const bytes = await readFile(output);
    expect(verifyFinalReceipt(parseStrictJson(bytes), fixture.policy).registry_reference).toBe(bundleReference);
    await writeFile(join(fixture.root, "package.json"), JSON.stringify({ name: fixture.packageName, version: "0.8.0", hermesPluginKit: { repository } }) + "\n");
    const cli = await runCli(["verify-final-receipt", "--receipt", output, "--expect-bundle-reference", bundleReference], { cwd: fixture.root });
    expect(cli.code, cli.stderr).toBe(0);
    const target = await openTarget(repository, { plainHttp: true, credentials });
    expect((await target.resolve("v0.8.0")).digest).toBe(bundleReference.split("@")[1]);
    expect((await target.resolve("v0.8.0-receipt")).digest).toBe(receiptReference.split("@")[1]);
    const consumer = join(fixture.root, "receipt-consumer");
    await fetchRelease({ reference: receiptReference, repository, plainHttp: true, credentials, env, outputDir: consumer, expect: "receipt", progress: null });
    expect((await readFile(join(consumer, "release-receipt.json"))).equals(bytes)).toBe(true);
  });

  it("retry with touched mtimes: same references and receipt bytes, nothing uploaded", async () => {
    const before = await registryFootprint();
    const receipt = await readFile(join(fixture.root, "release-receipt.json"));
    for (const local of fixture.files.values()) await utimes(local, new Date(), new Date(Date.now() + 7_200_000));
    const staged = await stageRelease({ ...stageInputs(fixture), ...access(), tag: tag() });
    expect(staged).toMatchObject({ bundle_reference: bundleReference, upload: "already-tagged", bootstrapped: false });
    const output = join(fixture.root, "release-receipt-retry.json");
    const again = await publishRelease({ policy: fixture.policy, ...access(), reference: bundleReference, output });
    expect(again).toMatchObject({ receipt_reference: receiptReference, bind: "already-tagged", receipt_bind: "already-tagged" });
    expect((await readFile(output)).equals(receipt)).toBe(true);
    expect(await registryFootprint()).toEqual(before);
  });

  it("the CLI takes registry credentials and GH_TOKEN from the environment and never prints them", async () => {
    const cliEnv = { ...env, REGISTRY_USERNAME: credentials.username, REGISTRY_PASSWORD: credentials.password };
    const ok = await runCli(["release", "publish", "--reference", bundleReference, "--plain-http"], { cwd: fixture.root, env: cliEnv });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ receipt_reference: receiptReference, bind: "already-tagged" });
    const wrong = `${credentials.password}-wrong`;
    const refused = await runCli(["release", "publish", "--reference", bundleReference, "--plain-http"], { cwd: fixture.root, env: { ...cliEnv, REGISTRY_PASSWORD: wrong } });
    expect(refused.code).toBe(1);
    for (const output of [ok, refused]) {
      for (const secret of [credentials.password, wrong, github.token]) expect(output.stdout + output.stderr).not.toContain(secret);
    }
  });

  it("a package that turns public between stage and publish stops publication before v<V> (scenario 39)", async () => {
    const next = await createReleaseFixture({ registryRepository: repository, version: "0.9.0" });
    try {
      const staged = await stageRelease({ ...stageInputs(next), ...access(), tag: `candidate-12345-${next.sourceSha}` });
      github.setPackage("acme", "demo-plugin", "public");
      const references = join(next.root, "publication.json");
      const error = await publishRelease({ policy: next.policy, ...access(), reference: staged.bundle_reference, references }).catch((e: unknown) => e);
      expect(error).toThrowWithCode("PRIVACY_PUBLIC");
      const target = await openTarget(repository, { plainHttp: true, credentials });
      expect(await target.tags()).not.toContain("v0.9.0");
      expect(existsSync(references)).toBe(false);
    } finally {
      github.setPackage("acme", "demo-plugin", "private");
      await next.cleanup();
    }
  });
});
