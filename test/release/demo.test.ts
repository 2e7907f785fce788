import { afterAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cp, mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseStrictJson } from "../../src/contract/index.js";
import { doctorToolCall, type DemoDoctorReport } from "../../release/demo.js";
import { CLI, runCli } from "../support/cli.js";
import { REPO_ROOT } from "../support/release-run-fixture.js";
import { tempDir } from "../support/contract-fixture.js";
import { describeRegistry } from "../support/registry.js";

interface DemoJson {
  ok: boolean;
  workspace: string;
  version?: string;
  bundle_reference?: string;
  receipt_reference?: string;
  attestation_reference?: string;
  tarball?: string;
  tarball_sha256?: string;
  receipt_file?: string;
  registry: string;
  steps: { step: string; ok: boolean; skipped?: boolean; ms: number; detail?: string }[];
  code?: string;
  message?: string;
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const workspaces: string[] = [];
afterAll(async () => {
  // A test that timed out (or failed) may have left its workspace's registry running (--keep-registry detaches it):
  // stop it before the workspace goes.
  for (const ws of workspaces) {
    const pid = Number((await readFile(join(ws, "docker-registry", "registry.pid"), "utf8").catch(() => "")).trim());
    if (Number.isSafeInteger(pid) && pid > 0 && alive(pid)) process.kill(pid, "SIGKILL");
    await rm(ws, { recursive: true, force: true });
  }
});

/** Bound of one demo run, ms; a test runs the demo twice (first run and the converging rerun). */
const DEMO_RUN_TIMEOUT_MS = 240_000;
const DEMO_TEST_TIMEOUT_MS = 2 * DEMO_RUN_TIMEOUT_MS + 30_000;

async function demo(args: string[]): Promise<DemoJson> {
  const r = await runCli(["release", "demo", ...args, "--json"], { timeoutMs: DEMO_RUN_TIMEOUT_MS });
  const last = r.stdout.trim().split("\n").pop() ?? "";
  const result = JSON.parse(last) as DemoJson;
  if (!result.ok) throw new Error(`demo failed (exit ${r.code}): ${JSON.stringify({ code: result.code, message: result.message })}\n${r.stderr.slice(-2000)}`);
  expect(r.code).toBe(0);
  // stdout is exactly the one JSON object; on stderr every step of the report starts and ends with its
  // elapsed time, then the consumer's next steps with this release's references.
  expect(r.stdout.trim().split("\n")).toHaveLength(1);
  const err = r.stderr.split("\n");
  for (const step of result.steps.filter((s) => s.skipped !== true)) {
    expect(err, r.stderr).toContain(`▸ ${step.step}`);
    expect(err.some((l) => l.startsWith(`✓ ${step.step} (`) && /^✓ .* \([0-9]+\.[0-9] s\)/.test(l)), `end line of ${step.step}\n${r.stderr}`).toBe(true);
  }
  const next = err.indexOf("Next, a consumer fetches, verifies, pins and installs this release:");
  expect(next, r.stderr).toBeGreaterThan(0);
  expect(err.slice(next + 1).join("\n")).toContain(`--expect-bundle-reference ${result.bundle_reference}`);
  // The fetch a consumer is told to run requires the attestation, signed by the demo's throwaway key.
  expect(err.slice(next + 1).join("\n")).toContain(`--expect bundle --provenance --key ${join(result.workspace, "attest-key.pub")}`);
  return result;
}

async function checkRelease(result: DemoJson): Promise<Buffer> {
  expect(result.version).toBe("0.2.0");
  expect(result.bundle_reference).toMatch(new RegExp(`^${result.registry.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}@sha256:[0-9a-f]{64}$`));
  expect(result.receipt_reference).toMatch(/@sha256:[0-9a-f]{64}$/);
  expect(result.receipt_reference).not.toBe(result.bundle_reference);
  const receiptBytes = await readFile(result.receipt_file as string);
  const receipt = parseStrictJson(receiptBytes) as { registry_reference: string; artifacts: { filename: string; sha256: string }[] };
  expect(receipt.registry_reference).toBe(result.bundle_reference);
  const tarball = await readFile(join(result.workspace, "consumer", "dist", result.tarball as string));
  expect(sha256(tarball)).toBe(receipt.artifacts[0]!.sha256);
  expect(result.tarball_sha256).toBe(receipt.artifacts[0]!.sha256);
  const verified = await runCli(["verify-final-receipt", "--receipt", result.receipt_file as string, "--repository", result.registry, "--expect-bundle-reference", result.bundle_reference as string]);
  expect(verified.code).toBe(0);
  expect(result.steps.every((s) => s.ok)).toBe(true);
  expect(result.steps.map((s) => s.step).join("\n")).toContain("plugin doctor");
  // Provenance: signed with the workspace's throwaway key, stored as a referrer of the bundle, verified again here.
  expect(result.attestation_reference).toMatch(new RegExp(`^${result.registry.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}@sha256:[0-9a-f]{64}$`));
  const fetchStep = result.steps.find((s) => s.step.includes("--provenance")) as { detail?: string } | undefined;
  expect(fetchStep?.detail).toBe(`attestation ${result.attestation_reference}`);
  if (result.registry.startsWith("oci-layout:")) {
    // The embedded store outlives the demo: verify the attestation again, bound to the receipt too.
    const provenance = await runCli(["verify-provenance", "--reference", result.bundle_reference as string, "--key", join(result.workspace, "attest-key.pub"), "--receipt", result.receipt_file as string, "--json"]);
    expect(provenance.stderr).toBe("");
    expect(JSON.parse(provenance.stdout)).toMatchObject({ ok: true, receipt: true, attestations: [result.attestation_reference], discovery: "tag-schema" });
  }
  return receiptBytes;
}

describe("release demo (embedded oci-layout store)", () => {
  it("releases the calculator end to end, installs it as a consumer, and a rerun converges", async () => {
    const ws = await tempDir("hpk-demo-test-");
    workspaces.push(ws);
    const first = await demo(["--workspace", ws]);
    expect(first.registry).toBe(`oci-layout:${join(ws, "registry")}`);
    const receipt1 = await checkRelease(first);
    const second = await demo(["--workspace", ws]);
    expect(second.bundle_reference).toBe(first.bundle_reference);
    expect(second.receipt_reference).toBe(first.receipt_reference);
    expect(second.attestation_reference).toBe(first.attestation_reference);
    expect(await checkRelease(second)).toEqual(receipt1);
  }, DEMO_TEST_TIMEOUT_MS);
});

describe("release demo --package", () => {
  it("a package directory that does not exist is DEMO_PACKAGE_MISSING naming the path and what was expected; no workspace is made", async () => {
    const parent = await tempDir("hpk-demo-missing-");
    workspaces.push(parent);
    const missing = join(parent, "no-such-package");
    const ws = join(parent, "ws");
    const r = await runCli(["release", "demo", "--package", missing, "--workspace", ws, "--json"]);
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout) as DemoJson & { code: string; message: string };
    expect(result.code).toBe("DEMO_PACKAGE_MISSING");
    // One object in the convention's shape: ok, code and message first, the code once (no nested error).
    expect(Object.keys(result).slice(0, 3)).toEqual(["ok", "code", "message"]);
    expect(r.stdout.match(/"code":/g)).toHaveLength(1);
    expect(result).not.toHaveProperty("error");
    expect(result.message).toContain(`--package ${missing} is not a directory: expected the directory of an npm package (holding package.json)`);
    expect(result.message).not.toMatch(/ENOENT/);
    const text = await runCli(["release", "demo", "--package", parent, "--workspace", ws]);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain(`hermes-plugin-kit: --package ${parent} has no package.json`);
    expect(text.stderr).not.toContain("rerun with --workspace");
    await expect(readFile(join(ws, "demo-state.json"))).rejects.toThrow();
  });

  it("from an installed kit (no examples/ in the npm package) the default package says the demo is a clone's tool, with the fix", async () => {
    const parent = await tempDir("hpk-demo-installed-");
    workspaces.push(parent);
    // The package as npm installs it: package.json and dist/ under node_modules/hermes-plugin-kit (its dependencies beside it).
    const installed = join(parent, "node_modules", "hermes-plugin-kit");
    await mkdir(installed, { recursive: true });
    await cp(join(REPO_ROOT, "package.json"), join(installed, "package.json"));
    await cp(join(REPO_ROOT, "dist"), join(installed, "dist"), { recursive: true });
    await symlink(join(REPO_ROOT, "node_modules"), join(installed, "node_modules"));
    const ws = join(parent, "ws");
    const run = spawnSync(process.execPath, [join(installed, "dist", "src", "cli", "main.cjs"), "release", "demo", "--workspace", ws, "--json"], { encoding: "utf8", cwd: parent });
    expect(run.status, run.stderr).toBe(1);
    const result = JSON.parse(run.stdout) as { code: string; message: string };
    expect(result.code).toBe("DEMO_PACKAGE_MISSING");
    expect(result.message).toBe(
      `the default package (examples/calculator) is not in an installed hermes-plugin-kit (${join(installed, "examples", "calculator")} does not exist): the npm package carries no examples; fix: run the demo from a clone of hermes-plugin-kit (npm ci, npm run build, npm run demo), or release your own plugin with --package <its directory>`,
    );
    await expect(readFile(join(ws, "demo-state.json"))).rejects.toThrow();
  });
});

describe("release demo --package <a plugin of your own> (not the example: its tool is not calculate)", () => {
  it("a plugin scaffolded by init is released end to end and the consumer's plugin doctor step passes with a call of its own tool; a doctor report without a successful call is DEMO_DOCTOR", async () => {
    const parent = await tempDir("hpk-demo-own-");
    workspaces.push(parent);
    const pkg = join(parent, "my-greeter");
    const init = await runCli(["init", pkg, "--kit", "registry", "--repository", `oci-layout:${join(parent, "store")}`]);
    expect(init.code, init.stderr).toBe(0);
    const ws = join(parent, "ws");
    workspaces.push(ws);
    // Before the fix: "✗ consumer: plugin doctor ...: plugin doctor made no successful calculate call" [DEMO_DOCTOR], after a whole release.
    const result = await demo(["--package", pkg, "--workspace", ws]);
    await checkRelease(result);
    const doctorStep = result.steps.find((s) => s.step.startsWith("consumer: plugin doctor"));
    expect(doctorStep).toMatchObject({ ok: true });
    expect(doctorStep?.skipped).toBeUndefined();
    expect(doctorStep?.detail).toMatch(/^greet \{"name":"Ada"\} -> .*Hello, Ada!/);
    // The same installed plugin, its doctor told not to call tools: no successful call, so the demo's check refuses.
    const installed = join(ws, "app", "node_modules", "my-greeter");
    const noCall = await runCli(["plugin", "doctor", installed, "--no-call", "--json"]);
    expect(noCall.code, noCall.stderr).toBe(0);
    const report = JSON.parse(noCall.stdout.trim().split("\n").pop() ?? "{}") as DemoDoctorReport;
    expect(() => doctorToolCall(report, "my-greeter", installed)).toThrow(expect.objectContaining({ code: "DEMO_DOCTOR" }));
    expect(() => doctorToolCall(report, "my-greeter", installed)).toThrow(
      /^plugin doctor made no successful tool call of the installed my-greeter: it lists greet \(read-only\), and called none \(it calls only read-only tools, with their examples\); expected at least one tool call that answers without isError, .*; fix: /,
    );
    // And the full report passes with the greet call, whatever the tool is named.
    const full = JSON.parse((await runCli(["plugin", "doctor", installed, "--json"])).stdout.trim().split("\n").pop() ?? "{}") as DemoDoctorReport;
    expect(doctorToolCall(full, "my-greeter", installed)).toMatch(/^greet \{"name":"Ada"\} -> /);
  }, DEMO_RUN_TIMEOUT_MS + 60_000);
});

describe("release demo --registry that cannot be used", () => {
  it.each([
    [["--registry", "bad ref", "--plain-http"], "REPOSITORY_INVALID"],
    [["--registry", "https://x/y"], "REPOSITORY_INVALID"],
    [["--registry", "registry.example/acme/p", "--plain-http"], "DEMO_PLAIN_HTTP_REFUSED"],
  ])("%j: %s before a workspace exists (none made in TMPDIR, no resume hint)", async (args, code) => {
    const tmp = await tempDir("hpk-demo-badreg-");
    workspaces.push(tmp);
    const r = await runCli(["release", "demo", ...args], { env: { TMPDIR: tmp } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`\\[${code}\\]\\n$`));
    expect(r.stderr).not.toContain("rerun with --workspace");
    expect(await readdir(tmp)).toEqual([]);
  });
});

/** True while `pid` is a live (not zombie) process. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

async function waitFor(condition: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pid in `<ws>/docker-registry/registry.pid`, or 0. */
function registryPid(ws: string): number {
  try {
    return Number(readFileSync(join(ws, "docker-registry", "registry.pid"), "utf8").trim()) || 0;
  } catch {
    return 0;
  }
}

describeRegistry("release demo --start-registry", () => {
  it("--keep-registry leaves it running and says how to reach and stop it; a rerun reuses it on the same port and, without the flag, stops it", async () => {
    const ws = await tempDir("hpk-demo-reg-test-");
    workspaces.push(ws);
    const kept = await runCli(["release", "demo", "--start-registry", "--keep-registry", "--workspace", ws], { timeoutMs: 240_000 });
    expect(kept.code, kept.stderr).toBe(0);
    const pid = Number(/registry left running: http:\/\/127\.0\.0\.1:\d+ \(docker-registry, Basic auth, pid (\d+)\)/.exec(kept.stdout)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(kept.stdout).toContain("set REGISTRY_USERNAME and REGISTRY_PASSWORD from");
    expect(kept.stdout).toContain(`kill ${pid}`);
    const password = (await readFile(join(ws, "docker-registry", "password"), "utf8")).trim();
    expect(kept.stdout).not.toContain(password);
    expect(alive(pid)).toBe(true);
    const first = JSON.parse(await readFile(join(ws, "demo-state.json"), "utf8")) as { registry: string };
    const repository = first.registry.slice("start:".length);
    expect(repository).toMatch(/^127\.0\.0\.1:[0-9]+\/demo\/calculator$/);
    // The printed references stay usable: a consumer with the printed credential variables fetches by digest.
    const credentials = Object.fromEntries((await readFile(join(ws, "docker-registry", "credentials.env"), "utf8")).trim().split("\n").map((l) => l.split("=") as [string, string]));
    const bundle = /bundle reference:\s+(\S+)/.exec(kept.stdout)?.[1] as string;
    const fetched = await runCli(["fetch", "--reference", bundle, "--output-dir", join(ws, "later"), "--plain-http"], { env: credentials });
    expect(fetched.code, fetched.stderr).toBe(0);
    const second = await demo(["--start-registry", "--workspace", ws]);
    expect(second.registry).toBe(repository);
    expect(second.bundle_reference).toBe(bundle);
    await checkRelease(second);
    for (let i = 0; i < 100 && alive(pid); i += 1) await new Promise((r) => setTimeout(r, 50));
    expect(alive(pid)).toBe(false);
  }, DEMO_TEST_TIMEOUT_MS);
});

describeRegistry("release demo --start-registry: the registry it started stops with it", () => {
  // Interrupted once the registry runs and the maintainer half has begun (the release run's install and gates).
  it.each([
    ["SIGINT", 130, []],
    ["SIGTERM", 143, ["--keep-registry"]],
    ["SIGHUP", 129, []],
  ] as const)("%s (exit %i) with %j: the registry process is gone and its pid file removed", async (signal, status, extra) => {
    const ws = await tempDir("hpk-demo-reg-int-");
    workspaces.push(ws);
    const child = spawn(process.execPath, [CLI, "release", "demo", "--start-registry", ...extra, "--workspace", ws], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdout.resume();
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      await waitFor(() => stderr.includes("▸ maintainer: release run"), 120_000, `the release run to start (stderr so far:\n${stderr})`);
    } catch (error) {
      child.kill("SIGKILL");
      throw error;
    }
    const pid = registryPid(ws);
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(true);
    child.kill(signal);
    const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const code = await exited;
    clearTimeout(killer);
    expect(code, stderr).toBe(status);
    await waitFor(() => !alive(pid), 5_000, `registry ${pid} to end`);
    expect(registryPid(ws)).toBe(0);
  }, 180_000);

  it("--keep-registry and a demo that fails after the registry started: the registry is stopped (kept after a success only)", async () => {
    const ws = await tempDir("hpk-demo-reg-fail-");
    workspaces.push(ws);
    // A package the release run refuses (no hermesPluginKit settings), after the registry is up.
    const pkg = await tempDir("hpk-demo-reg-fail-pkg-");
    workspaces.push(pkg);
    await writeFile(join(pkg, "package.json"), JSON.stringify({ name: "not-a-release", version: "0.1.0" }) + "\n");
    const r = await runCli(["release", "demo", "--start-registry", "--keep-registry", "--package", pkg, "--workspace", ws, "--json"], { timeoutMs: 240_000 });
    expect(r.code, r.stderr).toBe(1);
    const result = JSON.parse(r.stdout) as DemoJson & { kept_registry?: unknown };
    expect(result.steps.some((s) => s.step.startsWith("start docker-registry") && s.ok)).toBe(true);
    expect(result.kept_registry).toBeUndefined();
    expect(r.stderr).not.toContain("registry left running");
    const state = JSON.parse(await readFile(join(ws, "demo-state.json"), "utf8")) as { registry: string };
    const port = Number(/^start:127\.0\.0\.1:(\d+)\//.exec(state.registry)?.[1]);
    expect(port).toBeGreaterThan(0);
    expect(registryPid(ws)).toBe(0);
    // Nothing answers on its port any more.
    const answered = await fetch(`http://127.0.0.1:${port}/v2/`).then(() => true, () => false);
    expect(answered).toBe(false);
  }, 300_000);
});
