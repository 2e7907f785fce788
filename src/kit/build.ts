/**
 * `plugin build`: turn a plugin entry module into an Agent Plugins v1
 * package (docs/kit.md): `plugin.json`, `mcp.json`, one self-contained
 * esbuild bundle `dist/server.js` (platform node, ESM, target node20) and
 * the validated skills under `skills/<name>/`.
 *
 * The entry declares everything: its default export is a `definePlugin(...)`
 * result. The builder bundles the entry once to a private temp file, imports
 * it with `PLUGIN_ROOT` set to the source package root (so relative
 * `pluginSkill("skills/x")` paths resolve), reads the plugin's metadata, then
 * bundles the server (a generated main that serves the entry's default
 * export). By default `hermes-plugin-kit` resolves to the kit running the
 * build, so the bundled kit is the one that checked the plugin.
 */
import { copyFileSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { assertCompanionWritable, companionDir, writeCompanion } from "./companion.js";
import { expectString, inputTypeError, isRecord, PluginKitError, PLUGIN_KIT_ERROR_CODES, type PluginKitErrorCode } from "./errors.js";
import { isPluginDefinition, UNBUILT_PLUGIN_VERSION, type PluginDefinition } from "./plugin.js";
import { PLUGIN_VERSION_PATTERN } from "./plugin-options.js";
import { checkMcpConfig, checkPluginManifest, scanTextForInstallRisks, SERVER_SCRIPT, type PackageFinding } from "./portable.js";
import { requireKnownOptions, requireOptionTypes } from "./option-keys.js";
import { pluginSkill } from "./skills.js";
import { withStdoutOnStderr } from "./stdout.js";
import { checkDirectoryWritable, makeDirectorySync } from "../contract/directory.js";

/** Options of {@link buildPluginPackage}. */
export interface BuildOptions {
  /** The entry module (TypeScript or JavaScript) whose default export is `definePlugin(...)`. */
  entry: string;
  /** Output package directory (created when missing; may be the source root for an in-place build). */
  outDir: string;
  /** Source package root (default: nearest directory above the entry holding package.json). */
  root?: string;
  /** Extra esbuild aliases, specifier -> path. */
  alias?: Record<string, string>;
  /** Resolve `hermes-plugin-kit` to the kit running the build (default true). */
  kitAlias?: boolean;
  /**
   * Minify the bundle (default true: it halves the bytes Node parses at every
   * server start; pass false for a readable bundle to review).
   */
  minify?: boolean;
  /**
   * Overwrite `plugin.json`, `mcp.json` and `dist/server.js` in `outDir` even
   * when plugin build did not generate them for this plugin (default false:
   * `BUILD_OUTPUT_FOREIGN` names them and nothing is written).
   */
  force?: boolean;
  /**
   * How long the entry may take to load (its top-level code, awaits included) when the build imports
   * it to read its definition, in milliseconds (default 60,000): a top-level await that never settles
   * is `BUILD_ENTRY_FAILED` after this, never a build that ends silently.
   */
  entryTimeoutMs?: number;
}

/** Every option of {@link BuildOptions}; any other key is refused with the nearest name. */
const BUILD_OPTION_KEYS: readonly string[] = ["entry", "outDir", "root", "alias", "kitAlias", "minify", "force", "entryTimeoutMs"];

/** What {@link buildPluginPackage} wrote. */
export interface BuildResult {
  outDir: string;
  /** Package-relative paths written, sorted. */
  files: string[];
  plugin: {
    name: string;
    version: string;
    server: string;
    tools: string[];
    hermesNames: Record<string, string>;
    skills: string[];
    hooks: string[];
    commands: string[];
    middleware: string[];
    /** Package-relative directory of the native companion (`host/<name>-host`), when the plugin has hooks, commands or middleware. */
    companion?: string;
  };
  /** Size of dist/server.js in bytes. */
  bundleBytes: number;
  /** Install-scan findings on the bundle and undeclared skills in the output (never errors: those fail the build). */
  findings: PackageFinding[];
}

/**
 * Absolute path of the kit's index (`src/kit/index`), the module
 * `hermes-plugin-kit` resolves to by default when bundling: the kit API
 * without the release contract, so bundles stay small.
 */
export function kitIndexPath(): string {
  const self = fileURLToPath(import.meta.url);
  return path.join(path.dirname(self), `index${path.extname(self)}`);
}

function kitNodePaths(): string[] {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth += 1) {
    if (existsSync(path.join(dir, "package.json"))) {
      const paths = [path.join(dir, "node_modules")];
      if (path.basename(path.dirname(dir)) === "node_modules") paths.push(path.dirname(dir));
      return paths.filter((p) => existsSync(p));
    }
    dir = path.dirname(dir);
  }
  return [];
}

/** Virtual module of the bundle that reports a failing entry as a refusal line (installed before the entry evaluates). */
const GUARD_MODULE = "hermes-plugin-kit-guard";
/** Virtual module evaluated first in the bundle: routes every non-protocol stdout write to stderr (see stdout.ts). */
const STDOUT_MODULE = "hermes-plugin-kit-stdout";

/**
 * Absolute path of the kit's stdout guard module (`src/kit/stdout`), bundled
 * as the server's first module. It imports only Node built-ins, so nothing of
 * the plugin is evaluated before it.
 */
export function stdoutGuardPath(): string {
  const self = fileURLToPath(import.meta.url);
  return path.join(path.dirname(self), `stdout${path.extname(self)}`);
}

function findRoot(entry: string): string {
  let dir = path.dirname(entry);
  for (let depth = 0; depth < 32; depth += 1) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return path.dirname(entry);
}

function recode(error: unknown): unknown {
  const code = (error as { code?: unknown })?.code;
  if (!(error instanceof PluginKitError) && typeof code === "string" && (PLUGIN_KIT_ERROR_CODES as readonly string[]).includes(code)) {
    return new PluginKitError(code as PluginKitErrorCode, (error as Error).message, { cause: error });
  }
  return error;
}

function writeAtomic(file: string, data: string): void {
  makeDirectorySync(path.dirname(file), { purpose: "plugin build output directory" });
  const temp = `${file}.tmp-${process.pid}`;
  writeFileSync(temp, data);
  renameSync(temp, file);
}

function checkSkillTree(dir: string, depth = 0): void {
  if (depth > 16) throw new PluginKitError("BUILD_OUTPUT_INVALID", `skill tree ${dir} is nested deeper than 16 levels`);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) checkSkillTree(full, depth + 1);
    else if (!entry.isFile()) throw new PluginKitError("BUILD_OUTPUT_INVALID", `skill file ${full} is a symlink or special file; portable packages ship regular files only`);
  }
}

function copyTree(source: string, target: string, written: string[], outDir: string, depth = 0): void {
  if (depth > 16) throw new PluginKitError("BUILD_OUTPUT_INVALID", `skill tree ${source} is nested deeper than 16 levels`);
  makeDirectorySync(target, { purpose: "plugin build output directory" });
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    const from = path.join(source, entry.name);
    const to = path.join(target, entry.name);
    if (entry.isSymbolicLink()) throw new PluginKitError("BUILD_OUTPUT_INVALID", `skill file ${from} is a symlink; portable packages ship regular files only`);
    if (entry.isDirectory()) copyTree(from, to, written, outDir, depth + 1);
    else if (entry.isFile()) {
      copyFileSync(from, to);
      written.push(path.relative(outDir, to).split(path.sep).join("/"));
    }
  }
}

/** `version` of `<root>/package.json` with the file's path, or undefined when there is no package.json version. */
function readPackageVersion(root: string): { version: string; file: string } | undefined {
  const file = path.join(root, "package.json");
  if (!existsSync(file)) return undefined;
  let version: unknown;
  try {
    version = (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>)["version"];
  } catch (error) {
    throw new PluginKitError("BUILD_ENTRY_INVALID", `${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (version === undefined) return undefined;
  if (typeof version !== "string" || !PLUGIN_VERSION_PATTERN.test(version)) {
    throw new PluginKitError("BUILD_VERSION_MISMATCH", `${file} version must be a SemVer string, found ${JSON.stringify(version)}`);
  }
  return { version, file };
}

/**
 * The plugin's version is package.json's: a different version declared in
 * definePlugin is an error, and so is no version anywhere.
 */
function checkPluginVersion(pluginVersion: string, pkg: { version: string; file: string } | undefined): void {
  if (pkg === undefined) {
    if (pluginVersion === UNBUILT_PLUGIN_VERSION) {
      throw new PluginKitError("BUILD_VERSION_MISSING", "the plugin has no version: set \"version\" in the package's package.json (plugin build takes it from there)");
    }
    return;
  }
  if (pluginVersion !== pkg.version) {
    throw new PluginKitError(
      "BUILD_VERSION_MISMATCH",
      `definePlugin declares version ${JSON.stringify(pluginVersion)} but ${pkg.file} has ${JSON.stringify(pkg.version)}; remove version from definePlugin (plugin build takes it from package.json) or make them equal`,
    );
  }
}

/**
 * Build the package. Writes only inside `outDir`. The steps, in order:
 * resolve the paths, bundle and import the entry to read its definition,
 * check the declared skills, bundle the server, copy the skills, write the
 * manifests and the native companion, scan what was written.
 *
 * @throws PluginKitError `BUILD_ENTRY_INVALID` (entry missing or its default
 *   export is not a plugin), `BUILD_ENTRY_FAILED` (loading the entry threw, called
 *   `process.exit()`, or did not finish within `entryTimeoutMs`), `BUILD_BUNDLE_FAILED` (esbuild errors),
 *   `BUILD_OUTPUT_INVALID` (a skill outside `skills/<name>`, symlinks, or the
 *   written plugin.json/mcp.json failing the portable checks),
 *   `BUILD_VERSION_MISMATCH` (definePlugin declares another version than
 *   package.json), `BUILD_VERSION_MISSING` (no version anywhere),
 *   `BUILD_OUTPUT_FOREIGN` (without `force`: `outDir` holds a plugin.json,
 *   mcp.json or dist/server.js that plugin build did not generate for this
 *   plugin; nothing is written), and any
 *   definition error the entry raises (its own code, e.g.
 *   `SCHEMA_TOP_LEVEL_PROPERTIES`); `INPUT_TYPE_INVALID` when `options` is
 *   not an object, holds a key it does not read (named with the nearest known
 *   one, e.g. `forse` -> `force`), `entry`, `outDir`, `root` are not strings,
 *   `alias` not an object of strings, `kitAlias`/`minify`/`force` not booleans
 *   or `entryTimeoutMs` not an integer 1..3,600,000; all before any disk work.
 */
export async function buildPluginPackage(options: BuildOptions): Promise<BuildResult> {
  const paths = resolveBuildPaths(options);
  const bundle = await createBundler(options, paths);
  const plugin = await loadPluginDefinition(bundle, paths, options.entryTimeoutMs);
  checkPluginVersion(plugin.version, paths.packageVersion);
  checkDeclaredSkills(plugin, paths.root);
  if (options.force !== true) refuseForeignOutput(paths.outDir, plugin.name);
  assertCompanionWritable(paths.outDir, plugin);
  const written: string[] = [];
  const serverFile = await writeServerBundle(bundle, paths, written, plugin.name);
  copySkills(plugin, paths.outDir, written);
  writeManifests(plugin, paths.outDir, written);
  // The native companion (hooks, slash commands, middleware), beside the portable package.
  written.push(...writeCompanion(paths.outDir, plugin, writeAtomic));
  const findings = scanPackage(plugin, paths.outDir, serverFile);
  return {
    outDir: paths.outDir,
    files: [...new Set(written)].sort(),
    plugin: {
      name: plugin.name,
      version: plugin.version,
      server: plugin.server,
      tools: plugin.tools.map((t) => t.name),
      hermesNames: { ...plugin.hermesNames },
      skills: plugin.skills.map((s) => s.name),
      hooks: [...plugin.host.hooks.keys()].sort(),
      commands: plugin.host.commands.map((c) => c.name).sort(),
      middleware: [...plugin.host.middleware.keys()].sort(),
      ...(plugin.host.empty ? {} : { companion: companionDir(plugin.name) }),
    },
    bundleBytes: lstatSync(serverFile).size,
    findings,
  };
}

/** Absolute entry, source root and output directory of a build. */
interface BuildPaths {
  entry: string;
  root: string;
  outDir: string;
  /** `version` of `<root>/package.json` (the plugin's version) and that file, when it has one. */
  packageVersion: { version: string; file: string } | undefined;
}

/** What every bundle starts with: `require` for CommonJS dependencies inside an ES module. */
const REQUIRE_SHIM = 'import { createRequire as __hpkCreateRequire } from "node:module";\nconst require = __hpkCreateRequire(import.meta.url);';

/** The first line of a `dist/server.js` plugin build wrote for plugin `name`. */
function serverBanner(name: string): string {
  return `// hermes-plugin-kit plugin build: ${JSON.stringify(name)}`;
}

/** The `name` of `<outDir>/plugin.json`, `null` when it exists but names none (or is unreadable), `undefined` when absent. */
function existingManifestName(outDir: string): string | null | undefined {
  const file = path.join(outDir, "plugin.json");
  if (!existsSync(file)) return undefined;
  try {
    const name = (JSON.parse(readFileSync(file, "utf8")) as { name?: unknown }).name;
    return typeof name === "string" ? name : null;
  } catch {
    return null;
  }
}

/**
 * Refuse to overwrite what plugin build did not generate for plugin `name`:
 * `plugin.json` naming another plugin (or none), `mcp.json` beside a
 * plugin.json that is not this plugin's, `dist/server.js` whose first line is
 * not this plugin's build banner (a bundle of an older kit, without the
 * banner, is accepted beside this plugin's plugin.json).
 * @throws PluginKitError `BUILD_OUTPUT_FOREIGN` naming every such file; nothing is written.
 */
function refuseForeignOutput(outDir: string, name: string): void {
  const manifestName = existingManifestName(outDir);
  const ours = manifestName === name;
  const foreign: string[] = [];
  if (manifestName !== undefined && !ours) foreign.push(`plugin.json (${manifestName === null ? "not a plugin.json with a name" : `of plugin ${JSON.stringify(manifestName)}`})`);
  if (!ours && existsSync(path.join(outDir, "mcp.json"))) foreign.push(`mcp.json (not beside this plugin's plugin.json)`);
  const server = path.join(outDir, SERVER_SCRIPT);
  if (existsSync(server)) {
    let first = "";
    try {
      first = readFileSync(server, "utf8").slice(0, 512).split("\n", 1)[0] ?? "";
    } catch {
      first = "";
    }
    const banner = first.startsWith("// hermes-plugin-kit plugin build: ");
    if (banner ? first !== serverBanner(name) : !ours) {
      foreign.push(`${SERVER_SCRIPT} (${banner ? `built for ${first.slice("// hermes-plugin-kit plugin build: ".length)}` : "not written by plugin build"})`);
    }
  }
  if (foreign.length > 0) {
    throw new PluginKitError(
      "BUILD_OUTPUT_FOREIGN",
      `plugin build of ${JSON.stringify(name)} would overwrite files in ${outDir} it did not generate for this plugin: ${foreign.join(", ")}; nothing was written; ` +
        `fix: choose another --out (a new or empty directory, or this plugin's own package), move those files away, or pass --force to overwrite them`,
    );
  }
}

/** Runs esbuild with the build's shared options plus `extra`; failures are `BUILD_BUNDLE_FAILED`. */
type Bundler = (extra: Record<string, unknown>) => Promise<void>;

function resolveBuildPaths(options: BuildOptions): BuildPaths {
  if (!isRecord(options)) throw inputTypeError("buildPluginPackage", "options", "an object {entry, outDir}", options);
  requireKnownOptions("buildPluginPackage", options, BUILD_OPTION_KEYS);
  requireOptionTypes("buildPluginPackage", options, { alias: "string-record", kitAlias: "boolean", minify: "boolean", force: "boolean", entryTimeoutMs: { integer: [1, 3_600_000] } });
  expectString("buildPluginPackage", "options.entry", options.entry);
  expectString("buildPluginPackage", "options.outDir", options.outDir);
  if (options.root !== undefined) expectString("buildPluginPackage", "options.root", options.root);
  const entry = path.resolve(options.entry);
  if (!existsSync(entry)) throw new PluginKitError("BUILD_ENTRY_INVALID", `entry ${options.entry} does not exist (resolved to ${entry}); fix: pass the plugin's entry module, e.g. src/index.ts`);
  if (!statSync(entry).isFile()) throw new PluginKitError("BUILD_ENTRY_INVALID", `entry ${options.entry} is not a file (${statSync(entry).isDirectory() ? "a directory" : "not a regular file"}); fix: pass the plugin's entry module, e.g. ${path.join(options.entry, "index.ts")}`);
  const root = path.resolve(options.root ?? findRoot(entry));
  const outDir = path.resolve(options.outDir);
  // Fail fast, before bundling: an out dir that cannot be created or written (IO_* codes).
  checkDirectoryWritable(outDir, { purpose: "plugin build output directory (--out)" });
  return { entry, root, outDir, packageVersion: readPackageVersion(root) };
}

/** esbuild (loaded here, never at CLI start) with the options every bundle of this build shares. */
async function createBundler(options: BuildOptions, paths: BuildPaths): Promise<Bundler> {
  const packageVersion = paths.packageVersion;
  const alias: Record<string, string> = { ...(options.kitAlias === false ? {} : { "hermes-plugin-kit": kitIndexPath() }), ...(options.alias ?? {}) };
  const esbuild = await import("esbuild");
  const common = {
    bundle: true,
    platform: "node" as const,
    format: "esm" as const,
    target: "node20",
    alias,
    nodePaths: kitNodePaths(),
    absWorkingDir: paths.root,
    logLevel: "silent" as const,
    minify: options.minify !== false,
    external: ["esbuild"],
    // The plugin's version comes from package.json (definePlugin reads it when it declares none).
    define: (packageVersion === undefined ? {} : { __HERMES_PLUGIN_KIT_PACKAGE_VERSION__: JSON.stringify(packageVersion.version) }) as Record<string, string>,
    banner: { js: REQUIRE_SHIM },
  };
  return async (extra) => {
    try {
      await esbuild.build({ ...common, ...extra });
    } catch (error) {
      const messages = (error as { errors?: Array<{ text: string; location?: { file: string; line: number } | null }> }).errors ?? [];
      const detail = messages.map((m) => (m.location ? `${m.location.file}:${m.location.line}: ${m.text}` : m.text)).join("; ") || String(error);
      throw new PluginKitError("BUILD_BUNDLE_FAILED", `esbuild could not bundle ${path.relative(paths.root, paths.entry) || paths.entry}: ${detail}`, { cause: error });
    }
  };
}

/**
 * Bundle the entry to a private temp file and import it with `PLUGIN_ROOT`
 * set to the source root (so relative skill paths resolve); its default
 * export must be a `definePlugin(...)` result.
 */
async function loadPluginDefinition(bundle: Bundler, paths: BuildPaths, timeoutMs = 60_000): Promise<PluginDefinition> {
  const temp = mkdtempSync(path.join(os.tmpdir(), "hpk-build-"));
  const entryName = path.relative(paths.root, paths.entry) || paths.entry;
  try {
    const probe = path.join(temp, "entry.mjs");
    await bundle({ entryPoints: [paths.entry], outfile: probe });
    const previousRoot = process.env.PLUGIN_ROOT;
    process.env.PLUGIN_ROOT = paths.root;
    // While the entry loads, process.exit() is refused (it would end the build with its code and
    // nothing written) and a load that never settles is refused after `timeoutMs` (a pending
    // top-level await would otherwise let the process end with exit 0).
    const exit = process.exit;
    process.exit = ((code?: number | string | null) => {
      throw new PluginKitError(
        "BUILD_ENTRY_FAILED",
        `${entryName} called process.exit(${code ?? ""}) while the build loaded it to read its definition; fix: do not exit at module top level (a plugin's module only defines; the server runs it later)`,
      );
    }) as typeof process.exit;
    let timer: NodeJS.Timeout | undefined;
    let loaded: { default?: unknown };
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new PluginKitError("BUILD_ENTRY_FAILED", `${entryName} did not finish loading within ${timeoutMs} ms (a top-level await that never settles?); fix: let the module's top-level code finish (start work in tool handlers, not at import)`)),
          timeoutMs,
        );
      });
      // The entry's module-load output must not reach this process's stdout (`plugin build --json`).
      loaded = (await withStdoutOnStderr(() => Promise.race([import(pathToFileURL(probe).href), timeout]))) as { default?: unknown };
    } catch (error) {
      const recoded = recode(error);
      if (recoded instanceof PluginKitError) throw recoded;
      const detail = recoded instanceof Error ? recoded.message : String(recoded);
      throw new PluginKitError("BUILD_ENTRY_FAILED", `loading ${entryName} to read its definition threw: ${detail === "" ? "(an error without a message)" : detail}; fix: make the module load without throwing (run it with node to see the stack)`, { cause: error });
    } finally {
      clearTimeout(timer);
      process.exit = exit;
      if (previousRoot === undefined) delete process.env.PLUGIN_ROOT;
      else process.env.PLUGIN_ROOT = previousRoot;
    }
    if (!isPluginDefinition(loaded.default)) throw new PluginKitError("BUILD_ENTRY_INVALID", `the default export of ${path.relative(paths.root, paths.entry)} must be a definePlugin(...) result`);
    return loaded.default;
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

/** Every declared skill lives at `skills/<name>` of the source root and holds regular files only. */
function checkDeclaredSkills(plugin: PluginDefinition, root: string): void {
  for (const skill of plugin.skills) {
    if (path.resolve(skill.dir) !== path.join(root, "skills", skill.name)) {
      throw new PluginKitError("BUILD_OUTPUT_INVALID", `skill '${skill.name}' must live at skills/${skill.name} of the package root (found ${skill.relativeDir})`);
    }
    checkSkillTree(skill.dir);
  }
}

/**
 * Bundle `dist/server.js`: a generated main that installs the stdout guard
 * first, reports a failing entry as a refusal line, then serves the entry's
 * default export. Staged under a temp name and renamed into place.
 */
async function writeServerBundle(bundle: Bundler, paths: BuildPaths, written: string[], pluginName: string): Promise<string> {
  makeDirectorySync(paths.outDir, { purpose: "plugin build output directory (--out)" });
  const serverFile = path.join(paths.outDir, SERVER_SCRIPT);
  const staged = `${serverFile}.tmp-${process.pid}`;
  makeDirectorySync(path.dirname(serverFile), { purpose: "plugin build output directory" });
  const main = [
    `import "${STDOUT_MODULE}";`,
    `import { refuseToServe } from "${GUARD_MODULE}";`,
    `import plugin from ${JSON.stringify(paths.entry)};`,
    `import { servePluginModule } from "hermes-plugin-kit";`,
    `process.off("uncaughtException", refuseToServe);`,
    `servePluginModule(async () => ({ default: plugin }));`,
    "",
  ].join("\n");
  try {
    await bundle({
      stdin: { contents: main, resolveDir: path.dirname(paths.entry), sourcefile: "hermes-plugin-kit-main.js", loader: "js" },
      outfile: staged,
      // The first line says who wrote the file, for the next build's ownership check (refuseForeignOutput).
      banner: { js: `${serverBanner(pluginName)}\n${REQUIRE_SHIM}` },
      plugins: [virtualModulesPlugin(path.dirname(paths.entry))],
    });
    renameSync(staged, serverFile);
  } finally {
    rmSync(staged, { force: true });
  }
  written.push(SERVER_SCRIPT);
  return serverFile;
}

/** The esbuild plugin serving the two virtual modules of the server main (refusal guard, stdout guard). */
function virtualModulesPlugin(resolveDir: string): { name: string; setup(build: { onResolve: Function; onLoad: Function }): void } {
  const guard = [
    `import { refusalLine } from "hermes-plugin-kit";`,
    `export function refuseToServe(error) {`,
    `  process.stderr.write(refusalLine(error));`,
    `  process.exit(1);`,
    `}`,
    `process.on("uncaughtException", refuseToServe);`,
    "",
  ].join("\n");
  const stdoutGuard = `import { guardStdout } from ${JSON.stringify(stdoutGuardPath())};\nguardStdout();\n`;
  const virtualModules: Record<string, string> = { [GUARD_MODULE]: guard, [STDOUT_MODULE]: stdoutGuard };
  return {
    name: "hermes-plugin-kit-guard",
    setup(build) {
      build.onResolve({ filter: new RegExp(`^(?:${GUARD_MODULE}|${STDOUT_MODULE})$`) }, (args: { path: string }) => ({ path: args.path, namespace: "hermes-plugin-kit" }));
      build.onLoad({ filter: /.*/, namespace: "hermes-plugin-kit" }, (args: { path: string }) => ({ contents: virtualModules[args.path], loader: "js", resolveDir }));
    },
  };
}

/** Copy each skill to `skills/<name>` of the output (left alone when it is the same directory) and check it as Hermes will load it. */
function copySkills(plugin: PluginDefinition, outDir: string, written: string[]): void {
  for (const skill of plugin.skills) {
    const target = path.join(outDir, "skills", skill.name);
    const same = existsSync(target) && realpathSync(target) === realpathSync(skill.dir);
    if (!same) {
      rmSync(target, { recursive: true, force: true });
      copyTree(skill.dir, target, written, outDir);
    } else {
      written.push(`skills/${skill.name}/SKILL.md`);
    }
    try {
      pluginSkill(`skills/${skill.name}`, { root: outDir });
    } catch (error) {
      throw recode(error);
    }
  }
}

/** plugin.json and mcp.json, written only when they pass the portable checks. */
function writeManifests(plugin: PluginDefinition, outDir: string, written: string[]): void {
  const manifest = plugin.manifest();
  const mcp = plugin.mcpConfig();
  const findings = [...checkPluginManifest(manifest), ...checkMcpConfig(mcp, outDir).findings].filter((f) => f.severity === "error");
  if (findings.length > 0) throw new PluginKitError("BUILD_OUTPUT_INVALID", `generated manifests fail the portable checks: ${findings.map((f) => `${f.rule}: ${f.message}`).join("; ")}`);
  writeAtomic(path.join(outDir, "plugin.json"), JSON.stringify(manifest, null, 2) + "\n");
  writeAtomic(path.join(outDir, "mcp.json"), JSON.stringify(mcp, null, 2) + "\n");
  written.push("plugin.json", "mcp.json");
}

/**
 * The install scanner's findings on the bundle plus a warning per skill
 * directory in the output the plugin does not declare (Hermes loads every
 * `skills/<dir>/SKILL.md`); a blocking finding fails the build.
 */
function scanPackage(plugin: PluginDefinition, outDir: string, serverFile: string): PackageFinding[] {
  const scan = scanTextForInstallRisks(SERVER_SCRIPT, readFileSync(serverFile, "utf8"));
  const declared = new Set(plugin.skills.map((skill) => skill.name));
  const skillsDir = path.join(outDir, "skills");
  if (existsSync(skillsDir)) {
    for (const entry of readdirSync(skillsDir, { withFileTypes: true })) {
      if (entry.isDirectory() && !declared.has(entry.name) && existsSync(path.join(skillsDir, entry.name, "SKILL.md"))) {
        scan.push({
          rule: "BUILD_UNDECLARED_SKILL",
          severity: "warning",
          message: `skills/${entry.name} is in the package but not declared in definePlugin; Hermes loads every skills/<dir>/SKILL.md`,
          file: `skills/${entry.name}/SKILL.md`,
        });
      }
    }
  }
  const blocking = scan.filter((f) => f.severity === "error");
  if (blocking.length > 0) throw new PluginKitError("BUILD_OUTPUT_INVALID", `the bundle trips Hermes' install scanner: ${blocking.map((f) => f.message).join("; ")}`);
  return scan;
}
