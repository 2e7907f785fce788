/**
 * SIGINT and SIGTERM to `release run` while its install command runs, with
 * the built CLI (dist/src/cli/main.js, `npm run build` first). The fixture's
 * install command writes its shell's pid and the pid of a background `sleep`
 * it starts (a grandchild, like the processes `npm ci` starts), then waits.
 * The run must exit 130 (SIGINT) or 143 (SIGTERM) with one JSON object
 * `{"ok":false,"code":"INTERRUPTED"}` on stdout and an error line saying how to
 * resume, leave no process of the install command behind and no run.lock; a
 * rerun with the same workspace redoes the install and releases. The library
 * API (`runRelease` with an AbortSignal) rejects with `InterruptedError`.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InterruptedError } from "../../src/contract/errors.js";
import { runRelease } from "../../release/run.js";
import { kitCliCommand } from "../../release/cli-command.js";
import { runCommandLine } from "../../release/run-command.js";
import { CLI, runProcess } from "../support/cli.js";
import { createRunFixture, type RunFixture } from "../support/release-run-fixture.js";

let rf: RunFixture;
let marks: string;

// Before linking node_modules: record the shell's pid; when HPK_TEST_SLOW is set, start a
// background sleep (its own pid recorded) and wait for it, so the test can signal the run meanwhile.
const SLOW_INSTALL =
  'echo $$ > "$HPK_TEST_MARKS/install.pid"; if [ -n "${HPK_TEST_SLOW:-}" ]; then sleep 300 & echo $! > "$HPK_TEST_MARKS/sleep.pid"; wait; fi; ';

beforeAll(async () => {
  marks = await mkdtemp(join(tmpdir(), "hpk-run-interrupt-"));
  rf = await createRunFixture("interrupt-plugin", undefined, undefined, SLOW_INSTALL);
});

afterAll(async () => {
  await rf.cleanup();
  await rm(marks, { recursive: true, force: true });
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

function readPid(name: string): number {
  return Number(readFileSync(join(marks, name), "utf8").trim());
}

async function waitFor(condition: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const runArgs = () => ["release", "run", "--workspace", rf.workspace, "--source", rf.repo.dir, "--run-id", "77", "--plain-http", "--pass-env", "HPK_TEST_MARKS", "HPK_TEST_SLOW"];
/** The resume command the interrupted run printed (followed literally by the rerun test). */
let printedResume: string | undefined;

/** Start `release run` with a slow install, signal it once the install's sleep runs; resolve with how it ended. */
async function interruptRun(signal: "SIGINT" | "SIGTERM"): Promise<{ code: number | null; stdout: string; stderr: string; installPid: number; sleepPid: number }> {
  await rm(join(marks, "install.pid"), { force: true });
  await rm(join(marks, "sleep.pid"), { force: true });
  const child = spawn(process.execPath, [CLI, ...runArgs()], {
    env: { ...process.env, SEMANTIC_RELEASE_ENABLED: "true", HPK_TEST_MARKS: marks, HPK_TEST_SLOW: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  // "exit", not "close": a surviving grandchild would hold the stderr pipe open.
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  try {
    await waitFor(() => existsSync(join(marks, "sleep.pid")) && readFileSync(join(marks, "sleep.pid"), "utf8").trim() !== "", 120_000, `the install command to start (stderr so far:\n${stderr})`);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  const installPid = readPid("install.pid");
  const sleepPid = readPid("sleep.pid");
  expect(alive(installPid) && alive(sleepPid)).toBe(true);
  child.kill(signal);
  const timeout = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const code = await exited;
  clearTimeout(timeout);
  // Give the streams a moment to drain what was written before the exit.
  await new Promise((r) => setTimeout(r, 100));
  return { code, stdout, stderr, installPid, sleepPid };
}

describe("release run interrupted during its install command", () => {
  for (const [signal, status] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    it(`${signal}: exits ${status} with INTERRUPTED on stdout, stops the install command's processes, releases the lock`, async () => {
      const r = await interruptRun(signal);
      expect(r.code, r.stderr).toBe(status);
      const lines = r.stdout.trim().split("\n");
      expect(lines, r.stdout).toHaveLength(1);
      const answer = JSON.parse(lines[0]!) as { ok: boolean; code: string; message: string };
      expect(answer).toMatchObject({ ok: false, code: "INTERRUPTED" });
      expect(answer.message).toContain(`release run interrupted (${signal})`);
      expect(r.stderr).toMatch(/^hermes-plugin-kit: release run interrupted .*resume with the same --workspace.* \[INTERRUPTED\]$/m);
      expect(r.stderr).toContain(rf.workspace);
      // The hint repeats every flag that changes the run (--plain-http was missing: the trial's finding).
      const resume = runCommandLine({ workspace: rf.workspace, source: rf.repo.dir, runId: "77", plainHttp: true, gatePassEnv: ["HPK_TEST_MARKS", "HPK_TEST_SLOW"] }, kitCliCommand());
      expect(answer.message).toContain(`resume with the same --workspace and flags (${resume})`);
      printedResume = resume;
      // The shell and the grandchild it started are gone, not orphaned.
      expect(alive(r.installPid), `install shell ${r.installPid} still runs`).toBe(false);
      expect(alive(r.sleepPid), `install grandchild ${r.sleepPid} still runs`).toBe(false);
      expect(existsSync(join(rf.workspace, "run.lock"))).toBe(false);
    }, 180_000);
  }

  it("the library API rejects with InterruptedError when its signal aborts, leaving nothing running", async () => {
    await rm(join(marks, "sleep.pid"), { force: true });
    const controller = new AbortController();
    const watch = setInterval(() => {
      if (existsSync(join(marks, "sleep.pid")) && readFileSync(join(marks, "sleep.pid"), "utf8").trim() !== "") controller.abort(new InterruptedError(undefined, "stopped by the test"));
    }, 50);
    const run = runRelease({
      source: rf.repo.dir,
      workspace: rf.workspace,
      runId: "77",
      progress: null,
      gateOutput: "log",
      gatePassEnv: ["HPK_TEST_MARKS", "HPK_TEST_SLOW"],
      env: { ...process.env, SEMANTIC_RELEASE_ENABLED: "true", HPK_TEST_MARKS: marks, HPK_TEST_SLOW: "1" },
      signal: controller.signal,
    });
    try {
      await expect(run).rejects.toThrowWithCode("INTERRUPTED");
      await expect(run).rejects.toThrow(/resume with the same --workspace/);
    } finally {
      clearInterval(watch);
    }
    expect(alive(readPid("install.pid"))).toBe(false);
    expect(alive(readPid("sleep.pid"))).toBe(false);
    expect(existsSync(join(rf.workspace, "run.lock"))).toBe(false);
  }, 180_000);

  it("the rerun typed as the hint says, with the same workspace, redoes the interrupted install and releases", async () => {
    expect(printedResume, "the interrupted runs printed no resume command").toBeDefined();
    const r = await runProcess("bash", ["--norc", "--noprofile", "-c", printedResume as string], { env: { ...process.env, SEMANTIC_RELEASE_ENABLED: "true", HPK_TEST_MARKS: marks, HPK_TEST_SLOW: "" }, timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { released: boolean; steps: { step: string; status: string }[] };
    expect(result.released).toBe(true);
    expect(result.steps.find((s) => s.step === "gates")?.status).toBe("ran");
    expect(result.steps.find((s) => s.step === "restore")?.status).toBe("verified");
    expect(r.stderr).not.toContain("RUN_INSTALL_FAILED");
  }, 300_000);
});
