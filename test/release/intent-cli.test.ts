import { afterEach, describe, expect, it } from "vitest";
import { Command, CommanderError } from "commander";
import { registerReleaseBuildSteps } from "../../src/cli/commands/release-build.js";
import { createFixtureRepo, type FixtureRepo } from "../support/git-fixture.js";

const repos: FixtureRepo[] = [];
afterEach(async () => {
  while (repos.length > 0) await repos.pop()?.cleanup();
  delete process.env["SEMANTIC_RELEASE_ENABLED"];
});

/** Run `release <argv>` through the real commander wiring; returns exit code and stdout. */
async function cli(argv: string[]): Promise<{ code: number; stdout: string }> {
  const program = new Command().name("hermes-plugin-kit").exitOverride().enablePositionalOptions();
  program.configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  const release = program.command("release").exitOverride();
  registerReleaseBuildSteps(release);
  for (const sub of release.commands) sub.exitOverride();
  let stdout = "";
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    return true;
  }) as typeof process.stdout.write;
  process.exitCode = 0;
  let code: number;
  try {
    await program.parseAsync(["release", ...argv], { from: "user" });
    code = typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    code = 2;
  } finally {
    process.stdout.write = original;
    process.exitCode = 0;
  }
  return { code, stdout };
}

describe("hermes-plugin-kit release (build-half wiring)", () => {
  it("intent prints exactly the disarmed object unless SEMANTIC_RELEASE_ENABLED=true", async () => {
    process.env["SEMANTIC_RELEASE_ENABLED"] = "false";
    expect(await cli(["intent", "--dir", "/nonexistent"])).toEqual({ code: 0, stdout: '{"released":false,"disarmed":true}\n' });
  });

  it("intent prints one JSON object with the next version; failures print a coded JSON error and exit 1", async () => {
    process.env["SEMANTIC_RELEASE_ENABLED"] = "true";
    const repo = await createFixtureRepo();
    repos.push(repo);
    await repo.commit("feat: add export", { "lib/x.js": "export const x = 1;\n" });
    const ok = await cli(["intent", "--dir", repo.dir]);
    expect(ok.code).toBe(0);
    expect(ok.stdout.trimEnd().split("\n")).toHaveLength(1);
    expect(JSON.parse(ok.stdout)).toMatchObject({ released: true, previous_version: "0.7.0", version: "0.8.0", release_class: "minor", notes: expect.stringContaining("add export") });

    const untagged = await createFixtureRepo({ tagBaseline: false, origin: false });
    repos.push(untagged);
    const bad = await cli(["intent", "--dir", untagged.dir, "--no-remote-check"]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, code: "RELEASE_BASELINE_MISSING" });
  });

  it("usage errors exit 2; unknown gates and bad attempts are coded failures", async () => {
    expect((await cli(["restore"])).code).toBe(2);
    const noVersion = await cli(["create-manifest", "--previous-version", "0.7.0", "--tag", "v0.8.0", "--source-sha", "a".repeat(40), "--run-id", "1", "--run-attempt", "1"]);
    expect(noVersion.code).toBe(2);
    expect(JSON.parse(noVersion.stdout)).toMatchObject({ ok: false, code: "USAGE" });
    const gate = await cli(["gate", "lint", "--dir", "/nonexistent"]);
    expect(gate.code).toBe(1);
    expect(JSON.parse(gate.stdout)).toMatchObject({ code: "RELEASE_GATE_UNKNOWN" });
    const timeout = await cli(["gate", "unit", "--timeout-seconds", "0"]);
    expect(timeout.code).toBe(2);
  });
});
