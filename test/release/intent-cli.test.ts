import { afterEach, describe, expect, it } from "vitest";
import { Command, CommanderError } from "commander";
import { registerReleaseBuildSteps } from "../../src/cli/commands/release-build.js";
import { redirectStdout } from "../../src/cli/output.js";
import { readFile, symlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createFixtureRepo, fixtureGit, type FixtureRepo } from "../support/git-fixture.js";

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
  redirectStdout((text) => (stdout += text));
  process.exitCode = 0;
  let code: number;
  try {
    await program.parseAsync(["release", ...argv], { from: "user" });
    code = typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    code = 2;
  } finally {
    redirectStdout(undefined);
    process.exitCode = 0;
  }
  return { code, stdout };
}

describe("hermes-plugin-kit release (build-half wiring)", () => {
  it("intent prints exactly the disarmed object unless SEMANTIC_RELEASE_ENABLED=true", async () => {
    process.env["SEMANTIC_RELEASE_ENABLED"] = "false";
    expect(await cli(["intent", "--dir", "/nonexistent"])).toEqual({ code: 0, stdout: '{"ok":true,"released":false,"disarmed":true}\n' });
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

  it("usage errors exit 2 (a bad --timeout-seconds too); unknown gates are coded failures", async () => {
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

describe("the whole build half through the CLI wiring", () => {
  it("attach-trigger, intent, materialize, restore, gates, build, create/verify-manifest, checksums", async () => {
    process.env["SEMANTIC_RELEASE_ENABLED"] = "true";
    const gates = { unit: "true", public_contract: "true", host_contract: "test -d node_modules", build_metadata: "true" };
    const repo = await createFixtureRepo({ gates });
    repos.push(repo);
    const trigger = await repo.commit("fix: repair greeting", { "lib/greet.js": "export const greet = (n) => `hi ${n}`;\n" });
    await fixtureGit(repo.dir, ["checkout", "--quiet", "--detach", trigger]);
    const json = async (argv: string[]) => {
      const r = await cli(argv);
      expect(r.stdout.trimEnd().split("\n"), argv.join(" ")).toHaveLength(1);
      expect(r.code, r.stdout).toBe(0);
      return JSON.parse(r.stdout) as Record<string, unknown>;
    };
    const ws = join(repo.root, "ws");
    expect(await json(["attach-trigger", "--dir", repo.dir, "--expected-sha", trigger])).toEqual({ ok: true, branch: "main", head: trigger });
    expect(await json(["intent", "--dir", repo.dir, "--package", "fixture-plugin"])).toMatchObject({ released: true, version: "0.7.1" });
    const m = await json(["materialize", "--dir", repo.dir, "--expected-sha", trigger, "--output-dir", ws]);
    expect(m).toMatchObject({ released: true, version: "0.7.1", tag: "v0.7.1" });
    const source = join(ws, "source");
    expect(await json(["restore", "--bundle", join(ws, "release-source.bundle"), "--expected-sha", trigger, "--dir", source])).toMatchObject({ source_sha: m["source_sha"] });
    await symlink(resolve("node_modules"), join(source, "node_modules"));
    for (const gate of Object.keys(gates)) {
      expect(await json(["gate", gate, "--dir", source, "--evidence-dir", join(ws, "evidence"), "--expected-sha", trigger])).toMatchObject({ gate, passed: true });
    }
    expect(await json(["build", "--dir", source, "--artifact-dir", join(ws, "dist"), "--expected-sha", trigger])).toMatchObject({ artifact: { filename: "fixture-plugin-0.7.1.tgz" } });
    expect(await json(["check-dist", "--dir", source, "--artifact-dir", join(ws, "dist")])).toMatchObject({ files: 5 });
    const common = ["--dir", source, "--artifact-dir", join(ws, "dist")];
    const created = await json(["create-manifest", ...common, "--previous-version", "0.7.0", "--version", "0.7.1", "--tag", "v0.7.1", "--source-sha", String(m["source_sha"]), "--run-id", "4242", "--run-attempt", "1", "--evidence-dir", join(ws, "evidence"), "--output", join(ws, "release-manifest.json")]);
    expect(created).toMatchObject({ release_class: "patch" });
    expect(await json(["verify-manifest", ...common, "--manifest", join(ws, "release-manifest.json")])).toEqual(created);
    const sums = await json(["checksums", ...common, "--manifest", join(ws, "release-manifest.json"), "--bundle", join(ws, "release-source.bundle"), "--output", join(ws, "release-payload.sha256")]);
    expect((sums["entries"] as unknown[]).length).toBe(3);
    expect((await readFile(join(ws, "release-payload.sha256"), "ascii")).split("\n")).toHaveLength(4);
    const badAttempt = await cli(["create-manifest", ...common, "--previous-version", "0.7.0", "--version", "0.7.1", "--tag", "v0.7.1", "--source-sha", String(m["source_sha"]), "--run-id", "4242", "--run-attempt", "x", "--evidence-dir", join(ws, "evidence"), "--output", join(ws, "other.json")]);
    // A malformed flag value is the caller's usage (exit 2), refused before the evidence is read (src/cli/flag-values.ts).
    expect(badAttempt.code).toBe(2);
    expect(JSON.parse(badAttempt.stdout)).toMatchObject({ code: "USAGE", message: '--run-attempt: expected a positive integer (1, 2, ...), found "x"' });
  });
});
