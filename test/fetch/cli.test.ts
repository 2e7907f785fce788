/**
 * The built CLI as a real subprocess against a real registry: `fetch`
 * (repository pinned by the reference or --repository, never by the current
 * directory's package.json; --policy explicit; --json shape, exit codes 0/1/2,
 * secrets only from the environment and never echoed), `fleet add` and
 * `fleet verify`. Needs `npx tsc -p tsconfig.build.json` first.
 */
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openTarget } from "../../src/oci/open.js";
import { runCli } from "../support/cli.js";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture, type StagedRelease } from "../support/release-fixture.js";

let registry: RunningRegistry;
let repository: string;
let fixture: ReleaseFixture;
let staged: StagedRelease;
let work: string;
let checkout: string;

function env(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { REGISTRY_USERNAME: registry.username, REGISTRY_PASSWORD: registry.password, GH_TOKEN: undefined, ...extra };
}

beforeAll(async () => {
  registry = await startRegistry({ auth: "bearer" });
  repository = `${registry.host}/acme/demo-plugin`;
  fixture = await createReleaseFixture({ registryRepository: repository });
  staged = await stageFixture(fixture, await openTarget(repository, { plainHttp: true, credentials: { username: registry.username!, password: registry.password! } }), repository);
  work = await mkdtemp(join(tmpdir(), "hpk-fetch-cli-"));
  checkout = join(work, "checkout");
  await mkdir(checkout);
  // A consumer's own plugin project: its policy (another repository, other gates) must not apply to someone else's release.
  await writeFile(join(checkout, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", hermesPluginKit: { repository: "ghcr.io/consumer/own-plugin", gates: { unit: "just unit" } } }));
}, 120_000);

afterAll(async () => {
  await fixture?.cleanup();
  await registry?.stop();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describeRegistry("hermes-plugin-kit fetch / fleet (CLI)", () => {
  it("fetch --json inside another plugin project (its package.json is not read): exit 0, exact shape, quiet stderr when not a TTY; rerun is a no-op", async () => {
    const out = join(work, "D1");
    const args = ["fetch", "--reference", `${repository}@${staged.bundle.digest}`, "--output-dir", out, "--plain-http", "--json"];
    const first = await runCli(args, { cwd: checkout, env: env() });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const result = JSON.parse(first.stdout) as { ok: true; reference: string; artifactType: string; version: string; files: { path: string }[]; install_time: string[] };
    // "ok": true as every consumer command's --json success answer (and ok: false on failure).
    expect(Object.keys(result).sort()).toEqual(["artifactType", "files", "install_time", "ok", "reference", "version"]);
    expect(result.ok).toBe(true);
    expect(result.install_time).toEqual([]);
    expect(result.files.map((f) => f.path)).toEqual(["dist/demo-plugin-0.8.0.tgz", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);
    expect((await readFile(join(out, "dist/demo-plugin-0.8.0.tgz"))).equals(await readFile(fixture.files.get("dist/demo-plugin-0.8.0.tgz")!))).toBe(true);
    const second = await runCli(args, { cwd: checkout, env: env() });
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
  });

  it("consumer flow: fetch the receipt, verify-final-receipt against the pinned bundle; a bundle's manifest is refused as a receipt", async () => {
    const out = join(work, "R1");
    const fetched = await runCli(["fetch", "--reference", `${repository}@${staged.receipt.digest}`, "--output-dir", out, "--expect", "receipt", "--plain-http", "--json"], { cwd: checkout, env: env() });
    expect(fetched.code).toBe(0);
    const ok = await runCli(["verify-final-receipt", "--receipt", join(out, "release-receipt.json"), "--package", "demo-plugin", "--expect-bundle-reference", `${repository}@${staged.bundle.digest}`, "--expect-receipt-reference", `${repository}@${staged.receipt.digest}`], { cwd: checkout, env: env() });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    const wrong = await runCli(["verify-final-receipt", "--receipt", fixture.files.get("release-manifest.json")!, "--package", "demo-plugin", "--repository", repository], { cwd: checkout, env: env() });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/\[RECEIPT_STATE_MISMATCH\]/);
    const asBundle = await runCli(["fetch", "--reference", `${repository}@${staged.receipt.digest}`, "--output-dir", join(work, "R2"), "--expect", "bundle", "--plain-http"], { cwd: checkout, env: env() });
    expect(asBundle.code).toBe(1);
    expect(asBundle.stderr).toMatch(/\[FETCH_ARTIFACT_TYPE_MISMATCH\]/);
  });

  it("a tag reference fails with exit 1 and its code; --json prints {ok:false, code}", async () => {
    const out = join(work, "D2");
    const text = await runCli(["fetch", "--reference", `${repository}:v0.8.0`, "--output-dir", out, "--plain-http"], { cwd: checkout, env: env() });
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(/^hermes-plugin-kit: .*\[REFERENCE_NOT_PINNED\]\n$/);
    const json = await runCli(["fetch", "--reference", `${repository}:v0.8.0`, "--output-dir", out, "--plain-http", "--json"], { cwd: checkout, env: env() });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: "REFERENCE_NOT_PINNED" });
    await expect(readdir(out)).rejects.toThrow();
  });

  it("the output directory: unrelated entries -> INSTALL_OUTPUT_NOT_EMPTY, a symlinked ancestor others can change -> INSTALL_OUTPUT_SYMLINK; nothing written; a trusted symlinked ancestor works", async () => {
    const reference = `${repository}@${staged.bundle.digest}`;
    const project = join(work, "project");
    await mkdir(project);
    await writeFile(join(project, "README.md"), "mine");
    const mixed = await runCli(["fetch", "--reference", reference, "--output-dir", project, "--plain-http", "--json"], { cwd: checkout, env: env() });
    expect(mixed.code).toBe(1);
    expect(JSON.parse(mixed.stdout)).toMatchObject({ ok: false, code: "INSTALL_OUTPUT_NOT_EMPTY" });
    expect(JSON.parse(mixed.stdout).message).toMatch(/holds "README.md", which no release writes/);
    expect(await readdir(project)).toEqual(["README.md"]);
    const shared = join(work, "shared");
    await mkdir(join(work, "elsewhere"));
    await mkdir(shared);
    await chmod(shared, 0o777);
    await symlink(join(work, "elsewhere"), join(shared, "vendor"));
    const through = await runCli(["fetch", "--reference", reference, "--output-dir", join(shared, "vendor", "demo"), "--plain-http"], { cwd: checkout, env: env() });
    expect(through.code).toBe(1);
    expect(through.stderr).toMatch(/which others can write, so they can replace it.*\[INSTALL_OUTPUT_SYMLINK\]/);
    expect(await readdir(join(work, "elsewhere"))).toEqual([]);
    await symlink(join(work, "elsewhere"), join(work, "mine"));
    const trusted = await runCli(["fetch", "--reference", reference, "--output-dir", join(work, "mine", "demo"), "--plain-http"], { cwd: checkout, env: env() });
    expect(trusted.stderr).toBe("");
    expect(trusted.code).toBe(0);
    expect((await readdir(join(work, "elsewhere", "demo"))).sort()).toEqual(["dist", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);
  });

  it("usage errors exit 2: a missing flag, a bad --expect, a malformed --expect-gate; verify-final-receipt with nothing pinned", async () => {
    expect((await runCli(["fetch", "--reference", `${repository}@${staged.bundle.digest}`], { cwd: checkout, env: env() })).code).toBe(2);
    expect((await runCli(["fetch", "--reference", `${repository}@${staged.bundle.digest}`, "--output-dir", join(work, "D3"), "--expect", "wheel"], { cwd: checkout, env: env() })).code).toBe(2);
    const badPin = await runCli(["fetch", "--reference", `${repository}@${staged.bundle.digest}`, "--output-dir", join(work, "D3"), "--expect-gate", "lint=npm run lint"], { cwd: checkout, env: env() });
    expect(badPin.code).toBe(2);
    expect(badPin.stderr).toMatch(/unknown gate "lint"/);
    const unpinned = await runCli(["verify-final-receipt", "--receipt", fixture.files.get("release-manifest.json")!], { cwd: checkout, env: env() });
    expect(unpinned.code).toBe(2);
    expect(unpinned.stderr).toMatch(/^hermes-plugin-kit: nothing pinned to verify against: .*--expect-bundle-reference.* \[POLICY_REPOSITORY_UNPINNED\]\n$/);
    await expect(readdir(join(work, "D3"))).rejects.toThrow();
  });

  it("--repository and --policy pin the repository and name themselves when the reference names another; the cwd is never read", async () => {
    const reference = `${repository}@${staged.bundle.digest}`;
    const flag = await runCli(["fetch", "--reference", reference, "--output-dir", join(work, "P1"), "--repository", "ghcr.io/consumer/own-plugin", "--plain-http"], { cwd: checkout, env: env() });
    expect(flag.code).toBe(1);
    expect(flag.stderr).toMatch(/\[REFERENCE_REPOSITORY_MISMATCH\]/);
    expect(flag.stderr).toMatch(/from --repository/);
    const policy = await runCli(["fetch", "--reference", reference, "--output-dir", join(work, "P1"), "--policy", "package.json", "--plain-http"], { cwd: checkout, env: env() });
    expect(policy.code).toBe(1);
    expect(policy.stderr).toMatch(/\[REFERENCE_REPOSITORY_MISMATCH\]/);
    expect(policy.stderr).toMatch(/package\.json \(--policy\) hermesPluginKit\.repository/);
    await expect(readdir(join(work, "P1"))).rejects.toThrow();
  });

  it("--expect-gate: a pinned command the release ran passes; another one fails with GATE_COMMAND_MISMATCH naming the pin, not 'did not pass'", async () => {
    const reference = `${repository}@${staged.receipt.digest}`;
    const ok = await runCli(["fetch", "--reference", reference, "--output-dir", join(work, "G1"), "--expect-gate", "unit=npm test", "--plain-http"], { cwd: checkout, env: env() });
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    const bad = await runCli(["fetch", "--reference", reference, "--output-dir", join(work, "G2"), "--expect-gate", "unit=just unit", "--plain-http"], { cwd: checkout, env: env() });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/\[GATE_COMMAND_MISMATCH\]/);
    expect(bad.stderr).toMatch(/ran "npm test", not the pinned command "just unit" \(from --expect-gate\)/);
    expect(bad.stderr).not.toMatch(/did not pass/);
    const receipt = join(work, "G1", "release-receipt.json");
    const offline = await runCli(["verify-final-receipt", "--receipt", receipt, "--repository", repository, "--expect-gate", "host_contract=just contract"], { cwd: checkout, env: env() });
    expect(offline.code).toBe(1);
    expect(offline.stderr).toMatch(/\[GATE_COMMAND_MISMATCH\]/);
    const wrongRepo = await runCli(["verify-final-receipt", "--receipt", receipt, "--repository", "ghcr.io/consumer/own-plugin"], { cwd: checkout, env: env() });
    expect(wrongRepo.code).toBe(1);
    expect(wrongRepo.stderr).toMatch(/\[RECEIPT_REGISTRY_MISMATCH\]/);
    expect(wrongRepo.stderr).toMatch(/\(from --repository\)/);
  });

  it("wrong registry credentials fail closed without echoing the secret", async () => {
    const secret = "wrong-password-0f9e8d7c";
    const out = join(work, "D4");
    const res = await runCli(["fetch", "--reference", `${repository}@${staged.bundle.digest}`, "--output-dir", out, "--plain-http"], { cwd: checkout, env: env({ REGISTRY_PASSWORD: secret }) });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/\[OCI_AUTH_FAILED\]/);
    expect(res.stdout + res.stderr).not.toContain(secret);
    await expect(readdir(out)).rejects.toThrow();
  });

  it("fleet add then fleet verify --installed", async () => {
    const receipt = join(work, "release-receipt.json");
    await writeFile(receipt, staged.receiptBytes);
    const lock = join(work, "fleet.lock.json");
    // Nothing pinned: the receipt's own registry_repository is not an expectation (exit 2, nothing written).
    const unpinned = await runCli(["fleet", "add", "--lock", lock, "--receipt", receipt, "--json"], { cwd: checkout, env: env() });
    expect(unpinned.code).toBe(2);
    expect(JSON.parse(unpinned.stdout)).toMatchObject({ ok: false, code: "POLICY_REPOSITORY_UNPINNED" });
    expect(JSON.parse(unpinned.stdout).message).toMatch(/names registry_repository ".*demo-plugin".*fix: pass --repository/);
    await expect(readFile(lock)).rejects.toThrow(/ENOENT/);
    // The new pin is checked against the registry, which is plain HTTP on loopback: without --plain-http, refused; nothing written.
    const tls = await runCli(["fleet", "add", "--lock", lock, "--receipt", receipt, "--repository", repository, "--json"], { cwd: checkout, env: env() });
    expect([tls.code, JSON.parse(tls.stdout).code]).toEqual([1, "OCI_TLS_FAILED"]);
    await expect(readFile(lock)).rejects.toThrow(/ENOENT/);
    // An edited receipt (a run id) verifies offline, but the registry holds no receipt with its digest: nothing pinned.
    const edited = join(work, "edited-receipt.json");
    await writeFile(edited, staged.receiptBytes.toString("utf8").replace(/"run_id":"([0-9]+)"/, (_m, id: string) => `"run_id":"${id}1"`));
    const forged = await runCli(["fleet", "add", "--lock", lock, "--receipt", edited, "--repository", repository, "--plain-http"], { cwd: checkout, env: env() });
    expect(forged.code).toBe(1);
    expect(forged.stderr).toMatch(new RegExp(`^hermes-plugin-kit: plugin demo-plugin 0\\.8\\.0: the repository holds no receipt with this file's digest \\(\\S+@sha256:[0-9a-f]{64}\\): ${edited.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} is not a receipt this repository published \\(edited, or from another store\\); nothing was pinned; fix: fetch the receipt by the reference its release published .* \\[OCI_NOT_FOUND\\]\\n$`));
    await expect(readFile(lock)).rejects.toThrow(/ENOENT/);
    const add = await runCli(["fleet", "add", "--lock", lock, "--receipt", receipt, "--repository", repository, "--plain-http", "--json"], { cwd: checkout, env: env() });
    expect(add.code, add.stdout).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({ ok: true, changed: true, checked_against_registry: true, plugin: { name: "demo-plugin", receipt_reference: `${repository}@${staged.receipt.digest}` } });
    const verify = await runCli(["fleet", "verify", "--lock", lock, "--installed", join(work, "D1"), "--plain-http", "--json"], { cwd: checkout, env: env() });
    expect(verify.stderr).toBe("");
    expect(verify.code).toBe(0);
    const body = JSON.parse(verify.stdout) as { ok: boolean; plugins: { installed: string[] }[] };
    expect(body.ok).toBe(true);
    expect(body.plugins[0]!.installed).toEqual([join(work, "D1", "dist", "demo-plugin-0.8.0.tgz")]);
    await writeFile(join(work, "D1", "dist", "demo-plugin-0.8.0.tgz"), "tampered");
    const bad = await runCli(["fleet", "verify", "--lock", lock, "--installed", join(work, "D1"), "--plain-http"], { cwd: checkout, env: env() });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/\[FLEET_INSTALLED_MISMATCH\]/);
  });
});
