/**
 * `fetch` finds registry credentials the way ORAS and skopeo do, against a real
 * docker-registry with Basic auth: `REGISTRY_*` first, then `--registry-config`
 * or `$DOCKER_CONFIG/config.json` (auths, credential helpers). Credentials for
 * another host are not used, and no secret reaches the output. When both are given, one
 * stderr line says the environment's are used and the file is not read.
 */
import { spawnSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
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
/** No credential variables, and a HOME without a Docker config, so only what a test names is found. */
const noEnv = () => ({ REGISTRY_USERNAME: undefined, REGISTRY_PASSWORD: undefined, REGISTRY_TOKEN: undefined, GH_TOKEN: undefined, DOCKER_CONFIG: undefined, HOME: work });

beforeAll(async () => {
  registry = await startRegistry({ auth: "basic" });
  repository = `${registry.host}/acme/demo-plugin`;
  fixture = await createReleaseFixture({ registryRepository: repository });
  staged = await stageFixture(fixture, await openTarget(repository, { plainHttp: true, credentials: { username: registry.username!, password: registry.password! } }), repository);
  work = await mkdtemp(join(tmpdir(), "hpk-registry-config-"));
}, 120_000);

afterAll(async () => {
  await fixture?.cleanup();
  await registry?.stop();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

function fetchArgs(out: string): string[] {
  return ["fetch", "--reference", `${repository}@${staged.bundle.digest}`, "--repository", repository, "--output-dir", join(work, out), "--plain-http", "--json"];
}

async function writeConfig(name: string, doc: unknown): Promise<string> {
  const file = join(work, name);
  await writeFile(file, JSON.stringify(doc));
  return file;
}

describeRegistry("registry credentials from a Docker client config (CLI)", () => {
  it("--registry-config auths entry for the host: fetched; without it: refused", async () => {
    const file = await writeConfig("auths.json", { auths: { [`http://${registry.host}`]: { auth: Buffer.from(`${registry.username}:${registry.password}`).toString("base64") } } });
    const ok = await runCli([...fetchArgs("A1"), "--registry-config", file], { cwd: work, env: noEnv() });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout + ok.stderr).not.toContain(registry.password!);
    const none = await runCli(fetchArgs("A2"), { cwd: work, env: noEnv() });
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout)).toMatchObject({ ok: false, code: "OCI_AUTH_FAILED" });
    // The refusal says where credentials come from.
    expect((JSON.parse(none.stdout) as { message: string }).message).toMatch(/REGISTRY_USERNAME and REGISTRY_PASSWORD .*--registry-config/);
  });

  it("$DOCKER_CONFIG with a credential helper for the host", async () => {
    const dockerDir = join(work, "docker");
    const bin = join(work, "bin");
    await mkdir(dockerDir, { recursive: true });
    await mkdir(bin, { recursive: true });
    await writeFile(join(dockerDir, "config.json"), JSON.stringify({ credHelpers: { [registry.host]: "hpktest" } }));
    const helper = join(bin, "docker-credential-hpktest");
    await writeFile(helper, `#!/bin/sh\n[ "$1" = get ] || exit 2\nread server\n[ "$server" = "${registry.host}" ] || { echo "credentials not found in native keychain"; exit 1; }\nprintf '{"ServerURL":"%s","Username":"%s","Secret":"%s"}' "$server" "${registry.username}" "${registry.password}"\n`);
    await chmod(helper, 0o755);
    const ok = await runCli(fetchArgs("H1"), { cwd: work, env: { ...noEnv(), DOCKER_CONFIG: dockerDir, PATH: `${bin}:${process.env["PATH"]}` } });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout + ok.stderr).not.toContain(registry.password!);
  });

  it("credentials stored for another host are not used; REGISTRY_* come before the config", async () => {
    const other = await writeConfig("other.json", { auths: { "127.0.0.1:1": { username: registry.username, password: registry.password } } });
    const refused = await runCli([...fetchArgs("O1"), "--registry-config", other], { cwd: work, env: noEnv() });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, code: "OCI_AUTH_FAILED" });
    const right = await writeConfig("right.json", { auths: { [registry.host]: { username: registry.username, password: registry.password } } });
    const wrongEnv = await runCli([...fetchArgs("O2"), "--registry-config", right], { cwd: work, env: { ...noEnv(), REGISTRY_USERNAME: registry.username, REGISTRY_PASSWORD: "wrong-env-secret-77" } });
    expect(wrongEnv.code).toBe(1);
    expect(wrongEnv.stdout + wrongEnv.stderr).not.toContain("wrong-env-secret-77");
    // Not silent: one stderr line says which source was used and that the file was not read.
    expect(wrongEnv.stderr).toContain(`hermes-plugin-kit: note: using REGISTRY_USERNAME/REGISTRY_PASSWORD from the environment for ${registry.host}; --registry-config ${right} is not read`);
    const rightEnv = await runCli([...fetchArgs("O3"), "--registry-config", other], { cwd: work, env: { ...noEnv(), REGISTRY_USERNAME: registry.username, REGISTRY_PASSWORD: registry.password } });
    expect(rightEnv.code, rightEnv.stderr).toBe(0);
    expect(rightEnv.stderr.split("\n").filter((l) => l.includes("is not read"))).toHaveLength(1);
    expect(rightEnv.stdout + rightEnv.stderr).not.toContain(registry.password!);
  });

  it("a broken config fails closed with its code before any download", async () => {
    const broken = join(work, "broken.json");
    await writeFile(broken, "{not json");
    const r = await runCli([...fetchArgs("B1"), "--registry-config", broken], { cwd: work, env: noEnv() });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "OCI_CREDENTIAL_CONFIG_INVALID" });
  });

  it("a device or FIFO as the config is refused before any read (no unbounded read of /dev/zero, no hang on a FIFO); a link to a config is followed", async () => {
    const fifo = join(work, "config-fifo.json");
    spawnSync("mkfifo", [fifo]);
    const fifoDir = join(work, "fifo-docker");
    await mkdir(fifoDir);
    spawnSync("mkfifo", [join(fifoDir, "config.json")]);
    for (const [config, env] of [["/dev/zero", {}], [fifo, {}], [undefined, { DOCKER_CONFIG: fifoDir }]] as const) {
      const r = await runCli([...fetchArgs("B2"), ...(config === undefined ? [] : ["--registry-config", config])], { cwd: work, env: { ...noEnv(), ...env } });
      expect(r.code, `${config ?? "DOCKER_CONFIG"}: ${r.stderr}`).toBe(1);
      const answer = JSON.parse(r.stdout) as { code: string; message: string };
      expect(answer.code).toBe("OCI_CREDENTIAL_CONFIG_INVALID");
      expect(answer.message).toContain("is not a regular file");
    }
    const real = await writeConfig("real-config.json", { auths: { [registry.host]: { auth: Buffer.from(`${registry.username}:${registry.password}`).toString("base64") } } });
    const link = join(work, "linked-config.json");
    await symlink(real, link);
    const linked = await runCli([...fetchArgs("B3"), "--registry-config", link], { cwd: work, env: noEnv() });
    expect(linked.code, linked.stderr).toBe(0);
  });
});
