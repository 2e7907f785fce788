#!/usr/bin/env node
/**
 * CommonJS entry of the `hermes-plugin-kit` binary (package.json `bin`; `dist/src/cli/main.js`
 * runs it too). It starts the CLI from one file, `cli-bundle.cjs` (scripts/bundle-cli.mjs), so a run
 * does not start Node's ES module loader, and compiles that file with a V8 code cache kept per user,
 * so a run does not parse it either: measured by `npm run bench:cli`.
 *
 * - The bundle holds the command wiring, commander and the offline verify path (src/contract with
 *   zod), the latter initialised only when an action needs it. Everything else (the areas, every
 *   other package, the error modules) stays in `dist/` and loads through {@link importExternal}: a
 *   real `import()` from this module, which sits in the same directory as the bundle, so relative
 *   specifiers and package lookups resolve as they did from the bundle's own path.
 * - The code cache is made here, from the installed bundle, never shipped: the package holds only
 *   source a reviewer can read. It lives in `$XDG_CACHE_HOME/hermes-plugin-kit/v8` (default
 *   `~/.cache/...`), one file per command, named by the bundle's SHA-256 (recorded by the build in
 *   `cli-bundle.json`), Node's and V8's versions and the architecture: V8 itself checks only the
 *   source's length, so the name is what keeps a cache of another bundle from being used. The
 *   directory must be yours and writable by nobody else (mode 0700 when made here); a cache file must
 *   be a regular file you own. Anything else, a cache V8 refuses, or `HERMES_PLUGIN_KIT_CODE_CACHE=0`
 *   costs only speed: the bundle is compiled from source, and the cache is written (atomically) after
 *   the command, only when there was none.
 * - `--version` alone reads package.json and loads no bundle.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Script } from "node:vm";

/** What the bundle exports (scripts/bundle-cli.mjs, its entry). */
interface CliBundle {
  runCli(argv: string[]): Promise<number>;
}

/** File names beside this module. */
const BUNDLE_FILE = join(__dirname, "cli-bundle.cjs");
const BUNDLE_ID_FILE = join(__dirname, "cli-bundle.json");
/** Environment variable that turns the code cache off (`0`). */
export const CODE_CACHE_ENV = "HERMES_PLUGIN_KIT_CODE_CACHE";
/** Largest cache file read (bytes); the bundle's cache is about 0.3 MB. */
const MAX_CACHE_BYTES = 16 * 1024 * 1024;

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

/** Where this user's code caches live, or undefined when there is no usable home. */
function cacheRoot(env: NodeJS.ProcessEnv): string | undefined {
  const xdg = env["XDG_CACHE_HOME"];
  if (xdg !== undefined && xdg.startsWith("/")) return join(xdg, "hermes-plugin-kit", "v8");
  // node:os only when HOME is unset (it is not loaded otherwise).
  const home = env["HOME"] !== undefined && env["HOME"] !== "" ? env["HOME"] : (require("node:os") as typeof import("node:os")).homedir();
  return home.startsWith("/") ? join(home, ".cache", "hermes-plugin-kit", "v8") : undefined;
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

/** The cache file of this bundle, Node, architecture and command; undefined when caching is off or impossible. */
export function codeCacheFile(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env[CODE_CACHE_ENV] === "0" || process.platform === "win32") return undefined;
  let id: string;
  try {
    const recorded = JSON.parse(readFileSync(BUNDLE_ID_FILE, "utf8")) as { sha256?: unknown };
    if (typeof recorded.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(recorded.sha256)) return undefined;
    id = recorded.sha256;
  } catch {
    return undefined;
  }
  const root = cacheRoot(env);
  if (root === undefined) return undefined;
  const first = argv[0];
  const command = first !== undefined && /^[a-z][a-z-]{0,31}$/.test(first) ? first : "other";
  const node = `${process.version}-v8-${process.versions.v8}-${process.arch}`.replace(/[^0-9A-Za-z.-]/g, "_");
  return join(root, `${id}-${node}-${command}.cache`);
}

/** The cache at `file` when it is a regular file we own, under a private directory; else undefined. */
function readCache(file: string): Buffer | undefined {
  if (!privateDirectory(join(file, ".."))) return undefined;
  let fd: number | undefined;
  try {
    // O_NOFOLLOW: a symbolic link in place of the cache is refused, not followed.
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    const st = fstatSync(fd);
    if (!st.isFile() || (typeof process.getuid === "function" && st.uid !== process.getuid()) || st.size > MAX_CACHE_BYTES) return undefined;
    const data = Buffer.allocUnsafe(st.size);
    let read = 0;
    while (read < st.size) {
      const n = readSync(fd, data, read, st.size - read, read);
      if (n === 0) return undefined;
      read += n;
    }
    return data;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Write `script`'s code cache to `file` (temporary file, then rename); every failure is ignored. */
function writeCache(file: string, script: Script): void {
  const dir = join(file, "..");
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!privateDirectory(dir)) return;
    writeFileSync(temporary, script.createCachedData(), { mode: 0o600, flag: "wx" });
    renameSync(temporary, file);
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
  /** A code cache was read and V8 accepted it. */
  cacheAccepted: boolean;
  /** The cache file of this run, when caching is on: written by {@link saveCodeCache} when it was not accepted. */
  cacheFile: string | undefined;
}

/**
 * Compile and run the bundle, with this user's code cache for `argv`'s command when there is one
 * and V8 accepts it (`options.cache: false` skips it).
 */
export function loadCli(argv: readonly string[] = [], options: { cache?: boolean; env?: NodeJS.ProcessEnv } = {}): LoadedCli {
  const source = wrap(readFileSync(BUNDLE_FILE, "utf8"));
  const cacheFile = options.cache === false ? undefined : codeCacheFile(argv, options.env ?? process.env);
  const cachedData = cacheFile === undefined ? undefined : readCache(cacheFile);
  const script = new Script(source, { filename: BUNDLE_FILE, ...(cachedData === undefined ? {} : { cachedData }) });
  const cacheAccepted = cachedData !== undefined && script.cachedDataRejected !== true;
  const module = { exports: {} as CliBundle };
  const fn = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string, load: typeof importExternal) => void;
  fn(module.exports, require, module, BUNDLE_FILE, __dirname, importExternal);
  return { bundle: module.exports, script, cacheAccepted, cacheFile };
}

/** After a command: write its code cache when caching is on and none was accepted (it now holds what the command compiled). */
export function saveCodeCache(loaded: LoadedCli): void {
  if (loaded.cacheFile !== undefined && !loaded.cacheAccepted) writeCache(loaded.cacheFile, loaded.script);
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

/** Run the CLI with `process.argv`; sets `process.exitCode`. */
export function main(): void {
  // A closed pipe on stdout (`... | head -1`) ends output quietly instead of with a stack trace.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(typeof process.exitCode === "number" ? process.exitCode : 0);
    throw error;
  });
  const argv = process.argv.slice(2);
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
    process.stdout.write(`${packageVersion()}\n`);
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
