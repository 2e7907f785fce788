/**
 * Files the CLI reads itself are read with a bound, never with an unbounded readFile: a FIFO, a device
 * (/dev/zero) or a huge file named where a small JSON file goes is refused with a code instead of hanging
 * the command or filling its memory (src/contract/fs-async.ts `readRegularFile`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../support/cli.js";

const SHA = "a".repeat(40);
const BUNDLE = `127.0.0.1:5000/acme/widget@sha256:${"b".repeat(64)}`;
const RECEIPT = `127.0.0.1:5000/acme/widget@sha256:${"c".repeat(64)}`;
const env = { GH_TOKEN: undefined, GITHUB_TOKEN: undefined };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hpk-bounded-reads-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("release github-release reads its files bounded", () => {
  it("--references /dev/zero is RELEASE_JSON_UNREADABLE (exit 1), not read to the end", async () => {
    const r = await runCli(["release", "github-release", "--release-version", "1.2.3", "--release-sha", SHA, "--references", "/dev/zero", "--git-remote", join(dir, "none")], { cwd: dir, env, timeoutMs: 30_000 });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({ ok: false, code: "RELEASE_JSON_UNREADABLE", message: "cannot read release JSON: /dev/zero is not a regular file (a FIFO, socket or device); pass the path of the JSON file itself" });
  });

  it("a package.json that is a FIFO (no writer) is no package.json: the usage error asks for --package-name instead of waiting on the FIFO", async () => {
    const work = await mkdtemp(join(dir, "fifo-"));
    const references = join(work, "references.json");
    await writeFile(references, JSON.stringify({ bundle_reference: BUNDLE, receipt_reference: RECEIPT }));
    execFileSync("mkfifo", [join(work, "package.json")]);
    const r = await runCli(["release", "github-release", "--release-version", "1.2.3", "--release-sha", SHA, "--references", references, "--git-remote", join(work, "none")], { cwd: work, env, timeoutMs: 30_000 });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "USAGE", message: "no package.json here: pass --package-name <name> (the released package's name, used in the release title)" });
  });
});
