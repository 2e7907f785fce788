/**
 * Ctrl-C and SIGTERM during `fetch`, for real: the built CLI
 * (dist/src/cli/main.js, `npm run build` first) fetches from a loopback proxy
 * in front of Debian's docker-registry that sends half of every layer blob and
 * then stalls; once a `.partial` file exists under the child's TMPDIR the test
 * signals the child. It must exit 130 (SIGINT) or 143 (SIGTERM) with
 * `INTERRUPTED`, leave no `hpk-*` directory in its TMPDIR, and leave the
 * output directory as it was. The library API (`fetchRelease` with an
 * AbortSignal) behaves the same.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMPTY_CONFIG_DIGEST } from "../../src/contract/constants.js";
import { InterruptedError } from "../../src/contract/errors.js";
import { fetchRelease } from "../../src/fetch/fetch.js";
import { openTarget } from "../../src/oci/open.js";
import { CLI } from "../support/cli.js";
import { describeRegistry, startRegistry, type RunningRegistry } from "../support/registry.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture, type StagedRelease } from "../support/release-fixture.js";

let registry: RunningRegistry;
let proxy: http.Server;
let proxyHost: string;
let fixture: ReleaseFixture;
let staged: StagedRelease;
let work: string;
const stalled = new Set<http.ServerResponse>();

/**
 * Forward everything to the registry (its token endpoint included); a layer
 * blob GET gets its headers and half its body, then nothing more.
 */
function startStallingProxy(upstream: string): Promise<http.Server> {
  const [host, port] = upstream.split(":") as [string, string];
  const server = http.createServer((req, res) => {
    const out = http.request({ host, port: Number(port), method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const stall = req.method === "GET" && /\/blobs\/sha256:/.test(req.url ?? "") && !(req.url ?? "").endsWith(EMPTY_CONFIG_DIGEST) && answer.statusCode === 200;
      // The token realm is on the registry's origin (as on GHCR): name the proxy's, so credentials go where the client sends them.
      const headers = { ...answer.headers };
      const challenge = headers["www-authenticate"];
      if (typeof challenge === "string") headers["www-authenticate"] = challenge.replaceAll(`//${upstream}/`, `//${req.headers.host ?? upstream}/`);
      res.writeHead(answer.statusCode ?? 502, headers);
      if (!stall) {
        answer.pipe(res);
        return;
      }
      const size = Number(answer.headers["content-length"] ?? 0);
      const chunks: Buffer[] = [];
      answer.on("data", (c: Buffer) => chunks.push(c));
      answer.on("end", () => {
        res.write(Buffer.concat(chunks).subarray(0, Math.floor(size / 2)));
        stalled.add(res); // never ended: the client waits for the rest
      });
    });
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

async function entries(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).sort();
}

/** Resolve once a layer's `.partial` file exists under `dir` (a stalled layer download is under way; the config blob's is transient). */
async function partialUnder(dir: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await entries(dir).catch(() => [])).find((name) => name.includes("/payload/") && name.endsWith(".partial"));
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no .partial file appeared under ${dir}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  registry = await startRegistry({ auth: "bearer" });
  proxy = await startStallingProxy(registry.host);
  const address = proxy.address();
  proxyHost = `127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  const repository = `${proxyHost}/acme/demo-plugin`;
  fixture = await createReleaseFixture({ registryRepository: repository });
  // Staged straight into the registry (same repository path), read back through the stalling proxy.
  staged = await stageFixture(fixture, await openTarget(`${registry.host}/acme/demo-plugin`, { plainHttp: true, credentials: { username: registry.username!, password: registry.password! } }), repository);
  work = await mkdtemp(join(tmpdir(), "hpk-interrupt-test-"));
}, 120_000);

afterAll(async () => {
  for (const res of stalled) res.destroy();
  proxy?.closeAllConnections();
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await fixture?.cleanup();
  await registry?.stop();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

/** Spawn `fetch` with its own TMPDIR, wait for a `.partial`, send `signal`, and collect the outcome. */
async function interruptedFetch(name: string, signal: "SIGINT" | "SIGTERM", outputDir: string, args?: string[]): Promise<{ code: number | null; stderr: string; childTmp: string; partial: string }> {
  const childTmp = join(work, `${name}-tmp`);
  await mkdir(childTmp);
  const child = spawn(process.execPath, [CLI, ...(args ?? ["fetch", "--reference", `${proxyHost}/acme/demo-plugin@${staged.bundle.digest}`, "--output-dir", outputDir, "--plain-http"])], {
    env: { ...process.env, TMPDIR: childTmp, REGISTRY_USERNAME: registry.username, REGISTRY_PASSWORD: registry.password, GH_TOKEN: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdout.resume();
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const killer = setTimeout(() => child.kill("SIGKILL"), 90_000);
  try {
    const partial = await partialUnder(childTmp);
    child.kill(signal);
    const code = await exited;
    return { code, stderr, childTmp, partial };
  } finally {
    clearTimeout(killer);
  }
}

describeRegistry("fetch interrupted mid-download", () => {
  it("SIGINT: exit 130, INTERRUPTED; no hpk-fetch-* (or any) directory left in TMPDIR; the output directory is not created", async () => {
    const out = join(work, "D-int");
    const run = await interruptedFetch("int", "SIGINT", out);
    expect(run.partial).toMatch(/^hpk-fetch-[^/]+\/payload\/.+\.partial$/);
    expect(run.stderr).toMatch(/^hermes-plugin-kit: fetch interrupted \(SIGINT\): .* \[INTERRUPTED\]\n$/);
    expect(run.code).toBe(130);
    expect(await entries(run.childTmp)).toEqual([]);
    await expect(readdir(out)).rejects.toThrow(/ENOENT/);
  }, 120_000);

  it("SIGTERM: exit 143; an existing output directory holds nothing new", async () => {
    const out = join(work, "D-term");
    await mkdir(out);
    const run = await interruptedFetch("term", "SIGTERM", out);
    expect(run.code).toBe(143);
    expect(run.stderr).toMatch(/\(SIGTERM\).*\[INTERRUPTED\]/);
    expect(await entries(run.childTmp)).toEqual([]);
    expect(await readdir(out)).toEqual([]);
  }, 120_000);

  it("fleet add interrupted during its registry check: exit 130, says what holds for the lock; no lock written, nothing left in TMPDIR", async () => {
    const receipt = join(work, "interrupted-receipt.json");
    await writeFile(receipt, staged.receiptBytes);
    const lock = join(work, "interrupted-fleet.lock.json");
    const run = await interruptedFetch("fleet-add", "SIGINT", "", ["fleet", "add", "--lock", lock, "--receipt", receipt, "--repository", `${proxyHost}/acme/demo-plugin`, "--plain-http"]);
    expect(run.code).toBe(130);
    expect(run.stderr).toMatch(/^hermes-plugin-kit: fleet add interrupted \(SIGINT\): the registry check's temporary files were removed; the lock is replaced in one step only after the check passed, so it holds either its earlier pins or the new one, never a part \[INTERRUPTED\]\n$/);
    expect(await entries(run.childTmp)).toEqual([]);
    await expect(readdir(lock)).rejects.toThrow(/ENOENT/);
  }, 120_000);

  it("library: fetchRelease with an AbortSignal rejects with INTERRUPTED and leaves nothing in tmpDir or the output directory", async () => {
    const libTmp = join(work, "lib-tmp");
    await mkdir(libTmp);
    const out = join(work, "D-lib");
    const controller = new AbortController();
    const fetching = fetchRelease({
      reference: `${proxyHost}/acme/demo-plugin@${staged.bundle.digest}`,
      repository: `${proxyHost}/acme/demo-plugin`,
      outputDir: out,
      plainHttp: true,
      credentials: { username: registry.username!, password: registry.password! },
      env: { ...process.env, GH_TOKEN: "" },
      tmpDir: libTmp,
      progress: null,
      signal: controller.signal,
    });
    await partialUnder(libTmp);
    controller.abort(new InterruptedError("SIGINT"));
    await expect(() => fetching).toThrowWithCode("INTERRUPTED");
    expect(await entries(libTmp)).toEqual([]);
    await expect(readdir(out)).rejects.toThrow(/ENOENT/);
  }, 120_000);
});

describe("fetch interrupted before any answer (a registry that accepts connections and never answers)", () => {
  let silent: net.Server;
  let silentHost: string;
  const sockets = new Set<net.Socket>();
  beforeAll(async () => {
    silent = net.createServer((socket) => {
      sockets.add(socket); // accepted, never answered
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const address = silent.address();
    silentHost = `127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it.each([
    ["SIGINT", 130, []],
    ["SIGTERM", 143, []],
    ["SIGHUP", 129, []],
    ["SIGINT", 130, ["--json"]],
  ] as const)("%s during the privacy gate's first request: exit %i at once with INTERRUPTED (%j), not after the request's timeout", async (signal, status, extra) => {
    const childTmp = await mkdtemp(join(work, "silent-tmp-"));
    const child = spawn(process.execPath, [CLI, "fetch", "--reference", `${silentHost}/acme/demo-plugin@${staged.bundle.digest}`, "--output-dir", join(work, "D-silent"), "--plain-http", ...extra], {
      env: { ...process.env, TMPDIR: childTmp, GH_TOKEN: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    // The connection is accepted once the CLI has started its first request.
    for (let i = 0; i < 3000 && sockets.size === 0; i += 1) await new Promise((r) => setTimeout(r, 10));
    const sent = Date.now();
    child.kill(signal);
    const code = await exited;
    const tookMs = Date.now() - sent;
    expect(code).toBe(status);
    expect(tookMs).toBeLessThan(5_000); // the grace period is 10 s, the request's own timeout longer
    if (extra.length === 0) {
      expect(stderr).toMatch(new RegExp(`^hermes-plugin-kit: fetch interrupted \\(${signal}\\): .* \\[INTERRUPTED\\]\\n$`));
      expect(stdout).toBe("");
    } else {
      expect(JSON.parse(stdout)).toMatchObject({ ok: false, code: "INTERRUPTED" });
    }
    expect(await entries(childTmp)).toEqual([]);
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  }, 60_000);
});
