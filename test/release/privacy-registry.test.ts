/**
 * The privacy gate's anonymous-read probe against a real Debian
 * `docker-registry` (no auth, htpasswd Basic, Bearer token front with and
 * without anonymous pull), and `hermes-plugin-kit release check-private
 * [--bootstrap]` end to end: the built CLI, the GitHub API emulator through
 * @octokit/rest, a Bearer registry receiving the real bootstrap push.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseRepository } from "../../src/contract/reference.js";
import { PrivacyError, requirePrivate, requirePrivateForRead, GHCR_REGISTRY_OVERRIDE_ENV } from "../../src/fetch/privacy.js";
import { runCli } from "../support/cli.js";
import { startGitHubEmulator, type GitHubEmulator } from "../support/github-emulator.js";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";

const BOOTSTRAP_DIGEST = "sha256:2c83e94c3884c6aea03e57999e7833e8444d8ea6860a5df81a8af216e9ec884e";

/** The digest a tag names in the registry's filesystem storage, or null. */
async function storedTag(registry: RunningRegistry, repo: string, tag: string): Promise<string | null> {
  const link = join(registry.storageDir, "docker/registry/v2/repositories", repo, "_manifests/tags", tag, "current/link");
  return existsSync(link) ? (await readFile(link, "utf8")).trim() : null;
}

describeRegistry("anonymous read probe against docker-registry", () => {
  const registries: RunningRegistry[] = [];
  let none: RunningRegistry;
  let basic: RunningRegistry;
  let bearer: RunningRegistry;
  let bearerPublic: RunningRegistry;

  beforeAll(async () => {
    [none, basic, bearer, bearerPublic] = await Promise.all([
      startRegistry({ auth: "none" }),
      startRegistry({ auth: "basic" }),
      startRegistry({ auth: "bearer" }),
      startRegistry({ auth: "bearer", anonymousPull: true }),
    ]);
    registries.push(none, basic, bearer, bearerPublic);
  });
  afterAll(async () => {
    await Promise.all(registries.map((registry) => registry.stop()));
  });

  it("htpasswd (Basic): the bare 401 with a Basic challenge counts as refused", async () => {
    const evidence = await requirePrivateForRead(parseRepository(`${basic.host}/acme/widget`), { plainHttp: true, env: {} });
    expect(evidence).toMatchObject({ kind: "registry", anonymousRead: { challenge: "basic", refusedAt: "challenge", status: 401 } });
  });

  it("Bearer without anonymous pull: the anonymous token is fetched and the retry is refused", async () => {
    const before = bearer.tokenRequests.length;
    const evidence = await requirePrivateForRead(parseRepository(`${bearer.host}/acme/widget`), { plainHttp: true, env: {} });
    expect(evidence).toMatchObject({ kind: "registry", anonymousRead: { challenge: "bearer", refusedAt: "tags", status: 401 } });
    const requests = bearer.tokenRequests.slice(before);
    expect(requests).toEqual([{ scopes: ["repository:acme/widget:pull"], service: "hermes-test-registry", kind: "anonymous" }]);
  });

  it("no auth: an absent repository proves nothing (PRIVACY_ABSENT); after the bootstrap push the tags are served anonymously", async () => {
    const repository = parseRepository(`${none.host}/acme/open`);
    await expect(requirePrivateForRead(repository, { plainHttp: true, env: {} })).toThrowWithCode(PrivacyError, "PRIVACY_ABSENT");
    const cwd = await mkdtemp(join(tmpdir(), "hpk-check-private-none-"));
    try {
      await writeFile(join(cwd, "package.json"), JSON.stringify({ name: "widget", version: "1.0.0", hermesPluginKit: { repository: repository.repository } }));
      const result = await runCli(["release", "check-private", "--bootstrap", "--plain-http"], { cwd, env: { GH_TOKEN: "", REGISTRY_USERNAME: "", REGISTRY_PASSWORD: "" } });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("PRIVACY_ANONYMOUS_READ");
      // The only thing ever pushed is the zero-layer bootstrap artifact.
      expect(await storedTag(none, "acme/open", "private-bootstrap")).toBe(BOOTSTRAP_DIGEST);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
    await expect(requirePrivateForRead(repository, { plainHttp: true, env: {} })).toThrowWithCode(PrivacyError, "PRIVACY_ANONYMOUS_READ");
  });

  it("Bearer with anonymous pull (a public package): the anonymous token reads the tags -> PRIVACY_ANONYMOUS_READ", async () => {
    const repository = parseRepository(`${bearerPublic.host}/acme/public`);
    const credentials = { REGISTRY_USERNAME: bearerPublic.username!, REGISTRY_PASSWORD: bearerPublic.password! };
    const cwd = await mkdtemp(join(tmpdir(), "hpk-check-private-public-"));
    try {
      await writeFile(join(cwd, "package.json"), JSON.stringify({ name: "widget", version: "1.0.0", hermesPluginKit: { repository: repository.repository } }));
      // Absent: the anonymous token is granted but the repository is unknown (404) -> bootstrap, then the tags are readable.
      const result = await runCli(["release", "check-private", "--bootstrap", "--plain-http"], { cwd, env: { GH_TOKEN: "", ...credentials } });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("PRIVACY_ANONYMOUS_READ");
      expect(result.stdout + result.stderr).not.toContain(bearerPublic.password!);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
    await expect(requirePrivate(repository, { plainHttp: true, env: {} })).toThrowWithCode(PrivacyError, "PRIVACY_ANONYMOUS_READ");
  });
});

describeRegistry("release check-private end to end (emulated GitHub Packages API + Bearer registry)", () => {
  let registry: RunningRegistry;
  let api: GitHubEmulator;
  let cwd: string;
  let env: Record<string, string>;
  const repo = "acme/widget";

  beforeAll(async () => {
    [registry, api] = await Promise.all([startRegistry({ auth: "bearer" }), startGitHubEmulator()]);
    cwd = await mkdtemp(join(tmpdir(), "hpk-check-private-"));
    await writeFile(join(cwd, "package.json"), JSON.stringify({ name: "widget", version: "1.0.0", hermesPluginKit: { repository: `${registry.host}/${repo}` } }));
    api.setOwner("acme", "User");
    // The package exists (private) once the registry holds anything for it.
    api.setPackage("acme", "widget", async () => ((await storedTag(registry, repo, "private-bootstrap")) === null ? "absent" : "private"));
    env = api.env({ [GHCR_REGISTRY_OVERRIDE_ENV]: registry.host, REGISTRY_USERNAME: registry.username!, REGISTRY_PASSWORD: registry.password! });
  });
  afterAll(async () => {
    await Promise.all([registry.stop(), api.close(), rm(cwd, { recursive: true, force: true })]);
  });

  const secrets = () => [api.token, registry.password!];

  it("without --bootstrap an absent package fails closed and nothing is pushed", async () => {
    const result = await runCli(["release", "check-private", "--plain-http", "--json"], { cwd, env });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, code: "PRIVACY_ABSENT" });
    expect(existsSync(join(registry.storageDir, "docker/registry/v2/repositories", repo))).toBe(false);
  });

  it("--bootstrap pushes the zero-layer bootstrap artifact to private-bootstrap, then requires positive evidence", async () => {
    const result = await runCli(["release", "check-private", "--bootstrap", "--plain-http"], { cwd, env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const evidence = JSON.parse(result.stdout);
    expect(evidence).toMatchObject({
      kind: "github-packages",
      repository: `${registry.host}/${repo}`,
      bootstrapped: true,
      githubPackage: { owner: "acme", package: "widget", visibility: "private", repository: null, bootstrapped: true },
      anonymousRead: { challenge: "bearer", refusedAt: "tags", status: 401 },
    });
    expect(await storedTag(registry, repo, "private-bootstrap")).toBe(BOOTSTRAP_DIGEST);
    // The API saw: owner, package (404), owner, package (200) — all with the token.
    expect(api.requests.slice(-4).map((r) => `${r.path} ${r.outcome} ${r.authorized}`)).toEqual([
      "/users/acme 200 true",
      "/users/acme/packages/container/widget 404 true",
      "/users/acme 200 true",
      "/users/acme/packages/container/widget 200 true",
    ]);
    for (const secret of secrets()) expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it("a rerun finds the package present and does not bootstrap again", async () => {
    const result = await runCli(["release", "check-private", "--bootstrap", "--plain-http"], { cwd, env });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ bootstrapped: false });
  });

  it.each([
    ["public", "PRIVACY_PUBLIC"],
    ["linked", "PRIVACY_LINKED"],
  ] as const)("a %s package fails closed with %s (exit 1)", async (state, expected) => {
    api.setPackage("acme", "widget", state);
    try {
      const result = await runCli(["release", "check-private", "--plain-http", "--json"], { cwd, env });
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, code: expected });
      for (const secret of secrets()) expect(result.stdout + result.stderr).not.toContain(secret);
    } finally {
      api.setPackage("acme", "widget", "private");
    }
  });

  it.each([401, 403, 429, 500] as const)("HTTP %i from the API stops check-private --bootstrap with nothing pushed", async (status) => {
    api.setPackage("acme", "fresh", "absent");
    api.fail("/users/acme/packages/container/fresh", status);
    try {
      const result = await runCli(["release", "check-private", "--bootstrap", "--plain-http", "--repository", `${registry.host}/acme/fresh`, "--json"], { cwd, env });
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, code: status === 429 ? "PRIVACY_RATE_LIMITED" : "PRIVACY_API_FAILED" });
      expect(JSON.parse(result.stdout).message).toContain(`HTTP ${status}`);
      expect(existsSync(join(registry.storageDir, "docker/registry/v2/repositories/acme/fresh"))).toBe(false);
    } finally {
      api.clearFailures();
    }
  });

  it("a missing GH_TOKEN aborts before any API call (exit 1), an unknown flag is a usage error (exit 2)", async () => {
    const before = api.requests.length;
    const result = await runCli(["release", "check-private", "--plain-http"], { cwd, env: { ...env, GH_TOKEN: "" } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("PRIVACY_TOKEN_MISSING");
    expect(api.requests.length).toBe(before);
    expect((await runCli(["release", "check-private", "--no-such-flag"], { cwd, env })).code).toBe(2);
  });
});
