/**
 * The command line an interrupted `release run` prints to resume it (release/run.ts `resumeCommandLine`,
 * `runInterruptedMessage`; the CLI's answer for a run stopped before or outside runRelease's own handling
 * is built by the same functions): the effective flags, i.e. those given plus, for a workspace whose
 * run-state.json recorded flags, the recorded value of each one left out, so that typing the hint resumes
 * the same run (before: the CLI's hint repeated only the typed flags).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { kitCliCommand } from "../../release/cli-command.js";
import { runCommandLine } from "../../release/run-command.js";
import { resumeCommandLine, runInterruptedMessage } from "../../release/run.js";
import type { RunFlags } from "../../release/run-flags.js";

let work: string;
let ws: string;
const source = "/srv/plugin-checkout";
const recorded: RunFlags = { plain_http: true, registry_config: "/cfg/docker.json", pass_env: ["A_VAR", "B_VAR"], attest_key: null, chunk_size: 1_048_576, mcp_sdk_version: "1.2.3", github_release: false };

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "hpk-resume-hint-"));
  ws = join(work, "ws");
  await import("node:fs/promises").then((fs) => fs.mkdir(ws));
  const state = { schema: 1, source, trigger_sha: "a".repeat(40), trigger_date: 1, run_id: "77", run_attempt: 1, flags: recorded, steps: {} };
  await writeFile(join(ws, "run-state.json"), JSON.stringify(state));
});
afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

it("a resume typed with only --workspace and --source: the hint carries every recorded flag", async () => {
  const line = await resumeCommandLine({ workspace: ws, source, env: {} });
  expect(line).toBe(runCommandLine({ workspace: ws, source, plainHttp: true, registryConfig: "/cfg/docker.json", gatePassEnv: ["A_VAR", "B_VAR"], chunkSize: 1_048_576, mcpSdkVersion: "1.2.3" }, kitCliCommand({})));
  expect(line).toContain(" --plain-http ");
  expect(line).toContain(" --registry-config /cfg/docker.json ");
  expect(line).toMatch(/ --pass-env A_VAR B_VAR$/);
});

it("flags given with the recorded values, and --dry-run: the same line plus --dry-run", async () => {
  const line = await resumeCommandLine({ workspace: ws, source, plainHttp: true, chunkSize: 1_048_576, dryRun: true, env: {} });
  expect(line).toBe(runCommandLine({ workspace: ws, source, plainHttp: true, registryConfig: "/cfg/docker.json", gatePassEnv: ["A_VAR", "B_VAR"], chunkSize: 1_048_576, mcpSdkVersion: "1.2.3", dryRun: true }, kitCliCommand({})));
});

it("flags the state refuses (RUN_FLAG_MISMATCH is the run's own answer) or no state at all: the flags as given, never a throw", async () => {
  const mismatch = await resumeCommandLine({ workspace: ws, source, chunkSize: 65_536, env: {} });
  expect(mismatch).toBe(runCommandLine({ workspace: ws, source, chunkSize: 65_536 }, kitCliCommand({})));
  const fresh = join(work, "fresh");
  expect(await resumeCommandLine({ workspace: fresh, source, runId: "9", env: {} })).toBe(runCommandLine({ workspace: fresh, source, runId: "9" }, kitCliCommand({})));
  await writeFile(join(work, "bad-ws"), "");
  expect(await resumeCommandLine({ workspace: join(work, "bad-ws"), source, env: {} })).toBe(runCommandLine({ workspace: join(work, "bad-ws"), source }, kitCliCommand({})));
});

it("the message: a run says what was stopped and how to resume; a dry run that nothing was written", () => {
  expect(runInterruptedMessage("SIGINT", "X")).toBe(
    "release run interrupted (SIGINT): the install or gate command under way was stopped with everything it started, and the workspace lock was released; resume with the same --workspace and flags (X): recorded steps are re-verified and the interrupted step is redone from a clean directory",
  );
  expect(runInterruptedMessage("SIGTERM", "X", { dryRun: true })).toBe("release run --dry-run interrupted (SIGTERM): nothing was written; run it again (X)");
});
