/**
 * The privacy gate (src/fetch/privacy.ts) against the GitHub API emulator
 * (driven through the real @octokit/rest client) and loopback registry
 * endpoints that answer the anonymous tag-list probe in each way a registry can.
 */
import { chmod, chown, lstat, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseRepository } from "../../src/contract/reference.js";
import { OciError } from "../../src/oci/errors.js";
import {
  GHCR_REGISTRY_OVERRIDE_ENV,
  isGitHubPackagesRegistry,
  NO_PACKAGES_API_NOTE,
  PrivacyError,
  packageCredentialLogin,
  parseWwwAuthenticate,
  requirePrivate,
  requirePrivateForRead,
} from "../../src/fetch/privacy.js";
import { runCli } from "../support/cli.js";
import { startGitHubEmulator, type GitHubEmulator } from "../support/github-emulator.js";

type ProbeMode =
  | "open"
  | "forbidden"
  | "basic"
  | "bearer-open"
  | "bearer-refused"
  | "bearer-token-refused"
  | "bearer-token-500"
  | "bearer-no-token"
  | "bearer-http-realm-remote"
  | "absent"
  | "error-500"
  | "no-challenge"
  | "drop"
  | "hang";

interface ProbeRequest {
  path: string;
  authorization: string | undefined;
}

/** A loopback endpoint answering `/v2/<path>/tags/list` and a token realm as a registry in `mode` would. */
interface ProbeRegistry {
  registry: string;
  mode: ProbeMode;
  requests: ProbeRequest[];
  close(): Promise<void>;
}

async function startProbeRegistry(initial: ProbeMode): Promise<ProbeRegistry> {
  const requests: ProbeRequest[] = [];
  const sockets = new Set<Socket>();
  const state = { mode: initial };
  let origin = "";
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    requests.push({ path: url.pathname + url.search, authorization: req.headers.authorization });
    const mode = state.mode;
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    const bearer = (realm = `${origin}/token`) => ({ "www-authenticate": `Bearer realm="${realm}",service="probe-registry",scope="repository:acme/widget:pull"` });
    if (url.pathname === "/token") {
      if (mode === "bearer-token-refused") return json(401, { errors: [{ code: "UNAUTHORIZED" }] });
      if (mode === "bearer-token-500") return json(500, { errors: [] });
      if (mode === "bearer-no-token") return json(200, { expires_in: 300 });
      return json(200, { token: "anonymous-token-value", access_token: "anonymous-token-value", expires_in: 300 });
    }
    if (!url.pathname.endsWith("/tags/list")) return json(404, { errors: [{ code: "NOT_FOUND" }] });
    const anonymous = req.headers.authorization === "Bearer anonymous-token-value";
    switch (mode) {
      case "open":
        return json(200, { name: "acme/widget", tags: ["v1.0.0"] });
      case "forbidden":
        return json(403, { errors: [{ code: "DENIED" }] });
      case "basic":
        return json(401, { errors: [{ code: "UNAUTHORIZED" }] }, { "www-authenticate": 'Basic realm="Registry Realm"' });
      case "bearer-open":
        return anonymous ? json(200, { name: "acme/widget", tags: ["v1.0.0"] }) : json(401, { errors: [] }, bearer());
      case "bearer-refused":
      case "bearer-token-refused":
      case "bearer-token-500":
      case "bearer-no-token":
        return json(401, { errors: [{ code: "UNAUTHORIZED" }] }, bearer());
      case "bearer-http-realm-remote":
        return json(401, { errors: [] }, bearer("http://registry.example.invalid/token"));
      case "absent":
        return json(404, { errors: [{ code: "NAME_UNKNOWN" }] });
      case "error-500":
        return json(500, { errors: [] });
      case "no-challenge":
        return json(401, { errors: [] });
      case "drop":
        req.socket.destroy();
        return;
      case "hang":
        return;
    }
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  return {
    registry: `127.0.0.1:${port}`,
    get mode() {
      return state.mode;
    },
    set mode(value: ProbeMode) {
      state.mode = value;
    },
    requests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const allErrorTexts: string[] = [];
async function errorOf(promise: Promise<unknown>): Promise<PrivacyError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PrivacyError) {
      allErrorTexts.push(error.message, String(error.stack));
      return error;
    }
    throw error;
  }
  throw new Error("expected a PrivacyError, the call succeeded");
}

describe("GitHub Packages evidence (ghcr-style repository through the emulator)", () => {
  let api: GitHubEmulator;
  let registry: ProbeRegistry;
  let repository: ReturnType<typeof parseRepository>;
  let env: Record<string, string>;

  beforeAll(async () => {
    api = await startGitHubEmulator();
    registry = await startProbeRegistry("basic");
  });
  afterAll(async () => {
    await api.close();
    await registry.close();
    // The token never reached any error text.
    expect(allErrorTexts.join("\n")).not.toContain(api.token);
    expect(JSON.stringify(api.requests)).not.toContain(api.token);
  });
  beforeEach(() => {
    api.requests.length = 0;
    registry.requests.length = 0;
    registry.mode = "basic";
    api.clearFailures();
    api.setOwner("acme", "User");
    api.setPackage("acme", "widget", "private");
    repository = parseRepository(`${registry.registry}/acme/widget`);
    env = api.env({ [GHCR_REGISTRY_OVERRIDE_ENV]: registry.registry });
  });

  it("accepts a private, unlinked container package of a User and an anonymous read refused", async () => {
    const evidence = await requirePrivate(repository, { env, plainHttp: true });
    expect(evidence.kind).toBe("github-packages");
    if (evidence.kind !== "github-packages") throw new Error("unreachable");
    expect(evidence.githubPackage).toMatchObject({ owner: "acme", ownerType: "User", package: "widget", visibility: "private", repository: null, bootstrapped: false });
    expect(evidence.anonymousRead).toMatchObject({ challenge: "basic", refusedAt: "challenge", status: 401 });
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /users/acme", "GET /users/acme/packages/container/widget"]);
    expect(api.requests.every((r) => r.authorized && r.apiVersion === "2022-11-28" && r.accept === "application/vnd.github+json")).toBe(true);
    expect(registry.requests).toHaveLength(1);
    expect(registry.requests[0]!.authorization).toBeUndefined();
  });

  it("uses the organization package path for an Organization owner and accepts an explicit repository: null", async () => {
    api.setOwner("acme", "Organization");
    api.setPackage("acme", "widget", "private-null-repository");
    const evidence = await requirePrivateForRead(repository, { env, plainHttp: true });
    if (evidence.kind !== "github-packages") throw new Error("expected github-packages evidence");
    expect(evidence.githubPackage.ownerType).toBe("Organization");
    expect(api.requests.map((r) => r.path)).toEqual(["/users/acme", "/orgs/acme/packages/container/widget"]);
  });

  it.each([
    ["public", "PRIVACY_PUBLIC"],
    ["internal", "PRIVACY_INTERNAL"],
    ["empty", "PRIVACY_IDENTITY_MISMATCH"],
    ["no-visibility", "PRIVACY_VISIBILITY_UNVERIFIED"],
    ["linked", "PRIVACY_LINKED"],
    ["other-name", "PRIVACY_IDENTITY_MISMATCH"],
    ["other-type", "PRIVACY_IDENTITY_MISMATCH"],
    ["other-owner", "PRIVACY_IDENTITY_MISMATCH"],
  ] as const)("package state %s fails closed with %s before any registry request", async (state, code) => {
    api.setPackage("acme", "widget", state);
    let bootstrapCalls = 0;
    const error = await errorOf(requirePrivate(repository, { env, plainHttp: true, bootstrap: async () => void bootstrapCalls++ }));
    expect(error.code).toBe(code);
    expect(bootstrapCalls).toBe(0);
    expect(registry.requests).toHaveLength(0);
  });

  it("an absent package without bootstrap fails with PRIVACY_ABSENT (reads never bootstrap)", async () => {
    api.setPackage("acme", "widget", "absent");
    await expect(requirePrivateForRead(repository, { env, plainHttp: true })).toThrowWithCode(PrivacyError, "PRIVACY_ABSENT");
    expect(registry.requests).toHaveLength(0);
  });

  it("an absent package with bootstrap: the callback runs once, then owner and package are read again and must be private", async () => {
    api.setPackage("acme", "widget", "absent");
    let calls = 0;
    const evidence = await requirePrivate(repository, {
      env,
      plainHttp: true,
      bootstrap: async () => {
        calls += 1;
        api.setPackage("acme", "widget", "private");
      },
    });
    expect(calls).toBe(1);
    expect(evidence.bootstrapped).toBe(true);
    expect(api.requests.map((r) => `${r.path} ${r.outcome}`)).toEqual([
      "/users/acme 200",
      "/users/acme/packages/container/widget 404",
      "/users/acme 200",
      "/users/acme/packages/container/widget 200",
    ]);
  });

  it.each([
    ["absent", "PRIVACY_ABSENT"],
    ["public", "PRIVACY_PUBLIC"],
    ["internal", "PRIVACY_INTERNAL"],
    ["empty", "PRIVACY_IDENTITY_MISMATCH"],
    ["linked", "PRIVACY_LINKED"],
  ] as const)("after bootstrap the package is %s: fails with %s, bootstrap called exactly once", async (after, code) => {
    api.setPackage("acme", "widget", "absent");
    let calls = 0;
    const error = await errorOf(
      requirePrivate(repository, {
        env,
        plainHttp: true,
        bootstrap: async () => {
          calls += 1;
          api.setPackage("acme", "widget", after);
        },
      }),
    );
    expect(error.code).toBe(code);
    expect(calls).toBe(1);
    expect(registry.requests).toHaveLength(0);
  });

  it.each([401, 403, 429, 500] as const)("HTTP %i from the package endpoint fails closed (429: rate limited, reset an hour away), no retry, no bootstrap", async (status) => {
    api.fail("/users/acme/packages/container/widget", status);
    let calls = 0;
    const error = await errorOf(requirePrivate(repository, { env, plainHttp: true, bootstrap: async () => void calls++ }));
    expect(error.code).toBe(status === 429 ? "PRIVACY_RATE_LIMITED" : "PRIVACY_API_FAILED");
    expect(error.httpStatus).toBe(status);
    expect(error.message).toContain(`HTTP ${status}`);
    if (status === 429) expect(error.message).toContain("rate limited");
    expect(api.count("GET", "/users/acme/packages/container/widget")).toBe(1);
    expect(calls).toBe(0);
    expect(registry.requests).toHaveLength(0);
  });

  it.each([401, 403, 404, 429, 500] as const)("HTTP %i from the owner lookup fails closed with PRIVACY_API_FAILED (429: PRIVACY_RATE_LIMITED)", async (status) => {
    api.fail("/users/acme", status);
    const error = await errorOf(requirePrivate(repository, { env, plainHttp: true, bootstrap: async () => undefined }));
    expect(error.code).toBe(status === 429 ? "PRIVACY_RATE_LIMITED" : "PRIVACY_API_FAILED");
    expect(error.httpStatus).toBe(status);
    expect(api.count("GET", /packages/)).toBe(0);
  });

  it("owner lookup OK, package lookup drops the connection (no HTTP status): PRIVACY_NO_STATUS, no bootstrap", async () => {
    api.fail("/users/acme/packages/container/widget", "drop");
    let calls = 0;
    await expect(requirePrivate(repository, { env, plainHttp: true, bootstrap: async () => void calls++ })).toThrowWithCode(PrivacyError, "PRIVACY_NO_STATUS");
    expect(calls).toBe(0);
  });

  it("an API that never answers fails closed with PRIVACY_NO_STATUS after the per-request timeout", async () => {
    api.fail("/users/acme/packages/container/widget", "hang");
    const started = Date.now();
    await expect(requirePrivate(repository, { env, plainHttp: true, timeoutMs: 300, bootstrap: async () => undefined })).toThrowWithCode(PrivacyError, "PRIVACY_NO_STATUS");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("an unknown owner type fails with PRIVACY_OWNER_UNKNOWN", async () => {
    api.setOwner("acme", "Bot");
    await expect(requirePrivate(repository, { env, plainHttp: true })).toThrowWithCode(PrivacyError, "PRIVACY_OWNER_UNKNOWN");
    expect(api.count("GET", /packages/)).toBe(0);
  });

  it("a missing GH_TOKEN aborts before any API call", async () => {
    for (const token of [undefined, "", "  "]) {
      const noToken = { ...env, GH_TOKEN: token };
      await expect(requirePrivate(repository, { env: noToken, plainHttp: true })).toThrowWithCode(PrivacyError, "PRIVACY_TOKEN_MISSING");
    }
    expect(api.requests).toHaveLength(0);
    expect(registry.requests).toHaveLength(0);
  });

  it("a wrong token is answered 401 and fails closed", async () => {
    const error = await errorOf(requirePrivate(repository, { env: { ...env, GH_TOKEN: "not-the-token" }, plainHttp: true }));
    expect(error.code).toBe("PRIVACY_API_FAILED");
    expect(error.httpStatus).toBe(401);
    expect(api.requests[0]!.hadAuthorization).toBe(true);
    expect(api.requests[0]!.authorized).toBe(false);
  });

  it("a body with duplicate visibility keys is refused (the strict reader never lets the last key win)", async () => {
    api.setPackage("acme", "widget", {
      status: 200,
      body: '{"name":"widget","package_type":"container","owner":{"login":"acme"},"visibility":"public","visibility":"private"}',
    });
    await expect(requirePrivate(repository, { env, plainHttp: true })).toThrowWithCode(PrivacyError, "PRIVACY_API_MALFORMED");
  });

  it("a 200 that is not JSON is refused", async () => {
    api.setPackage("acme", "widget", { status: 200, body: "<html>ok</html>", contentType: "text/html" });
    await expect(requirePrivate(repository, { env, plainHttp: true })).toThrowWithCode(PrivacyError, "PRIVACY_API_MALFORMED");
  });

  it("a 2xx other than 200 (202) fails closed", async () => {
    api.setPackage("acme", "widget", { status: 202, body: "{}" });
    const error = await errorOf(requirePrivate(repository, { env, plainHttp: true }));
    expect(error.code).toBe("PRIVACY_API_FAILED");
    expect(error.httpStatus).toBe(202);
  });

  it("GITHUB_API_URL over plain http to a non-loopback host, or with credentials, is refused before any call", async () => {
    await expect(requirePrivate(repository, { env: { ...env, GITHUB_API_URL: "http://api.example.invalid" }, plainHttp: true })).toThrowWithCode(PrivacyError, "PRIVACY_API_URL_INVALID");
    await expect(requirePrivate(repository, { env: { ...env, GITHUB_API_URL: `http://user:pw@127.0.0.1:1` }, plainHttp: true })).toThrowWithCode(PrivacyError, "PRIVACY_API_URL_INVALID");
    expect(api.requests).toHaveLength(0);
  });

  it("an unreachable API (connection refused) gives PRIVACY_NO_STATUS", async () => {
    const closed = await startGitHubEmulator();
    const url = closed.url;
    await closed.close();
    await expect(requirePrivate(repository, { env: { ...env, GITHUB_API_URL: url }, plainHttp: true })).toThrowWithCode(PrivacyError, "PRIVACY_NO_STATUS");
  });

  it("the API check and the anonymous probe are independent: API private but tags served anonymously fails", async () => {
    registry.mode = "bearer-open";
    await expect(requirePrivate(repository, { env, plainHttp: true })).toThrowWithCode(PrivacyError, "PRIVACY_ANONYMOUS_READ");
    expect(registry.requests.map((r) => r.path.split("?")[0])).toEqual(["/v2/acme/widget/tags/list", "/token", "/v2/acme/widget/tags/list"]);
  });

  it("ghcr.io itself always gets the API check (the override can only add checks)", async () => {
    const ghcr = parseRepository("ghcr.io/acme/widget");
    api.fail("/users/acme", 500);
    const error = await errorOf(requirePrivateForRead(ghcr, { env: api.env() }));
    expect(error.code).toBe("PRIVACY_API_FAILED");
    await expect(requirePrivateForRead(ghcr, { env: { GITHUB_API_URL: api.url } })).toThrowWithCode(PrivacyError, "PRIVACY_TOKEN_MISSING");
  });

  it.each([["ghcr.io:443/acme/widget"], ["GHCR.IO:443/acme/widget"], ["ghcr.io:8443/acme/widget"]])("%s is ghcr.io too: writing a port does not skip the package API's evidence", async (written) => {
    const ghcr = parseRepository(written);
    expect(isGitHubPackagesRegistry(ghcr, {})).toBe(true);
    // No token: refused offline, before any request, as for ghcr.io itself.
    await expect(requirePrivateForRead(ghcr, { env: { GITHUB_API_URL: api.url } })).toThrowWithCode(PrivacyError, "PRIVACY_TOKEN_MISSING");
    expect(isGitHubPackagesRegistry(parseRepository("ghcr.example:443/acme/widget"), {})).toBe(false);
  });

  it("GET /user gives the credential login used as the registry username", async () => {
    expect(await packageCredentialLogin({ env })).toBe("release-bot");
    api.fail("/user", 403);
    await expect(packageCredentialLogin({ env })).toThrowWithCode(PrivacyError, "PRIVACY_API_FAILED");
  });
});

describe("anonymous read probe (registries without a packages API)", () => {
  let registry: ProbeRegistry;
  let repository: ReturnType<typeof parseRepository>;
  beforeAll(async () => {
    registry = await startProbeRegistry("basic");
    repository = parseRepository(`${registry.registry}/acme/widget`);
  });
  afterAll(async () => registry.close());
  beforeEach(() => {
    registry.requests.length = 0;
  });

  it("a bare 401 with a Basic challenge counts as refused (Basic has no anonymous flow)", async () => {
    registry.mode = "basic";
    const evidence = await requirePrivateForRead(repository, { plainHttp: true, env: {} });
    expect(evidence).toMatchObject({ kind: "registry", githubPackage: null, note: NO_PACKAGES_API_NOTE, anonymousRead: { challenge: "basic", refusedAt: "challenge", status: 401 } });
    expect(registry.requests).toHaveLength(1);
  });

  it("a 403 at once counts as refused", async () => {
    registry.mode = "forbidden";
    const evidence = await requirePrivateForRead(repository, { plainHttp: true, env: {} });
    expect(evidence).toMatchObject({ anonymousRead: { refusedAt: "challenge", status: 403 } });
  });

  it("follows a Bearer challenge without credentials; a 401 after the anonymous token counts as refused", async () => {
    registry.mode = "bearer-refused";
    const evidence = await requirePrivateForRead(repository, { plainHttp: true, env: {} });
    expect(evidence).toMatchObject({ anonymousRead: { challenge: "bearer", refusedAt: "tags", status: 401 } });
    const [first, token, retry] = registry.requests;
    expect(first!.authorization).toBeUndefined();
    expect(token!.authorization).toBeUndefined();
    expect(token!.path).toBe("/token?service=probe-registry&scope=repository%3Aacme%2Fwidget%3Apull");
    expect(retry!.authorization).toBe("Bearer anonymous-token-value");
  });

  it("a token realm that refuses anonymous tokens counts as refused", async () => {
    registry.mode = "bearer-token-refused";
    const evidence = await requirePrivateForRead(repository, { plainHttp: true, env: {} });
    expect(evidence).toMatchObject({ anonymousRead: { challenge: "bearer", refusedAt: "token", status: 401 } });
  });

  it.each([
    ["open", "PRIVACY_ANONYMOUS_READ"],
    ["bearer-open", "PRIVACY_ANONYMOUS_READ"],
    ["bearer-token-500", "PRIVACY_ANONYMOUS_CHECK_FAILED"],
    ["bearer-no-token", "PRIVACY_ANONYMOUS_CHECK_FAILED"],
    ["bearer-http-realm-remote", "PRIVACY_ANONYMOUS_CHECK_FAILED"],
    ["error-500", "PRIVACY_ANONYMOUS_CHECK_FAILED"],
    ["no-challenge", "PRIVACY_ANONYMOUS_CHECK_FAILED"],
    ["absent", "PRIVACY_ABSENT"],
    ["drop", "PRIVACY_NO_STATUS"],
  ] as const)("registry answering %s fails closed with %s", async (mode, code) => {
    registry.mode = mode;
    await expect(requirePrivateForRead(repository, { plainHttp: true, env: {} })).toThrowWithCode(PrivacyError, code);
  });

  it("a registry that never answers fails closed with PRIVACY_NO_STATUS after the timeout", async () => {
    registry.mode = "hang";
    const started = Date.now();
    await expect(requirePrivateForRead(repository, { plainHttp: true, env: {}, timeoutMs: 300 })).toThrowWithCode(PrivacyError, "PRIVACY_NO_STATUS");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("the http realm of a remote host is refused without contacting it", async () => {
    registry.mode = "bearer-http-realm-remote";
    const error = await errorOf(requirePrivateForRead(repository, { plainHttp: true, env: {} }));
    expect(error.message).toContain("not https");
    expect(registry.requests).toHaveLength(1);
  });

  it("absent with bootstrap: the callback runs, then the probe repeats and must be refused", async () => {
    registry.mode = "absent";
    let calls = 0;
    const evidence = await requirePrivate(repository, { plainHttp: true, env: {}, bootstrap: async () => { calls += 1; registry.mode = "basic"; } });
    expect(calls).toBe(1);
    expect(evidence.bootstrapped).toBe(true);
    registry.mode = "absent";
    await expect(requirePrivate(repository, { plainHttp: true, env: {}, bootstrap: async () => { registry.mode = "open"; } })).toThrowWithCode(PrivacyError, "PRIVACY_ANONYMOUS_READ");
    registry.mode = "absent";
    await expect(requirePrivate(repository, { plainHttp: true, env: {}, bootstrap: async () => undefined })).toThrowWithCode(PrivacyError, "PRIVACY_ABSENT");
  });

  it("plain HTTP is refused for a non-loopback registry before any request", async () => {
    await expect(requirePrivateForRead(parseRepository("registry.example.invalid/acme/widget"), { plainHttp: true, env: {} })).toThrowWithCode(OciError, "OCI_PLAIN_HTTP_REFUSED");
  });

  it("an https probe of a plain-http registry fails closed naming the mismatch and the fix (OCI_TLS_FAILED, --plain-http)", async () => {
    registry.mode = "basic";
    const probe = requirePrivateForRead(repository, { env: {}, timeoutMs: 5000 });
    await expect(probe).toThrowWithCode(OciError, "OCI_TLS_FAILED");
    await expect(requirePrivateForRead(repository, { env: {}, timeoutMs: 5000 })).rejects.toThrow(/answered plain HTTP to a TLS connection.*--plain-http/);
  });
});

describe("WWW-Authenticate parsing", () => {
  it("reads Bearer params, quoted or not, and several challenges", () => {
    expect(parseWwwAuthenticate('Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:a/b:pull"')).toEqual([
      { scheme: "bearer", params: { realm: "https://ghcr.io/token", service: "ghcr.io", scope: "repository:a/b:pull" } },
    ]);
    expect(parseWwwAuthenticate('Basic realm="Registry Realm", Bearer realm=https://x/token')).toEqual([
      { scheme: "basic", params: { realm: "Registry Realm" } },
      { scheme: "bearer", params: { realm: "https://x/token" } },
    ]);
    expect(parseWwwAuthenticate("Basic")).toEqual([{ scheme: "basic", params: {} }]);
    expect(parseWwwAuthenticate("")).toEqual([]);
  });
});

describe("oci-layout stores", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "hpk-privacy-layout-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("accepts a 0700 directory owned by the current user", async () => {
    const dir = join(root, "store");
    await mkdir(dir, { mode: 0o700 });
    const evidence = await requirePrivateForRead(parseRepository(`oci-layout:${dir}`));
    expect(evidence).toMatchObject({ kind: "layout", layout: { dir, mode: "0700", created: false, uid: process.getuid!() } });
  });

  it.each([0o750, 0o704, 0o701, 0o710, 0o777])("refuses mode %o with PRIVACY_LAYOUT_PERMISSIONS", async (mode) => {
    const dir = join(root, "store");
    await mkdir(dir);
    await chmod(dir, mode);
    await expect(requirePrivateForRead(parseRepository(`oci-layout:${dir}`))).toThrowWithCode(PrivacyError, "PRIVACY_LAYOUT_PERMISSIONS");
    await expect(requirePrivateForRead(parseRepository(`oci-layout:${dir}`))).rejects.toThrow(`found mode 0${mode.toString(8)}; fix: chmod 700 ${dir}`);
  });

  it("refuses a directory owned by another uid", async () => {
    const dir = join(root, "store");
    await mkdir(dir, { mode: 0o700 });
    await chown(dir, 4321, 4321);
    expect(process.getuid!()).toBe(0);
    await expect(requirePrivateForRead(parseRepository(`oci-layout:${dir}`))).toThrowWithCode(PrivacyError, "PRIVACY_LAYOUT_OWNER");
  });

  it("refuses a symlink to a private directory, and a regular file", async () => {
    const real = join(root, "real");
    await mkdir(real, { mode: 0o700 });
    await symlink(real, join(root, "link"));
    await expect(requirePrivateForRead(parseRepository(`oci-layout:${join(root, "link")}`))).toThrowWithCode(PrivacyError, "PRIVACY_LAYOUT_SYMLINK");
    await writeFile(join(root, "file"), "x", { mode: 0o600 });
    await expect(requirePrivateForRead(parseRepository(`oci-layout:${join(root, "file")}`))).toThrowWithCode(PrivacyError, "PRIVACY_LAYOUT_NOT_DIRECTORY");
  });

  it("an absent store is refused on read (and not created), and created 0700 with bootstrap", async () => {
    const dir = join(root, "new", "store");
    await expect(requirePrivateForRead(parseRepository(`oci-layout:${dir}`))).toThrowWithCode(PrivacyError, "PRIVACY_ABSENT");
    await expect(lstat(join(root, "new"))).rejects.toMatchObject({ code: "ENOENT" });
    let calls = 0;
    const evidence = await requirePrivate(parseRepository(`oci-layout:${dir}`), { bootstrap: async () => void calls++ });
    expect(evidence).toMatchObject({ kind: "layout", bootstrapped: true, layout: { created: true, mode: "0700" } });
    expect((await lstat(dir)).mode & 0o777).toBe(0o700);
    expect(calls).toBe(0);
    await expect(requirePrivateForRead(parseRepository(`oci-layout:${join(root, "missing")}`))).toThrowWithCode(PrivacyError, "PRIVACY_ABSENT");
  });
});

describe("release check-private for oci-layout stores (built CLI)", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "hpk-check-private-layout-"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("--bootstrap creates the store 0700 and prints the evidence; without it an absent store fails; a group-readable store fails", async () => {
    const store = join(root, "store");
    const absent = await runCli(["release", "check-private", "--repository", `oci-layout:${store}`, "--json"], { cwd: root });
    expect(absent.code).toBe(1);
    expect(JSON.parse(absent.stdout)).toMatchObject({ ok: false, code: "PRIVACY_ABSENT" });
    await expect(lstat(store)).rejects.toMatchObject({ code: "ENOENT" });

    const created = await runCli(["release", "check-private", "--repository", `oci-layout:${store}`, "--bootstrap"], { cwd: root });
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ kind: "layout", bootstrapped: true, layout: { dir: store, mode: "0700", created: true } });
    expect((await lstat(store)).mode & 0o777).toBe(0o700);

    await chmod(store, 0o750);
    const open = await runCli(["release", "check-private", "--repository", `oci-layout:${store}`], { cwd: root });
    expect(open.code).toBe(1);
    expect(open.stderr).toContain("PRIVACY_LAYOUT_PERMISSIONS");
    expect(open.stderr).toContain("0750");
  });

  it("outside a checkout --repository is required (usage error, exit 2)", async () => {
    const result = await runCli(["release", "check-private"], { cwd: root });
    expect(result.code).toBe(2);
  });
});
