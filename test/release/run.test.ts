/**
 * `release run` end to end over a workspace (docs/release-run.md): real git
 * (fixture package, bare origin), real semantic-release dry run, real npm
 * pack, real gates, an `oci-layout:` store. A rerun re-verifies every
 * recorded step and converges to the same references and receipt bytes;
 * a tampered output is detected instead of skipped.
 */
import { spawn } from "node:child_process";
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseStrictJson } from "../../src/contract/canonical-json.js";
import { verifyFinalReceipt } from "../../src/contract/release-document.js";
import { runRelease, RUN_LOCK_WAIT_MS, type RunResult } from "../../release/run.js";
import { gitText } from "../../release/git.js";
import { fixturePackageJson } from "../support/git-fixture.js";
import { createRunFixture, type RunFixture } from "../support/release-run-fixture.js";
import { storeTags } from "../support/release-pipeline-fixture.js";

let rf: RunFixture;
let first: Extract<RunResult, { released: true }>;
const env = { ...process.env, SEMANTIC_RELEASE_ENABLED: "true" };

beforeAll(async () => {
  rf = await createRunFixture();
});

afterAll(async () => {
  await rf.cleanup();
});

describe("release run", () => {
  it("does nothing but report when disarmed", async () => {
    const result = await runRelease({ source: rf.repo.dir, workspace: join(rf.workspace, "..", "disarmed"), env: { ...process.env, SEMANTIC_RELEASE_ENABLED: "false" }, progress: null, runId: "7" });
    expect(result).toMatchObject({ released: false });
    expect((result as { reason: string }).reason).toMatch(/disarmed/);
  });

  it("runs every step: promoted source, bound tags, a verifying receipt", async () => {
    const result = await runRelease({ source: rf.repo.dir, workspace: rf.workspace, env, progress: null, runId: "4242" });
    expect(result.released).toBe(true);
    first = result as Extract<RunResult, { released: true }>;
    expect(first.version).toBe("0.8.0");
    expect(first.steps.map((s) => `${s.step}:${s.status}`)).toEqual([
      "intent:ran",
      "materialize:ran",
      "restore:ran",
      "gates:ran",
      "build:ran",
      "manifest:ran",
      "check-immutable:skipped",
      "check-private:ran",
      "stage:ran",
      "attest:skipped",
      "promote:ran",
      "publish:ran",
      "github-release:skipped",
    ]);
    expect(first.trigger_sha).toBe(rf.triggerSha);
    const origin = rf.repo.origin!;
    expect(await gitText(["rev-parse", "refs/heads/main"], { cwd: origin })).toBe(first.release_sha);
    expect(await gitText(["rev-parse", "refs/tags/v0.8.0^{commit}"], { cwd: origin })).toBe(first.release_sha);
    expect(await gitText(["rev-parse", `${first.release_sha}^`], { cwd: origin })).toBe(rf.triggerSha);
    const tags = await storeTags(rf.storeDir);
    expect(tags).toEqual({
      [`candidate-4242-${first.release_sha}`]: first.bundle_reference.split("@")[1],
      "v0.8.0": first.bundle_reference.split("@")[1],
      "v0.8.0-receipt": first.receipt_reference.split("@")[1],
    });
    const receipt = verifyFinalReceipt(parseStrictJson(await readFile(first.receipt_file)), { package: "fixture-plugin", registryRepository: rf.repository, gates: { unit: "test -f index.js", public_contract: "test -f package.json", host_contract: "test -d node_modules/@modelcontextprotocol/sdk", build_metadata: "test -d lib" } });
    expect(receipt.registry_reference).toBe(first.bundle_reference);
    expect(receipt.artifacts[0]?.sha256).toBe(first.tarball.sha256);
  });

  it("refuses a workspace locked by a live run, and breaks the lock of a dead one", async () => {
    const sleeper = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      await writeFile(join(rf.workspace, "run.lock"), String(sleeper.pid));
      const error = await runRelease({ source: rf.repo.dir, workspace: rf.workspace, env, progress: null }).catch((e: unknown) => e);
      expect(error).toThrowWithCode("RUN_WORKSPACE_LOCKED");
      // The shared PID lock (acquirePidLock): a live PID that is not a kit process is refused at once, with the fix.
      expect((error as Error).message).toMatch(new RegExp(`run\\.lock .*found PID ${sleeper.pid}, .*"sleep", which is no JavaScript runtime, so no hermes-plugin-kit process.*fix: if no hermes-plugin-kit process \\(a release run of the workspace .*\\) is running, remove .*run\\.lock`));
    } finally {
      sleeper.kill("SIGKILL");
    }
    await new Promise((resolve) => sleeper.once("exit", resolve));
    // The same pid is now dead: the next run (below) breaks the stale lock.
  });

  it("waits for a live release run's lock, then refuses naming the holder; a lock that is not the kit's is refused at once and left alone", async () => {
    const lock = join(rf.workspace, "run.lock");
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
    try {
      await writeFile(lock, `${holder.pid}\n`);
      const started = Date.now();
      const error = await runRelease({ source: rf.repo.dir, workspace: rf.workspace, env, progress: null }).catch((e: unknown) => e);
      expect(error).toThrowWithCode("RUN_WORKSPACE_LOCKED");
      expect((error as Error).message).toMatch(new RegExp(`run\\.lock is still held by PID ${holder.pid} after ${RUN_LOCK_WAIT_MS} ms \\(expected a release run of the workspace .* to release it when done\\); fix: wait for PID ${holder.pid} to finish and rerun`));
      expect(Date.now() - started).toBeGreaterThanOrEqual(RUN_LOCK_WAIT_MS);
      expect(await readFile(lock, "utf8")).toBe(`${holder.pid}\n`);
    } finally {
      holder.kill("SIGKILL");
    }
    await rm(lock);
    const target = join(rf.workspace, "..", "lock-target");
    await writeFile(target, "not a lock\n");
    await symlink(target, lock);
    const error = await runRelease({ source: rf.repo.dir, workspace: rf.workspace, env, progress: null }).catch((e: unknown) => e);
    expect(error).toThrowWithCode("RUN_WORKSPACE_LOCKED");
    expect((error as Error).message).toMatch(/run\.lock is not a lock the kit writes: expected a lock file holding the PID of its holder .*found a symlink .*not followed.*rm removes the link, not its target/);
    expect((await lstat(lock)).isSymbolicLink()).toBe(true);
    expect(await readFile(target, "utf8")).toBe("not a lock\n");
    await rm(lock);
  });

  it("a rerun re-verifies every recorded step and converges", async () => {
    const before = await readFile(first.receipt_file);
    const again = (await runRelease({ source: rf.repo.dir, workspace: rf.workspace, env, progress: null })) as Extract<RunResult, { released: true }>;
    expect(again.steps.filter((s) => s.status !== "skipped").every((s) => s.status === "verified")).toBe(true);
    expect(again.steps.filter((s) => s.status === "skipped").map((s) => s.step)).toEqual(["check-immutable", "attest", "github-release"]);
    expect({ ...again, steps: [] }).toEqual({ ...first, steps: [] });
    expect((await readFile(first.receipt_file)).equals(before)).toBe(true);
    await expect(readFile(join(rf.workspace, "run.lock"))).rejects.toThrow();
  });

  it("detects a tampered recorded output instead of skipping it", async () => {
    const path = join(rf.workspace, "publication.json");
    const original = await readFile(path);
    await writeFile(path, original.toString("utf8").replace("sha256:", "sha256:0"));
    const error = await runRelease({ source: rf.repo.dir, workspace: rf.workspace, env, progress: null }).catch((e: unknown) => e);
    expect(error).toThrowWithCode("RUN_STEP_DIVERGED");
    await writeFile(path, original);
  });

  it("refuses a corrupt run state", async () => {
    const ws = join(rf.workspace, "..", "corrupt");
    await mkdir(ws, { recursive: true });
    await writeFile(join(ws, "run-state.json"), '{"schema":1,"schema":2}');
    const error = await runRelease({ source: rf.repo.dir, workspace: ws, env, progress: null }).catch((e: unknown) => e);
    expect(error).toThrowWithCode("RUN_STATE_INVALID");
  });

  it("parses each recorded step with its schema: a record that lacks a field is RUN_STATE_INVALID naming the step, and nothing runs", async () => {
    const ws = join(rf.workspace, "..", "malformed-record");
    await mkdir(ws, { recursive: true });
    const state = { schema: 1, source: rf.repo.dir, trigger_sha: rf.triggerSha, trigger_date: 1767000000, run_id: "8", run_attempt: 1, steps: { intent: { released: true, version: "0.8.0", tag: "v0.8.0", release_class: "minor" } } };
    await writeFile(join(ws, "run-state.json"), JSON.stringify(state));
    const error = await runRelease({ source: rf.repo.dir, workspace: ws, env, progress: null }).catch((e: unknown) => e);
    expect(error).toThrowWithCode("RUN_STATE_INVALID");
    expect((error as Error).message).toMatch(/record of step intent is malformed at previous_version/);
    expect(await readdir(ws)).toEqual(["run-state.json"]);
  });

  it("reports nothing to release after docs-only commits, and changes nothing", async () => {
    const docs = await createRunFixture("docs-only-plugin", { message: "docs: clarify the readme\n", files: { "README.md": "# docs-only-plugin\n\nMore words.\n" } });
    try {
      const result = await runRelease({ source: docs.repo.dir, workspace: docs.workspace, env, progress: null, runId: "9" });
      expect(result).toMatchObject({ released: false });
      expect((result as { reason: string }).reason).toMatch(/nothing to release/);
      expect(await gitText(["tag", "--list"], { cwd: docs.repo.origin! })).toBe("v0.7.0");
    } finally {
      await docs.cleanup();
    }
  });

  it("stops before building when the trigger is not origin's main", async () => {
    const unpushed = await createRunFixture("unpushed-plugin");
    try {
      await unpushed.repo.commit("fix: not pushed\n", { "lib/extra.js": "export const extra = 1;\n" });
      const error = await runRelease({ source: unpushed.repo.dir, workspace: unpushed.workspace, env, progress: null, runId: "3" }).catch((e: unknown) => e);
      expect(error).toThrowWithCode("PROMOTE_REMOTE_STATE");
      expect(String(error)).toMatch(/push it first \(git push origin HEAD:main\)/);
      await expect(readFile(join(unpushed.workspace, "source-bundle", "release-source.bundle"))).rejects.toThrow();
      // origin ahead of the checkout (someone else pushed): the fix is to pull first.
      const behind = await createRunFixture("behind-plugin");
      try {
        await behind.repo.git(["reset", "--hard", "-q", "HEAD~1"]);
        const ahead = await runRelease({ source: behind.repo.dir, workspace: behind.workspace, env, progress: null, runId: "4" }).catch((e: unknown) => e);
        expect(ahead).toThrowWithCode("PROMOTE_REMOTE_STATE");
        expect(String(ahead)).toMatch(/ahead of or diverged from your HEAD; run git pull/);
      } finally {
        await behind.cleanup();
      }
    } finally {
      await unpushed.cleanup();
    }
  });

  it("reads origin's main by its exact name: a sibling branch a/refs/heads/main (listed first by git's tail match) is not main", async () => {
    const decoy = await createRunFixture("decoy-plugin");
    try {
      const baseline = (await decoy.repo.git(["rev-parse", "HEAD~1"])).trim();
      await decoy.repo.git(["push", "--quiet", "origin", `${baseline}:refs/heads/a/refs/heads/main`]);
      const stop = new Error("stopped after intent");
      const result = await runRelease({
        source: decoy.repo.dir,
        workspace: decoy.workspace,
        env,
        progress: null,
        runId: "6",
        hooks: { checkpoint: (point) => { if (point === "intent:recorded") throw stop; } },
      }).catch((e: unknown) => e);
      expect(result, String(result)).toBe(stop);
      const state = parseStrictJson(await readFile(join(decoy.workspace, "run-state.json"))) as { steps: Record<string, Record<string, unknown>> };
      expect(state.steps["intent"]).toMatchObject({ released: true, version: "0.8.0" });
    } finally {
      await decoy.cleanup();
    }
  });

  it("an install command that fails stops the run before any gate: RUN_INSTALL_FAILED names the command, where it came from and the fix; nothing is staged", async () => {
    const parent = await mkdtemp(join(tmpdir(), "hpk-run-install-"));
    const repository = `oci-layout:${join(parent, "store")}`;
    const install = "echo 'npm error Missing: helper@ from lock file' >&2; exit 3";
    const packageJson = fixturePackageJson({ name: "install-fails-plugin", packageJson: { hermesPluginKit: { repository, install } } });
    const failing = await createRunFixture("install-fails-plugin", { message: "feat: a failing install\n", files: { "package.json": packageJson } }, repository);
    try {
      const error = await runRelease({ source: failing.repo.dir, workspace: failing.workspace, env, progress: null, gateOutput: "log", runId: "5" }).catch((e: unknown) => e);
      expect(error).toThrowWithCode("RUN_INSTALL_FAILED");
      const message = (error as Error).message;
      expect(message).toContain(`the install command ${JSON.stringify(install)} (hermesPluginKit.install of the released package.json) exited 3`);
      expect(message).toContain(join(failing.workspace, "evidence", "install.log"));
      expect(message).toMatch(/run it in your checkout to see why, or declare another command in package\.json hermesPluginKit\.install/);
      // It ran with a private HOME (as the gates do): the message says so, and how to give it the real one.
      expect(message).toContain("; it ran with a private, empty HOME (an install that needs your ~/.npmrc, e.g. the token of a private npm registry, gets the real HOME with --pass-env HOME); ");
      expect(await readFile(join(failing.workspace, "evidence", "install.log"), "utf8")).toContain("Missing: helper@ from lock file");
      await expect(readFile(join(failing.workspace, "evidence", "unit.json"))).rejects.toThrow();
      await expect(readdir(join(parent, "store"))).rejects.toThrow();
    } finally {
      await failing.cleanup();
      await rm(parent, { recursive: true, force: true });
    }
  });

  it("refuses a workspace of another source", async () => {
    // Another checkout (a git repository with a commit): only the workspace's own source may resume it.
    const other = await mkdtemp(join(tmpdir(), "hpk-other-source-"));
    await gitText(["init", "--quiet", "--initial-branch=main"], { cwd: other });
    await gitText(["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "--quiet", "--allow-empty", "-m", "chore: other"], { cwd: other });
    const error = await runRelease({ source: other, workspace: rf.workspace, env, progress: null }).catch((e: unknown) => e);
    await rm(other, { recursive: true, force: true });
    expect(error).toThrowWithCode("RUN_WORKSPACE_INVALID");
  });
});
