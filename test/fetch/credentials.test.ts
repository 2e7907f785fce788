import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRepository } from "../../src/contract/reference.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentialsFromEnv, credentialsFromEnvOrConfig, registryConfigNote, resolveRegistryCredentials } from "../../src/fetch/fetch.js";
import { runCli } from "../support/cli.js";
import { startGitHubEmulator, type GitHubEmulator } from "../support/github-emulator.js";

const ghcr = parseRepository("ghcr.io/acme/demo-plugin");
const local = parseRepository("127.0.0.1:5000/acme/demo-plugin");
const layout = parseRepository("oci-layout:/srv/store");
let api: GitHubEmulator;

beforeAll(async () => {
  api = await startGitHubEmulator({ login: "acme-bot" });
});

afterAll(async () => {
  await api.close();
});

describe("registry credentials from the environment", () => {
  it("REGISTRY_USERNAME + REGISTRY_PASSWORD win for any registry", async () => {
    const env = { REGISTRY_USERNAME: "u", REGISTRY_PASSWORD: "p", GH_TOKEN: "t" };
    expect(credentialsFromEnv(local, env)).toEqual({ username: "u", password: "p" });
    expect(await resolveRegistryCredentials(ghcr, env)).toEqual({ username: "u", password: "p" });
  });

  it("REGISTRY_TOKEN is a registry bearer token, used as given without any GitHub call", async () => {
    const before = api.requests.length;
    const env = { REGISTRY_TOKEN: "tok", GITHUB_API_URL: api.url };
    expect(credentialsFromEnv(local, env)).toEqual({ token: "tok" });
    expect(await resolveRegistryCredentials(local, env)).toEqual({ token: "tok" });
    expect(await resolveRegistryCredentials(ghcr, { ...env, GH_TOKEN: "gh" })).toEqual({ token: "tok" });
    expect(api.requests.length).toBe(before);
  });

  it("one of the pair alone is refused", async () => {
    await expect(() => credentialsFromEnv(local, { REGISTRY_USERNAME: "u" })).toThrowWithCode("FETCH_CREDENTIALS_INCOMPLETE");
    await expect(() => resolveRegistryCredentials(local, { REGISTRY_PASSWORD: "p" })).toThrowWithCode("FETCH_CREDENTIALS_INCOMPLETE");
    // The message names the variable that is missing, never a value.
    expect(() => credentialsFromEnv(local, { REGISTRY_USERNAME: "u-secret-name" })).toThrow("found REGISTRY_USERNAME set but REGISTRY_PASSWORD is not set; fix: set REGISTRY_PASSWORD too");
    expect(() => credentialsFromEnv(local, { REGISTRY_PASSWORD: "p-secret", REGISTRY_USERNAME: "" })).toThrow(/found REGISTRY_PASSWORD set but REGISTRY_USERNAME is empty; fix: set REGISTRY_USERNAME too, or unset REGISTRY_PASSWORD[^]*$/);
    for (const env of [{ REGISTRY_USERNAME: "u-secret-name" }, { REGISTRY_PASSWORD: "p-secret" }]) {
      expect(() => credentialsFromEnv(local, env)).not.toThrow(/secret/);
    }
  });

  it("GH_TOKEN is used for ghcr.io only, as the token user's login from GET /user", async () => {
    expect(await resolveRegistryCredentials(local, { GH_TOKEN: api.token })).toBeUndefined();
    expect(await resolveRegistryCredentials(layout, { GH_TOKEN: api.token })).toBeUndefined();
    expect(await resolveRegistryCredentials(ghcr, api.env())).toEqual({ username: "acme-bot", password: api.token });
    expect(api.count("GET", "/user")).toBe(1);
  });

  it("ghcr.io:443 is ghcr.io's origin (GH_TOKEN goes there); another port on ghcr.io is another origin (it does not)", () => {
    expect(credentialsFromEnv(parseRepository("ghcr.io:443/acme/demo-plugin"), { GH_TOKEN: "t" })).toEqual({ username: "oauth2", password: "t" });
    expect(credentialsFromEnv(parseRepository("GHCR.io/acme/demo-plugin"), { GH_TOKEN: "t" })).toEqual({ username: "oauth2", password: "t" });
    expect(credentialsFromEnv(parseRepository("ghcr.io:8443/acme/demo-plugin"), { GH_TOKEN: "t" })).toBeUndefined();
  });

  it("a GH_TOKEN the API refuses fails closed", async () => {
    await expect(() => resolveRegistryCredentials(ghcr, { ...api.env(), GH_TOKEN: "not-the-token" })).toThrowWithCode("PRIVACY_API_FAILED");
  });
});

describe("--registry-config with environment credentials: the environment wins, and says so in one line without a secret", () => {
  const secret = "env-secret-value-4242";
  it.each([
    ["REGISTRY_USERNAME/REGISTRY_PASSWORD", local, { REGISTRY_USERNAME: "u", REGISTRY_PASSWORD: secret }],
    ["REGISTRY_TOKEN", local, { REGISTRY_TOKEN: secret }],
    ["GH_TOKEN", ghcr, { GH_TOKEN: secret }],
  ] as const)("%s", (source, repository, env) => {
    const note = registryConfigNote(repository, env, "/home/me/auth.json");
    expect(note).toBe(
      `note: using ${source} from the environment for ${repository.kind === "registry" ? repository.registry : ""}; --registry-config /home/me/auth.json is not read (environment credentials come first, like ORAS --username/--password and skopeo --creds); unset ${source.replace("/", " and ")} to use the file`,
    );
    expect(note).not.toContain(secret);
  });

  it("no note without --registry-config, without environment credentials, or for GH_TOKEN on another registry", () => {
    expect(registryConfigNote(local, { REGISTRY_TOKEN: "t" }, undefined)).toBeUndefined();
    expect(registryConfigNote(local, {}, "/c.json")).toBeUndefined();
    expect(registryConfigNote(local, { GH_TOKEN: "t" }, "/c.json")).toBeUndefined();
  });

  it("an oci-layout store reads no credentials: a given --registry-config is said to be unused", () => {
    expect(registryConfigNote(layout, {}, "/c.json")).toBe("note: --registry-config /c.json is not read: oci-layout:/srv/store is a local oci-layout store (no credentials)");
  });

  it("the library reports it through onNote and still uses the environment's credentials (precedence unchanged)", async () => {
    const notes: string[] = [];
    const env = { REGISTRY_USERNAME: "u", REGISTRY_PASSWORD: secret };
    expect(await resolveRegistryCredentials(local, env, { registryConfig: "/absent/config.json", onNote: (l) => notes.push(l) })).toEqual({ username: "u", password: secret });
    expect(await credentialsFromEnvOrConfig(local, env, { registryConfig: "/absent/config.json", onNote: (l) => notes.push(l) })).toEqual({ username: "u", password: secret });
    expect(notes).toHaveLength(2);
    expect(notes.join("")).not.toContain(secret);
  });

  it("a --registry-config with nothing for the host is reported before the request (library and CLI); one that has an entry is not", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hpk-cred-empty-"));
    try {
      const empty = join(dir, "empty.json");
      await writeFile(empty, "{}");
      const other = join(dir, "other.json");
      await writeFile(other, JSON.stringify({ auths: { "registry.example": { auth: Buffer.from("u:p").toString("base64") } } }));
      const own = join(dir, "own.json");
      await writeFile(own, JSON.stringify({ auths: { "127.0.0.1:9": { auth: Buffer.from(`u:${secret}`).toString("base64") } } }));
      const registry = parseRepository("127.0.0.1:9/acme/demo-plugin");
      for (const [config, expected] of [[empty, 1], [other, 1], [own, 0]] as const) {
        const notes: string[] = [];
        await credentialsFromEnvOrConfig(registry, {}, { registryConfig: config, onNote: (l) => notes.push(l) });
        expect(notes, config).toEqual(expected === 0 ? [] : [`note: --registry-config ${config} has no auths entry or credential helper for 127.0.0.1:9; continuing without credentials`]);
      }
      const cli = await runCli(["resolve", "--reference", "127.0.0.1:9/acme/demo-plugin:v1.0.0", "--plain-http", "--registry-config", empty], { env: { REGISTRY_USERNAME: undefined, REGISTRY_PASSWORD: undefined, REGISTRY_TOKEN: undefined, GH_TOKEN: undefined, DOCKER_CONFIG: undefined } });
      expect(cli.stderr.split("\n")[0]).toBe(`hermes-plugin-kit: note: --registry-config ${empty} has no auths entry or credential helper for 127.0.0.1:9; continuing without credentials`);
      expect(cli.code).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the CLI prints the note on stderr (one line), not under --quiet", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hpk-cred-note-"));
    try {
      const config = join(dir, "config.json");
      await writeFile(config, "{}");
      // resolve against a closed loopback port: the note comes before any request, the request then fails.
      const args = ["resolve", "--reference", "127.0.0.1:9/acme/demo-plugin:v1.0.0", "--plain-http", "--registry-config", config];
      const env = { REGISTRY_USERNAME: "u", REGISTRY_PASSWORD: secret, DOCKER_CONFIG: undefined, GH_TOKEN: undefined, REGISTRY_TOKEN: undefined };
      const loud = await runCli(args, { env });
      const notes = loud.stderr.split("\n").filter((l) => l.startsWith("hermes-plugin-kit: note: "));
      expect(notes).toEqual([`hermes-plugin-kit: note: using REGISTRY_USERNAME/REGISTRY_PASSWORD from the environment for 127.0.0.1:9; --registry-config ${config} is not read (environment credentials come first, like ORAS --username/--password and skopeo --creds); unset REGISTRY_USERNAME and REGISTRY_PASSWORD to use the file`]);
      expect(loud.stdout + loud.stderr).not.toContain(secret);
      const quiet = await runCli([...args, "--quiet"], { env });
      expect(quiet.stderr).not.toContain("note: ");
      expect(quiet.code).toBe(loud.code);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("credential variables with control characters", () => {
  it.each(["REGISTRY_TOKEN", "REGISTRY_PASSWORD", "GH_TOKEN"])("%s with a newline: FETCH_CREDENTIALS_INVALID naming the variable, never the value (library and CLI)", async (name) => {
    const secret = "tok-" + "Z9".repeat(10);
    const env: Record<string, string | undefined> = name === "REGISTRY_PASSWORD" ? { REGISTRY_USERNAME: "u", REGISTRY_PASSWORD: `${secret}\n` } : { [name]: `${secret}\r\n` };
    const repository = name === "GH_TOKEN" ? parseRepository("ghcr.io/acme/demo-plugin") : local;
    let error: (Error & { code?: string }) | undefined;
    try {
      credentialsFromEnv(repository, env);
    } catch (e) {
      error = e as Error & { code?: string };
    }
    expect(error?.code).toBe("FETCH_CREDENTIALS_INVALID");
    expect(error?.message).toContain(`${name} holds a line break or another control character`);
    expect(error?.message).not.toContain(secret);
    const cli = await runCli(["resolve", "--reference", "127.0.0.1:9/acme/demo-plugin:v1.0.0", "--plain-http"], { env: { REGISTRY_USERNAME: undefined, REGISTRY_PASSWORD: undefined, REGISTRY_TOKEN: undefined, GH_TOKEN: undefined, DOCKER_CONFIG: undefined, ...(name === "GH_TOKEN" ? {} : env) } });
    if (name !== "GH_TOKEN") {
      expect(cli.code).toBe(1);
      expect(cli.stderr).toMatch(/\[FETCH_CREDENTIALS_INVALID\]\n$/);
      expect(cli.stderr + cli.stdout).not.toContain(secret);
    }
    // A clean value passes.
    expect(credentialsFromEnv(repository, name === "REGISTRY_PASSWORD" ? { REGISTRY_USERNAME: "u", REGISTRY_PASSWORD: secret } : { [name]: secret })).toBeDefined();
  });
});
