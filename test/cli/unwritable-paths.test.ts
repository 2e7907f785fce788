/**
 * Every directory a command creates or writes (fetch --output-dir, fleet
 * --lock, release run/demo --workspace, release materialize --output-dir,
 * init <dir>, plugin build --out) that cannot be created or written fails
 * promptly with a coded IO error naming the path and the fix, and writes
 * nothing. `fetch --output-dir /proc/x` used to hang: Node's recursive mkdir
 * retries forever when procfs answers ENOENT (src/contract/directory.ts).
 *
 * Through the built CLI (dist/src/cli/main.js) as a real subprocess; the
 * read-only directory case runs without the permission-override capabilities
 * (setpriv) when the tests run as root, since root ignores permission bits;
 * it stays root, so it still reads a checkout that only root may read.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LayoutTarget } from "../../src/oci/layout-target.js";
import { materializeRelease } from "../../release/materialize.js";
import { CLI, runCli, runProcess, type CliResult } from "../support/cli.js";
import { createReleaseFixture, stageFixture, type ReleaseFixture, type StagedRelease } from "../support/release-fixture.js";

let root: string;
let repository: string;
let fixture: ReleaseFixture;
let staged: StagedRelease;
let receiptFile: string;
const ARMED = { SEMANTIC_RELEASE_ENABLED: "true" };
const EXAMPLE_ENTRY = join(__dirname, "..", "..", "examples", "calculator", "src", "server.ts");

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hpk-unwritable-"));
  const storeDir = join(root, "store");
  repository = `oci-layout:${storeDir}`;
  fixture = await createReleaseFixture({ registryRepository: repository });
  staged = await stageFixture(fixture, await LayoutTarget.open(storeDir, { create: true }), repository);
  await chmod(storeDir, 0o700);
  receiptFile = join(root, "release-receipt.json");
  await writeFile(receiptFile, staged.receiptBytes);
}, 120_000);

afterAll(async () => {
  await fixture?.cleanup();
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

/** A failed run: exit 1, the code in brackets, the path named, what was expected and a fix. */
function expectIoFailure(r: CliResult, code: string, path: string, kind = "directory"): void {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).toContain(`[${code}]`);
  expect(r.stderr).toContain(path);
  expect(r.stderr).toContain(`expected a ${kind}`);
  expect(r.stderr).toMatch(/fix: /);
}

const fetchArgs = (out: string) => ["fetch", "--reference", `${repository}@${staged.bundle.digest}`, "--output-dir", out];

describe("fetch --output-dir", () => {
  it("a fresh directory: exit 0, the payload installed (the passing case)", async () => {
    const out = join(root, "fresh", "D");
    const r = await runCli(fetchArgs(out));
    expect(r.code, r.stderr).toBe(0);
    expect((await readdir(out)).sort()).toEqual(["dist", "release-manifest.json", "release-payload.sha256", "release-source.bundle"]);
  });

  it.each([
    ["/proc/x", "IO_DIRECTORY_UNWRITABLE"],
    ["/proc/self/x/y", "IO_DIRECTORY_UNWRITABLE"],
    ["/dev/null/x", "IO_NOT_A_DIRECTORY"],
  ])("%s fails promptly with %s (it used to hang) and writes nothing", async (out, code) => {
    const r = await runCli(fetchArgs(out), { timeoutMs: 60_000 });
    expectIoFailure(r, code, out);
    expect(existsSync(out)).toBe(false);
  });

  it("a regular file in the way: D itself -> INSTALL_UNSAFE_PATH, a parent -> IO_NOT_A_DIRECTORY; the file is unchanged", async () => {
    const file = join(root, "in-the-way");
    await writeFile(file, "keep me\n");
    const itself = await runCli(fetchArgs(file));
    expect(itself.code).toBe(1);
    expect(itself.stderr).toContain("[INSTALL_UNSAFE_PATH]");
    expect(itself.stderr).toContain("fix: pass a directory path, or move the file away");
    expectIoFailure(await runCli(fetchArgs(join(file, "D"))), "IO_NOT_A_DIRECTORY", file);
    expect(await readFile(file, "utf8")).toBe("keep me\n");
  });
});

describe("TMPDIR that cannot hold fetch's private temp directory", () => {
  it.each([
    ["missing", () => join(root, "no-such-tmp"), "IO_DIRECTORY_UNWRITABLE", "it does not exist"],
    ["a file", () => receiptFile, "IO_NOT_A_DIRECTORY", "is not a directory"],
    ["relative", () => "relative-tmp", "IO_DIRECTORY_UNWRITABLE", "expected an absolute path"],
  ])("%s: coded, naming TMPDIR and the fix, nothing installed", async (_label, tmp, code, found) => {
    const out = join(root, `tmpdir-${code}-D`);
    const r = await runCli(fetchArgs(out), { env: { TMPDIR: tmp() } });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`cannot use temporary directory (TMPDIR, else /tmp) ${tmp()}`);
    expect(r.stderr).toContain(found);
    expect(r.stderr).toMatch(new RegExp(`fix: set TMPDIR to an existing directory you can write \\(absolute path\\), or unset it \\[${code}\\]\\n$`));
    expect(existsSync(out)).toBe(false);
  });
});

describe("a path the system refuses as too long (ENAMETOOLONG)", () => {
  const longName = join(tmpdir(), "n".repeat(300), "D");
  const longPath = join(tmpdir(), ...Array.from({ length: 20 }, () => "p".repeat(250)), "D");
  it.each([
    ["fetch --output-dir", (dir: string) => fetchArgs(dir), "directory"],
    ["init", (dir: string) => ["init", dir, "--name", "x"], "directory"],
    ["fleet add --lock", (dir: string) => ["fleet", "add", "--lock", join(dir, "fleet.lock.json"), "--receipt", receiptFile, "--repository", repository], "file"],
    ["plugin build --out", (dir: string) => ["plugin", "build", EXAMPLE_ENTRY, "--out", dir], "directory"],
  ])("%s: IO_PATH_TOO_LONG naming the limit, the path shortened, nothing created", async (_label, args, kind) => {
    for (const [dir, found] of [[longName, "a name of 300 bytes (at most 255)"], [longPath, "a path of"]] as const) {
      const r = await runCli(args(dir), { timeoutMs: 60_000 });
      expectIoFailure(r, "IO_PATH_TOO_LONG", dir.slice(0, 80), kind);
      expect(r.stderr).toContain(found);
      // The path is shown as its start and end around "…" with its length, not thousands of characters.
      expect(r.stderr).toMatch(new RegExp(`…[^ ]{60} \\(\\d{3,4} bytes\\): expected a ${kind} path this system accepts`));
      expect(r.stderr.length).toBeLessThan(700);
      expect(existsSync(join(tmpdir(), "p".repeat(250)))).toBe(false);
    }
  });
});

describe("an output directory the system accepts whose files it would not (ENAMETOOLONG below it)", () => {
  it("fetch: IO_PATH_TOO_LONG once the manifest names the files, before any blob is downloaded; nothing created", async () => {
    // A directory path of ~4,070 bytes: acceptable itself, but dist/<tarball> below it is over 4,095.
    const segments = Array.from({ length: 16 }, () => "q".repeat(250));
    let dir = join(tmpdir(), ...segments);
    dir = join(dir, "r".repeat(Math.max(1, 4070 - Buffer.byteLength(dir) - 1)));
    expect(Buffer.byteLength(dir)).toBeLessThan(4096);
    const r = await runCli(fetchArgs(dir), { timeoutMs: 60_000 });
    expectIoFailure(r, "IO_PATH_TOO_LONG", dir.slice(0, 80));
    expect(r.stderr).toMatch(/found a path of \d{4} bytes \(at most 4096\), refused as too long \(ENAMETOOLONG\); fix: choose a shorter path \[IO_PATH_TOO_LONG\]\n$/);
    expect(existsSync(join(tmpdir(), "q".repeat(250)))).toBe(false);
  });
});

describe("other commands' directories", () => {
  it("init <dir>: /proc/x and /dev/null/x are coded; a new directory works", async () => {
    expectIoFailure(await runCli(["init", "/proc/x", "--kit", "registry"], { timeoutMs: 60_000 }), "IO_DIRECTORY_UNWRITABLE", "/proc/x");
    expectIoFailure(await runCli(["init", "/dev/null/x", "--name", "x", "--kit", "registry"]), "IO_NOT_A_DIRECTORY", "/dev/null");
    const ok = await runCli(["init", join(root, "init-ok", "my-plugin"), "--repository", `oci-layout:${join(root, "init-store")}`, "--kit", "registry"]);
    expect(ok.code, ok.stderr).toBe(0);
  });

  it("plugin build --out /proc/x fails before bundling, nothing written", async () => {
    expectIoFailure(await runCli(["plugin", "build", EXAMPLE_ENTRY, "--out", "/proc/x"], { timeoutMs: 60_000 }), "IO_DIRECTORY_UNWRITABLE", "/proc/x");
  });

  it("release run --workspace and release demo --workspace under /proc", async () => {
    const source = join(root, "source");
    await mkdir(source, { recursive: true });
    // A git checkout with a commit (release run refuses anything else as its source first: RUN_SOURCE_INVALID).
    execFileSync("git", ["init", "--quiet", "--initial-branch=main"], { cwd: source });
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "--quiet", "--allow-empty", "-m", "chore: source"], { cwd: source });
    expectIoFailure(await runCli(["release", "run", "--workspace", "/proc/x", "--source", source], { env: ARMED, timeoutMs: 60_000 }), "IO_DIRECTORY_UNWRITABLE", "/proc/x");
    expectIoFailure(await runCli(["release", "demo", "--workspace", "/proc/x/ws"], { timeoutMs: 60_000 }), "IO_DIRECTORY_UNWRITABLE", "/proc/x/ws");
  });

  it("release materialize --output-dir /dev/null/x (armed) fails before touching the checkout", async () => {
    const sha = "a".repeat(40);
    expectIoFailure(await runCli(["release", "materialize", "--expected-sha", sha, "--output-dir", "/dev/null/x", "--no-remote-check"], { env: ARMED, cwd: root }), "IO_NOT_A_DIRECTORY", "/dev/null");
  });

  it("fleet add --lock under /proc or under a file: coded, no lock written", async () => {
    expectIoFailure(await runCli(["fleet", "add", "--lock", "/proc/x/fleet.lock.json", "--receipt", receiptFile, "--repository", repository], { timeoutMs: 60_000 }), "IO_DIRECTORY_UNWRITABLE", "/proc/x");
    expectIoFailure(await runCli(["fleet", "add", "--lock", "/dev/null/fleet.lock.json", "--receipt", receiptFile, "--repository", repository]), "IO_NOT_A_DIRECTORY", "/dev/null");
    // /proc and /sys themselves pass the directory's access check and refuse the file (ENOENT, EACCES): coded too.
    for (const lock of ["/proc/fleet.lock.json", "/sys/fleet.lock.json"]) {
      expectIoFailure(await runCli(["fleet", "add", "--lock", lock, "--receipt", receiptFile, "--repository", repository], { timeoutMs: 60_000 }), "IO_DIRECTORY_UNWRITABLE", lock);
    }
    const lock = join(root, "fleet", "fleet.lock.json");
    const ok = await runCli(["fleet", "add", "--lock", lock, "--receipt", receiptFile, "--repository", repository]);
    expect(ok.code, ok.stderr).toBe(0);
  });

  it("a read-only directory (permission bits binding, also for root): init into it is IO_DIRECTORY_UNWRITABLE, nothing created", async () => {
    const ro = join(root, "read-only");
    await mkdir(ro);
    await chmod(root, 0o755);
    await chmod(ro, 0o555);
    const target = join(ro, "plugin");
    const r = await runAsUnprivileged(["init", target, "--kit", "registry"]);
    expectIoFailure(r, "IO_DIRECTORY_UNWRITABLE", ro);
    expect(r.stderr).toContain("EACCES");
    expect(existsSync(target)).toBe(false);
  });
});

describe("release materialize --expected-sha shape (checked first, armed or not)", () => {
  it.each([["xyz"], ["A".repeat(40)], ["a".repeat(39)], ["a".repeat(41)], ["a".repeat(63)]])("%s: exit 2 USAGE, disarmed", async (sha) => {
    const r = await runCli(["release", "materialize", "--expected-sha", sha], { env: { SEMANTIC_RELEASE_ENABLED: undefined } });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "USAGE" });
    expect(r.stderr).toContain("--expected-sha must be a Git commit id (40 lowercase hex characters, or 64 in a SHA-256 repository)");
  });

  it("40 and 64 hex pass the shape check (disarmed: exit 0, nothing done)", async () => {
    for (const sha of ["a".repeat(40), "b".repeat(64)]) {
      const r = await runCli(["release", "materialize", "--expected-sha", sha], { env: { SEMANTIC_RELEASE_ENABLED: undefined } });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ ok: true, released: false, disarmed: true });
    }
  });

  it.each([["attach-trigger"], ["restore", "--bundle", "x.bundle"], ["build"], ["gate", "unit"]])("release %s --expected-sha xyz: exit 2", async (...args) => {
    const r = await runCli(["release", ...args, "--expected-sha", "xyz"], { cwd: root });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--expected-sha must be a Git commit id");
  });

  it("the library checks the shape before the disarm switch: RELEASE_HEAD_MISMATCH", async () => {
    await expect(materializeRelease({ expectedSha: "xyz", environment: {} })).rejects.toThrowWithCode("RELEASE_HEAD_MISMATCH");
    await expect(materializeRelease({ expectedSha: "a".repeat(40), environment: {} })).resolves.toEqual({ released: false, disarmed: true });
  });
});

describe("a layout store that cannot be inspected (a parent without search permission)", () => {
  it("fetch: PRIVACY_LAYOUT_PERMISSIONS saying why and the fix (it was PRIVACY_LAYOUT_NOT_DIRECTORY), nothing installed", async () => {
    const locked = join(root, "locked-parent");
    await mkdir(join(locked, "store"), { recursive: true });
    await chmod(locked, 0o600); // no x: the store below cannot be looked up
    try {
      const out = join(root, "locked-D");
      const r = await runAsUnprivileged(["fetch", "--reference", `oci-layout:${join(locked, "store")}@${staged.bundle.digest}`, "--output-dir", out]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toBe(`hermes-plugin-kit: cannot inspect layout store ${join(locked, "store")}: permission denied on it or a parent directory (EACCES); privacy is unproven, failing closed; fix: run as the store's owner, or give this user search (x) permission on its parents [PRIVACY_LAYOUT_PERMISSIONS]\n`);
      expect(existsSync(out)).toBe(false);
    } finally {
      await chmod(locked, 0o700);
    }
  });
});

/**
 * Run the CLI so that permission bits bind: as root, without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
 * (still uid 0, so a checkout only root may read stays readable); as the current user otherwise.
 */
function runAsUnprivileged(args: string[]): Promise<CliResult> {
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  const drop = "-dac_override,-dac_read_search";
  const argv = root ? [`--bounding-set=${drop}`, `--inh-caps=${drop}`, "--", process.execPath, CLI, ...args] : [CLI, ...args];
  return runProcess(root ? "setpriv" : process.execPath, argv, { cwd: tmpdir(), timeoutMs: 60_000 });
}
