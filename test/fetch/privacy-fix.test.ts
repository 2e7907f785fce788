/**
 * A repository that is not private is refused with a fix: what the user does about it (make it private
 * if it is theirs, else ask its publisher), for the anonymous read probe (`PRIVACY_ANONYMOUS_READ`, any
 * registry) and the GitHub Packages visibility (`PRIVACY_PUBLIC`, `PRIVACY_INTERNAL`,
 * `PRIVACY_VISIBILITY_UNVERIFIED`). The registry is a loopback endpoint answering the tag list as an
 * open registry does; GitHub is the API emulator.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRepository } from "../../src/contract/reference.js";
import { probeAnonymousRead } from "../../src/fetch/anonymous-probe.js";
import { GHCR_REGISTRY_OVERRIDE_ENV, requirePrivateForRead } from "../../src/fetch/privacy.js";
import { startGitHubEmulator, type GitHubEmulator } from "../support/github-emulator.js";

let server: Server;
let registry: string;
/** `open`: the tag list to anyone; `bearer-open`: to an anonymous token; `basic`: refused (a private registry). */
let mode: "open" | "bearer-open" | "basic" = "open";
let api: GitHubEmulator;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === "/token") return json(200, { token: "anonymous", expires_in: 300 });
    if (mode === "basic") return json(401, { errors: [] }, { "www-authenticate": 'Basic realm="registry"' });
    if (mode === "bearer-open" && req.headers.authorization !== "Bearer anonymous") {
      return json(401, { errors: [] }, { "www-authenticate": `Bearer realm="http://${registry}/token",service="probe",scope="repository:acme/widget:pull"` });
    }
    return json(200, { name: "acme/widget", tags: ["v1.0.0"] });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  registry = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  api = await startGitHubEmulator();
});
afterAll(async () => {
  await api.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const FIX =
  "; releases are read and written only in a private repository, one that refuses an anonymous reader (the privacy gate: docs/release-publish.md); fix: if the repository is yours, make the registry require credentials for every read (ghcr.io: the package's settings, Change visibility -> Private; a self-hosted registry: turn on its authentication, e.g. the distribution registry's auth section), then rerun; if it is not, ask its publisher to make it private";

describe("PRIVACY_ANONYMOUS_READ names the fix", () => {
  it("a private registry passes; the tag list served without credentials, or to an anonymous token, is refused with the fix", async () => {
    mode = "basic";
    await expect(probeAnonymousRead(parseRepository(`${registry}/acme/widget`), { plainHttp: true })).resolves.toMatchObject({ absent: false });
    mode = "open";
    const open = probeAnonymousRead(parseRepository(`${registry}/acme/widget`), { plainHttp: true });
    await expect(open).rejects.toMatchObject({ code: "PRIVACY_ANONYMOUS_READ" });
    await expect(open).rejects.toThrow(`the registry serves the tag list of ${registry}/acme/widget anonymously (HTTP 200 without any credentials)${FIX}`);
    mode = "bearer-open";
    const token = probeAnonymousRead(parseRepository(`${registry}/acme/widget`), { plainHttp: true });
    await expect(token).rejects.toMatchObject({ code: "PRIVACY_ANONYMOUS_READ" });
    await expect(token).rejects.toThrow(`to an anonymous token (HTTP 200 after the Bearer challenge without credentials)${FIX}`);
  });
});

describe("a GitHub package that is not private names the fix", () => {
  it.each([
    ["public", "PRIVACY_PUBLIC", "; fix: if the package is yours, make it private (its settings on GitHub: Packages -> widget -> Package settings -> Change visibility -> Private), then rerun; if it is not, ask its publisher to"],
    ["internal", "PRIVACY_INTERNAL", "; fix: if the package is yours, make it private (its settings on GitHub: Packages -> widget -> Package settings -> Change visibility -> Private), then rerun; if it is not, ask its publisher to"],
    ["no-visibility", "PRIVACY_VISIBILITY_UNVERIFIED", "; fix: check that the GitHub API at this URL is GitHub's (GITHUB_API_URL) and that GH_TOKEN may read the package (read:packages), then rerun"],
  ] as const)("%s -> %s with its fix", async (state, code, fix) => {
    mode = "basic";
    api.setOwner("acme", "User");
    api.setPackage("acme", "widget", state);
    const env = api.env({ [GHCR_REGISTRY_OVERRIDE_ENV]: registry });
    const read = requirePrivateForRead(parseRepository(`${registry}/acme/widget`), { env, plainHttp: true });
    await expect(read).rejects.toMatchObject({ code });
    await expect(read).rejects.toThrow(new RegExp(`reports visibility .*${fix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
    // The private package passes the same gate.
    api.setPackage("acme", "widget", "private-null-repository");
    await expect(requirePrivateForRead(parseRepository(`${registry}/acme/widget`), { env, plainHttp: true })).resolves.toMatchObject({ kind: "github-packages" });
  });
});

describe("a GitHub package that is linked, answered for another identity, or absent names the fix", () => {
  it.each([
    ["linked", "PRIVACY_LINKED", /is linked to "acme\/widget", and a linked package can inherit its visibility and access from that repository, .*; fix: if the package is yours, publish releases to a container package that is connected to no repository \(.*org\.opencontainers\.image\.source label.*\), then rerun; if it is not, ask its publisher to$/],
    ["other-name", "PRIVACY_IDENTITY_MISMATCH", /; its visibility says nothing about the package asked for, so privacy is unproven; fix: check that GITHUB_API_URL is GitHub's API \(default https:\/\/api\.github\.com; nothing in between rewrites its answers\) and that the repository names the package exactly \(owner\/package\), then rerun$/],
    ["other-owner", "PRIVACY_IDENTITY_MISMATCH", /; fix: check that GITHUB_API_URL is GitHub's API/],
    ["absent", "PRIVACY_ABSENT", /container package acme\/widget is absent \(reads never bootstrap\), or GH_TOKEN may not see it \(GitHub answers 404 for a private package the token cannot read\); fix: check the owner and package name in the repository, and that GH_TOKEN belongs to someone who may read the package \(read:packages\); a package is created by its publisher's first release \(the check-private step's bootstrap push\), never by a read, then rerun$/],
  ] as const)("%s -> %s with its fix", async (state, code, message) => {
    mode = "basic";
    api.setOwner("acme", "User");
    api.setPackage("acme", "widget", state);
    const env = api.env({ [GHCR_REGISTRY_OVERRIDE_ENV]: registry });
    const read = requirePrivateForRead(parseRepository(`${registry}/acme/widget`), { env, plainHttp: true });
    await expect(read).rejects.toMatchObject({ code });
    await expect(read).rejects.toThrow(message);
    api.setPackage("acme", "widget", "private-null-repository");
    await expect(requirePrivateForRead(parseRepository(`${registry}/acme/widget`), { env, plainHttp: true })).resolves.toMatchObject({ kind: "github-packages" });
  });

  it("a registry repository that answers 404 to the anonymous read is PRIVACY_ABSENT with the fix (reads never create it)", async () => {
    const absent = createServer((_req, res) => {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ errors: [{ code: "NAME_UNKNOWN" }] }));
    });
    await new Promise<void>((resolve) => absent.listen(0, "127.0.0.1", () => resolve()));
    try {
      const host = `127.0.0.1:${(absent.address() as AddressInfo).port}`;
      const read = requirePrivateForRead(parseRepository(`${host}/acme/widget`), { env: {}, plainHttp: true });
      await expect(read).rejects.toMatchObject({ code: "PRIVACY_ABSENT" });
      await expect(read).rejects.toThrow(`anonymous read of ${host}/acme/widget answered 404: the repository is absent and its privacy cannot be proven; fix: check the repository in the reference (host and path exactly as published) and that the release was pushed there; a repository is created by its publisher's first release (the check-private step's bootstrap push), never by a read`);
    } finally {
      await new Promise<void>((resolve) => absent.close(() => resolve()));
    }
  });
});
