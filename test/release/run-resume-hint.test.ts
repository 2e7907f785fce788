/**
 * The command line an interrupted `release run` prints to resume it (release/run.ts `resumeCommandLine`,
 * `runInterruptedMessage`; the CLI's answer for a run stopped before or outside runRelease's own handling
 * is built by the same functions): the effective flags, i.e. those given plus, for a workspace whose
 * run-state.json recorded flags, the recorded value of each one left out (the run id and attempt included),
 * so that typing the hint resumes the same run (before: the CLI's hint repeated only the typed flags, and
 * neither hint said the recorded --run-attempt). A key file named only through
 * HERMES_PLUGIN_KIT_ATTEST_KEY_FILE is carried as that variable (its path, never the key).
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kitCliCommand } from "../../release/cli-command.js";
import { runCommandLine } from "../../release/run-command.js";
import { readRunState, resumeCommandLine, resumeOptions, runInterruptedMessage } from "../../release/run.js";
import { recordRunFlags, type RunFlags } from "../../release/run-flags.js";
import type { RunOptions } from "../../release/run-context.js";

let work: string;
let ws: string;
const source = "/srv/plugin-checkout";
const recorded: RunFlags = { plain_http: true, registry_config: "/cfg/docker.json", pass_env: ["A_VAR", "B_VAR"], attest_key: null, chunk_size: 1_048_576, mcp_sdk_version: "1.2.3", github_release: false };

/** Write a run state into a new workspace `name` under `work`. */
async function stateWorkspace(name: string, fields: { run_attempt: number; flags?: RunFlags }): Promise<string> {
  const dir = join(work, name);
  await mkdir(dir);
  await writeFile(join(dir, "run-state.json"), JSON.stringify({ schema: 1, source, trigger_sha: "a".repeat(40), trigger_date: 1, run_id: "77", steps: {}, ...fields }));
  return dir;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "hpk-resume-hint-"));
  ws = await stateWorkspace("ws", { run_attempt: 3, flags: recorded });
});
afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

/**
 * The options `release run` takes from a printed hint, read as the shell reads it (bash splits the words) and as
 * the CLI maps its flags (src/cli/commands/release-publish.ts); `env` gets a leading `NAME=value` assignment.
 */
function typedAgain(hint: string): { options: RunOptions; env: Record<string, string> } {
  const words = execFileSync("bash", ["--norc", "--noprofile", "-c", `printf '%s\\0' ${hint}`], { encoding: "utf8" }).split("\0").slice(0, -1);
  const env: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? "")) {
    const word = words.shift() as string;
    env[word.slice(0, word.indexOf("="))] = word.slice(word.indexOf("=") + 1);
  }
  const at = words.indexOf("run");
  expect(words.slice(at - 1, at + 1)).toEqual(["release", "run"]);
  const options: Record<string, unknown> = {};
  const value: Record<string, [string, (v: string) => unknown]> = {
    "--workspace": ["workspace", String],
    "--source": ["source", String],
    "--run-id": ["runId", String],
    "--run-attempt": ["runAttempt", Number],
    "--registry-config": ["registryConfig", String],
    "--attest-key": ["attestKey", String],
    "--chunk-size": ["chunkSize", Number],
    "--mcp-sdk-version": ["mcpSdkVersion", String],
  };
  const switches: Record<string, string> = { "--plain-http": "plainHttp", "--github-release": "githubRelease", "--dry-run": "dryRun" };
  const rest = words.slice(at + 1);
  for (let i = 0; i < rest.length; i += 1) {
    const word = rest[i] as string;
    if (word === "--pass-env") {
      options["gatePassEnv"] = rest.slice(i + 1);
      break;
    }
    if (switches[word] !== undefined) options[switches[word]] = true;
    else if (value[word] !== undefined) options[value[word][0]] = value[word][1](rest[(i += 1)] as string);
    else throw new Error(`the hint has a word the CLI does not take: ${word}`);
  }
  return { options: options as unknown as RunOptions, env };
}

it("a resume typed with only --workspace and --source: the hint carries every recorded flag, the run id and the run attempt", async () => {
  const line = await resumeCommandLine({ workspace: ws, source, env: {} });
  expect(line).toBe(runCommandLine({ workspace: ws, source, runId: "77", runAttempt: 3, plainHttp: true, registryConfig: "/cfg/docker.json", gatePassEnv: ["A_VAR", "B_VAR"], chunkSize: 1_048_576, mcpSdkVersion: "1.2.3" }, kitCliCommand({})));
  expect(line).toContain(" --run-id 77 --run-attempt 3 ");
  expect(line).toContain(" --plain-http ");
  expect(line).toContain(" --registry-config /cfg/docker.json ");
  expect(line).toMatch(/ --pass-env A_VAR B_VAR$/);
});

it("the printed hint typed again is accepted (no RUN_FLAG_MISMATCH) and resumes with exactly the recorded flags, run id and attempt", async () => {
  const statePath = join(ws, "run-state.json");
  const state = await readRunState(statePath);
  for (const given of [{}, { runAttempt: 3 }, { plainHttp: true, chunkSize: 1_048_576 }] as const) {
    const { options, env } = typedAgain(await resumeCommandLine({ workspace: ws, source, env: {}, ...given }));
    expect(env).toEqual({});
    const resumed = resumeOptions(options, state, ws, source, statePath, env);
    expect(recordRunFlags(resumed)).toEqual(recorded);
    expect({ runId: resumed.runId, runAttempt: resumed.runAttempt }).toEqual({ runId: "77", runAttempt: 3 });
  }
  // The comparison can fail: another attempt is refused, as the run refuses it.
  expect(() => resumeOptions({ workspace: ws, source, runAttempt: 1 }, state, ws, source, statePath, {})).toThrowWithCode("RUN_FLAG_MISMATCH");
});

it("flags given with the recorded values, and --dry-run: the same line plus --dry-run", async () => {
  const line = await resumeCommandLine({ workspace: ws, source, plainHttp: true, chunkSize: 1_048_576, dryRun: true, env: {} });
  expect(line).toBe(runCommandLine({ workspace: ws, source, runId: "77", runAttempt: 3, plainHttp: true, registryConfig: "/cfg/docker.json", gatePassEnv: ["A_VAR", "B_VAR"], chunkSize: 1_048_576, mcpSdkVersion: "1.2.3", dryRun: true }, kitCliCommand({})));
});

it("a state of another source: its run id and attempt are not said (the run refuses that workspace anyway)", async () => {
  const line = await resumeCommandLine({ workspace: ws, source: "/srv/another-checkout", env: {} });
  expect(line).not.toContain("--run-id");
  expect(line).not.toContain("--run-attempt");
});

describe("a run armed by SEMANTIC_RELEASE_ENABLED=true", () => {
  it("the hint arms the resume too (typed as printed it would answer 'disarmed' and exit 0), before the key variable", async () => {
    const fresh = join(work, "armed");
    const keyFile = join(work, "attest.pem");
    const line = await resumeCommandLine({ workspace: fresh, source, runId: "9", env: { SEMANTIC_RELEASE_ENABLED: "true", HERMES_PLUGIN_KIT_ATTEST_KEY_FILE: keyFile } });
    expect(line.startsWith("SEMANTIC_RELEASE_ENABLED=true HERMES_PLUGIN_KIT_ATTEST_KEY_FILE=")).toBe(true);
    expect(typedAgain(line).env).toEqual({ SEMANTIC_RELEASE_ENABLED: "true", HERMES_PLUGIN_KIT_ATTEST_KEY_FILE: keyFile });
  });

  it("a run not armed (unset, or a value other than exactly true) gets no switch: its resume is a dry answer too", async () => {
    for (const value of [undefined, "", "TRUE", "1"]) {
      const env = value === undefined ? {} : { SEMANTIC_RELEASE_ENABLED: value };
      const line = await resumeCommandLine({ workspace: join(work, "unarmed"), source, env });
      expect(line.includes("SEMANTIC_RELEASE_ENABLED")).toBe(false);
    }
  });
});

describe("a key file named only through HERMES_PLUGIN_KIT_ATTEST_KEY_FILE", () => {
  const KEY_TEXT = "-----BEGIN PRIVATE KEY-----\nnot-a-real-key-but-secret-material\n-----END PRIVATE KEY-----\n";
  let keyFile: string;
  beforeAll(async () => {
    keyFile = join(work, "keys dir", "attest.pem");
    await mkdir(join(work, "keys dir"));
    await writeFile(keyFile, KEY_TEXT, { mode: 0o600 });
  });

  it("a fresh run: the hint sets the variable to the key file's absolute path (shell-quoted), never the key, and typed again gives the same key source", async () => {
    const fresh = join(work, "fresh-key");
    const env = { HERMES_PLUGIN_KIT_ATTEST_KEY_FILE: keyFile };
    const line = await resumeCommandLine({ workspace: fresh, source, runId: "9", env });
    expect(line).toBe(`HERMES_PLUGIN_KIT_ATTEST_KEY_FILE='${keyFile}' ${runCommandLine({ workspace: fresh, source, runId: "9" }, kitCliCommand(env))}`);
    expect(line).not.toContain("secret-material");
    expect(line).not.toContain("--attest-key");
    const again = typedAgain(line);
    expect(again.env).toEqual({ HERMES_PLUGIN_KIT_ATTEST_KEY_FILE: keyFile });
    expect(again.options.attestKey).toBeUndefined();
  });

  it("a relative path is made absolute (the hint works from any directory)", async () => {
    const line = await resumeCommandLine({ workspace: join(work, "fresh-rel"), source, env: { HERMES_PLUGIN_KIT_ATTEST_KEY_FILE: "keys/attest.pem" } });
    expect(line.startsWith(`HERMES_PLUGIN_KIT_ATTEST_KEY_FILE=${resolve("keys/attest.pem")} `)).toBe(true);
  });

  it("a run that recorded its key: --attest-key with the variable's file (it replaces the recorded path); --attest-key given: no variable", async () => {
    const attested = await stateWorkspace("attested", { run_attempt: 1, flags: { ...recorded, attest_key: "/keys/old.pem" } });
    const env = { HERMES_PLUGIN_KIT_ATTEST_KEY_FILE: keyFile };
    const line = await resumeCommandLine({ workspace: attested, source, env });
    expect(line.startsWith("HERMES_PLUGIN_KIT_ATTEST_KEY_FILE")).toBe(false);
    expect(line).toContain(` --attest-key '${keyFile}' `);
    const given = await resumeCommandLine({ workspace: join(work, "fresh-given"), source, attestKey: "/keys/given.pem", env });
    expect(given).toBe(runCommandLine({ workspace: join(work, "fresh-given"), source, attestKey: "/keys/given.pem" }, kitCliCommand(env)));
  });

  it("a run that recorded it attested without a key never reads the variable: the hint does not set it", async () => {
    const line = await resumeCommandLine({ workspace: ws, source, env: { HERMES_PLUGIN_KIT_ATTEST_KEY_FILE: keyFile } });
    expect(line).toBe(await resumeCommandLine({ workspace: ws, source, env: {} }));
  });
});

it("flags the state refuses (RUN_FLAG_MISMATCH is the run's own answer) or no state at all: the flags as given, never a throw", async () => {
  const mismatch = await resumeCommandLine({ workspace: ws, source, chunkSize: 65_536, env: {} });
  expect(mismatch).toBe(runCommandLine({ workspace: ws, source, chunkSize: 65_536 }, kitCliCommand({})));
  const fresh = join(work, "fresh");
  expect(await resumeCommandLine({ workspace: fresh, source, runId: "9", env: {} })).toBe(runCommandLine({ workspace: fresh, source, runId: "9" }, kitCliCommand({})));
  await writeFile(join(work, "bad-ws"), "");
  expect(await resumeCommandLine({ workspace: join(work, "bad-ws"), source, env: {} })).toBe(runCommandLine({ workspace: join(work, "bad-ws"), source }, kitCliCommand({})));
});

describe("the message names what was under way when the signal came, and how to resume", () => {
  const tail = "; the workspace lock is released; resume with the same --workspace and flags (X): recorded steps are re-verified and an unrecorded one is redone from a clean directory";
  it("the install command", () => {
    expect(runInterruptedMessage("SIGINT", "X", { stage: { kind: "install", step: "gates", command: "npm ci" } })).toBe(
      `release run interrupted (SIGINT) during the install command of step gates ("npm ci", hermesPluginKit.install): it was stopped with everything it started, and no later step started${tail}`,
    );
  });
  it("a gate's command", () => {
    expect(runInterruptedMessage("SIGTERM", "X", { stage: { kind: "gate", step: "build", gate: "build_metadata" } })).toBe(
      `release run interrupted (SIGTERM) during gate build_metadata of step build: its command was stopped with everything it started, and no later step started${tail}`,
    );
  });
  it("npm pack (the package's pack scripts)", () => {
    expect(runInterruptedMessage("SIGINT", "X", { stage: { kind: "pack", step: "build" } })).toBe(
      `release run interrupted (SIGINT) during npm pack of step build (the package's pack scripts): it was stopped with everything it started, and no later step started${tail}`,
    );
  });
  it("a step's own work (not an install or gate command): not said to be an install or gate", () => {
    const message = runInterruptedMessage("SIGHUP", "X", { stage: { kind: "step", step: "stage" } });
    expect(message).toBe(
      `release run interrupted (SIGHUP) during step stage: that step's own work is not cut short (only install, gate and npm pack commands are stopped mid-way), so it went on to its end or to its next install, gate or npm pack command, and no later step started${tail}`,
    );
  });
  it("before the first step (also the default, as the CLI says for a run stopped before the run's own handling)", () => {
    const message = `release run interrupted (SIGINT) before its first step: no step was under way and none started${tail}`;
    expect(runInterruptedMessage("SIGINT", "X", { stage: { kind: "start" } })).toBe(message);
    expect(runInterruptedMessage("SIGINT", "X")).toBe(message);
  });
  it("a dry run: nothing was written", () => {
    expect(runInterruptedMessage("SIGTERM", "X", { dryRun: true })).toBe("release run --dry-run interrupted (SIGTERM): nothing was written; run it again (X)");
  });
  it("cut short (a second signal, or stopping outlasted the grace period): what may still run or be left, and the hint", () => {
    expect(runInterruptedMessage("SIGINT", "X", { cut: { by: "signal", signal: "SIGINT" } })).toBe(
      "release run interrupted (SIGINT), and SIGINT came again before it had finished stopping: it exited at once, after killing (SIGKILL) the process group of the install, gate or npm pack command it had started, " +
        "so that command's private HOME (hpk-gate-home-* under TMPDIR) and the workspace lock may be left " +
        "(the next run breaks the lock, its process being gone); resume with the same --workspace and flags (X)",
    );
    expect(runInterruptedMessage("SIGTERM", "X", { dryRun: true, cut: { by: "grace", seconds: 10 } })).toBe(
      "release run --dry-run interrupted (SIGTERM), and it had not finished stopping after 10 s: it exited at once, so its scratch clone (hpk-* under TMPDIR) may be left; nothing of the release was written; run it again (X)",
    );
  });
});
