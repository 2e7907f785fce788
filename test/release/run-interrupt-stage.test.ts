/**
 * What an interrupted `release run` says was stopped (release/run.ts `runInterruptedMessage`, the stage
 * under way when the run's signal aborted): the install command, a gate's command, a step's own work
 * (which the signal does not cut short: before, every interruption was said to have stopped "the install
 * or gate command under way"), or nothing yet (before the first step). Library API (`runRelease` with an
 * AbortSignal), one fresh workspace per case over one fixture package whose install command and unit gate
 * can be made slow.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InterruptedError } from "../../src/contract/errors.js";
import { runRelease, type RunOptions } from "../../release/run.js";
import { fixturePackageJson } from "../support/git-fixture.js";
import { createRunFixture, REPO_ROOT, type RunFixture } from "../support/release-run-fixture.js";

let rf: RunFixture;
let marks: string;
let install: string;

/** A command that, when `flag` is set, starts a background sleep (its pid in `<marks>/<name>.pid`) and waits for it. */
const slowWhen = (flag: string, name: string) => `if [ -n "\${${flag}:-}" ]; then sleep 300 & echo $! > "$HPK_TEST_MARKS/${name}.pid"; wait; fi; `;

beforeAll(async () => {
  marks = await mkdtemp(join(tmpdir(), "hpk-run-stage-"));
  const scratch = await mkdtemp(join(tmpdir(), "hpk-run-stage-store-"));
  const repository = `oci-layout:${join(scratch, "store")}`;
  install = `${slowWhen("HPK_TEST_SLOW_INSTALL", "install-sleep")}ln -s ${JSON.stringify(join(REPO_ROOT, "node_modules"))} node_modules`;
  const gates = { unit: `${slowWhen("HPK_TEST_SLOW_GATE", "gate-sleep")}test -f index.js`, public_contract: "test -f package.json", host_contract: "test -d node_modules/@modelcontextprotocol/sdk", build_metadata: "test -d lib" };
  // npm pack gets no --pass-env: its prepack script is slowed by a file in the marks directory instead.
  const prepack = `if [ -f ${JSON.stringify(join(marks, "slow-pack"))} ]; then sleep 300 & echo $! > ${JSON.stringify(join(marks, "pack-sleep.pid"))}; wait; fi`;
  const packageJson = fixturePackageJson({ name: "stage-plugin", packageJson: { scripts: { prepack }, hermesPluginKit: { repository, install, gates } } });
  rf = await createRunFixture("stage-plugin", { message: "feat: a slow install and gate on request\n", files: { "package.json": packageJson, "lib/farewell.js": "export const bye = () => 'bye';\n" } }, repository);
  await rm(scratch, { recursive: true, force: true });
});

afterAll(async () => {
  await rf?.cleanup();
  if (marks !== undefined) await rm(marks, { recursive: true, force: true });
});

async function waitFor(condition: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

let count = 0;

/** Run release with `controller`'s signal over a fresh workspace; `env` is added to the run's environment. */
function run(controller: AbortController, env: Record<string, string> = {}, extra: Partial<RunOptions> = {}): { workspace: string; done: Promise<unknown> } {
  count += 1;
  const workspace = join(marks, `ws-${count}`);
  const done = runRelease({
    source: rf.repo.dir,
    workspace,
    runId: String(100 + count),
    progress: null,
    gateOutput: "log",
    gatePassEnv: ["HPK_TEST_MARKS", "HPK_TEST_SLOW_INSTALL", "HPK_TEST_SLOW_GATE"],
    env: { ...process.env, SEMANTIC_RELEASE_ENABLED: "true", HPK_TEST_MARKS: marks, ...env },
    signal: controller.signal,
    ...extra,
  }).then(
    () => undefined,
    (error: unknown) => error,
  );
  return { workspace, done };
}

const TAIL = "; the workspace lock is released; resume with the same --workspace and flags (";

/** Abort `controller` as SIGINT once `<marks>/<name>.pid` holds a pid; resolve with that pid. */
async function abortWhenRunning(controller: AbortController, name: string): Promise<number> {
  const file = join(marks, `${name}.pid`);
  await waitFor(() => existsSync(file) && readFileSync(file, "utf8").trim() !== "", 120_000, `${name} to start`);
  const pid = Number(readFileSync(file, "utf8").trim());
  controller.abort(new InterruptedError("SIGINT", "stopped by the test"));
  return pid;
}

describe("release run interrupted: the message names the stage that was running", () => {
  it("before its first step (the signal came before the run took its lock): no step was under way", async () => {
    const controller = new AbortController();
    controller.abort(new InterruptedError("SIGINT", "stopped by the test"));
    const { workspace, done } = run(controller);
    const error = await done;
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    const message = (error as Error).message;
    expect(message).toMatch(/^release run interrupted \(SIGINT\) before its first step: no step was under way and none started; the workspace lock is released; resume with the same --workspace and flags \(/);
    expect(message).toContain(workspace);
    expect(message).not.toContain("install");
    expect(existsSync(join(workspace, "run-state.json"))).toBe(false);
  });

  it("during a step's own work (materialize): that step is named, nothing is said of an install or gate command, and it ran to its end (recorded)", async () => {
    const controller = new AbortController();
    const { workspace, done } = run(controller, {}, {
      hooks: {
        checkpoint: (point) => {
          if (point === "materialize:done") controller.abort(new InterruptedError("SIGINT", "stopped by the test"));
        },
      },
    });
    const error = await done;
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    expect((error as Error).message).toMatch(
      /^release run interrupted \(SIGINT\) during step materialize: that step's own work is not cut short \(only install, gate and npm pack commands are stopped mid-way\), so it went on to its end or to its next install, gate or npm pack command, and no later step started; the workspace lock is released; resume with the same --workspace and flags \(/,
    );
    expect((error as Error).message).not.toContain("install or gate command under way");
    const state = JSON.parse(readFileSync(join(workspace, "run-state.json"), "utf8")) as { steps: Record<string, unknown> };
    expect(Object.keys(state.steps)).toEqual(["intent", "materialize"]);
  }, 120_000);

  it("during the install command: the install command is named, and it was stopped", async () => {
    const controller = new AbortController();
    const { done } = run(controller, { HPK_TEST_SLOW_INSTALL: "1" });
    const pid = await abortWhenRunning(controller, "install-sleep");
    const error = await done;
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    expect((error as Error).message).toContain(
      `release run interrupted (SIGINT) during the install command of step gates (${JSON.stringify(install)}, hermesPluginKit.install): it was stopped with everything it started, and no later step started${TAIL}`,
    );
    expect(alive(pid)).toBe(false);
  }, 180_000);

  it("during npm pack (a slow prepack script): npm pack of step build is named, and it was stopped with its scripts", async () => {
    const controller = new AbortController();
    await writeFile(join(marks, "slow-pack"), "");
    try {
      const { done } = run(controller);
      const pid = await abortWhenRunning(controller, "pack-sleep");
      const error = await done;
      expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
      expect((error as Error).message).toMatch(/^release run interrupted \(SIGINT\) during npm pack of step build \(the package's pack scripts\): it was stopped with everything it started, and no later step started; the workspace lock is released; /);
      expect(alive(pid)).toBe(false);
    } finally {
      await rm(join(marks, "slow-pack"), { force: true });
    }
  }, 180_000);

  it("during a gate's command: that gate and its step are named, and its command was stopped", async () => {
    const controller = new AbortController();
    const { done } = run(controller, { HPK_TEST_SLOW_GATE: "1" });
    const pid = await abortWhenRunning(controller, "gate-sleep");
    const error = await done;
    expect(error).toThrowWithCode(InterruptedError, "INTERRUPTED");
    expect((error as Error).message).toMatch(/^release run interrupted \(SIGINT\) during gate unit of step gates: its command was stopped with everything it started, and no later step started; the workspace lock is released; /);
    expect(alive(pid)).toBe(false);
  }, 180_000);
});
