/**
 * `hermes-plugin-kit release promote` to a network remote: a loopback
 * smart-HTTP server (real `git http-backend`) that demands HTTP Basic auth.
 * The token reaches git only through the credential helper (environment ->
 * stdin protocol): a `git` wrapper first on PATH logs every git argv, and
 * neither that log, nor the CLI's stdout/stderr, nor the remote URL ever
 * holds the token (secrets never in argv or logs; docs/release-publish.md).
 */
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import http from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialOrigin } from "../../release/promote.js";
import { stageRelease } from "../../release/stage.js";
import { runCli } from "../support/cli.js";
import { fixtureGit } from "../support/release-fixture.js";
import { createPipelineFixture, revParse, stageInputs, startGitHttpServer, type GitHttpServer, type PipelineFixture } from "../support/release-pipeline-fixture.js";

const TOKEN = `promotion-token-${Math.random().toString(36).slice(2)}`;

let pf: PipelineFixture;
let server: GitHttpServer;
let reference: string;
let origin: string;
let checkout: string;
let argvLog: string;
let shimDir: string;

beforeAll(async () => {
  pf = await createPipelineFixture();
  reference = (await stageRelease({ ...stageInputs(pf.fixture), repository: pf.repository, tag: pf.candidateTag })).bundle_reference;
  const projectRoot = join(pf.root, "served");
  await mkdir(projectRoot);
  origin = join(projectRoot, "origin.git");
  await fixtureGit(pf.root, ["init", "--quiet", "--bare", "--initial-branch=main", origin]);
  const trigger = await fixtureGit(pf.fixture.repoDir, ["rev-parse", `${pf.fixture.sourceSha}^`]);
  await fixtureGit(pf.fixture.repoDir, ["push", "--quiet", origin, `${trigger}:refs/heads/main`]);
  server = await startGitHttpServer(projectRoot, "x-access-token", TOKEN);
  checkout = join(pf.root, "checkout");
  await fixtureGit(pf.root, ["init", "--quiet", checkout]);
  await fixtureGit(checkout, ["remote", "add", "origin", `${server.url}/origin.git`]);
  await writeFile(join(checkout, "package.json"), JSON.stringify({ name: pf.fixture.packageName, version: "0.7.0", hermesPluginKit: { repository: pf.repository } }) + "\n");
  // A git wrapper that logs every argv, then runs the real git.
  const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  shimDir = join(pf.root, "shim");
  argvLog = join(pf.root, "git-argv.log");
  await mkdir(shimDir);
  await writeFile(join(shimDir, "git"), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${argvLog}'\nexec '${realGit}' "$@"\n`);
  await chmod(join(shimDir, "git"), 0o755);
  await writeFile(argvLog, "");
});

afterAll(async () => {
  await server?.close();
  await pf?.cleanup();
});

const env = (token: string | undefined) => ({ PATH: `${shimDir}:${process.env["PATH"]}`, SOURCE_PROMOTION_TOKEN: token });

describe("release promote over authenticated HTTP", () => {
  it("without SOURCE_PROMOTION_TOKEN: exit 1 before any request", async () => {
    const result = await runCli(["release", "promote", "--reference", reference], { cwd: checkout, env: env(undefined) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("[PROMOTE_TOKEN_MISSING]");
    expect(server.requests).toHaveLength(0);
  });

  it("with a wrong token: fails closed, nothing pushed, the token never printed", async () => {
    const wrong = `${TOKEN}-wrong`;
    const result = await runCli(["release", "promote", "--reference", reference], { cwd: checkout, env: env(wrong) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("[GIT_FAILED]");
    expect(result.stdout + result.stderr).not.toContain(wrong);
    expect(await revParse(origin, "refs/tags/v0.8.0")).toBeUndefined();
  });

  it("a remote that redirects to another origin gets no token there: the helper answers only the remote's host", async () => {
    // The handed shape of the credential-origin rule for git: the remote's server points elsewhere.
    const redirector = http.createServer((req, res) => {
      res.writeHead(301, { location: `${server.url}${req.url ?? "/"}` });
      res.end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
    const address = redirector.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const redirected = join(pf.root, "checkout-redirected");
    await fixtureGit(pf.root, ["init", "--quiet", redirected]);
    await fixtureGit(redirected, ["remote", "add", "origin", `http://127.0.0.1:${port}/origin.git`]);
    await writeFile(join(redirected, "package.json"), JSON.stringify({ name: pf.fixture.packageName, version: "0.7.0", hermesPluginKit: { repository: pf.repository } }) + "\n");
    const before = server.requests.length;
    try {
      const result = await runCli(["release", "promote", "--reference", reference], { cwd: redirected, env: env(TOKEN) });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("[GIT_FAILED]");
      expect(result.stdout + result.stderr).not.toContain(TOKEN);
      const seen = server.requests.slice(before);
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.some((r) => r.authorized)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => redirector.close(() => resolve()));
    }
  });

  it("the credential helper answers only for the remote's protocol and host", () => {
    expect(credentialOrigin("https://github.com/acme/plugin.git")).toEqual({ protocol: "https", host: "github.com" });
    expect(credentialOrigin("http://127.0.0.1:8080/x.git")).toEqual({ protocol: "http", host: "127.0.0.1:8080" });
    expect(credentialOrigin("git@github.com:acme/plugin.git")).toBeUndefined();
    expect(credentialOrigin("ssh://git@github.com/acme/plugin.git")).toBeUndefined();
  });

  it("pushes main + tag with the token from the credential helper, never in argv or output", async () => {
    const before = server.requests.length;
    const result = await runCli(["release", "promote", "--reference", reference], { cwd: checkout, env: env(TOKEN) });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ outcome: "pushed", release_sha: pf.fixture.sourceSha });
    expect(await revParse(origin, "refs/heads/main")).toBe(pf.fixture.sourceSha);
    expect(await revParse(origin, "refs/tags/v0.8.0^{commit}")).toBe(pf.fixture.sourceSha);
    const seen = server.requests.slice(before);
    expect(seen.some((r) => r.authorized && r.path.endsWith("/git-receive-pack"))).toBe(true);
    const again = await runCli(["release", "promote", "--reference", reference], { cwd: checkout, env: env(TOKEN) });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ outcome: "already-promoted" });
    const log = await readFile(argvLog, "utf8");
    expect(log).toContain("push --atomic");
    expect(log).not.toContain(TOKEN);
    for (const output of [result, again]) expect(output.stdout + output.stderr).not.toContain(TOKEN);
  });
});
