#!/usr/bin/env node
/**
 * CommonJS entry of the `hermes-plugin-kit` binary (package.json `bin`; `dist/src/cli/main.js`
 * runs it too). It starts the CLI from one file, `cli-bundle.cjs` (scripts/bundle-cli.mjs), so a run
 * does not start Node's ES module loader, and compiles that file with a V8 code cache kept per user,
 * so a run does not parse it either: measured by `npm run bench:cli`.
 *
 * - The bundle holds the command wiring, commander and the offline verify path (src/contract with
 *   zod), the latter initialised only when an action needs it. Everything else (the areas, every
 *   other package) stays in `dist/` and loads through {@link importExternal}: a real `import()` from
 *   this module, which sits in the same directory as the bundle, so relative specifiers and package
 *   lookups resolve as they did from the bundle's own path.
 * - The code cache is made here, from the installed bundle, never shipped: the package holds only
 *   source a reviewer can read. It lives in `$XDG_CACHE_HOME/hermes-plugin-kit/v8` (an existing
 *   absolute `XDG_CACHE_HOME`), else `$HOME/.cache/hermes-plugin-kit/v8` (an existing `HOME`): at most
 *   these last two or three directories are made, one at a time, mode 0700. One file per top-level
 *   command (`cli-bundle.json` lists them; anything else shares `other`), named by the bundle's
 *   SHA-256, the installed file's identity (device, inode, change time, size), Node's and V8's
 *   versions and the architecture: V8 checks only a cache's source length, so the name keeps a cache
 *   of another bundle, or of this file before an edit, from being used. A release build of V8 does not
 *   check the cache's own bytes either (a flipped byte can crash the process or change what the
 *   code does), so each file holds the cache twice, and a copy goes to V8 only when the two are
 *   byte-for-byte equal (a `memcmp`, where a hash would cost loading `node:crypto`, ~4 ms of a
 *   `--help`). It guards against corruption (a flipped bit, a short write), not against someone who
 *   can write the file: that is only you (below).
 * - A cache is read only from a directory that is yours and writable by nobody else (it and its
 *   parent `hermes-plugin-kit`), from a regular file you own (opened without following a link or
 *   waiting on a FIFO). Anything else, a cache V8 refuses, or `HERMES_PLUGIN_KIT_CODE_CACHE=0` costs
 *   only speed: the bundle is compiled from source, and after a command that succeeded (exit 0) the
 *   cache is written (temporary file, then rename) when there was none. Writing one also removes cache files of
 *   other bundles untouched for 7 days.
 * - `--version` alone reads package.json and loads no bundle.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Script } from "node:vm";

/** What the bundle exports (scripts/bundle-cli.mjs, its entry). */
interface CliBundle {
  runCli(argv: string[]): Promise<number>;
}

/** What the build records about the bundles (`cli-bundle.json`). */
interface BundleId {
  sha256: string;
  /** Top-level command names: each has a cache file of its own. */
  commands: readonly string[];
  /**
   * The specifiers (relative to this directory) the CLI bundle imports that another bundle beside it
   * answers (the fetch bundle, scripts/bundle-cli.mjs), with that bundle's file name and SHA-256.
   */
  areas: ReadonlyMap<string, { file: string; sha256: string }>;
}

/** Where a bundle's code cache for this run is: the directories to make and the file. */
interface CacheLocation {
  dirs: string[];
  file: string;
}

/** The signals the CLI answers (src/cli/interrupt.ts): a run holds handlers for them from its start. */
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** File names beside this module. */
const BUNDLE_FILE = join(__dirname, "cli-bundle.cjs");
const BUNDLE_ID_FILE = join(__dirname, "cli-bundle.json");
/** Environment variable that turns the code cache off (`0`, `false`, `off` or `no`, in any case). */
export const CODE_CACHE_ENV = "HERMES_PLUGIN_KIT_CODE_CACHE";
/** Largest cache file read (bytes): two copies of a command's cache, 0.2-0.4 MB each. */
const MAX_CACHE_BYTES = 16 * 1024 * 1024;
/** Cache files of other bundles older than this are removed when a cache is written (ms). */
const STALE_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The bundle's wrapper: CommonJS's five names plus `__hpkImport`, which the build substitutes for
 * every `import()` of a module outside the bundle (code run by `vm.Script` has no `import()` of its
 * own without an experimental flag).
 */
function wrap(source: string): string {
  return `(function (exports, require, module, __filename, __dirname, __hpkImport) {${source}\n})`;
}

/** The bundles another bundle's import() was answered from in this run (by file name), for {@link saveCodeCache}. */
const loadedAreas = new Map<string, LoadedBundle>();
/** The command line and options of this run's {@link loadCli}: an area bundle's cache is named by the same command. */
let runOptions: RunOptions = { argv: [], cache: true, env: process.env };

/** How this process loads bundles: the command line (it names the caches), whether to cache, the environment; `cacheName` names the caches instead of the command (importArea). */
interface RunOptions {
  argv: readonly string[];
  cache: boolean;
  env: NodeJS.ProcessEnv;
  cacheName?: string;
}

/**
 * `import()` of a module outside the bundle: one of the fetch bundle's modules comes from that bundle
 * (compiled once per process, with its own code cache); anything else is a real `import()` resolved
 * from this directory (where the bundles are).
 */
function importExternal(specifier: string): Promise<unknown> {
  const area = bundleId()?.areas.get(specifier);
  if (area === undefined) return import(specifier);
  try {
    let loaded = loadedAreas.get(area.file);
    if (loaded === undefined) {
      loaded = loadBundle(join(__dirname, area.file), area.sha256, runOptions);
      loadedAreas.set(area.file, loaded);
    }
    const modules = (loaded.exports as { modules?: Record<string, unknown> }).modules;
    const namespace = modules?.[specifier];
    if (namespace === undefined) throw new Error(`${area.file} does not hold ${specifier}; rebuild the CLI (npm run build)`);
    return Promise.resolve(namespace);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A cache file's bytes for `data`: two copies of it (see the module comment). */
export function cacheFileBytes(data: Uint8Array): Buffer {
  return Buffer.concat([data, data]);
}

/** The cache in a cache file's bytes: its first half when both halves are equal; else undefined. */
export function cacheOfFileBytes(bytes: Buffer): Buffer | undefined {
  if (bytes.length === 0 || bytes.length % 2 !== 0) return undefined;
  const half = bytes.length / 2;
  const data = bytes.subarray(0, half);
  return data.equals(bytes.subarray(half)) ? data : undefined;
}

/** True when `dir` is a directory (not a link) owned by us that nobody else may write. */
function privateDirectory(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && (typeof process.getuid !== "function" || st.uid === process.getuid()) && (st.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/**
 * True when `dir` exists as a directory (a link to one counts) that is ours: a cache is never made in
 * somebody else's home (root running with another user's HOME, as `sudo` can leave it, would leave a
 * root-owned `~/.cache` there).
 */
function isOwnDirectory(dir: string): boolean {
  try {
    const st = statSync(dir);
    return st.isDirectory() && (typeof process.getuid !== "function" || st.uid === process.getuid());
  } catch {
    return false;
  }
}

/**
 * Where the caches live: `{ base, make }`, `make` being the directories under `base` (which must
 * exist) to create in order; undefined when there is no usable place.
 */
function cacheLocation(env: NodeJS.ProcessEnv): { base: string; make: string[] } | undefined {
  const xdg = env["XDG_CACHE_HOME"];
  if (xdg !== undefined && xdg.startsWith("/") && isOwnDirectory(xdg)) return { base: xdg, make: ["hermes-plugin-kit", "v8"] };
  // node:os only when HOME is unset (it is not loaded otherwise).
  const home = env["HOME"] !== undefined && env["HOME"] !== "" ? env["HOME"] : (require("node:os") as typeof import("node:os")).homedir();
  if (home.startsWith("/") && isOwnDirectory(home)) return { base: home, make: [".cache", "hermes-plugin-kit", "v8"] };
  return undefined;
}

/** `cli-bundle.json` as read once per process (undefined: missing or malformed). */
let recordedId: { value: BundleId | undefined } | undefined;

/** The recorded bundle ids, or undefined when `cli-bundle.json` is missing or malformed. */
function bundleId(): BundleId | undefined {
  if (recordedId !== undefined) return recordedId.value;
  recordedId = { value: undefined };
  try {
    const recorded = JSON.parse(readFileSync(BUNDLE_ID_FILE, "utf8")) as { sha256?: unknown; commands?: unknown; areas?: unknown };
    const isSha = (value: unknown): value is string => typeof value === "string" && /^[0-9a-f]{64}$/.test(value);
    if (!isSha(recorded.sha256)) return undefined;
    const commands = Array.isArray(recorded.commands) ? recorded.commands.filter((c): c is string => typeof c === "string" && /^[a-z][a-z-]{0,31}$/.test(c)) : [];
    const areas = new Map<string, { file: string; sha256: string }>();
    if (recorded.areas !== null && typeof recorded.areas === "object") {
      for (const [file, area] of Object.entries(recorded.areas as Record<string, { sha256?: unknown; modules?: unknown }>)) {
        // Only a bundle file beside this one, and only relative specifiers of dist/ modules.
        if (!/^[a-z][a-z-]{0,31}\.cjs$/.test(file) || !isSha(area?.sha256) || !Array.isArray(area.modules)) continue;
        for (const spec of area.modules) if (typeof spec === "string" && /^\.\.?\/[a-z0-9/.-]+\.js$/.test(spec)) areas.set(spec, { file, sha256: area.sha256 });
      }
    }
    recordedId = { value: { sha256: recorded.sha256, commands, areas } };
  } catch {
    // no id: the bundles are compiled without a cache
  }
  return recordedId.value;
}

/**
 * The installed bundle file's identity (device, inode, change time in ns, size), in the cache's name:
 * V8 checks only a cache's source length, and the recorded SHA-256 names the build, not these bytes,
 * so an edit of the installed file (a patch keeping its length) must not find the old cache. Any
 * write changes the change time, which no user tool can set back. Undefined when it cannot be read.
 */
function fileStamp(file: string): string | undefined {
  try {
    const st = statSync(file, { bigint: true });
    return [st.dev, st.ino, st.ctimeNs, st.size].map((n) => n.toString(36)).join(".");
  } catch {
    return undefined;
  }
}

/**
 * Where this run's code cache of a bundle is (the CLI bundle's unless `bundle` names another): the
 * directories to make and the file (`<sha256>-<file stamp>-<node>-<command>.cache`); undefined when
 * caching is off or impossible.
 */
export function codeCacheFile(argv: readonly string[], env: NodeJS.ProcessEnv = process.env, bundle?: { sha256: string; file: string }, cacheName?: string): CacheLocation | undefined {
  if (/^(0|false|off|no)$/i.test(env[CODE_CACHE_ENV] ?? "") || process.platform === "win32") return undefined;
  const id = bundleId();
  if (id === undefined) return undefined;
  const bundleSha = bundle?.sha256 ?? id.sha256;
  const stamp = fileStamp(bundle?.file ?? BUNDLE_FILE);
  if (stamp === undefined) return undefined;
  const location = cacheLocation(env);
  if (location === undefined) return undefined;
  // `--quiet`/`--verbose` may come before the command (src/cli/program.ts moves them after it).
  const first = argv.find((arg) => arg !== "--quiet" && arg !== "--verbose");
  const command = cacheName ?? (first !== undefined && (id.commands.includes(first) || first === "help") ? first : "other");
  const node = `${process.version}-v8-${process.versions.v8}-${process.arch}`.replace(/[^0-9A-Za-z.-]/g, "_");
  const dirs: string[] = [];
  let dir = location.base;
  for (const name of location.make) dirs.push((dir = join(dir, name)));
  return { dirs, file: join(dir, `${bundleSha}-${stamp}-${node}-${command}.cache`) };
}

/** The cache data at `file` (its two copies equal) when it is a regular file we own under private directories; else undefined. */
function readCache(location: CacheLocation): Buffer | undefined {
  if (!location.dirs.slice(-2).every(privateDirectory)) return undefined;
  let fd: number | undefined;
  try {
    // O_NOFOLLOW: a symbolic link in place of the cache is refused; O_NONBLOCK: a FIFO does not hang the open.
    fd = openSync(location.file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    // Yours, and writable by nobody else: a file others may write could hold anything by the next run.
    if (!st.isFile() || (typeof process.getuid === "function" && st.uid !== process.getuid()) || (st.mode & 0o022) !== 0 || st.size === 0 || st.size > MAX_CACHE_BYTES) return undefined;
    const bytes = Buffer.allocUnsafe(st.size);
    let read = 0;
    while (read < st.size) {
      const n = readSync(fd, bytes, read, st.size - read, read);
      if (n === 0) return undefined;
      read += n;
    }
    return cacheOfFileBytes(bytes);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Make the cache directories one at a time (mode 0700; none recursively); true when the last is private. */
function makeDirectories(dirs: readonly string[]): boolean {
  for (const dir of dirs) {
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
    }
  }
  return dirs.slice(-2).every(privateDirectory);
}

/** Remove cache files of other builds' bundles (and temporary files) untouched for {@link STALE_MS}; bounded by one listing. */
function removeStale(dir: string): void {
  const current = bundleId();
  // The name prefixes of the installed bundles as they are now (each `<sha256>-<file stamp>-`).
  const bundles = [{ sha256: current?.sha256, file: BUNDLE_FILE }, ...[...new Map([...(current?.areas.values() ?? [])].map((a) => [a.file, a])).values()].map((a) => ({ sha256: a.sha256, file: join(__dirname, a.file) }))];
  const prefixes = bundles.flatMap(({ sha256, file }) => {
    const stamp = fileStamp(file);
    return sha256 === undefined || stamp === undefined ? [] : [`${sha256}-${stamp}-`];
  });
  const now = Date.now();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names.slice(0, 1000)) {
    if (!/\.(cache|tmp)$/.test(name) || (name.endsWith(".cache") && prefixes.some((prefix) => name.startsWith(prefix)))) continue;
    try {
      const st = lstatSync(join(dir, name));
      if (st.isFile() && now - st.mtimeMs > STALE_MS) unlinkSync(join(dir, name));
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
}

/** Write `script`'s code cache (two copies) to the run's file: temporary file, then rename; every failure is ignored. */
function writeCache(location: CacheLocation, script: Script): void {
  const temporary = `${location.file}.${process.pid}.tmp`;
  try {
    if (!makeDirectories(location.dirs)) return;
    const data = script.createCachedData();
    writeFileSync(temporary, cacheFileBytes(data), { mode: 0o600, flag: "wx" });
    renameSync(temporary, location.file);
    removeStale(location.dirs[location.dirs.length - 1] as string);
  } catch {
    try {
      unlinkSync(temporary);
    } catch {
      // nothing was written
    }
  }
}

/** A compiled bundle: its exports, the script, whether a code cache was used, and where it is kept. */
export interface LoadedBundle {
  exports: unknown;
  script: Script;
  /** A code cache was read, its two copies were equal, and V8 accepted it. */
  cacheAccepted: boolean;
  /** Where the cache goes when caching is on (written by {@link saveCodeCache} when none was accepted). */
  location: CacheLocation | undefined;
}

/** The CLI bundle as loaded: {@link LoadedBundle} with its exports typed. */
export interface LoadedCli extends LoadedBundle {
  bundle: CliBundle;
  /** The cache file of this run when caching is on. */
  cacheFile: string | undefined;
}

/** Compile and run the bundle `file` (SHA-256 `sha256`, which names its cache) with this run's code cache when there is a good one. */
function loadBundle(file: string, sha256: string | undefined, options: RunOptions): LoadedBundle {
  const source = wrap(readFileSync(file, "utf8"));
  const location = !options.cache ? undefined : codeCacheFile(options.argv, options.env, sha256 === undefined ? undefined : { sha256, file }, options.cacheName);
  const cachedData = location === undefined ? undefined : readCache(location);
  const script = new Script(source, { filename: file, ...(cachedData === undefined ? {} : { cachedData }) });
  const cacheAccepted = cachedData !== undefined && script.cachedDataRejected !== true;
  const module = { exports: {} as unknown };
  const fn = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string, load: typeof importExternal) => void;
  fn(module.exports, require, module, file, __dirname, importExternal);
  return { exports: module.exports, script, cacheAccepted, location };
}

/**
 * Compile and run the CLI bundle, with this user's code cache for `argv`'s command when there is one,
 * it is intact, and V8 accepts it (`options.cache: false` skips it). A bundle the CLI bundle imports
 * from (the fetch bundle) is loaded the same way, with the same options, when first imported.
 */
export function loadCli(argv: readonly string[] = [], options: { cache?: boolean; env?: NodeJS.ProcessEnv } = {}): LoadedCli {
  runOptions = { argv, cache: options.cache !== false, env: options.env ?? process.env };
  const loaded = loadBundle(BUNDLE_FILE, undefined, runOptions);
  return { ...loaded, bundle: loaded.exports as CliBundle, cacheFile: loaded.location?.file };
}

/**
 * A module of the fetch bundle (a specifier `cli-bundle.json` lists under `areas`, such as
 * `../oci/index.js`, the src/oci barrel), loaded as the CLI loads it: compiled once per process with a
 * code cache of its own, without the CLI bundle. For tools that run the transport as the CLI ships it
 * without a command line (`scripts/bench-oci-phase.mjs`); call {@link saveAreaCaches} after a run that
 * succeeded. `cacheName` (`tool-` and lowercase letters, digits, `-`; default `tool`) names the cache
 * as a command does, so that each use keeps what it compiled (a cache is never rewritten once used).
 * Rejects for a specifier no area bundle answers or a malformed name.
 */
export function importArea(specifier: string, cacheName = "tool"): Promise<unknown> {
  if (!/^tool(-[a-z0-9]{1,24}){0,3}$/.test(cacheName)) return Promise.reject(new Error(`cache name ${JSON.stringify(cacheName)} must be "tool" or start with "tool-" (lowercase letters, digits, dashes)`));
  if (bundleId()?.areas.get(specifier) === undefined) return Promise.reject(new Error(`no area bundle holds ${specifier}; rebuild the CLI (npm run build)`));
  runOptions = { argv: [], cache: true, env: process.env, cacheName };
  return importExternal(specifier);
}

/** Write the code cache of each area bundle loaded by {@link importArea} that ran without an accepted one. */
export function saveAreaCaches(): void {
  for (const bundle of loadedAreas.values()) {
    if (bundle.location !== undefined && !bundle.cacheAccepted) writeCache(bundle.location, bundle.script);
  }
}

/** The bundles loaded so far besides the CLI bundle (the fetch bundle once a command imported from it). */
export function loadedAreaBundles(): LoadedBundle[] {
  return [...loadedAreas.values()];
}

/**
 * After a command: write the code cache of each bundle it ran (the CLI bundle and any area bundle) when
 * caching is on and none was accepted (it now holds what the command compiled).
 */
export function saveCodeCache(loaded: LoadedBundle): void {
  for (const bundle of [loaded, ...loadedAreas.values()]) {
    if (bundle.location !== undefined && !bundle.cacheAccepted) writeCache(bundle.location, bundle.script);
  }
}

/** `version` of hermes-plugin-kit's package.json: the nearest one above this module with that name. */
function packageVersion(): string {
  for (let up = 2; up <= 4; up += 1) {
    let text: string;
    try {
      text = readFileSync(join(__dirname, ...Array<string>(up).fill(".."), "package.json"), "utf8");
    } catch {
      continue;
    }
    const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
    if (pkg.name === "hermes-plugin-kit" && typeof pkg.version === "string") return pkg.version;
  }
  throw new Error("hermes-plugin-kit's package.json was not found above the CLI module");
}

/**
 * Run the CLI with `process.argv`; sets `process.exitCode`. Output goes to descriptor 1 without
 * `process.stdout` where it can (the bundle's `writeStdout`, src/cli/output.ts, has the rules); a
 * closed stdout (`... | head -1`) ends the run quietly instead of with a stack trace.
 */
export function main(): void {
  const argv = process.argv.slice(2);
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
    const line = Buffer.from(`${packageVersion()}\n`);
    let written = 0;
    try {
      written = writeSync(1, line);
      if (written === line.length) return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EPIPE") return;
      if (code !== "EAGAIN") {
        // Required here only (an ES module: require() of it starts the ES module loader, on this failure path alone).
        const { stdoutFailureLine } = require("./stdout-failure.js") as typeof import("./stdout-failure.js");
        process.stderr.write(stdoutFailureLine(code, "write"));
        process.exitCode = 1;
        return;
      }
    }
    // Not taken whole now (a full non-blocking pipe): the rest goes through process.stdout, which waits.
    process.stdout.write(line.subarray(written));
    return;
  }
  const fail = (error: unknown) => {
    process.stderr.write(`hermes-plugin-kit: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  };
  // Signal handlers from the first moment, before the bundle is compiled: a SIGINT, SIGTERM or SIGHUP
  // landing while it loads is kept (Node queues it) instead of killing the process, and is answered by
  // the run's own handlers, which runCli installs before it sets up any command (src/cli/interrupt.ts):
  // INTERRUPTED, with --json as one JSON object on stdout. These hold the place only: JavaScript runs no
  // handler before runCli has installed its own (the load is synchronous), and they go right after.
  const holders = SIGNALS.map((name) => [name, () => {}] as const);
  for (const [name, holder] of holders) process.on(name, holder);
  const release = () => {
    for (const [name, holder] of holders) process.off(name, holder);
  };
  let loaded: LoadedCli;
  try {
    loaded = loadCli(argv);
  } catch (error) {
    release();
    fail(error);
    return;
  }
  const running = loaded.bundle.runCli(argv);
  release();
  running.then((code) => {
    process.exitCode = code;
    // Only a command that succeeded writes a cache: the cache holds what the run compiled, and it is
    // never rewritten once accepted, so a failed first run (a typo, a closed port) would fix a cache
    // without the command's working path for good.
    if (code === 0) saveCodeCache(loaded);
  }, fail);
}

if (require.main === module) main();
