/**
 * `release promote` with real git (docs/release-run.md "`release promote`";
 * docs/architecture.md, "Release: steps and data flow"): atomic push of main + tag from the staged bundle,
 * resume, remote moved by someone else, tag elsewhere, missing token for a
 * network remote (before any work), credentials in the remote URL, the token
 * only in the git processes that reach the remote.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { execFileSync } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { delimiter, join } from "node:path";
import { promoteRelease, isLocalRemote } from "../../release/promote.js";
import { stageRelease } from "../../release/stage.js";
import { fixtureGit } from "../support/release-fixture.js";
import { createPipelineFixture, createPromotionRemote, revParse, stageInputs, type PipelineFixture } from "../support/release-pipeline-fixture.js";

let pf: PipelineFixture;
let reference: string;

beforeAll(async () => {
  pf = await createPipelineFixture();
  reference = (await stageRelease({ ...stageInputs(pf.fixture), repository: pf.repository, tag: pf.candidateTag })).bundle_reference;
});

afterAll(async () => {
  await pf.cleanup();
});

const base = () => ({ policy: pf.fixture.policy, repository: pf.repository, reference });

describe("release promote", () => {
  it("classifies remotes: paths and file:// are local, URLs and scp forms are not", () => {
    expect(isLocalRemote("/srv/git/origin.git")).toBe(true);
    expect(isLocalRemote("../origin.git")).toBe(true);
    expect(isLocalRemote("file:///srv/origin.git")).toBe(true);
    expect(isLocalRemote("https://github.com/acme/x.git")).toBe(false);
    expect(isLocalRemote("git@github.com:acme/x.git")).toBe(false);
    expect(isLocalRemote("ssh://git@host/x.git")).toBe(false);
  });

  it("pushes main and the tag atomically, then resumes as already promoted", async () => {
    const remote = await createPromotionRemote(pf, "fresh");
    const result = await promoteRelease({ ...base(), repoDir: remote.checkout, env: {} });
    expect(result).toMatchObject({ outcome: "pushed", release_sha: pf.fixture.sourceSha, trigger_sha: remote.triggerSha, tag: "v0.8.0" });
    expect(await revParse(remote.origin, "refs/heads/main")).toBe(pf.fixture.sourceSha);
    expect(await revParse(remote.origin, "refs/tags/v0.8.0^{commit}")).toBe(pf.fixture.sourceSha);
    const again = await promoteRelease({ ...base(), repoDir: remote.checkout, env: {} });
    expect(again.outcome).toBe("already-promoted");
    const tagObject = await revParse(pf.fixture.repoDir, "refs/tags/v0.8.0");
    expect(again.remote).toEqual({ branch: "main", main: pf.fixture.sourceSha, tag: pf.fixture.sourceSha, tag_object: tagObject });
    expect(await revParse(remote.origin, "refs/tags/v0.8.0")).toBe(tagObject);
    expect(await fixtureGit(remote.origin, ["cat-file", "-t", "v0.8.0"])).toBe("tag");
  });

  it("is not 'already promoted' when the remote tag peels to the release commit through another tag object", async () => {
    for (const kind of ["lightweight", "annotated"] as const) {
      const remote = await createPromotionRemote(pf, `foreign-${kind}`);
      const args = kind === "lightweight" ? ["tag", "v0.8.0", pf.fixture.sourceSha] : ["tag", "-a", "-m", "hand-made", "v0.8.0", pf.fixture.sourceSha];
      const scratch = `${remote.origin}-scratch`;
      await fixtureGit(pf.fixture.repoDir, ["clone", "--quiet", "--bare", pf.fixture.repoDir, scratch]);
      await fixtureGit(scratch, ["tag", "-d", "v0.8.0"]);
      await fixtureGit(scratch, args);
      await fixtureGit(scratch, ["push", "--quiet", remote.origin, `${pf.fixture.sourceSha}:refs/heads/main`, "refs/tags/v0.8.0:refs/tags/v0.8.0"]);
      const before = await revParse(remote.origin, "refs/tags/v0.8.0");
      await expect(promoteRelease({ ...base(), repoDir: remote.checkout, env: {} })).toThrowWithCode("PROMOTE_REMOTE_STATE");
      expect(await revParse(remote.origin, "refs/tags/v0.8.0")).toBe(before);
    }
  });

  it("fails closed with nothing changed when someone else moved main", async () => {
    const remote = await createPromotionRemote(pf, "moved");
    await fixtureGit(pf.fixture.repoDir, ["push", "--quiet", remote.origin, `${pf.fixture.otherSha}:refs/heads/main`, "--force"]);
    await expect(promoteRelease({ ...base(), repoDir: remote.checkout, env: {} })).toThrowWithCode("PROMOTE_REMOTE_STATE");
    expect(await revParse(remote.origin, "refs/heads/main")).toBe(pf.fixture.otherSha);
    expect(await revParse(remote.origin, "refs/tags/v0.8.0")).toBeUndefined();
  });

  it("a failed atomic push is said on the progress stream, never on stderr when progress is silenced (--quiet); then PROMOTE_NOT_CONFIRMED", async () => {
    const remote = await createPromotionRemote(pf, "locked");
    // A stale ref lock on the remote makes the atomic ref transaction fail (as root too).
    await writeFile(join(remote.origin, "refs", "heads", "main.lock"), "");
    const written: string[] = [];
    const sink = { write: (chunk: string | Uint8Array) => written.push(String(chunk)) > 0 } as unknown as NodeJS.WritableStream;
    await expect(promoteRelease({ ...base(), repoDir: remote.checkout, env: {}, progress: sink })).toThrowWithCode("PROMOTE_NOT_CONFIRMED");
    expect(written.join("")).toMatch(/^hermes-plugin-kit: git push --atomic exited [0-9]+; re-reading the remote refs to decide\n$/);
    const stderr = vi.spyOn(process.stderr, "write");
    try {
      await expect(promoteRelease({ ...base(), repoDir: remote.checkout, env: {}, progress: null })).toThrowWithCode("PROMOTE_NOT_CONFIRMED");
      expect(stderr.mock.calls.map((c) => String(c[0])).filter((line) => line.includes("git push --atomic"))).toEqual([]);
    } finally {
      stderr.mockRestore();
    }
    expect(await revParse(remote.origin, "refs/heads/main")).toBe(remote.triggerSha);
  });

  it("fails closed when the tag already exists on the remote at another commit", async () => {
    const remote = await createPromotionRemote(pf, "tagged");
    await fixtureGit(pf.fixture.repoDir, ["push", "--quiet", remote.origin, `${remote.triggerSha}:refs/tags/v0.8.0`]);
    await expect(promoteRelease({ ...base(), repoDir: remote.checkout, env: {} })).toThrowWithCode("PROMOTE_REMOTE_STATE");
    expect(await revParse(remote.origin, "refs/heads/main")).toBe(remote.triggerSha);
  });

  it("aborts before any work when SOURCE_PROMOTION_TOKEN is missing for a network remote (scenario 25)", async () => {
    const remote = await createPromotionRemote(pf, "network");
    await fixtureGit(remote.checkout, ["remote", "set-url", "origin", "https://git.example.invalid/acme/x.git"]);
    // A reference into a store that does not exist: any download attempt would fail with another code.
    const unreachable = { ...base(), repository: `oci-layout:${pf.root}/missing`, policy: { ...pf.fixture.policy, registryRepository: `oci-layout:${pf.root}/missing` }, reference: `oci-layout:${pf.root}/missing@${reference.split("@")[1]}` };
    await expect(promoteRelease({ ...unreachable, repoDir: remote.checkout, env: {} })).toThrowWithCode("PROMOTE_TOKEN_MISSING");
    await expect(promoteRelease({ ...unreachable, repoDir: remote.checkout, env: { SOURCE_PROMOTION_TOKEN: "" } })).toThrowWithCode("PROMOTE_TOKEN_MISSING");
  });

  it("refuses a remote URL that carries credentials, and a missing remote", async () => {
    const remote = await createPromotionRemote(pf, "creds");
    await fixtureGit(remote.checkout, ["remote", "set-url", "origin", "https://user:s3cret@git.example.invalid/x.git"]);
    const error = await promoteRelease({ ...base(), repoDir: remote.checkout, env: { SOURCE_PROMOTION_TOKEN: "t" } }).catch((e: unknown) => e);
    expect(error).toThrowWithCode("PROMOTE_REMOTE_INVALID");
    expect((error as Error).message).not.toContain("s3cret");
    await expect(promoteRelease({ ...base(), repoDir: remote.checkout, remote: "upstream", env: {} })).toThrowWithCode("PROMOTE_REMOTE_INVALID");
  });

  it("hands SOURCE_PROMOTION_TOKEN only to the git processes that reach the remote (ls-remote, push), never to local ones", async () => {
    const remote = await createPromotionRemote(pf, "token-scope");
    const shimDir = join(pf.root, "promote-git-shim");
    await mkdir(shimDir, { recursive: true });
    const log = join(pf.root, "promote-git.log");
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    await writeFile(join(shimDir, "git"), `#!/bin/sh\nprintf '%s\\t%s\\n' "\${SOURCE_PROMOTION_TOKEN:+token}" "$*" >> ${JSON.stringify(log)}\nexec ${realGit} "$@"\n`);
    await chmod(join(shimDir, "git"), 0o755);
    const path = process.env["PATH"];
    process.env["PATH"] = `${shimDir}${delimiter}${path ?? ""}`;
    try {
      const result = await promoteRelease({ ...base(), repoDir: remote.checkout, env: { SOURCE_PROMOTION_TOKEN: "promote-secret" } });
      expect(result.outcome).toBe("pushed");
    } finally {
      process.env["PATH"] = path;
    }
    const runs = (await readFile(log, "utf8")).split("\n").filter((l) => l.length > 0).map((l) => ({ token: l.startsWith("token\t"), args: l.slice(l.indexOf("\t") + 1).split(" ") }));
    const subcommand = (args: string[]) => args.filter((a, i) => !a.startsWith("-") && args[i - 1] !== "-c")[0];
    const withToken = runs.filter((r) => r.token).map((r) => subcommand(r.args));
    const without = runs.filter((r) => !r.token).map((r) => subcommand(r.args));
    expect(new Set(withToken)).toEqual(new Set(["ls-remote", "push"]));
    expect(without).toEqual(expect.arrayContaining(["init", "fetch", "rev-parse", "diff", "remote"]));
    expect(without).not.toContain("push");
    expect(without).not.toContain("ls-remote");
  });
});
