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
 *   SHA-256, Node's and V8's versions and the architecture: V8 checks only a cache's source length,
 *   so the name keeps a cache of another bundle from being used. A release build of V8 does not
 *   check the cache's own bytes either (a flipped byte can crash the process or change what the
 *   code does), so each file holds the cache twice, and a copy goes to V8 only when the two are
 *   byte-for-byte equal (a `memcmp`, where a hash would cost loading `node:crypto`, ~4 ms of a
 *   `--help`). It guards against corruption (a flipped bit, a short write), not against someone who
 *   can write the file: that is only you (below).
 * - A cache is read only from a directory that is yours and writable by nobody else (it and its
 *   parent `hermes-plugin-kit`), from a regular file you own (opened without following a link or
 *   waiting on a FIFO). Anything else, a cache V8 refuses, or `HERMES_PLUGIN_KIT_CODE_CACHE=0` costs
 *   only speed: the bundle is compiled from source, and after the command the cache is written
 *   (temporary file, then rename) when there was none. Writing one also removes cache files of
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

/** What the build records about the bundle (`cli-bundle.json`). */
interface BundleId {
  sha256: string;
  /** Top-level command names: each has a cache file of its own. */
  commands: readonly string[];
}

/** File names beside this module. */
const BUNDLE_FILE = join(__dirname, "cli-bundle.cjs");
const BUNDLE_ID_FILE = join(__dirname, "cli-bundle.json");
/** Environment variable that turns the code cache off (`0`). */
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

/** `import()` of a module outside the bundle, resolved from this directory (where the bundle is). */
function importExternal(specifier: string): Promise<unknown> {
  return import(specifier);
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

/** True when `dir` exists as a directory (a link to one counts). */
function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
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
  if (xdg !== undefined && xdg.startsWith("/") && isDirectory(xdg)) return { base: xdg, make: ["hermes-plugin-kit", "v8"] };
  // node:os only when HOME is unset (it is not loaded otherwise).
  const home = env["HOME"] !== undefined && env["HOME"] !== "" ? env["HOME"] : (require("node:os") as typeof import("node:os")).homedir();
  if (home.startsWith("/") && isDirectory(home)) return { base: home, make: [".cache", "hermes-plugin-kit", "v8"] };
  return undefined;
}

/** The recorded bundle id, or undefined when `cli-bundle.json` is missing or malformed. */
function bundleId(): BundleId | undefined {
  try {
    const recorded = JSON.parse(readFileSync(BUNDLE_ID_FILE, "utf8")) as { sha256?: unknown; commands?: unknown };
    if (typeof recorded.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(recorded.sha256)) return undefined;
    const commands = Array.isArray(recorded.commands) ? recorded.commands.filter((c): c is string => typeof c === "string" && /^[a-z][a-z-]{0,31}$/.test(c)) : [];
    return { sha256: recorded.sha256, commands };
  } catch {
    return undefined;
  }
}

/** Where this run's code cache is: the directories to make and the file; undefined when caching is off or impossible. */
export function codeCacheFile(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): { dirs: string[]; file: string; id: string } | undefined {
  if (env[CODE_CACHE_ENV] === "0" || process.platform === "win32") return undefined;
  const id = bundleId();
  if (id === undefined) return undefined;
  const location = cacheLocation(env);
  if (location === undefined) return undefined;
  const first = argv[0];
  const command = first !== undefined && (id.commands.includes(first) || first === "help") ? first : "other";
  const node = `${process.version}-v8-${process.versions.v8}-${process.arch}`.replace(/[^0-9A-Za-z.-]/g, "_");
  const dirs: string[] = [];
  let dir = location.base;
  for (const name of location.make) dirs.push((dir = join(dir, name)));
  return { dirs, file: join(dir, `${id.sha256}-${node}-${command}.cache`), id: id.sha256 };
}

/** The cache data at `file` (its two copies equal) when it is a regular file we own under private directories; else undefined. */
function readCache(location: { dirs: string[]; file: string }): Buffer | undefined {
  if (!location.dirs.slice(-2).every(privateDirectory)) return undefined;
  let fd: number | undefined;
  try {
    // O_NOFOLLOW: a symbolic link in place of the cache is refused; O_NONBLOCK: a FIFO does not hang the open.
    fd = openSync(location.file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile() || (typeof process.getuid === "function" && st.uid !== process.getuid()) || st.size === 0 || st.size > MAX_CACHE_BYTES) return undefined;
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

/** Remove cache files of other bundles (and temporary files) untouched for {@link STALE_MS}; bounded by one listing. */
function removeStale(dir: string, id: string): void {
  const now = Date.now();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names.slice(0, 1000)) {
    if (!/\.(cache|tmp)$/.test(name) || (name.startsWith(`${id}-`) && name.endsWith(".cache"))) continue;
    try {
      const st = lstatSync(join(dir, name));
      if (st.isFile() && now - st.mtimeMs > STALE_MS) unlinkSync(join(dir, name));
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
}

/** Write `script`'s code cache (two copies) to the run's file: temporary file, then rename; every failure is ignored. */
function writeCache(location: { dirs: string[]; file: string; id: string }, script: Script): void {
  const temporary = `${location.file}.${process.pid}.tmp`;
  try {
    if (!makeDirectories(location.dirs)) return;
    const data = script.createCachedData();
    writeFileSync(temporary, cacheFileBytes(data), { mode: 0o600, flag: "wx" });
    renameSync(temporary, location.file);
    removeStale(location.dirs[location.dirs.length - 1] as string, location.id);
  } catch {
    try {
      unlinkSync(temporary);
    } catch {
      // nothing was written
    }
  }
}

/** A loaded bundle: its exports, the compiled script, whether a code cache was used, and where it is kept. */
export interface LoadedCli {
  bundle: CliBundle;
  script: Script;
  /** A code cache was read, its two copies were equal, and V8 accepted it. */
  cacheAccepted: boolean;
  /** The cache file of this run when caching is on (written by {@link saveCodeCache} when none was accepted). */
  cacheFile: string | undefined;
  /** Where the cache goes (internal). */
  location: { dirs: string[]; file: string; id: string } | undefined;
}

/**
 * Compile and run the bundle, with this user's code cache for `argv`'s command when there is one,
 * it is intact, and V8 accepts it (`options.cache: false` skips it).
 */
export function loadCli(argv: readonly string[] = [], options: { cache?: boolean; env?: NodeJS.ProcessEnv } = {}): LoadedCli {
  const source = wrap(readFileSync(BUNDLE_FILE, "utf8"));
  const location = options.cache === false ? undefined : codeCacheFile(argv, options.env ?? process.env);
  const cachedData = location === undefined ? undefined : readCache(location);
  const script = new Script(source, { filename: BUNDLE_FILE, ...(cachedData === undefined ? {} : { cachedData }) });
  const cacheAccepted = cachedData !== undefined && script.cachedDataRejected !== true;
  const module = { exports: {} as CliBundle };
  const fn = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string, load: typeof importExternal) => void;
  fn(module.exports, require, module, BUNDLE_FILE, __dirname, importExternal);
  return { bundle: module.exports, script, cacheAccepted, cacheFile: location?.file, location };
}

/** After a command: write its code cache when caching is on and none was accepted (it now holds what the command compiled). */
export function saveCodeCache(loaded: LoadedCli): void {
  if (loaded.location !== undefined && !loaded.cacheAccepted) writeCache(loaded.location, loaded.script);
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
        process.stderr.write(`hermes-plugin-kit: cannot write the answer to stdout: ${String(code)} (write); check where stdout goes (a full disk, a closed terminal) [IO_${String(code)}]\n`);
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
  let loaded: LoadedCli;
  try {
    loaded = loadCli(argv);
  } catch (error) {
    fail(error);
    return;
  }
  loaded.bundle.runCli(argv).then((code) => {
    process.exitCode = code;
    saveCodeCache(loaded);
  }, fail);
}

if (require.main === module) main();
