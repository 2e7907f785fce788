/**
 * The resume hint of an interrupted `release run` (release/run-command.ts):
 * the command to type, with every flag given that changes the run, each word
 * shell-quoted so bash reads back exactly the arguments meant; never a
 * credential. The trial's finding: after `release run --workspace W
 * --plain-http` was interrupted, the hint said `release run --workspace W
 * --source S`, and following it failed at check-private with OCI_TLS_FAILED.
 */
import { execFileSync } from "node:child_process";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InterruptedError } from "../../src/contract/errors.js";
import { kitCliCommand } from "../../release/cli-command.js";
import { runCommandLine } from "../../release/run-command.js";
import { runRelease } from "../../release/run.js";
import { tempDir } from "../support/contract-fixture.js";
import { createFixtureRepo, type FixtureRepo } from "../support/git-fixture.js";

/** The arguments bash passes for `line` (its words after the first `cli` word). */
function argvOf(line: string): string[] {
  const out = execFileSync("bash", ["--norc", "--noprofile", "-c", `args() { printf '%s\\0' "$@"; }; ${line}`], { encoding: "utf8" });
  return out.split("\0").slice(0, -1);
}

describe("runCommandLine", () => {
  it("repeats every flag that changes the run, paths made absolute, in a fixed order", () => {
    const line = runCommandLine(
      {
        workspace: "ws",
        source: "/src/plugin",
        runId: "77",
        runAttempt: 2,
        plainHttp: true,
        registryConfig: "auth.json",
        attestKey: "/keys/attest.pem",
        chunkSize: 524_288,
        mcpSdkVersion: "1.32.2",
        githubRelease: true,
        dryRun: true,
        gatePassEnv: ["REQUIRE_REGISTRY", "HPK_X"],
      },
      "hermes-plugin-kit",
    );
    expect(line).toBe(
      `hermes-plugin-kit release run --workspace ${resolve("ws")} --source /src/plugin --run-id 77 --run-attempt 2 --plain-http --registry-config ${resolve("auth.json")} ` +
        "--attest-key /keys/attest.pem --chunk-size 524288 --mcp-sdk-version 1.32.2 --github-release --dry-run --pass-env REQUIRE_REGISTRY HPK_X",
    );
  });

  it("only the workspace and source when no flag was given; false flags and empty --pass-env are not repeated", () => {
    expect(runCommandLine({ workspace: "/w", source: "/s", plainHttp: false, githubRelease: false, dryRun: false, gatePassEnv: [] }, "hpk")).toBe("hpk release run --workspace /w --source /s");
  });

  it("never shows a credential given to the library", () => {
    const options = { workspace: "/w", source: "/s", plainHttp: true, credentials: { username: "u-SECRET", password: "p-SECRET" } };
    expect(runCommandLine(options, "hpk")).toBe("hpk release run --workspace /w --source /s --plain-http");
  });

  it("bash reads back exactly the paths meant, whatever they hold (spaces, quotes, $, ;, newlines, globs)", () => {
    const path = fc.string({ unit: fc.constantFrom(..."ab /'\"$`;&|<>()*?[]{}!#~\\\n\t=-".split("")), minLength: 1, maxLength: 16 }).map((s) => `/tmp/${s}`);
    fc.assert(
      fc.property(path, path, path, (workspace, source, registryConfig) => {
        const line = runCommandLine({ workspace, source, registryConfig, plainHttp: true }, "args");
        expect(argvOf(line)).toEqual(["release", "run", "--workspace", resolve(workspace), "--source", resolve(source), "--plain-http", "--registry-config", resolve(registryConfig)]);
      }),
      { numRuns: 40 },
    );
  });
});

describe("the INTERRUPTED error of release run carries the command", () => {
  let repo: FixtureRepo;
  let work: string;
  beforeAll(async () => {
    work = await tempDir("hpk-run-command-");
    repo = await createFixtureRepo({ origin: false });
  });
  afterAll(async () => {
    await repo.cleanup();
    await rm(work, { recursive: true, force: true });
  });

  it("a run stopped by its signal says to resume with --plain-http, --registry-config, --pass-env, ... and no credential", async () => {
    const controller = new AbortController();
    controller.abort(new InterruptedError("SIGINT", "stopped by the test"));
    const workspace = join(work, "a workspace; with 'quotes'");
    const run = runRelease({
      source: repo.dir,
      workspace,
      runId: "5",
      plainHttp: true,
      registryConfig: join(work, "auth.json"),
      chunkSize: 65_536,
      gatePassEnv: ["REQUIRE_REGISTRY"],
      credentials: { username: "u", password: "p-SECRET" },
      env: { ...process.env, SEMANTIC_RELEASE_ENABLED: "true" },
      progress: null,
      signal: controller.signal,
    });
    await expect(run).rejects.toThrowWithCode("INTERRUPTED");
    const message = await run.catch((error: Error) => error.message);
    // The run was armed by SEMANTIC_RELEASE_ENABLED=true: the line arms the resume too.
    const expected = `SEMANTIC_RELEASE_ENABLED=true ${kitCliCommand()} release run --workspace '${join(work, "a workspace; with '\\''quotes'\\''")}' --source ${repo.dir} --run-id 5 --plain-http --registry-config ${join(work, "auth.json")} --chunk-size 65536 --pass-env REQUIRE_REGISTRY`;
    expect(message).toContain(`resume with the same --workspace and flags (${expected}): recorded steps are re-verified`);
    expect(message).not.toContain("p-SECRET");
  });
});
