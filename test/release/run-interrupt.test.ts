/**
 * SIGINT and SIGTERM to `release run` while its install command runs, with
 * the built CLI (dist/src/cli/main.js, `npm run build` first). The fixture's
 * install command writes its shell's pid and the pid of a background `sleep`
 * it starts (a grandchild, like the processes `npm ci` starts), then waits.
 * The run must exit 130 (SIGINT) or 143 (SIGTERM) with one JSON object
 * `{"ok":false,"code":"INTERRUPTED"}` on stdout and an error line saying how to
 * resume, leave no process of the install command behind and no run.lock (a forced exit, the second signal,
 * kills the command's process group before it exits); a
 * rerun with the same workspace redoes the install and releases. The library
 * API (`runRelease` with an AbortSignal) rejects with `InterruptedError`.
 * The message names what was stopped (the install command), and the hint of a
 * resume that left out `--run-attempt` carries the recorded one. With `--json`,
 * a second SIGINT while the install command is still being stopped (it ignores
 * SIGTERM) exits at once with the one INTERRUPTED object all the same.
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
// background sleep (its own pid recorded) and wait for it, so the test can signal the run meanwhile;
// with HPK_TEST_TRAP set, the shell and its sleep ignore SIGTERM (stopping them takes the SIGKILL 2 s later).
const SLOW_INSTALL =
  'echo $$ > "$HPK_TEST_MARKS/install.pid"; if [ -n "${HPK_TEST_TRAP:-}" ]; then trap "" TERM; fi; if [ -n "${HPK_TEST_SLOW:-}" ]; then sleep 300 & echo $! > "$HPK_TEST_MARKS/sleep.pid"; wait; fi; ';

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

/**
 * Start `release run` with a slow install, signal it once the install's sleep runs (`again`: the same signal
 * once more that many ms later); resolve with how it ended.
 */
async function interruptRun(
  signal: "SIGINT" | "SIGTERM",
  args: readonly string[] = runArgs(),
  extraEnv: Record<string, string> = {},
  again?: number,
): Promise<{ code: number | null; stdout: string; stderr: string; installPid: number; sleepPid: number }> {
  await rm(join(marks, "install.pid"), { force: true });
  await rm(join(marks, "sleep.pid"), { force: true });
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, SEMANTIC_RELEASE_ENABLED: "true", HPK_TEST_MARKS: marks, HPK_TEST_SLOW: "1", ...extraEnv },
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
  if (again !== undefined) setTimeout(() => child.kill(signal), again);
  const timeout = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const code = await exited;
  clearTimeout(timeout);
  // Give the streams a moment to drain what was written before the exit.
  await new Promise((r) => setTimeout(r, 100));
  return { code, stdout, stderr, installPid, sleepPid };
}

describe("release run interrupted during its install command", () => {
  // The first run gives --run-attempt 2; the second, a resume, leaves it out: its hint must say the recorded 2.
  for (const [signal, status, extra] of [["SIGINT", 130, ["--run-attempt", "2"]], ["SIGTERM", 143, []]] as const) {
    it(`${signal}: exits ${status} with INTERRUPTED on stdout naming the install command, stops the install command's processes, releases the lock; the hint carries the recorded run attempt`, async () => {
      const r = await interruptRun(signal, [...runArgs(), ...extra]);
      expect(r.code, r.stderr).toBe(status);
      const lines = r.stdout.trim().split("\n");
      expect(lines, r.stdout).toHaveLength(1);
      const answer = JSON.parse(lines[0]!) as { ok: boolean; code: string; message: string };
      expect(answer).toMatchObject({ ok: false, code: "INTERRUPTED" });
      expect(answer.message).toContain(`release run interrupted (${signal}) during the install command of step gates (`);
      expect(answer.message).toContain("hermesPluginKit.install): it was stopped with everything it started, and no later step started");
      expect(r.stderr).toMatch(/^hermes-plugin-kit: release run interrupted .*resume with the same --workspace.* \[INTERRUPTED\]$/m);
      expect(r.stderr).toContain(rf.workspace);
      // The lines of the step and part under way say only that they were interrupted: before, they printed the
      // CLI's abort message, written before the stage and the recorded run id were known ("before its first
      // step", another resume command), contradicting the last line. One resume command on stderr, the last line's.
      const failed = r.stderr.split("\n").filter((line) => line.startsWith("✗ "));
      expect(failed.some((line) => line.startsWith("✗ install: ")) && failed.some((line) => line.startsWith("✗ gates (")), r.stderr).toBe(true);
      for (const line of failed) expect(line).toMatch(new RegExp(`^✗ .+ \\([0-9]+\\.[0-9] s\\): interrupted \\(${signal}\\): what was under way and how to resume are in the run's answer \\(its last line\\)$`));
      expect(r.stderr.split("resume with").length - 1, r.stderr).toBe(1);
      expect(r.stderr).not.toContain("before its first step");
      // The hint repeats every flag that changes the run (--plain-http was missing: the trial's finding), and the
      // recorded run id and attempt (the resume left --run-attempt 2 out: the hint said nothing of it).
      // The run was armed by SEMANTIC_RELEASE_ENABLED=true: the line arms the resume too.
      const resume = `SEMANTIC_RELEASE_ENABLED=true ${runCommandLine({ workspace: rf.workspace, source: rf.repo.dir, runId: "77", runAttempt: 2, plainHttp: true, gatePassEnv: ["HPK_TEST_MARKS", "HPK_TEST_SLOW"] }, kitCliCommand())}`;
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

  it("--json, a second SIGINT (over 500 ms later) while the install command, which ignores SIGTERM, is still being stopped: exit 130 at once with exactly one INTERRUPTED object, which says what may be left and how to resume (the key file named only in HERMES_PLUGIN_KIT_ATTEST_KEY_FILE included)", async () => {
    const ws = join(marks, "ws-cut");
    const passEnv = ["HPK_TEST_MARKS", "HPK_TEST_SLOW", "HPK_TEST_TRAP"];
    const args = ["release", "run", "--workspace", ws, "--source", rf.repo.dir, "--run-id", "78", "--plain-http", "--json", "--pass-env", ...passEnv];
    const r = await interruptRun("SIGINT", args, { HPK_TEST_TRAP: "1", HERMES_PLUGIN_KIT_ATTEST_KEY_FILE: rf.attestKey }, 700);
    try {
      expect(r.code, r.stderr).toBe(130);
      const lines = r.stdout.split("\n").filter((line) => line !== "");
      expect(lines, r.stdout).toHaveLength(1);
      const answer = JSON.parse(lines[0]!) as { ok: boolean; code: string; message: string };
      expect(answer).toMatchObject({ ok: false, code: "INTERRUPTED" });
      expect(answer.message).toContain("release run interrupted (SIGINT), and SIGINT came again before it had finished stopping: it exited at once, after killing (SIGKILL) the process group of the install, gate or npm pack command it had started");
      // The CLI's own hint (the run had not answered): the key file through the same variable, its path only.
      const resume = `SEMANTIC_RELEASE_ENABLED=true HERMES_PLUGIN_KIT_ATTEST_KEY_FILE=${rf.attestKey} ${runCommandLine({ workspace: ws, source: rf.repo.dir, runId: "78", plainHttp: true, gatePassEnv: passEnv }, kitCliCommand())}`;
      expect(answer.message).toContain(`resume with the same --workspace and flags (${resume})`);
      expect(answer.message).not.toContain("PRIVATE KEY");
      // --json: the object is the whole answer.
      expect(r.stderr).not.toContain("[INTERRUPTED]");
      // The forced exit killed the install command's process group (it ignored SIGTERM): the shell and its grandchild are gone.
      await waitFor(() => !alive(r.installPid) && !alive(r.sleepPid), 5_000, `install shell ${r.installPid} and its sleep ${r.sleepPid} to end`);
    } finally {
      // It exited before the SIGKILL of the install command's group: stop what it left running.
      try {
        process.kill(-r.installPid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }, 180_000);

  it("the rerun typed as the hint says, with the same workspace, redoes the interrupted install and releases", async () => {
    expect(printedResume, "the interrupted runs printed no resume command").toBeDefined();
    const r = await runProcess("bash", ["--norc", "--noprofile", "-c", printedResume as string], { env: { ...process.env, SEMANTIC_RELEASE_ENABLED: "true", HPK_TEST_MARKS: marks, HPK_TEST_SLOW: "" }, timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { released: boolean; steps: { step: string; status: string }[] };
    expect(result.released).toBe(true);
    // The attempt the run recorded when it started (the hint said it; nothing was refused).
    expect(r.stderr).not.toContain("RUN_FLAG_MISMATCH");
    expect((JSON.parse(readFileSync(join(rf.workspace, "run-state.json"), "utf8")) as { run_attempt: number }).run_attempt).toBe(2);
    expect(result.steps.find((s) => s.step === "gates")?.status).toBe("ran");
    expect(result.steps.find((s) => s.step === "restore")?.status).toBe("verified");
    expect(r.stderr).not.toContain("RUN_INSTALL_FAILED");
  }, 300_000);
});
