/**
 * The CLI's per-user V8 code cache (src/cli/main.cts): written once after a command's first run,
 * used on the next, named by the bundle's SHA-256 and Node's version, and never read from or
 * written to a place someone else could have written. Every refusal costs only speed: the command's
 * output and exit code are the same. Through the built CLI (package.json `bin`, dist/src/cli/main.cjs).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "hpk-code-cache-"));
  // XDG_CACHE_HOME must exist; the CLI makes hermes-plugin-kit/v8 under it.
  mkdirSync(join(dir, "cache"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const cacheHome = () => join(dir, "cache");
const cacheDir = () => join(cacheHome(), "hermes-plugin-kit", "v8");
const env = (extra: Record<string, string> = {}) => ({ ...process.env, XDG_CACHE_HOME: cacheHome(), HERMES_PLUGIN_KIT_CODE_CACHE: "", ...extra });
const cli = (args: string[], extra: Record<string, string> = {}) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env: env(extra), timeout: 60_000 });
/** Whether loadCli(argv) in a fresh process used a cache, and which file it names. */
function probe(argv: string[], extra: Record<string, string> = {}): { cacheAccepted: boolean; cacheFile: string | null } {
  const script = `const m = require(${JSON.stringify(CLI)}); const r = m.loadCli(${JSON.stringify(argv)}); process.stdout.write(JSON.stringify({ cacheAccepted: r.cacheAccepted, cacheFile: r.cacheFile ?? null }));`;
  const run = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", env: env(extra), timeout: 60_000 });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as { cacheAccepted: boolean; cacheFile: string | null };
}
const bundleSha = () => (JSON.parse(readFileSync(join(CLI, "..", "cli-bundle.json"), "utf8")) as { sha256: string }).sha256;

describe("CLI code cache", () => {
  it("the first run writes the command's cache (0600 in a 0700 directory), the next run uses it, output unchanged", () => {
    expect(probe(["help"]).cacheAccepted).toBe(false);
    const first = cli(["help", "fetch"]);
    expect(first.status, first.stderr).toBe(0);
    const files = readdirSync(cacheDir());
    expect(files).toHaveLength(1);
    // <bundle sha256>-<the installed file's device.inode.ctime.size, base 36>-<node>-v8-<v8>-<arch>-<command>.cache
    expect(files[0]).toMatch(new RegExp(`^${bundleSha()}-[0-9a-z]+\\.[0-9a-z]+\\.[0-9a-z]+\\.[0-9a-z]+-${process.version.replace(/\./g, "\\.")}-v8-.*-${process.arch}-help\\.cache$`));
    expect(statSync(cacheDir()).mode & 0o777).toBe(0o700);
    expect(statSync(join(cacheDir(), files[0]!)).mode & 0o777).toBe(0o600);
    expect(probe(["help"])).toEqual({ cacheAccepted: true, cacheFile: join(cacheDir(), files[0]!) });
    const second = cli(["help", "fetch"]);
    expect([second.status, second.stdout, second.stderr]).toEqual([first.status, first.stdout, first.stderr]);
    expect(readdirSync(cacheDir())).toEqual(files);
  });

  it("importArea: the src/oci barrel from the fetch bundle (bench-oci-phase's path) with a cache of its own, used on the next run; an unknown specifier is refused", () => {
    const script = `const m = require(${JSON.stringify(CLI)});
      m.importArea("../oci/index.js").then(async (oci) => {
        const [area] = m.loadedAreaBundles();
        m.saveAreaCaches();
        const refused = await m.importArea("../nope/index.js").then(() => "loaded", (e) => e.message);
        const badName = await m.importArea("../oci/index.js", "../x").then(() => "loaded", (e) => e.message);
        process.stdout.write(JSON.stringify({ fetchBlobToFile: typeof oci.fetchBlobToFile, openTarget: typeof oci.openTarget, accepted: area.cacheAccepted, file: area.location.file, refused, badName }));
      });`;
    const run = () => {
      const result = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", env: env(), timeout: 60_000 });
      expect(result.status, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as { fetchBlobToFile: string; openTarget: string; accepted: boolean; file: string; refused: string; badName: string };
    };
    const first = run();
    const areaSha = (JSON.parse(readFileSync(join(CLI, "..", "cli-bundle.json"), "utf8")) as { areas: Record<string, { sha256: string }> }).areas["fetch-bundle.cjs"]!.sha256;
    expect(first).toMatchObject({
      fetchBlobToFile: "function",
      openTarget: "function",
      accepted: false,
      refused: "no area bundle holds ../nope/index.js; rebuild the CLI (npm run build)",
      badName: 'cache name "../x" must be "tool" or start with "tool-" (lowercase letters, digits, dashes)',
    });
    // Named for no command of the CLI (importArea's default cache name is "tool"): a CLI command's cache is never this one.
    expect(first.file.startsWith(join(cacheDir(), `${areaSha}-`)) && first.file.endsWith("-tool.cache")).toBe(true);
    expect(run()).toMatchObject({ accepted: true, file: first.file });
  });

  it("one cache per top-level command (cli-bundle.json lists them); help has its own, anything else shares 'other'", () => {
    cli(["help"]);
    cli(["--help"]);
    cli(["fetc"]);
    cli(["verify-final-receipt", "--help"]);
    const files = readdirSync(cacheDir());
    expect(files).toHaveLength(3);
    for (const command of ["help", "other", "verify-final-receipt"]) expect(files.filter((f) => f.endsWith(`-${process.arch}-${command}.cache`)), command).toHaveLength(1);
  });

  it.each(["0", "false", "OFF", "no"])("HERMES_PLUGIN_KIT_CODE_CACHE=%s: nothing read or written", (value) => {
    const run = cli(["help"], { HERMES_PLUGIN_KIT_CODE_CACHE: value });
    expect(run.status).toBe(0);
    expect(readdirSync(cacheHome())).toEqual([]);
    expect(probe(["help"], { HERMES_PLUGIN_KIT_CODE_CACHE: value })).toEqual({ cacheAccepted: false, cacheFile: null });
  });

  it("HERMES_PLUGIN_KIT_CODE_CACHE=1 (or any other value) keeps the cache on", () => {
    expect(cli(["help"], { HERMES_PLUGIN_KIT_CODE_CACHE: "1" }).status).toBe(0);
    expect(probe(["help"], { HERMES_PLUGIN_KIT_CODE_CACHE: "1" }).cacheAccepted).toBe(true);
  });

  it("a cache directory others may write is neither read nor written", () => {
    cli(["help"]);
    expect(probe(["help"]).cacheAccepted).toBe(true);
    chmodSync(cacheDir(), 0o777);
    expect(probe(["help"]).cacheAccepted).toBe(false);
    cli(["help", "fetch"]);
    cli(["fetch", "--help"]);
    expect(readdirSync(cacheDir()).filter((f) => !f.endsWith("-help.cache"))).toEqual([]);
    chmodSync(cacheDir(), 0o700);
    expect(probe(["help"]).cacheAccepted).toBe(true);
  });

  it("a symbolic link in place of the cache file is not followed", () => {
    cli(["help"]);
    const file = probe(["help"]).cacheFile as string;
    const real = join(dir, "elsewhere.cache");
    writeFileSync(real, readFileSync(file));
    unlinkSync(file);
    symlinkSync(real, file);
    expect(probe(["help"]).cacheAccepted).toBe(false);
    const run = cli(["help", "fetch"]);
    expect(run.status).toBe(0);
  });

  it("a cache with one byte flipped in its middle is not handed to V8 (which crashed or misbehaved on it); it is rewritten", () => {
    const reference = cli(["help", "fetch"], { HERMES_PLUGIN_KIT_CODE_CACHE: "0" });
    cli(["help"]);
    const file = probe(["help"]).cacheFile as string;
    const bytes = readFileSync(file);
    for (const at of [Math.floor(bytes.length / 2), 1000, bytes.length - 1]) {
      const flipped = Buffer.from(bytes);
      flipped[at] = (flipped[at] as number) ^ 0xff;
      writeFileSync(file, flipped);
      expect(probe(["help"]).cacheAccepted, `byte ${at}`).toBe(false);
      const run = cli(["help", "fetch"]);
      expect([run.status, run.stdout, run.stderr], `byte ${at}`).toEqual([reference.status, reference.stdout, reference.stderr]);
      // The run that found it broken wrote a good one again.
      expect(probe(["help"]).cacheAccepted, `byte ${at}`).toBe(true);
    }
  });

  it("a cache cut short (a write that did not finish) is not handed to V8; the command answers the same and rewrites it", () => {
    const reference = cli(["help", "fetch"], { HERMES_PLUGIN_KIT_CODE_CACHE: "0" });
    cli(["help"]);
    const file = probe(["help"]).cacheFile as string;
    const bytes = readFileSync(file);
    for (const keep of [bytes.length - 1, bytes.length - 2, Math.floor(bytes.length / 2), 1]) {
      writeFileSync(file, bytes.subarray(0, keep));
      expect(probe(["help"]).cacheAccepted, `${keep} bytes`).toBe(false);
      const run = cli(["help", "fetch"]);
      expect([run.status, run.stdout, run.stderr], `${keep} bytes`).toEqual([reference.status, reference.stdout, reference.stderr]);
      expect(probe(["help"]).cacheAccepted, `${keep} bytes`).toBe(true);
    }
  });

  it("a cache whose two copies agree but whose bytes are no V8 cache is refused by V8; the command answers the same", () => {
    const reference = cli(["help", "fetch"], { HERMES_PLUGIN_KIT_CODE_CACHE: "0" });
    cli(["help"]);
    const file = probe(["help"]).cacheFile as string;
    const data = Buffer.alloc(8192, 0x5a);
    writeFileSync(file, Buffer.concat([data, data]));
    expect(probe(["help"]).cacheAccepted).toBe(false);
    const run = cli(["help", "fetch"]);
    expect([run.status, run.stdout, run.stderr]).toEqual([reference.status, reference.stdout, reference.stderr]);
  });

  it("a FIFO in place of the cache file neither blocks nor changes the answer", () => {
    cli(["help"]);
    const file = probe(["help"]).cacheFile as string;
    unlinkSync(file);
    expect(spawnSync("mkfifo", [file]).status).toBe(0);
    const run = spawnSync(process.execPath, [CLI, "help", "fetch"], { encoding: "utf8", env: env(), timeout: 20_000 });
    expect(run.error).toBeUndefined();
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("Usage: hermes-plugin-kit fetch");
  });

  it.each([["/proc"], ["/proc/self"], ["/sys"]])("XDG_CACHE_HOME=%s: the command ends (no directory loop) with its normal answer", (where) => {
    const run = spawnSync(process.execPath, [CLI, "help", "fetch"], { encoding: "utf8", env: env({ XDG_CACHE_HOME: where }), timeout: 20_000 });
    expect(run.error).toBeUndefined();
    expect([run.status, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).toContain("Usage: hermes-plugin-kit fetch");
  });

  it("only the last directories are made: an XDG_CACHE_HOME or HOME that does not exist is not created", () => {
    const missing = join(dir, "no", "such", "place");
    const env2 = { XDG_CACHE_HOME: missing, HOME: join(dir, "nohome", "deep") };
    const run = cli(["help", "fetch"], env2);
    expect(run.status).toBe(0);
    expect(existsSync(join(dir, "no"))).toBe(false);
    expect(existsSync(join(dir, "nohome"))).toBe(false);
    // An existing HOME without .cache gets .cache/hermes-plugin-kit/v8, 0700 each.
    mkdirSync(join(dir, "home"));
    cli(["help"], { XDG_CACHE_HOME: "", HOME: join(dir, "home") });
    for (const sub of [".cache", ".cache/hermes-plugin-kit", ".cache/hermes-plugin-kit/v8"]) expect(statSync(join(dir, "home", sub)).mode & 0o777, sub).toBe(0o700);
  });

  it("`fetch` also runs the fetch bundle with a cache of its own: written after the first run, used by the next, kept as current by later writes", () => {
    const ids = JSON.parse(readFileSync(join(CLI, "..", "cli-bundle.json"), "utf8")) as { sha256: string; areas: Record<string, { sha256: string }> };
    const fetchSha = ids.areas["fetch-bundle.cjs"]!.sha256;
    // Port 9 on the loopback: nothing listens, so the run ends at the privacy gate's first request, after loading the fetch bundle.
    const args = ["fetch", "--plain-http", "--reference", `127.0.0.1:9/acme/p@sha256:${"c".repeat(64)}`, "--output-dir", join(dir, "out")];
    // In one process: load the CLI, run the command, report both bundles' cache use, then save as main() does.
    const script = `const m = require(${JSON.stringify(CLI)}); const r = m.loadCli(${JSON.stringify(args)});
      r.bundle.runCli(${JSON.stringify(args)}).then((code) => { const areas = m.loadedAreaBundles(); m.saveCodeCache(r);
      require("node:fs").writeSync(1, JSON.stringify({ code, cli: r.cacheAccepted, areas: areas.map((a) => a.cacheAccepted) })); });`;
    const run = () => {
      const result = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", env: env(), timeout: 60_000 });
      expect(result.stderr).toContain("127.0.0.1:9");
      return JSON.parse(result.stdout) as { code: number; cli: boolean; areas: boolean[] };
    };
    expect(run()).toEqual({ code: 1, cli: false, areas: [false] });
    const files = readdirSync(cacheDir()).sort();
    expect(files.map((f) => f.slice(0, 64)).sort()).toEqual([bundleSha(), fetchSha].sort());
    expect(files.every((f) => f.endsWith("-fetch.cache"))).toBe(true);
    expect(run()).toEqual({ code: 1, cli: true, areas: [true] });
    // A command that does not fetch never loads it.
    const help = spawnSync(process.execPath, ["-e", `const m = require(${JSON.stringify(CLI)}); const r = m.loadCli(["help"]); r.bundle.runCli(["help"]).then(() => require("node:fs").writeSync(2, "AREAS " + m.loadedAreaBundles().length + "\\n"));`], { encoding: "utf8", env: env(), timeout: 60_000 });
    expect(help.stderr).toContain("AREAS 0");
    // The fetch bundle's cache is current: writing another command's cache (and sweeping stale ones) keeps it even when old.
    const eightDays = (Date.now() - 8 * 24 * 3600 * 1000) / 1000;
    const fetchCache = join(cacheDir(), files.find((f) => f.startsWith(fetchSha))!);
    utimesSync(fetchCache, eightDays, eightDays);
    cli(["help"]);
    expect(existsSync(fetchCache)).toBe(true);
  });

  it("only a command that succeeded writes a cache: a failed fetch writes none, a successful fleet command writes both bundles' caches", () => {
    const failed = cli(["fetch", "--plain-http", "--reference", `127.0.0.1:9/acme/p@sha256:${"c".repeat(64)}`, "--output-dir", join(dir, "out")]);
    expect(failed.status).toBe(1);
    expect(existsSync(cacheDir()) ? readdirSync(cacheDir()) : []).toEqual([]);
    writeFileSync(join(dir, "lock.json"), JSON.stringify({ schema_version: 1, plugins: [] }));
    const listed = cli(["fleet", "list", "--lock", join(dir, "lock.json")]);
    expect(listed.status, listed.stderr).toBe(0);
    const ids = JSON.parse(readFileSync(join(CLI, "..", "cli-bundle.json"), "utf8")) as { sha256: string; areas: Record<string, { sha256: string }> };
    const files = readdirSync(cacheDir());
    expect(files.map((f) => f.slice(0, 64)).sort()).toEqual([ids.sha256, ids.areas["fetch-bundle.cjs"]!.sha256].sort());
    expect(files.every((f) => f.endsWith("-fleet.cache"))).toBe(true);
  });

  it("a cache file that others may write (mode 0666, 0620, 0602) is not used", () => {
    expect(probe(["help"]).cacheAccepted).toBe(false);
    cli(["help"]);
    const file = join(cacheDir(), readdirSync(cacheDir())[0]!);
    expect(probe(["help"]).cacheAccepted).toBe(true);
    for (const mode of [0o666, 0o620, 0o602]) {
      chmodSync(file, mode);
      expect(probe(["help"]).cacheAccepted, mode.toString(8)).toBe(false);
    }
    chmodSync(file, 0o600);
    expect(probe(["help"]).cacheAccepted).toBe(true);
  });

  it("a HOME (or XDG_CACHE_HOME) owned by another user gets no cache directory: root with another user's HOME leaves nothing there", () => {
    const foreign = join(dir, "foreign-home");
    mkdirSync(foreign);
    chownSync(foreign, 65534, 65534);
    for (const extra of [{ XDG_CACHE_HOME: "", HOME: foreign }, { XDG_CACHE_HOME: foreign }] as Record<string, string>[]) {
      const run = cli(["help", "fetch"], extra);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain("Usage: hermes-plugin-kit fetch");
      expect(readdirSync(foreign)).toEqual([]);
    }
  });

  it("an edit of the installed bundle that keeps its length does not run the old cache: the answer follows the file", async () => {
    // A copy of dist/ (the bundle finds the error modules beside it), so the shared build is untouched.
    const copy = join(dir, "dist");
    cpSync(join(CLI, "..", "..", ".."), copy, { recursive: true });
    cpSync(join(CLI, "..", "..", "..", "..", "package.json"), join(dir, "package.json"));
    const copyCli = join(copy, "src", "cli", "main.cjs");
    const help = () => spawnSync(process.execPath, [copyCli, "help", "fetch"], { encoding: "utf8", env: env(), timeout: 60_000 });
    expect(help().stdout).toContain("Download a digest-pinned release bundle");
    expect(readdirSync(cacheDir())).toHaveLength(1);
    const bundleFile = join(copy, "src", "cli", "cli-bundle.cjs");
    const before = readFileSync(bundleFile, "utf8");
    expect(before).toContain("Download a digest-pinned release bundle");
    writeFileSync(bundleFile, before.replace("Download a digest-pinned release bundle", "DOWNLOAD a digest-pinned release bundle"));
    expect(readFileSync(bundleFile).length).toBe(Buffer.byteLength(before));
    expect(help().stdout).toContain("DOWNLOAD a digest-pinned release bundle");
    // The edited file has a cache of its own now; the old one is another file's.
    expect(readdirSync(cacheDir())).toHaveLength(2);
    expect(help().stdout).toContain("DOWNLOAD a digest-pinned release bundle");
  });

  it("writing a cache removes other bundles' caches untouched for 7 days, and keeps recent ones", () => {
    mkdirSync(cacheDir(), { recursive: true, mode: 0o700 });
    chmodSync(join(cacheHome(), "hermes-plugin-kit"), 0o700);
    const old = join(cacheDir(), `${"0".repeat(64)}-v0-other.cache`);
    const recent = join(cacheDir(), `${"1".repeat(64)}-v0-other.cache`);
    const unrelated = join(cacheDir(), "notes.txt");
    for (const f of [old, recent, unrelated]) writeFileSync(f, "x");
    const eightDays = (Date.now() - 8 * 24 * 3600 * 1000) / 1000;
    utimesSync(old, eightDays, eightDays);
    utimesSync(unrelated, eightDays, eightDays);
    cli(["help"]);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    expect(existsSync(unrelated)).toBe(true);
  });

  it("a cache directory that cannot be made (XDG_CACHE_HOME under a file) changes nothing but speed", () => {
    writeFileSync(join(dir, "file"), "x");
    const run = cli(["help", "fetch"], { XDG_CACHE_HOME: join(dir, "file", "cache") });
    expect(run.status).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("Usage: hermes-plugin-kit fetch");
  });
});
