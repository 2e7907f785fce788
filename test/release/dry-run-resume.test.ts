/**
 * `release run --dry-run` describes exactly what a real run with the same flags would do: a workspace that
 * resumes keeps the trigger (and intent) it recorded when it started, whatever the source's HEAD is now, and the
 * dry run says so (`trigger_from: "recorded"`); when origin's main has moved on since, both refuse with
 * PROMOTE_REMOTE_STATE and the fix (a fresh --workspace). Uncommitted changes in the source checkout are named
 * in a notice (they are not released: the run clones the trigger commit). Built CLI (`npm run build` first).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCli } from "../support/cli.js";
import { createRunFixture, type RunFixture } from "../support/release-run-fixture.js";

let rf: RunFixture;
const env = { SEMANTIC_RELEASE_ENABLED: "true" };

interface Planned {
  would_release: boolean;
  trigger_sha: string;
  trigger_from: string;
  tag?: string;
  uncommitted?: { files: number; tracked: number; untracked: number };
  notices: string[];
  checks: { check: string; status: string; detail: string }[];
}

beforeAll(async () => {
  rf = await createRunFixture("dry-resume-plugin");
}, 120_000);

afterAll(async () => {
  await rf?.cleanup();
});

describe("release run --dry-run of a workspace that resumes", () => {
  let head: string;

  it("a fresh run in a dirty checkout: the trigger is HEAD, and a notice counts the uncommitted files (not released)", async () => {
    await writeFile(join(rf.repo.dir, "index.js"), "export const changed = true;\n");
    await writeFile(join(rf.repo.dir, "notes.txt"), "scratch\n");
    const r = await runCli(["release", "run", "--dry-run", "--workspace", join(rf.workspace, "..", "fresh-ws"), "--source", rf.repo.dir, "--json"], { env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const planned = JSON.parse(r.stdout) as Planned;
    expect(planned).toMatchObject({ trigger_sha: rf.triggerSha, trigger_from: "head", uncommitted: { files: 2, tracked: 1, untracked: 1 } });
    expect(planned.notices).toEqual([
      `${rf.repo.dir} has uncommitted changes in 2 files (1 tracked, 1 untracked): they are not released (the run clones the trigger commit from the checkout); commit and push them first to release them`,
    ]);
    // Text mode: the notice on stderr.
    const text = await runCli(["release", "run", "--dry-run", "--workspace", join(rf.workspace, "..", "fresh-ws"), "--source", rf.repo.dir], { env, timeoutMs: 120_000 });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain(`note: ${rf.repo.dir} has uncommitted changes in 2 files (1 tracked, 1 untracked)`);
    await rf.repo.git(["checkout", "--", "index.js"]);
    await rf.repo.git(["clean", "-fq", "notes.txt"]);
    const clean = JSON.parse((await runCli(["release", "run", "--dry-run", "--workspace", join(rf.workspace, "..", "fresh-ws"), "--source", rf.repo.dir, "--json"], { env, timeoutMs: 120_000 })).stdout) as Planned;
    expect(clean.uncommitted).toBeUndefined();
    expect(clean.notices).toEqual([]);
  }, 240_000);

  it("a run stopped after restore, then a new local commit: the dry run resumes the recorded trigger, as the real run does, and says so", async () => {
    // The run records intent, materialize and restore, then dies (crash injection: SIGKILL).
    const crashed = await runCli(["release", "run", "--workspace", rf.workspace, "--source", rf.repo.dir], { env: { ...env, HERMES_PLUGIN_KIT_CRASH_AT: "restore:recorded" }, timeoutMs: 180_000 });
    expect(crashed.code, crashed.stderr).not.toBe(0);
    head = await rf.repo.commit("feat: another change\n", { "lib/more.js": "export const more = 1;\n" });
    const r = await runCli(["release", "run", "--dry-run", "--workspace", rf.workspace, "--source", rf.repo.dir, "--json"], { env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const planned = JSON.parse(r.stdout) as Planned;
    expect(planned).toMatchObject({ would_release: true, trigger_sha: rf.triggerSha, trigger_from: "recorded", tag: "v0.8.0" });
    expect(planned.checks.find((c) => c.check === "trigger")?.detail).toBe(
      `${rf.triggerSha}, recorded in ${join(rf.workspace, "run-state.json")} when this run started: a resumed run releases it, not the source's HEAD ${head} (to release HEAD, start a fresh --workspace)`,
    );
    expect(planned.checks.find((c) => c.check === "intent")?.detail).toContain("(recorded when the run started; a resumed run does not decide it again)");
    expect(planned.checks.find((c) => c.check === "materialize")?.status).toBe("ok");
  }, 300_000);

  it("origin's main moved on: the dry run and the real run both refuse with PROMOTE_REMOTE_STATE, saying to use a fresh --workspace", async () => {
    await rf.repo.git(["push", "--quiet", "origin", "main"]);
    const dry = await runCli(["release", "run", "--dry-run", "--workspace", rf.workspace, "--source", rf.repo.dir, "--json"], { env, timeoutMs: 120_000 });
    expect(dry.code, dry.stderr).toBe(1);
    const refused = JSON.parse(dry.stdout) as { code: string; message: string };
    expect(refused.code).toBe("PROMOTE_REMOTE_STATE");
    expect(refused.message).toBe(
      `origin's main is ${head}, not the trigger ${rf.triggerSha} that the workspace ${rf.workspace} recorded when its run started: resumed, the run would go on releasing ${rf.triggerSha} ` +
        `and refuse at its promote step at the latest (PROMOTE_REMOTE_STATE); fix: release origin's main with a fresh --workspace (this workspace stays on ${rf.triggerSha})`,
    );
    const real = await runCli(["release", "run", "--workspace", rf.workspace, "--source", rf.repo.dir, "--json"], { env, timeoutMs: 300_000 });
    expect(real.code, real.stderr).toBe(1);
    expect(JSON.parse(real.stdout)).toMatchObject({ ok: false, code: "PROMOTE_REMOTE_STATE" });
  }, 420_000);
});
