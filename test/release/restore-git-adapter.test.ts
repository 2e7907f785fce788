import { afterEach, describe, expect, it } from "vitest";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { git, gitEnvironment, redactUrlCredentials, remoteTagCommit, runProcess } from "../../release/git.js";
import { BASE_ENV_NAMES, childEnvironment } from "../../src/oci/subprocess.js";
import { createFixtureRepo, fixtureGit, type FixtureRepo } from "../support/git-fixture.js";

const repos: FixtureRepo[] = [];
const dirs: string[] = [];
afterEach(async () => {
  while (repos.length > 0) await repos.pop()?.cleanup();
  while (dirs.length > 0) await rm(dirs.pop() as string, { recursive: true, force: true });
});

describe("git adapter isolation", () => {
  it("never runs repository hooks, even when the repository config points core.hooksPath at them", async () => {
    const repo = await createFixtureRepo({ origin: false });
    repos.push(repo);
    const hooks = join(repo.root, "hooks");
    await mkdir(hooks);
    const marker = join(repo.root, "hook-ran");
    for (const name of ["pre-commit", "commit-msg", "post-commit"]) {
      await writeFile(join(hooks, name), `#!/bin/sh\ntouch ${marker}\nexit 1\n`);
      await chmod(join(hooks, name), 0o755);
      await writeFile(join(repo.dir, ".git", "hooks", name), `#!/bin/sh\ntouch ${marker}\nexit 1\n`);
      await chmod(join(repo.dir, ".git", "hooks", name), 0o755);
    }
    await fixtureGit(repo.dir, ["config", "core.hooksPath", hooks]);
    await repo.commit("fix: hooks must not run", { "lib/h.js": "export {};\n" });
    await expect(rm(marker)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("ignores the user's global and system git config", async () => {
    const home = await mkdtemp(join(tmpdir(), "hpk-home-"));
    dirs.push(home);
    await writeFile(join(home, ".gitconfig"), "[user]\n\tname = Leaked Global\n[alias]\n\tst = status\n");
    const env = gitEnvironment({ HOME: home, XDG_CONFIG_HOME: home });
    expect(env["GIT_CONFIG_NOSYSTEM"]).toBe("1");
    expect(env["GIT_CONFIG_GLOBAL"]).toBe("/dev/null");
    const r = await git(["config", "--global", "--list"], { cwd: home, env: { HOME: home }, allowFailure: true });
    expect(r.stdout).not.toContain("Leaked Global");
    const alias = await git(["st"], { cwd: home, env: { HOME: home }, allowFailure: true });
    expect(alias.code).not.toBe(0);
  });

  it("reports failures by subcommand and exit status, with credentials redacted", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hpk-git-"));
    dirs.push(dir);
    await expect(git(["ls-remote", "https://user:s3cret-token@127.0.0.1:1/x.git"], { cwd: dir, timeoutMs: 20_000 })).rejects.toMatchObject({
      code: "GIT_FAILED",
      message: expect.stringMatching(/^git ls-remote failed \(exit \d+\)/),
    });
    try {
      await git(["ls-remote", "https://user:s3cret-token@127.0.0.1:1/x.git"], { cwd: dir, timeoutMs: 20_000 });
    } catch (error) {
      expect((error as Error).message).not.toContain("s3cret-token");
    }
    expect(redactUrlCredentials("fatal: https://x-access-token:ghp_abc@github.com/o/r.git not found")).toBe("fatal: https://***@github.com/o/r.git not found");
  });

  it("kills a process at its timeout and refuses unbounded output", async () => {
    await expect(runProcess("sleep", ["5"], { cwd: tmpdir(), env: childEnvironment(BASE_ENV_NAMES), timeoutMs: 200 })).rejects.toMatchObject({ code: "SUBPROCESS_FAILED", message: expect.stringContaining("timed out after 200 ms") });
    await expect(runProcess("no-such-program-hpk", [], { cwd: tmpdir(), env: childEnvironment(BASE_ENV_NAMES), timeoutMs: 1000 })).rejects.toMatchObject({ code: "SUBPROCESS_FAILED", message: expect.stringContaining("could not start") });
  });

  it("reads a remote tag's commit, peeling annotated tags", async () => {
    const repo = await createFixtureRepo();
    repos.push(repo);
    const sha = await repo.head();
    await fixtureGit(repo.dir, ["tag", "-a", "-m", "annotated", "v9.9.9"]);
    await fixtureGit(repo.dir, ["push", "--quiet", "origin", "v9.9.9"]);
    expect(await remoteTagCommit(repo.dir, "origin", "v9.9.9")).toBe(sha);
    expect(await remoteTagCommit(repo.dir, "origin", "v0.7.0")).toBe(sha);
    expect(await remoteTagCommit(repo.dir, "origin", "v1.0.0")).toBeUndefined();
  });
});
