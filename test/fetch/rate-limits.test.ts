/**
 * Rate limits everywhere: every request the product sends (the anonymous
 * privacy probe, token endpoints, registry requests, the GitHub API through
 * the real Octokit) honours `Retry-After` within a bounded budget, and says
 * "rate limited" when it gives up. The handed input: 429 with `Retry-After: 2`
 * on every request made `fetch` fail at its first request (the privacy probe)
 * as "proves nothing".
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseRepository } from "../../src/contract/reference.js";
import { GHCR_REGISTRY_OVERRIDE_ENV, PrivacyError, requirePrivateForRead } from "../../src/fetch/privacy.js";
import { RegistryTarget } from "../../src/oci/index.js";
import { createGitHubRelease, GitHubReleaseError } from "../../release/github-release.js";
import { runCli } from "../support/cli.js";
import { startGitHubEmulator, type GitHubEmulator } from "../support/github-emulator.js";
import { startFakeRegistry, type FakeRegistry } from "../support/registry-fake.js";
import { startStandIn, type StandIn } from "../support/registry-standin.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture } from "../support/release-fixture.js";

const CREDS = { username: "rate-user", password: "rate-secret-77a" };
let closers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c.close()));
  closers = [];
});

async function fake(handler: Parameters<typeof startFakeRegistry>[0]): Promise<FakeRegistry> {
  const s = await startFakeRegistry(handler);
  closers.push(s);
  return s;
}

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string; httpStatus?: number }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error("expected a failure, the call succeeded");
}

describe("the anonymous privacy probe", () => {
  it("waits out 429 Retry-After: 1 and then proves the refusal", async () => {
    let calls = 0;
    const s = await fake((_req, res) => {
      calls += 1;
      if (calls <= 2) return void res.writeHead(429, { "retry-after": "1", "content-length": "0" }).end();
      res.writeHead(401, { "www-authenticate": 'Basic realm="r"', "content-length": "0" }).end();
    });
    const started = Date.now();
    const evidence = await requirePrivateForRead(parseRepository(`${s.host}/acme/kit`), { env: {}, plainHttp: true });
    expect(evidence).toMatchObject({ kind: "registry", anonymousRead: { challenge: "basic", status: 401 } });
    expect(calls).toBe(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
  });

  it("gives up after the retry budget with PRIVACY_RATE_LIMITED, and at once on a Retry-After beyond it", async () => {
    const s = await fake((_req, res) => void res.writeHead(429, { "retry-after": "0", "content-length": "0" }).end());
    const error = await errorOf(requirePrivateForRead(parseRepository(`${s.host}/acme/kit`), { env: {}, plainHttp: true, retry: { maxAttempts: 3 } }));
    expect(error.code).toBe("PRIVACY_RATE_LIMITED");
    expect(error.message).toContain("rate limited");
    expect(s.requests).toHaveLength(3);
    const later = await fake((_req, res) => void res.writeHead(429, { "retry-after": "600", "content-length": "0" }).end());
    const t0 = Date.now();
    expect((await errorOf(requirePrivateForRead(parseRepository(`${later.host}/acme/kit`), { env: {}, plainHttp: true }))).code).toBe("PRIVACY_RATE_LIMITED");
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(later.requests).toHaveLength(1);
  });

  it("a rate-limited anonymous token request is retried too", async () => {
    let tokenCalls = 0;
    let self = "";
    const s = await fake((req, res) => {
      if ((req.url ?? "").startsWith("/token")) {
        tokenCalls += 1;
        if (tokenCalls === 1) return void res.writeHead(429, { "retry-after": "0", "content-length": "0" }).end();
        return void res.writeHead(401, { "content-length": "0" }).end();
      }
      res.writeHead(401, { "www-authenticate": `Bearer realm="${self}/token",service="s"`, "content-length": "0" }).end();
    });
    self = s.url;
    const evidence = await requirePrivateForRead(parseRepository(`${s.host}/acme/kit`), { env: {}, plainHttp: true });
    expect(evidence).toMatchObject({ anonymousRead: { challenge: "bearer", refusedAt: "token", status: 401 } });
    expect(tokenCalls).toBe(2);
  });
});

describe("registry token endpoints", () => {
  it("a 429 from the token endpoint is waited out; a storm ends in OCI_RATE_LIMITED", async () => {
    let tokenCalls = 0;
    let self = "";
    let storm = false;
    const s = await fake((req, res) => {
      if ((req.url ?? "").startsWith("/token")) {
        tokenCalls += 1;
        if (storm || tokenCalls === 1) return void res.writeHead(429, { "retry-after": "0", "content-length": "0" }).end();
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ token: "t0k", expires_in: 300 }));
      }
      if (req.headers.authorization === "Bearer t0k") {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ name: "acme/kit", tags: ["v1"] }));
      }
      res.writeHead(401, { "www-authenticate": `Bearer realm="${self}/token",service="s"`, "content-length": "0" }).end();
    });
    self = s.url;
    const client = (): RegistryTarget => new RegistryTarget({ registry: s.host, repository: "acme/kit", plainHttp: true, credentials: CREDS, retry: { maxAttempts: 3, baseDelayMs: 5 } });
    expect(await client().tags()).toEqual(["v1"]);
    expect(tokenCalls).toBe(2);
    storm = true;
    const error = await errorOf(client().tags());
    expect(error.code).toBe("OCI_RATE_LIMITED");
    expect(error.message).toContain("rate limited");
    expect(error.message).not.toContain(CREDS.password);
  });
});

describe("the GitHub API through Octokit", () => {
  let api: GitHubEmulator;
  let probe: FakeRegistry;
  beforeAll(async () => {
    api = await startGitHubEmulator();
    probe = await startFakeRegistry((_req, res) => void res.writeHead(401, { "www-authenticate": 'Basic realm="r"', "content-length": "0" }).end());
  });
  afterAll(async () => {
    await api.close();
    await probe.close();
  });

  const env = (): Record<string, string> => api.env({ [GHCR_REGISTRY_OVERRIDE_ENV]: probe.host });
  const repository = () => parseRepository(`${probe.host}/acme/widget`);

  it("a secondary rate limit (403 or 429 with retry-after: 1) is waited out", async () => {
    for (const status of [403, 429]) {
      api.clearFailures();
      api.requests.length = 0;
      api.setOwner("acme", "User");
      api.setPackage("acme", "widget", "private");
      api.fail("/users/acme/packages/container/widget", { status, body: JSON.stringify({ message: "You have exceeded a secondary rate limit" }), headers: { "retry-after": "1" } }, { times: 1 });
      const evidence = await requirePrivateForRead(repository(), { env: env(), plainHttp: true });
      expect(evidence.kind).toBe("github-packages");
      expect(api.count("GET", "/users/acme/packages/container/widget")).toBe(2);
    }
  });

  it("a primary limit with remaining 0 and a reset within the budget is waited out; one an hour away fails at once", async () => {
    api.clearFailures();
    api.setOwner("acme", "User");
    api.setPackage("acme", "widget", "private");
    const reset = String(Math.floor(Date.now() / 1000) + 1);
    api.fail("/users/acme", { status: 403, body: JSON.stringify({ message: "API rate limit exceeded" }), headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset } }, { times: 1 });
    expect((await requirePrivateForRead(repository(), { env: env(), plainHttp: true })).kind).toBe("github-packages");
    api.fail("/users/acme", 429);
    api.requests.length = 0;
    const t0 = Date.now();
    const error = await errorOf(requirePrivateForRead(repository(), { env: env(), plainHttp: true }));
    expect(error).toBeInstanceOf(PrivacyError);
    expect(error.code).toBe("PRIVACY_RATE_LIMITED");
    expect(error.message).toMatch(/rate limited \(HTTP 429; the limit resets at \d{4}-/);
    expect(api.count("GET", "/users/acme")).toBe(1);
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it("a persistent secondary limit ends after the budget with GITHUB_RATE_LIMITED, nothing written", async () => {
    api.clearFailures();
    api.requests.length = 0;
    api.fail(/\/releases/, { status: 429, body: JSON.stringify({ message: "secondary rate limit" }), headers: { "retry-after": "0" } });
    const input = {
      version: "1.2.3",
      releaseSha: "a".repeat(40),
      bundleReference: `127.0.0.1:5000/acme/widget@sha256:${"b".repeat(64)}`,
      receiptReference: `127.0.0.1:5000/acme/widget@sha256:${"c".repeat(64)}`,
      packageName: "widget",
      remoteTagCommit: async () => "a".repeat(40),
    };
    const error = await errorOf(createGitHubRelease(input, { env: api.env({ GITHUB_REPOSITORY: "acme/widget" }) }));
    expect(error).toBeInstanceOf(GitHubReleaseError);
    expect(error.code).toBe("GITHUB_RATE_LIMITED");
    expect(error.message).toContain("rate limited");
    expect(api.requests.filter((r) => r.method !== "GET")).toEqual([]);
    expect(api.requests.filter((r) => /\/releases/.test(r.path))).toHaveLength(5);
  });
});

describe("CLI fetch", () => {
  let standIn: StandIn;
  let fixture: ReleaseFixture;
  let bundle: string;
  let work: string;
  let mode: "off" | "some" | "all" = "off";
  let limited = 0;
  // Read by the stand-in at every request, so a test can change what it answers.
  const limit = {
    retryAfter: "1",
    when: (_seen: unknown, index: number): boolean => {
      const hit = mode === "all" || (mode === "some" && (index === 0 || index % 4 === 3));
      if (hit) limited += 1;
      return hit;
    },
  };

  beforeAll(async () => {
    standIn = await startStandIn({ credentials: CREDS, rateLimit: limit });
    const repository = `${standIn.host}/acme/demo-plugin`;
    fixture = await createReleaseFixture({ registryRepository: repository });
    const target = new RegistryTarget({ registry: standIn.host, repository: "acme/demo-plugin", plainHttp: true, credentials: CREDS });
    bundle = `${repository}@${(await stageFixture(fixture, target, repository)).bundle.digest}`;
    work = await mkdtemp(join(tmpdir(), "hpk-rate-"));
  });
  afterAll(async () => {
    await standIn?.close();
    await fixture?.cleanup();
    await rm(work, { recursive: true, force: true });
  });

  const fetchCli = (out: string) =>
    runCli(["fetch", "--reference", bundle, "--repository", bundle.split("@")[0] as string, "--output-dir", out, "--plain-http"], {
      cwd: work,
      env: { REGISTRY_USERNAME: CREDS.username, REGISTRY_PASSWORD: CREDS.password },
    });

  it("completes when the privacy probe and every fourth request are rate limited (Retry-After: 1)", async () => {
    standIn.requests.length = 0;
    limited = 0;
    mode = "some";
    limit.retryAfter = "1";
    try {
      const result = await fetchCli(join(work, "ok"));
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(bundle);
      expect(limited).toBeGreaterThanOrEqual(3);
    } finally {
      mode = "off";
    }
  });

  it("the handed input: 429 Retry-After: 2 on every request -> exit 1 saying rate limited after 5 probes, nothing written", async () => {
    standIn.requests.length = 0;
    mode = "all";
    limit.retryAfter = "2";
    try {
      const result = await fetchCli(join(work, "never"));
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("rate limited");
      expect(result.stderr).toContain("[PRIVACY_RATE_LIMITED]");
      expect(standIn.requests).toHaveLength(5);
      expect(await readdir(work)).not.toContain("never");
    } finally {
      mode = "off";
    }
  });
});
