import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRepository } from "../../src/contract/reference.js";
import { credentialsFromEnv, resolveRegistryCredentials } from "../../src/fetch/fetch.js";
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
  });

  it("GH_TOKEN is used for ghcr.io only, as the token user's login from GET /user", async () => {
    expect(await resolveRegistryCredentials(local, { GH_TOKEN: api.token })).toBeUndefined();
    expect(await resolveRegistryCredentials(layout, { GH_TOKEN: api.token })).toBeUndefined();
    expect(await resolveRegistryCredentials(ghcr, api.env())).toEqual({ username: "acme-bot", password: api.token });
    expect(api.count("GET", "/user")).toBe(1);
  });

  it("a GH_TOKEN the API refuses fails closed", async () => {
    await expect(() => resolveRegistryCredentials(ghcr, { ...api.env(), GH_TOKEN: "not-the-token" })).toThrowWithCode("PRIVACY_API_FAILED");
  });
});
