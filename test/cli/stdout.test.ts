/**
 * How the CLI writes its result to stdout (src/cli/output.ts `writeStdout`, src/cli/main.cts):
 * with write(2) on descriptor 1 when it takes the bytes, through `process.stdout` when it cannot
 * take them now (a full non-blocking pipe), nothing more once the reader is gone. Real pipes, set up
 * by a Python 3 harness (a non-blocking pipe, a pipe whose reader closed); the built CLI.
 */
import { spawnSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "hpk-stdout-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Run the CLI with `args` under the Python harness in `mode`:
 * - `full`: stdout is a non-blocking pipe already holding all but 3 bytes of its capacity; the
 *   harness reads it only after a pause, so the CLI's first write is cut short and then meets EAGAIN;
 * - `closed`: stdout is a pipe whose read end is closed before the CLI starts (EPIPE).
 * Returns the exit status, stderr, what the pipe carried after the filler (`full`) and the filler's size.
 */
function harness(mode: "full" | "closed", args: string[]): { status: number; stderr: string; stdout: string; filler: number } {
  const py = `
import fcntl, json, os, subprocess, sys, time
mode, argv = sys.argv[1], sys.argv[2:]
r, w = os.pipe()
filler = 0
if mode == "full":
    capacity = fcntl.fcntl(w, 1032)  # F_GETPIPE_SZ
    os.set_blocking(w, False)
    filler = capacity - 3
    os.write(w, b"f" * filler)
else:
    os.close(r)
p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=w, stderr=subprocess.PIPE)
os.close(w)
out = b""
if mode == "full":
    time.sleep(1.0)
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        out += chunk
err = p.stderr.read()
status = p.wait(timeout=60)
print(json.dumps({"status": status, "stderr": err.decode(), "stdout": out[filler:].decode(), "filler": len(out[:filler])}))
`;
  const run = spawnSync("python3", ["-c", py, mode, process.execPath, CLI, ...args], { encoding: "utf8", timeout: 90_000, env: { ...process.env, XDG_CACHE_HOME: dir } });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as { status: number; stderr: string; stdout: string; filler: number };
}

const direct = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 60_000, env: { ...process.env, XDG_CACHE_HOME: dir } });

describe("CLI stdout", () => {
  it.each([[["help", "fetch"]], [["--help"]], [["--version"]]])("a full non-blocking pipe (EAGAIN) still gets the whole answer, after what it held: %j", (args) => {
    const reference = direct(args);
    expect(reference.status).toBe(0);
    expect(reference.stdout.length).toBeGreaterThan(0);
    const run = harness("full", args);
    expect(run.filler).toBeGreaterThan(0);
    expect([run.status, run.stderr, run.stdout]).toEqual([0, "", reference.stdout]);
  });

  it.each([[["help", "fetch"]], [["--help"]], [["--version"]]])("a stdout whose reader is gone (EPIPE) ends the run quietly with exit 0: %j", (args) => {
    const run = harness("closed", args);
    expect([run.status, run.stderr]).toEqual([0, ""]);
  });

  it.each([[["--help"]], [["--version"]], [["help", "fleet", "add"]], [["verify-final-receipt", "--receipt", "/nonexistent/r.json", "--repository", "ghcr.io/acme/p", "--json"]]])("a stdout that refuses the bytes (/dev/full, ENOSPC) fails the run with one line, no stack trace: %j", (args) => {
    const full = openSync("/dev/full", "w");
    try {
      const run = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 60_000, stdio: ["ignore", full, "pipe"], env: { ...process.env, XDG_CACHE_HOME: dir } });
      expect(run.status).toBe(1);
      const lines = run.stderr.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^hermes-plugin-kit: cannot write the answer to stdout: ENOSPC .*\[IO_ENOSPC\]$/);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      // --json: the failed verification's JSON answer could not be written either, so its error line comes to
      // stderr after all (it used to be lost); help and version have no failure to tell.
      if (args.includes("--json")) {
        expect(lines).toHaveLength(2);
        expect(lines[1]).toMatch(/^hermes-plugin-kit: .*\/nonexistent\/r\.json.* \[RELEASE_JSON_UNREADABLE\]$/);
      } else expect(lines).toHaveLength(1);
    } finally {
      closeSync(full);
    }
  });

  it("a command that succeeded but whose answer stdout refused (/dev/full) exits 1 and says its work is done (fleet remove: the pin is gone)", async () => {
    const lock = join(dir, "full-fleet.lock.json");
    await writeFile(lock, '{"plugins":[{"bundle_reference":"ghcr.io/acme/p@sha256:' + "a".repeat(64) + '","name":"p","receipt_reference":"ghcr.io/acme/p@sha256:' + "b".repeat(64) + '","tarball":{"filename":"p-1.0.0.tgz","sha256":"' + "c".repeat(64) + '"},"version":"1.0.0"}],"schema_version":1}\n');
    const full = openSync("/dev/full", "w");
    try {
      const run = spawnSync(process.execPath, [CLI, "fleet", "remove", "--lock", lock, "--name", "p"], { encoding: "utf8", timeout: 60_000, stdio: ["ignore", full, "pipe"], env: { ...process.env, XDG_CACHE_HOME: dir } });
      expect(run.status).toBe(1);
      expect(run.stderr.trimEnd().split("\n")).toEqual([
        "hermes-plugin-kit: cannot write the answer to stdout: ENOSPC (write); check where stdout goes (a full disk, a closed terminal) [IO_ENOSPC]",
        "hermes-plugin-kit: the command itself succeeded: anything it installed, wrote or changed is in place; only its answer on stdout was lost (rerun it with stdout going elsewhere to see it)",
      ]);
    } finally {
      closeSync(full);
    }
    expect(JSON.parse(await readFile(lock, "utf8")).plugins).toEqual([]);
  });

  it("a failed command whose stdout reader is gone keeps its own exit code and error line", async () => {
    const run = harness("closed", ["verify-final-receipt", "--receipt", join(dir, "missing.json"), "--repository", "ghcr.io/acme/p", "--json"]);
    expect(run.status).toBe(1);
    // --json: the JSON object is the whole answer, and it could not be written; nothing else is said.
    expect(run.stderr).toBe("");
    const plain = harness("closed", ["verify-final-receipt", "--receipt", join(dir, "missing.json"), "--repository", "ghcr.io/acme/p"]);
    expect(plain.status).toBe(1);
    expect(plain.stderr).toContain("[RELEASE_JSON_UNREADABLE]");
  });
});

describe("CLI stderr", () => {
  it.each([
    ["a path in an error line", ["verify-final-receipt", "--receipt", "/tmp/a\u001b[31mRED\u202e", "--repository", "ghcr.io/acme/p"], 1],
    ["an unknown option in a usage line", ["verify-final-receipt", "--re\u001b]0;title\u0007ceipt", "x"], 2],
    ["an unknown command", ["fe\u009btch"], 2],
  ])("%s reaches the terminal as data: control and bidi characters written as \\uXXXX", (_label, args, status) => {
    const run = direct(args as string[]);
    expect(run.status).toBe(status);
    expect(run.stderr).toMatch(/^hermes-plugin-kit: /);
    expect(run.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(run.stderr).toMatch(/\\u(001b|009b)/);
  });
});

describe("CLI text results", () => {
  it("a path in a success line on stdout reaches the terminal as data (init into a directory named with ESC and a bidi override)", () => {
    const target = join(dir, "p\u001b[31mRED\u202e\nnext");
    const run = direct(["init", target, "--name", "demo", "--repository", `oci-layout:${join(dir, "store")}`, "--kit", "registry"]);
    expect(run.status, run.stderr).toBe(0);
    // A line break in the path too: the result stays one line per item.
    expect(run.stdout.split("\n")[0]).toBe(`created plugin project demo in ${join(dir, "p")}\\u001b[31mRED\\u202e\\u000anext`);
    expect(run.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
  });
});

describe("CLI error lines are bounded", () => {
  it("a message of thousands of characters (a 5,000-byte path) keeps its start and end around a count; --json keeps the whole message", () => {
    const path = join(dir, ...Array.from({ length: 25 }, () => "q".repeat(200)), "r.json");
    const run = direct(["verify-final-receipt", "--receipt", path, "--repository", "ghcr.io/acme/p"]);
    expect(run.status).toBe(1);
    expect(run.stderr.length).toBeLessThan(1400);
    expect(run.stderr).toMatch(/^hermes-plugin-kit: .{600,} … \(\d+ characters left out\) … .*r\.json.* \[RELEASE_JSON_UNREADABLE\]\n$/);
    const json = direct(["verify-final-receipt", "--receipt", path, "--repository", "ghcr.io/acme/p", "--json"]);
    expect(JSON.parse(json.stdout).message).toContain(path);
  });
});
