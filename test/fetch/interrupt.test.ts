/**
 * Ctrl-C and SIGTERM during `fetch`, for real: the built CLI
 * (dist/src/cli/main.js, `npm run build` first) fetches from a loopback proxy
 * in front of Debian's docker-registry that sends half of every layer blob and
 * then stalls; once a `.partial` file exists under the child's TMPDIR the test
 * signals the child. It must exit 130 (SIGINT) or 143 (SIGTERM) with
 * `INTERRUPTED`, leave no `hpk-*` directory in its TMPDIR, and leave the
 * output directory as it was. The library API (`fetchRelease` with an
 * AbortSignal) behaves the same.
 *
 * At any point (an oci-layout store, no registry needed): aborts swept across
 * a whole fetch, and a git that keeps writing into the scratch repository
 * until it is killed, for the library and the CLI. At the moment the call
 * rejects (the CLI exits) nothing the fetch made is left, and nothing appears
 * later: the rejection comes after the cleanup, never before it.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMPTY_CONFIG_DIGEST } from "../../src/contract/constants.js";
import { InterruptedError } from "../../src/contract/errors.js";
import { fetchRelease, type OpenReadTarget } from "../../src/fetch/fetch.js";
import { LayoutTarget } from "../../src/oci/layout-target.js";
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

/** What is under `dir` right now, read synchronously (no other task runs between a rejection and this read). */
function entriesNow(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

/**
 * A directory holding `git`: the real git, except that its `fetch` (the unbundle into the scratch
 * repository), once the real fetch is done, touches `marker` and keeps creating directories in the scratch
 * repository every 10 ms (recreating it and the temp directory around it if they were removed) until it is
 * killed (or 30 s passed): a child still writing into the temp directory when the fetch is interrupted.
 * `ignoreTerm`: that git ignores SIGTERM (its stop then waits for the SIGKILL that follows 2 s later) and
 * writes its pid (its process group's) into `marker`.
 */
async function writingGit(dir: string, marker: string, ignoreTerm = false): Promise<string> {
  const realGit = spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim();
  await mkdir(dir, { recursive: true });
  const script = [
    "#!/bin/sh",
    'for arg in "$@"; do case "$arg" in --git-dir=*) gitdir="${arg#--git-dir=}";; esac; done',
    'for arg in "$@"; do',
    '  if [ "$arg" = fetch ]; then',
    `    ${JSON.stringify(realGit)} "$@" || exit $?`,
    '    i=1; mkdir -p "$gitdir/late-$i"',
    ...(ignoreTerm ? ['    trap "" TERM', `    echo $$ > ${JSON.stringify(`${marker}.partial`)}; mv ${JSON.stringify(`${marker}.partial`)} ${JSON.stringify(marker)}`] : [`    : > ${JSON.stringify(marker)}`]),
    // Bounded (30 s), so a failing test leaves no process behind for long.
    '    while [ $i -lt 3000 ]; do i=$((i+1)); mkdir -p "$gitdir/late-$i"; sleep 0.01; done',
    "    exit 1",
    "  fi",
    "done",
    `exec ${JSON.stringify(realGit)} "$@"`,
    "",
  ].join("\n");
  await writeFile(join(dir, "git"), script);
  await chmod(join(dir, "git"), 0o755);
  return dir;
}

/** A process's state letter from /proc (`R`, `S`, `Z`, ...), or `gone`. */
function processState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? "gone";
  } catch {
    return "gone";
  }
}

async function waitFor(path: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} did not appear`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("fetch interrupted at any point (oci-layout store): the rejection comes after the cleanup", () => {
  let layoutFixture: ReleaseFixture;
  let layoutStaged: StagedRelease;
  let storeRepository: string;
  let reference: string;
  const openLayout: OpenReadTarget = async (repo) => {
    if (repo.kind !== "layout") throw new Error("layout only");
    return LayoutTarget.open(repo.dir);
  };

  beforeAll(async () => {
    const store = join(work, "store");
    storeRepository = `oci-layout:${store}`;
    layoutFixture = await createReleaseFixture({ registryRepository: storeRepository });
    layoutStaged = await stageFixture(layoutFixture, await LayoutTarget.open(store, { create: true }), storeRepository);
    await chmod(store, 0o700);
    reference = `${storeRepository}@${layoutStaged.bundle.digest}`;
  }, 120_000);
  afterAll(async () => {
    await layoutFixture?.cleanup();
  });

  /** One library fetch into fresh private directories, aborted after `delayMs` (never when undefined). */
  async function abortedFetch(name: string, delayMs: number | undefined): Promise<{ outcome: string; leftNow: string[]; tmp: string; out: string }> {
    const tmp = await mkdtemp(join(work, `${name}-tmp-`));
    const out = join(work, `${name}-out`);
    const controller = new AbortController();
    const timer = delayMs === undefined ? undefined : setTimeout(() => controller.abort(new InterruptedError("SIGINT")), delayMs);
    try {
      await fetchRelease({ reference, repository: storeRepository, outputDir: out, openTarget: openLayout, progress: null, tmpDir: tmp, signal: controller.signal });
      return { outcome: "installed", leftNow: entriesNow(tmp), tmp, out };
    } catch (error) {
      const leftNow = entriesNow(tmp);
      return { outcome: (error as { code?: string }).code ?? String(error), leftNow, tmp, out };
    } finally {
      clearTimeout(timer);
    }
  }

  it("library, aborts swept from 0 ms to past the end of a whole fetch: each run installs every file, or rejects INTERRUPTED with its temp directory gone and no output directory at the moment of the rejection; nothing appears later", async () => {
    // Passing case: uninterrupted, the fetch installs and leaves no temp file; its duration sets the sweep.
    const started = Date.now();
    const full = await abortedFetch("sweep-full", undefined);
    const duration = Date.now() - started;
    expect(full.outcome).toBe("installed");
    expect(full.leftNow).toEqual([]);
    expect((await readdir(full.out)).sort()).toEqual(["dist", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);

    const runs: Array<Awaited<ReturnType<typeof abortedFetch>> & { delayMs: number }> = [];
    const steps = 32;
    for (let i = 0; i <= steps; i += 1) {
      const delayMs = Math.round((i * duration * 1.1) / steps);
      runs.push({ delayMs, ...(await abortedFetch(`sweep-${i}`, delayMs)) });
    }
    for (const run of runs) {
      expect(`${run.delayMs} ms: ${run.outcome}`).toMatch(/: (INTERRUPTED|installed)$/);
      expect(`${run.delayMs} ms: ${run.leftNow.join(", ")}`).toBe(`${run.delayMs} ms: `);
      if (run.outcome === "INTERRUPTED") expect(existsSync(run.out), `${run.delayMs} ms: output directory`).toBe(false);
      else expect((await readdir(run.out)).length, `${run.delayMs} ms`).toBe(4);
    }
    expect(runs.filter((r) => r.outcome === "INTERRUPTED").length).toBeGreaterThan(steps / 2);
    // Work abandoned after a rejection must not write later either.
    await new Promise((r) => setTimeout(r, 500));
    for (const run of runs) {
      expect(`${run.delayMs} ms later: ${entriesNow(run.tmp).join(", ")}`).toBe(`${run.delayMs} ms later: `);
      if (run.outcome === "INTERRUPTED") expect(existsSync(run.out), `${run.delayMs} ms later: output directory`).toBe(false);
    }
  }, 240_000);

  it("library, abort while the source bundle's git still writes into the scratch repository: git and what it started are stopped and waited for, then everything is removed, then INTERRUPTED", async () => {
    const marker = join(work, "lib-git-marker");
    const bin = await writingGit(join(work, "lib-git-bin"), marker);
    const tmp = await mkdtemp(join(work, "lib-git-tmp-"));
    const out = join(work, "lib-git-out");
    const controller = new AbortController();
    const path = process.env["PATH"];
    process.env["PATH"] = `${bin}:${path ?? "/usr/bin:/bin"}`;
    const fetching = fetchRelease({ reference, repository: storeRepository, outputDir: out, openTarget: openLayout, progress: null, tmpDir: tmp, signal: controller.signal });
    try {
      await waitFor(marker);
      expect(entriesNow(tmp).some((e) => /^hpk-fetch-[^/]+\/hpk-source-[^/]+\/repo\.git\/late-[0-9]+$/.test(e))).toBe(true);
      controller.abort(new InterruptedError("SIGINT"));
      const error = await fetching.catch((e: unknown) => e);
      const leftNow = entriesNow(tmp);
      expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
      expect(leftNow).toEqual([]);
      expect(existsSync(out)).toBe(false);
      await new Promise((r) => setTimeout(r, 300)); // the writing git created a directory every 10 ms while it ran
      expect(entriesNow(tmp)).toEqual([]);
    } finally {
      process.env["PATH"] = path;
      controller.abort();
      await fetching.catch(() => undefined);
    }
  }, 120_000);

  it("CLI, SIGINT while the source bundle's git still writes into the scratch repository: exit 130, INTERRUPTED; at exit nothing is left in TMPDIR, nor later; no output directory", async () => {
    const marker = join(work, "cli-git-marker");
    const bin = await writingGit(join(work, "cli-git-bin"), marker);
    const childTmp = await mkdtemp(join(work, "cli-git-tmp-"));
    const out = join(work, "cli-git-out");
    const child = spawn(process.execPath, [CLI, "fetch", "--reference", reference, "--output-dir", out], {
      env: { ...process.env, PATH: `${bin}:${process.env["PATH"] ?? "/usr/bin:/bin"}`, TMPDIR: childTmp, GH_TOKEN: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdout.resume();
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const killer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    try {
      await waitFor(marker);
      child.kill("SIGINT");
      const code = await exited;
      const leftAtExit = entriesNow(childTmp);
      expect(stderr).toMatch(/^hermes-plugin-kit: fetch interrupted \(SIGINT\): .* \[INTERRUPTED\]\n$/);
      expect(code).toBe(130);
      expect(leftAtExit).toEqual([]);
      await new Promise((r) => setTimeout(r, 300));
      expect(entriesNow(childTmp)).toEqual([]);
      expect(existsSync(out)).toBe(false);
    } finally {
      clearTimeout(killer);
    }
  }, 120_000);

  it("CLI --json, a second SIGINT (a press later, over 500 ms) while the interrupted fetch still waits for a git that ignores SIGTERM: exit 130 at once with exactly one INTERRUPTED object on stdout; no output directory", async () => {
    const marker = join(work, "cli-cut-marker");
    const bin = await writingGit(join(work, "cli-cut-git-bin"), marker, true);
    const childTmp = await mkdtemp(join(work, "cli-cut-tmp-"));
    const out = join(work, "cli-cut-out");
    const child = spawn(process.execPath, [CLI, "fetch", "--reference", reference, "--output-dir", out, "--json"], {
      env: { ...process.env, PATH: `${bin}:${process.env["PATH"] ?? "/usr/bin:/bin"}`, TMPDIR: childTmp, GH_TOKEN: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const killer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    let gitPid: number | undefined;
    try {
      await waitFor(marker);
      gitPid = Number(readFileSync(marker, "utf8").trim());
      child.kill("SIGINT");
      await new Promise((r) => setTimeout(r, 700));
      child.kill("SIGINT");
      const code = await exited;
      expect(code, stderr).toBe(130);
      const lines = stdout.split("\n").filter((line) => line !== "");
      expect(lines, stdout).toHaveLength(1);
      const answer = JSON.parse(lines[0] as string) as { ok: boolean; code: string; message: string };
      expect(answer).toMatchObject({ ok: false, code: "INTERRUPTED" });
      expect(answer.message).toMatch(/^fetch interrupted \(SIGINT\), and SIGINT came before it had finished stopping: it exited at once, before its cleanup finished, killing \(SIGKILL\) any command it had started that still ran; /);
      // As it says: the git that ignored SIGTERM did not outlive the fetch (gone, or a zombie its new parent has not reaped yet).
      await new Promise((r) => setTimeout(r, 300));
      expect(processState(gitPid as number), "git outlived the fetch").toMatch(/^(gone|Z)$/);
      expect(stderr).not.toContain("[INTERRUPTED]");
      expect(existsSync(out)).toBe(false);
    } finally {
      clearTimeout(killer);
      // Should git's group still run (a failed assertion above), stop it.
      if (gitPid !== undefined && gitPid > 0) {
        try {
          process.kill(-gitPid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
  }, 120_000);

  it("CLI, SIGINT swept across a whole fetch: each run exits 0 with the release installed, or 130 with INTERRUPTED and no output directory (or dies of SIGINT before fetch watches signals or as the process ends), and nothing is left in TMPDIR at exit", async () => {
    const run = async (name: string, delayMs: number | undefined) => {
      const childTmp = await mkdtemp(join(work, `${name}-tmp-`));
      const out = join(work, `${name}-out`);
      const child = spawn(process.execPath, [CLI, "fetch", "--reference", reference, "--output-dir", out], {
        env: { ...process.env, TMPDIR: childTmp, GH_TOKEN: "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      child.stdout.resume();
      const exited = new Promise<number | string>((resolve) => child.on("close", (code, signal) => resolve(code ?? String(signal))));
      const started = Date.now();
      const timer = delayMs === undefined ? undefined : setTimeout(() => child.kill("SIGINT"), delayMs);
      const code = await exited;
      clearTimeout(timer);
      return { code, stderr, ms: Date.now() - started, leftAtExit: entriesNow(childTmp), childTmp, out };
    };
    // Passing case: uninterrupted, exit 0 and nothing left; its duration sets the sweep.
    const full = await run("cli-sweep-full", undefined);
    expect(full.code).toBe(0);
    expect(full.leftAtExit).toEqual([]);
    const complete = entriesNow(full.out).join(", ");
    expect(complete).toBe("dist, dist/demo-plugin-0.8.0.tgz, release-manifest.json, release-payload.sha256, release-source.bundle");
    const steps = 12;
    const codes: Array<number | string> = [];
    for (let i = 1; i <= steps; i += 1) {
      const delayMs = Math.round((i * full.ms) / (steps + 1));
      const r = await run(`cli-sweep-${i}`, delayMs);
      codes.push(r.code);
      expect(`${delayMs} ms: exit ${r.code}, left ${r.leftAtExit.join(", ")}`).toMatch(/: exit (0|130|SIGINT), left $/);
      // The output directory is the whole release or absent, never a part; a fetch that exits 130 installed nothing.
      const installed = existsSync(r.out) ? entriesNow(r.out).join(", ") : "no output directory";
      expect([complete, "no output directory"], `${delayMs} ms: exit ${r.code}: ${r.stderr}`).toContain(installed);
      if (r.code === 0) expect(installed, `${delayMs} ms`).toBe(complete);
      if (r.code === 130) {
        expect(installed, `${delayMs} ms`).toBe("no output directory");
        expect(r.stderr).toMatch(/^hermes-plugin-kit: fetch interrupted \(SIGINT\): .* \[INTERRUPTED\]\n$/);
      }
    }
    expect(codes.filter((c) => c === 130).length, `exit codes ${codes.join(", ")}`).toBeGreaterThan(steps / 3);
  }, 240_000);
});
