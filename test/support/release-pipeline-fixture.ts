/**
 * Fixtures for the stage / promote / publish tests: a real release payload
 * (real git bundle, real `npm pack` tarball, tested manifest) built by
 * `release-fixture.ts`, an `oci-layout:` store in a private temp directory,
 * and helpers to inspect or tamper with that store through the real OCI layer.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BOOTSTRAP_ARTIFACT_TYPE } from "../../src/contract/constants.js";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { writeLayout } from "../../src/oci/layout.js";
import { copy } from "../../src/oci/transfer.js";
import type { StageOptions } from "../../release/stage.js";
import { createReleaseFixture, fixtureGit, type ReleaseFixture } from "./release-fixture.js";

/** A payload plus a layout store named by the payload's manifest. */
export interface PipelineFixture {
  fixture: ReleaseFixture;
  /** Private temp root (0700) holding `store/` and outputs. */
  root: string;
  /** The store directory (not created yet: stage's privacy bootstrap creates it 0700). */
  storeDir: string;
  /** `oci-layout:<storeDir>`. */
  repository: string;
  /** The candidate tag of the fixture manifest. */
  candidateTag: string;
  cleanup(): Promise<void>;
}

/** Build a payload whose manifest names `oci-layout:<root>/store`. */
export async function createPipelineFixture(options: { version?: string; packageName?: string } = {}): Promise<PipelineFixture> {
  const root = await mkdtemp(join(tmpdir(), "hpk-pipeline-"));
  const storeDir = join(root, "store");
  const repository = `oci-layout:${storeDir}`;
  const fixture = await createReleaseFixture({ registryRepository: repository, ...options });
  return {
    fixture,
    root,
    storeDir,
    repository,
    candidateTag: `candidate-12345-${fixture.sourceSha}`,
    cleanup: async () => {
      await fixture.cleanup();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** The `stageRelease` inputs of a (possibly copied) fixture payload. */
export function stageInputs(f: ReleaseFixture): Pick<StageOptions, "manifest" | "artifactDir" | "sourceBundle" | "payloadChecksums" | "policy"> {
  const payload = join(f.files.get("release-manifest.json")!, "..");
  return {
    policy: f.policy,
    manifest: f.files.get("release-manifest.json")!,
    artifactDir: join(payload, "dist"),
    sourceBundle: f.files.get("release-source.bundle")!,
    payloadChecksums: f.files.get("release-payload.sha256")!,
  };
}

/** Every file name under `<store>/blobs/sha256` (empty when the store does not exist). */
export async function storeBlobs(storeDir: string): Promise<string[]> {
  return (await readdir(join(storeDir, "blobs", "sha256")).catch(() => [] as string[])).sort();
}

/** `index.json` bytes of the store (empty string when absent). */
export async function storeIndex(storeDir: string): Promise<string> {
  return readFile(join(storeDir, "index.json"), "utf8").catch(() => "");
}

/** tag -> digest of every tag in the store. */
export async function storeTags(storeDir: string): Promise<Record<string, string>> {
  const target = await LayoutTarget.open(storeDir);
  const out: Record<string, string> = {};
  for (const tag of await target.tags()) out[tag] = (await target.resolve(tag)).digest;
  return out;
}

/**
 * Bind `tag` in the store to an unrelated artifact (the bootstrap artifact),
 * creating the store 0700 when needed; returns that artifact's digest.
 */
export async function preBindTag(storeDir: string, tag: string, scratch: string): Promise<string> {
  const dir = join(scratch, `other-${tag}`);
  const layout = await writeLayout(dir, BOOTSTRAP_ARTIFACT_TYPE, new Map());
  const store = await LayoutTarget.open(storeDir, { create: true });
  await copy(await LayoutTarget.open(dir), store, layout.manifest.digest, { tag });
  return layout.manifest.digest;
}

/** A bare origin whose `main` is the trigger commit (the release commit's parent), and a clone of it. */
export interface PromotionRemote {
  /** The bare repository. */
  origin: string;
  /** A checkout whose `origin` remote is {@link origin}. */
  checkout: string;
  triggerSha: string;
}

/** Create `<root>/<name>.git` with `main` at the fixture's trigger commit, plus a clone. */
export async function createPromotionRemote(pf: PipelineFixture, name = "origin"): Promise<PromotionRemote> {
  const origin = join(pf.root, `${name}.git`);
  const checkout = join(pf.root, `${name}-checkout`);
  const triggerSha = await fixtureGit(pf.fixture.repoDir, ["rev-parse", `${pf.fixture.sourceSha}^`]);
  await fixtureGit(pf.root, ["init", "--quiet", "--bare", "--initial-branch=main", origin]);
  await fixtureGit(pf.fixture.repoDir, ["push", "--quiet", origin, `${triggerSha}:refs/heads/main`]);
  await fixtureGit(pf.root, ["clone", "--quiet", origin, checkout]);
  return { origin, checkout, triggerSha };
}

/** `git rev-parse` in a (bare) repository; undefined when the rev does not resolve. */
export async function revParse(repo: string, rev: string): Promise<string | undefined> {
  return fixtureGit(repo, ["rev-parse", "--verify", "--quiet", rev]).catch(() => undefined);
}

/** A loopback smart-HTTP git server (real `git http-backend`) requiring HTTP Basic auth. */
export interface GitHttpServer {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** Requests seen: method, path, and whether the expected credentials were presented. */
  requests: { method: string; path: string; authorized: boolean }[];
  close(): Promise<void>;
}

/**
 * Serve the repositories under `projectRoot` over smart HTTP on 127.0.0.1
 * through `git http-backend` (CGI), answering 401 with a Basic challenge
 * unless the request carries `username:password`. Push is enabled for
 * authenticated requests (REMOTE_USER is set).
 */
export async function startGitHttpServer(projectRoot: string, username: string, password: string): Promise<GitHttpServer> {
  const expected = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  const requests: GitHttpServer["requests"] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const authorized = req.headers["authorization"] === expected;
    requests.push({ method: req.method ?? "", path: url.pathname, authorized });
    if (!authorized) {
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"', "Content-Type": "text/plain" });
      res.end("authentication required\n");
      req.resume();
      return;
    }
    const env: NodeJS.ProcessEnv = {
      PATH: process.env["PATH"],
      GIT_PROJECT_ROOT: projectRoot,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      REQUEST_METHOD: req.method ?? "GET",
      PATH_INFO: url.pathname,
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      REMOTE_USER: username,
      REMOTE_ADDR: "127.0.0.1",
    };
    if (req.headers["content-length"] !== undefined) env["CONTENT_LENGTH"] = req.headers["content-length"];
    if (req.headers["content-encoding"] !== undefined) env["HTTP_CONTENT_ENCODING"] = req.headers["content-encoding"];
    if (typeof req.headers["git-protocol"] === "string") env["GIT_PROTOCOL"] = req.headers["git-protocol"];
    const child = spawn("git", ["http-backend"], { env, stdio: ["pipe", "pipe", "ignore"] });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let headerDone = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (headerDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      headerDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
        const colon = line.indexOf(":");
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number(value.split(" ")[0]);
        else res.setHeader(name, value);
      }
      res.statusCode = status;
      res.write(head.subarray(end + 4));
    });
    child.on("close", () => res.end());
    child.on("error", () => {
      res.statusCode = 500;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
