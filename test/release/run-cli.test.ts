/**
 * `hermes-plugin-kit release run` through the real CLI: one JSON object on
 * stdout; on stderr every step as it starts and ends with its time, each gate
 * on its own line, then the consumer's next commands with the real references,
 * which a consumer can run as printed. `--quiet` leaves stderr empty.
 * `--dry-run` leaves every ref, tree, workspace, store and scratch directory as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, runCli } from "../support/cli.js";
import { gitText } from "../../release/git.js";
import { createRunFixture, type RunFixture } from "../support/release-run-fixture.js";

let rf: RunFixture;
const env = { SEMANTIC_RELEASE_ENABLED: "true" };

beforeAll(async () => {
  rf = await createRunFixture("cli-run-plugin");
});

afterAll(async () => {
  await rf.cleanup();
});

describe("release run (CLI)", () => {
  let result: { released: boolean; bundle_reference: string; receipt_reference: string; next_steps: string[]; tarball: { filename: string } };

  it("--dry-run: every check up to the first write passes, and nothing is written", async () => {
    // Everything a release writes: origin's refs, the checkout's refs, index and tree, the workspace,
    // the store, and (through TMPDIR) any scratch file, which the dry run must remove again.
    const snapshot = async () => ({
      origin: await gitText(["for-each-ref", "--format=%(refname) %(objectname)"], { cwd: rf.repo.origin! }),
      source: await gitText(["for-each-ref", "--format=%(refname) %(objectname)"], { cwd: rf.repo.dir }),
      head: await gitText(["rev-parse", "HEAD"], { cwd: rf.repo.dir }),
      status: await gitText(["status", "--porcelain", "--ignored"], { cwd: rf.repo.dir }),
    });
    const before = await snapshot();
    const scratch = await mkdtemp(join(tmpdir(), "hpk-dry-run-tmp-"));
    const r = await runCli(["release", "run", "--dry-run", "--workspace", rf.workspace, "--source", rf.repo.dir], { env: { ...env, TMPDIR: scratch }, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const planned = JSON.parse(r.stdout) as { dry_run: boolean; would_release: boolean; version: string; tag: string; checks: { check: string; status: string }[] };
    expect(planned).toMatchObject({ dry_run: true, would_release: true, version: "0.8.0", tag: "v0.8.0" });
    expect(planned.checks.map((c) => `${c.check}:${c.status}`)).toEqual([
      "workspace:ok",
      "trigger:ok",
      "origin main:ok",
      "intent:ok",
      "materialize:would",
      "config:ok",
      "gates:would",
      "check-immutable:skipped",
      "check-private:would",
      "tags:ok",
    ]);
    expect(r.stderr).toContain("dry run: release run would release v0.8.0; nothing was written");
    expect(await snapshot()).toEqual(before);
    expect(await gitText(["tag", "--list"], { cwd: rf.repo.dir })).toBe("v0.7.0");
    await expect(readdir(rf.workspace)).rejects.toThrow();
    await expect(readdir(rf.storeDir)).rejects.toThrow();
    expect(await readdir(scratch)).toEqual([]);
    await rm(scratch, { recursive: true, force: true });
  }, 120_000);

  it("--dry-run refuses a workspace the real run refuses, with the same code (it said 'fresh' and exited 0); --registry-config for a local store is said to be unread", async () => {
    const scratch = await mkdtemp(join(tmpdir(), "hpk-dry-run-ws-"));
    const file = join(scratch, "a-file");
    await writeFile(file, "x");
    try {
      for (const [workspace, code] of [[file, "IO_NOT_A_DIRECTORY"], [join(file, "sub"), "IO_NOT_A_DIRECTORY"], ["/dev/null", "IO_NOT_A_DIRECTORY"], ["/proc/hpk-dry-run", "IO_DIRECTORY_UNWRITABLE"]] as const) {
        const dry = await runCli(["release", "run", "--dry-run", "--workspace", workspace, "--source", rf.repo.dir, "--json"], { env, timeoutMs: 120_000 });
        const real = await runCli(["release", "run", "--workspace", workspace, "--source", rf.repo.dir, "--json"], { env, timeoutMs: 120_000 });
        expect([dry.code, JSON.parse(dry.stdout).code], `${workspace}: ${dry.stdout}`).toEqual([1, code]);
        expect([real.code, JSON.parse(real.stdout).code]).toEqual([1, code]);
      }
      expect(await readdir(scratch)).toEqual(["a-file"]);
      // A workspace that is the checkout, or inside it, is refused by both before anything is written.
      const before = await gitText(["status", "--porcelain", "--ignored"], { cwd: rf.repo.dir });
      for (const workspace of [rf.repo.dir, join(rf.repo.dir, "release-work")]) {
        for (const dryRun of [["--dry-run"], []]) {
          const r = await runCli(["release", "run", ...dryRun, "--workspace", workspace, "--source", rf.repo.dir, "--json"], { env, timeoutMs: 120_000 });
          expect([r.code, JSON.parse(r.stdout).code], r.stdout).toEqual([1, "RUN_WORKSPACE_INVALID"]);
          expect(JSON.parse(r.stdout).message).toContain(`fix: put the workspace outside it, e.g. --workspace ${join(rf.repo.dir, "..", "work-release").replace(/\/work\/\.\.\//, "/")}`);
        }
      }
      expect(await gitText(["status", "--porcelain", "--ignored"], { cwd: rf.repo.dir })).toBe(before);
      const unread = await runCli(["release", "run", "--dry-run", "--workspace", rf.workspace, "--source", rf.repo.dir, "--registry-config", join(scratch, "auth.json"), "--json"], { env, timeoutMs: 120_000 });
      expect(unread.code, unread.stderr).toBe(0);
      expect((JSON.parse(unread.stdout) as { checks: { check: string; status: string; detail: string }[] }).checks).toContainEqual({ check: "credentials", status: "skipped", detail: `--registry-config ${join(scratch, "auth.json")} is not read: ${rf.repository} is a local oci-layout store (no credentials)` });
      await expect(readdir(rf.workspace)).rejects.toThrow();
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }, 240_000);

  it("prints one JSON object on stdout and each step's start and end on stderr, then the next steps", async () => {
    const r = await runCli(["release", "run", "--workspace", rf.workspace, "--source", rf.repo.dir, "--run-id", "55",], { env, timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    result = JSON.parse(r.stdout);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(result.released).toBe(true);
    const err = r.stderr.split("\n");
    for (const step of ["intent", "materialize", "restore", "gates", "build", "manifest", "check-private", "stage", "promote", "publish"]) {
      expect(err).toContain(`▸ ${step}`);
      expect(err.some((l) => new RegExp(`^✓ ${step} \\(ran, [0-9]+\\.[0-9] s\\)$`).test(l)), `${step} end line in\n${r.stderr}`).toBe(true);
    }
    for (const gate of ["unit", "public_contract", "host_contract", "build_metadata"]) expect(err).toContain(`▸ gate ${gate}`);
    expect(err).toContain("- check-immutable (skipped: no GitHub repository configured (pass --github-release with GH_TOKEN, GITHUB_API_URL, GITHUB_REPOSITORY))");
    const next = err.indexOf("Next, a consumer fetches, verifies, pins and installs this release:");
    expect(next).toBeGreaterThan(0);
    expect(err.slice(next + 1, next + 1 + result.next_steps.length)).toEqual(result.next_steps.map((l) => `  ${l}`));
    expect(result.next_steps.join("\n")).toContain(`--reference ${result.bundle_reference} `);
    expect(result.next_steps.join("\n")).toContain(`--expect-receipt-reference ${result.receipt_reference}`);
    // No signing key in this policy: nothing asks the consumer for provenance.
    expect(result.next_steps.join("\n")).not.toContain("--provenance");
  }, 300_000);

  it("the printed next steps work as a consumer runs them", async () => {
    const consumer = await mkdtemp(join(tmpdir(), "hpk-next-"));
    try {
      // The fixture's gate commands are not the defaults: a note shows the --expect-gate pins; the commands
      // work in an empty directory (no package.json: nothing is read from the consumer's directory).
      const note = result.next_steps.find((l) => l.startsWith("# this release's gates are not the defaults"));
      expect(note).toContain("--expect-gate 'unit=test -f index.js'");
      for (const line of result.next_steps.filter((l) => !l.startsWith("#"))) {
        if (line.startsWith("npm install")) {
          expect(line).toBe(`npm install --ignore-scripts --save-exact ./vendor/cli-run-plugin/dist/${result.tarball.filename}`);
          expect(await readdir(join(consumer, "vendor", "cli-run-plugin", "dist"))).toEqual([result.tarball.filename]);
          continue;
        }
        // Run exactly what was printed: the kit is not on the npm registry, so the form is this installation's CLI.
        expect(line.startsWith(`node ${CLI} `), line).toBe(true);
        const run = spawnSync("sh", ["-c", line], { cwd: consumer, encoding: "utf8" });
        expect(run.status, `${line}\n${run.stderr}`).toBe(0);
      }
    } finally {
      await rm(consumer, { recursive: true, force: true });
    }
  }, 120_000);

  it("--dry-run after the release describes what the real run with that workspace does: resume the recorded trigger and intent, re-verify, write nothing", async () => {
    const r = await runCli(["release", "run", "--dry-run", "--workspace", rf.workspace, "--source", rf.repo.dir, "--json"], { env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const planned = JSON.parse(r.stdout) as { would_release: boolean; trigger_sha: string; trigger_from: string; tag: string; checks: { check: string; status: string; detail: string }[] };
    expect(planned).toMatchObject({ would_release: true, trigger_sha: rf.triggerSha, trigger_from: "recorded", tag: "v0.8.0" });
    expect(planned.checks.find((c) => c.check === "tags")?.detail).toBe("v0.8.0 and v0.8.0-receipt were bound by this run (recorded): a real run re-verifies them");
  }, 120_000);

  it("--quiet: the same JSON on stdout, nothing on stderr", async () => {
    const r = await runCli(["release", "run", "--workspace", rf.workspace, "--source", rf.repo.dir, "--quiet"], { env, timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    const again = JSON.parse(r.stdout);
    expect({ ...again, steps: [] }).toEqual({ ...result, steps: [] });
  }, 300_000);
});
