/**
 * Registry credentials from a Docker client config (src/oci/credential-store.ts):
 * auths entries, `credHelpers` / `credsStore` through real `docker-credential-<name>`
 * executables on PATH (the helper protocol: `get`, server on stdin, JSON on stdout),
 * lookup by exact host, and every malformed input failing with its code.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { authKeyHost, credentialsFromDockerConfig, credentialsFromHelper, dockerConfigPath } from "../../src/oci/credential-store.js";

let dir: string;
let bin: string;
let env: Record<string, string | undefined>;

/** A credential helper that records its argv, stdin and environment names, then answers per host. */
const HELPER = `#!/usr/bin/env python3
import json, os, sys
server = sys.stdin.read()
log = "__LOG__"
with open(log, "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": server, "env": sorted(os.environ)}) + "\\n")
answers = {
    "registry.example:5000": {"ServerURL": server, "Username": "robot", "Secret": "helper-secret-1"},
    "tokens.example": {"ServerURL": server, "Username": "", "Secret": "bearer-2"},
    "refresh.example": {"ServerURL": server, "Username": "<token>", "Secret": "refresh-3"},
    "garbage.example": "not json",
    "twice.example": '{"ServerURL": "twice.example", "Username": "robot", "Secret": "first-secret-4", "Secret": "second-secret-5"}',
}
if server == "broken.example":
    sys.exit(3)
if server not in answers:
    print("credentials not found in native keychain")
    sys.exit(1)
a = answers[server]
print(a if isinstance(a, str) else json.dumps(a))
`;

async function config(doc: unknown): Promise<string> {
  const file = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, typeof doc === "string" ? doc : JSON.stringify(doc));
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hpk-creds-"));
  bin = join(dir, "bin");
  await mkdir(bin);
  for (const name of ["docker-credential-fake", "docker-credential-store"]) {
    await writeFile(join(bin, name), HELPER.replace("__LOG__", join(dir, "helper.log")));
    await chmod(join(bin, name), 0o755);
  }
  env = { PATH: `${bin}:${process.env["PATH"] ?? ""}`, HOME: join(dir, "home"), GH_TOKEN: "gh-secret", REGISTRY_PASSWORD: "env-secret", SOURCE_PROMOTION_TOKEN: "promo-secret", UNRELATED_SETTING: "x" };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("auths entries", () => {
  it("reads base64 auth, username/password and registrytoken for the exact host only", async () => {
    const file = await config({
      auths: {
        "https://registry.example:5000/v1/": { auth: Buffer.from("alice:pa:ss").toString("base64") },
        "plain.example": { username: "bob", password: "pw" },
        "http://bearer.example": { registrytoken: "tok" },
      },
    });
    expect(await credentialsFromDockerConfig("registry.example:5000", { configFile: file, env })).toEqual({ username: "alice", password: "pa:ss" });
    expect(await credentialsFromDockerConfig("REGISTRY.example:5000", { configFile: file, env })).toEqual({ username: "alice", password: "pa:ss" });
    expect(await credentialsFromDockerConfig("plain.example", { configFile: file, env })).toEqual({ username: "bob", password: "pw" });
    expect(await credentialsFromDockerConfig("bearer.example", { configFile: file, env })).toEqual({ token: "tok" });
    // Another port, a suffix or a prefix of a host is another registry.
    for (const host of ["registry.example", "registry.example:5001", "example:5000", "plain.example.evil"]) {
      expect(await credentialsFromDockerConfig(host, { configFile: file, env })).toBeUndefined();
    }
  });

  it("finds $DOCKER_CONFIG/config.json, else ~/.docker/config.json; an absent default file means no credentials", async () => {
    expect(dockerConfigPath({ env: { DOCKER_CONFIG: "/x/y", HOME: "/h" } })).toBe("/x/y/config.json");
    expect(dockerConfigPath({ env: { HOME: "/h" } })).toBe("/h/.docker/config.json");
    expect(dockerConfigPath({ configFile: "/c.json", env: { DOCKER_CONFIG: "/x" } })).toBe("/c.json");
    expect(await credentialsFromDockerConfig("plain.example", { env })).toBeUndefined();
    const dockerDir = join(dir, "docker-config");
    await mkdir(dockerDir, { recursive: true });
    await writeFile(join(dockerDir, "config.json"), JSON.stringify({ auths: { "plain.example": { username: "carol", password: "pw2" } } }));
    expect(await credentialsFromDockerConfig("plain.example", { env: { ...env, DOCKER_CONFIG: dockerDir } })).toEqual({ username: "carol", password: "pw2" });
  });

  it.each([
    ["an explicit file that does not exist", null, "OCI_CREDENTIAL_CONFIG_INVALID"],
    ["not JSON", "{auths", "OCI_CREDENTIAL_CONFIG_INVALID"],
    ["a JSON array", "[]", "OCI_CREDENTIAL_CONFIG_INVALID"],
    ["auths not an object", { auths: [] }, "OCI_CREDENTIAL_CONFIG_INVALID"],
    ["an entry not an object", { auths: { "plain.example": "x" } }, "OCI_CREDENTIAL_CONFIG_INVALID"],
    ["auth without a colon", { auths: { "plain.example": { auth: Buffer.from("nocolon").toString("base64") } } }, "OCI_CREDENTIAL_CONFIG_INVALID"],
    ["an identity token", { auths: { "plain.example": { identitytoken: "refresh" } } }, "OCI_CREDENTIAL_UNSUPPORTED"],
    ["a helper name with a path", { credHelpers: { "plain.example": "../../bin/sh" } }, "OCI_CREDENTIAL_CONFIG_INVALID"],
    ["credsStore not a word", { credsStore: "a b" }, "OCI_CREDENTIAL_CONFIG_INVALID"],
  ])("%s fails with %s", async (_name, doc, code) => {
    const file = doc === null ? join(dir, "absent.json") : await config(doc);
    await expect(() => credentialsFromDockerConfig("plain.example", { configFile: file, env })).toThrowWithCode(code);
  });

  describe("ambiguity is refused, never resolved to one entry", () => {
    it("two keys naming one host with different credentials, or one key written twice: OCI_CREDENTIAL_CONFIG_INVALID, no secret in the message", async () => {
      const two = await config({ auths: { "127.0.0.1:5000": { username: "alice", password: "pw-a-11" }, "https://127.0.0.1:5000": { username: "mallory", password: "pw-m-22" } } });
      const helpers = await config({ credHelpers: { "registry.example:5000": "fake", "https://registry.example:5000/v1/": "store" } });
      const duplicate = await config('{"auths": {"plain.example": {"username": "bob", "password": "pw-b-33"}, "plain.example": {"username": "eve", "password": "pw-e-44"}}}');
      for (const [file, host] of [[two, "127.0.0.1:5000"], [helpers, "registry.example:5000"], [duplicate, "plain.example"]] as const) {
        const error = (await credentialsFromDockerConfig(host, { configFile: file, env }).catch((e: unknown) => e)) as Error & { code?: string };
        expect(error.code).toBe("OCI_CREDENTIAL_CONFIG_INVALID");
        expect(error.message).not.toMatch(/pw-[abem]-\d\d/);
      }
    });

    it("two keys naming one host with the same credentials count as one (control)", async () => {
      const same = { username: "alice", password: "pw" };
      const file = await config({ auths: { "127.0.0.1:5000": same, "http://127.0.0.1:5000/v2/": same, "other.example": { username: "x", password: "y" } } });
      expect(await credentialsFromDockerConfig("127.0.0.1:5000", { configFile: file, env })).toEqual(same);
    });
  });

  it("authKeyHost drops scheme and path", () => {
    expect(authKeyHost("https://index.docker.io/v1/")).toBe("index.docker.io");
    expect(authKeyHost("ghcr.io")).toBe("ghcr.io");
    expect(authKeyHost("http://127.0.0.1:5000")).toBe("127.0.0.1:5000");
  });
});

describe("credential helpers", () => {
  it("credHelpers[host] runs docker-credential-<name> get with the host on stdin, in an allow-listed environment", async () => {
    const file = await config({ credHelpers: { "registry.example:5000": "fake" }, auths: { "registry.example:5000": { username: "file", password: "ignored" } } });
    await writeFile(join(dir, "helper.log"), "");
    expect(await credentialsFromDockerConfig("registry.example:5000", { configFile: file, env })).toEqual({ username: "robot", password: "helper-secret-1" });
    const calls = (await readFile(join(dir, "helper.log"), "utf8")).trim().split("\n").map((l) => JSON.parse(l) as { argv: string[]; stdin: string; env: string[] });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.argv).toEqual(["get"]);
    expect(calls[0]!.stdin).toBe("registry.example:5000");
    for (const name of ["GH_TOKEN", "REGISTRY_PASSWORD", "SOURCE_PROMOTION_TOKEN", "UNRELATED_SETTING"]) expect(calls[0]!.env).not.toContain(name);
    expect(calls[0]!.env).toContain("PATH");
  });

  it("credsStore serves every host without a credHelpers entry; credHelpers wins for its host", async () => {
    const file = await config({ credsStore: "store", credHelpers: { "tokens.example": "fake" } });
    expect(await credentialsFromDockerConfig("registry.example:5000", { configFile: file, env })).toEqual({ username: "robot", password: "helper-secret-1" });
    expect(await credentialsFromDockerConfig("tokens.example", { configFile: file, env })).toEqual({ token: "bearer-2" });
    // The helper's "credentials not found" answer means anonymous, not an error.
    expect(await credentialsFromDockerConfig("unknown.example", { configFile: file, env })).toBeUndefined();
  });

  it.each([
    ["a helper not on PATH", "missing", "registry.example:5000", "OCI_CREDENTIAL_HELPER_FAILED"],
    ["a failing helper", "fake", "broken.example", "OCI_CREDENTIAL_HELPER_FAILED"],
    ["an answer that is not JSON", "fake", "garbage.example", "OCI_CREDENTIAL_HELPER_FAILED"],
    ["an answer naming Secret twice (ambiguous)", "fake", "twice.example", "OCI_CREDENTIAL_HELPER_FAILED"],
    ["an identity token", "fake", "refresh.example", "OCI_CREDENTIAL_UNSUPPORTED"],
  ])("%s fails with its code and no secret in the message", async (_name, helper, host, code) => {
    const error = (await credentialsFromHelper(helper, host, { env }).then(
      () => undefined,
      (e: unknown) => e,
    )) as (Error & { code?: string }) | undefined;
    expect(error?.code).toBe(code);
    expect(String(error?.message)).not.toMatch(/refresh-3|helper-secret|not json|first-secret|second-secret/);
    expect(String(error?.message)).toContain(host);
  });
});
